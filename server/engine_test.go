package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/sqlite"
)

func testStore(t testing.TB, path string) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustConfig(t testing.TB, req createRequest) (*Config, []byte) {
	t.Helper()
	cfg, err := newConfig(req, newID("exp_"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(cfg)
	return cfg, raw
}

// crash stops the writer without its final commits: what is in memory and
// not committed is lost, as in a SIGKILL.
func (e *Engine) crash() {
	e.w.abort.Store(true)
	e.w.stop()
}

func policyState(t testing.TB, x *experiment) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	b, err := json.Marshal(x.impl())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplayDrawsTheSameNoise: rewards are applied to the policy after their
// commit, and the state with them applied is written by the next commit. A
// crash in between replays them on restart with the stored seed, so the
// restored state is the live one exactly. (Noise drawn in Update — released
// batch increments — is covered by the AdaPrivate replay test below; the
// pure-DP tree policies that also draw in Update run in simulation only.)
func TestReplayDrawsTheSameNoise(t *testing.T) {
	for _, pol := range []string{"dp-ts-ucb", "ts-gaussian", "mts-gaussian"} {
		t.Run(pol, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			st := testStore(t, path)
			ctx := context.Background()
			e, err := openEngine(ctx, st, quietLog(), engineOptions{Retain: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			// After the commit that stores the last reward, the writer
			// stops (as if killed) before the next commit writes the state
			// with that reward applied.
			var armed atomic.Bool
			release := make(chan struct{})
			var x *experiment
			e.w.hook = func() {
				if armed.Load() {
					x.mu.Lock()
					a := x.appliedSeq
					x.mu.Unlock()
					if a >= 200 {
						<-release
					}
				}
			}
			budget := &Budget{Mu: 3, Delta: 1e-6}
			cfg, raw := mustConfig(t, createRequest{Name: "r", Arms: []string{"a", "b", "c"}, Policy: pol, Horizon: 5000, Budget: budget})
			x, err = e.create(ctx, cfg, raw)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 200; i++ {
				ds, err := e.decide(ctx, x, []string{""}, nil, false)
				if err != nil {
					t.Fatal(err)
				}
				if i == 199 {
					armed.Store(true)
				}
				if _, err := e.reward(ctx, x, ds[0].EventID, float64(i%3)/2); err != nil {
					t.Fatal(err)
				}
			}
			// The last rewards are applied in memory but their state is not
			// committed yet (the next commit would write it).
			live := policyState(t, x)
			e.w.abort.Store(true)
			close(release)
			e.crash()
			x.mu.Lock()
			applied, stored := x.appliedSeq, x.rewardSeq
			x.mu.Unlock()
			e2, err := openEngine(ctx, st, quietLog(), engineOptions{Retain: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer e2.Close()
			got := policyState(t, e2.get(cfg.ID))
			if got != live {
				t.Errorf("after the crash and replay the policy state differs from the live one (applied %d of %d):\n live %s\n got  %s", applied, stored, live, got)
			}
			s, _ := st.LoadState(ctx, cfg.ID)
			if s.AppliedSeq >= s.RewardSeq {
				t.Errorf("the test did not exercise the replay: durable state applied through %d of %d rewards", s.AppliedSeq, s.RewardSeq)
			}
		})
	}
}

// TestFrozenPlaysPastDecisions checks the freeze rule draws only arms the
// policy released, in proportion.
func TestFrozenPlaysPastDecisions(t *testing.T) {
	x := &experiment{released: []int64{0, 3, 0, 1}, src: newPolicySource()}
	n := make([]int, 4)
	for range 4000 {
		n[x.frozenArm()]++
	}
	if n[0] != 0 || n[2] != 0 || n[1] < 2700 || n[3] < 800 {
		t.Errorf("frozen draws %v, want about [0 3000 0 1000]", n)
	}
}

// TestSelectStreamsDiffer: every engine draws from its own secret ChaCha8
// key (no seeded source), so two fresh experiments disagree.
func TestSelectStreamsDiffer(t *testing.T) {
	a, b := newPolicySource(), newPolicySource()
	if a.Uint64() == b.Uint64() && a.Uint64() == b.Uint64() {
		t.Error("two policy sources produced the same words: the select stream must be keyed from crypto/rand")
	}
	seed := newSeed()
	a.updates(seed)
	b.updates(seed)
	if a.Uint64() != b.Uint64() {
		t.Error("the update stream is not determined by its seed")
	}
}

type sqliteStore = sqlite.Store

func openSQLite(path string) (*sqlite.Store, error) { return sqlite.Open(context.Background(), path) }

// TestConcurrentInProcess runs decisions, rewards (with duplicates and
// conflicts), reads and metric scrapes concurrently on two experiments in
// process, for the race detector (go test -race), and checks the counts.
func TestConcurrentInProcess(t *testing.T) {
	st := testStore(t, filepath.Join(t.TempDir(), "db.sqlite"))
	s, _, err := New(context.Background(), Options{Store: st, AdminKey: "race-admin-key-0123456789", Retain: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var xs []*experiment
	for _, pol := range []string{"dp-ts-ucb", "mts-gaussian"} {
		b := &Budget{Mu: 3, Delta: 1e-6}
		cfg, raw := mustConfig(t, createRequest{Name: pol, Arms: []string{"a", "b", "c"}, Policy: pol, Horizon: 100000, Budget: b, DefaultReward: new(0.5), RewardWait: "1s"})
		x, err := s.eng.create(ctx, cfg, raw)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			x := xs[g%2]
			for i := range 150 {
				ds, err := s.eng.decide(ctx, x, []string{"", fmt.Sprint("g", g, "-", i)}, nil, false)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.eng.reward(ctx, x, ds[0].EventID, 1); err != nil {
					t.Error(err)
				}
				s.eng.reward(ctx, x, ds[0].EventID, 1) // duplicate
				s.eng.reward(ctx, x, ds[0].EventID, 0) // conflict
				if i%10 == 0 {
					view(x, true)
					s.eng.m.proc.Gather()
					s.eng.m.exps.Gather()
				}
			}
		})
	}
	wg.Wait()
	for _, x := range xs {
		v := view(x, true)
		if v.Decisions != 1200 || v.Rewards < 600 {
			t.Errorf("%s: decisions %d rewards %d", x.cfg.Policy, v.Decisions, v.Rewards)
		}
	}
}

// TestDurableDecisions: dp-ts-ucb's decisions are returned only once logged
// (its Select changes the sample counts its accounting relies on), and it
// cannot be configured otherwise.
func TestDurableDecisions(t *testing.T) {
	st := testStore(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	e, err := openEngine(ctx, st, quietLog(), engineOptions{Retain: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	off := false
	if _, err := newConfig(createRequest{Name: "d", Arms: []string{"a", "b"}, Policy: "dp-ts-ucb", Horizon: 1000, Budget: &Budget{Mu: 3, Delta: 1e-6}, DurableDecisions: &off}, "x", time.Now()); err == nil {
		t.Error("dp-ts-ucb accepted durable_decisions: false")
	}
	cfg, raw := mustConfig(t, createRequest{Name: "d", Arms: []string{"a", "b"}, Policy: "dp-ts-ucb", Horizon: 1000, Budget: &Budget{Mu: 3, Delta: 1e-6}})
	if !cfg.DurableDecisions {
		t.Fatal("dp-ts-ucb without durable decisions")
	}
	x, err := e.create(ctx, cfg, raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		ds, err := e.decide(ctx, x, []string{"", ""}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if _, err := st.Decision(ctx, cfg.ID, d.EventID); err != nil {
				t.Fatalf("decision %s returned before it was logged: %v", d.EventID, err)
			}
		}
	}
}

// TestContextualReplay: a contextual policy (features stored with each
// decision) survives a crash between the commit of its last rewards and the
// next one: the replay (with the stored features and seed) restores the
// exact live state, including adaprivate-ts's released noisy batches.
func TestContextualReplay(t *testing.T) {
	for _, tc := range []struct {
		pol    string
		budget *Budget
	}{{"adaprivate-ts", &Budget{Epsilon: 2, Delta: 1e-6}}, {"lints", nil}, {"adaprivate-ucb", &Budget{Epsilon: 2, Delta: 1e-6}}} {
		t.Run(tc.pol, func(t *testing.T) {
			st := testStore(t, filepath.Join(t.TempDir(), "db.sqlite"))
			ctx := context.Background()
			e, err := openEngine(ctx, st, quietLog(), engineOptions{Retain: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var armed atomic.Bool
			release := make(chan struct{})
			var x *experiment
			e.w.hook = func() {
				if armed.Load() {
					x.mu.Lock()
					a := x.appliedSeq
					x.mu.Unlock()
					if a >= 120 {
						<-release
					}
				}
			}
			dim := 3
			cfg, err := newConfig(createRequest{Name: "c", Arms: []string{"a", "b", "c", "d"}, Policy: tc.pol, Horizon: 5000, Budget: tc.budget, Dim: &dim}, newID("exp_"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(cfg)
			if x, err = e.create(ctx, cfg, raw); err != nil {
				t.Fatal(err)
			}
			r := newPolicySource()
			cands := func() [][]float64 {
				out := make([][]float64, 4)
				for i := range out {
					out[i] = make([]float64, dim)
					for j := range out[i] {
						out[i][j] = float64(r.Uint64()%1000)/1000 - 0.5
					}
				}
				return out
			}
			for i := 0; i < 120; i++ {
				ds, err := e.decide(ctx, x, []string{""}, cands(), false)
				if err != nil {
					t.Fatal(err)
				}
				if i == 119 {
					armed.Store(true)
				}
				if _, err := e.reward(ctx, x, ds[0].EventID, float64(i%2)); err != nil {
					t.Fatal(err)
				}
			}
			live := policyState(t, x)
			e.w.abort.Store(true)
			close(release)
			e.crash()
			e2, err := openEngine(ctx, st, quietLog(), engineOptions{Retain: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer e2.Close()
			if got := policyState(t, e2.get(cfg.ID)); got != live {
				t.Errorf("state after crash and replay differs from the live one:\n live %.300s\n got  %.300s", live, got)
			}
			s, _ := st.LoadState(ctx, cfg.ID)
			if s.AppliedSeq >= s.RewardSeq {
				t.Errorf("the replay was not exercised (applied %d of %d)", s.AppliedSeq, s.RewardSeq)
			}
		})
	}
}

// Generated event ids must sort by the time they were made (the store's
// event-id index then grows at its right edge) and still be unique and
// unguessable within a millisecond.
func TestEventIDsSortByTime(t *testing.T) {
	e := &experiment{ids: noise.NewSecureSource()}
	t0 := time.UnixMilli(1_800_000_000_000)
	var prev string
	seen := map[string]bool{}
	for i := range 2000 {
		now := t0.Add(time.Duration(i/10) * time.Millisecond) // ten ids per millisecond
		id := e.newEventID(now)
		if len(id) != 3+26 || id[:3] != "ev_" {
			t.Fatalf("id %q: want ev_ and 26 characters", id)
		}
		if seen[id] {
			t.Fatalf("id %q generated twice", id)
		}
		seen[id] = true
		if i%10 == 0 && i > 0 && id <= prev {
			t.Fatalf("id %q made at a later millisecond sorts before %q", id, prev)
		}
		prev = id
	}
	// Ids within one millisecond share the 6-byte time prefix (first 9
	// characters of base32hex cover 45 bits) and differ after it.
	a, b := e.newEventID(t0), e.newEventID(t0)
	if a[:3+9] != b[:3+9] || a == b {
		t.Fatalf("same-millisecond ids %q and %q", a, b)
	}
}

// frozenProb is the distribution frozenArm draws from: the exact share of
// each arm among the released decisions, uniform when there were none
// (20000 draws, 5 standard errors).
func TestFrozenProbIsFrozenArmDistribution(t *testing.T) {
	for _, released := range [][]int64{{3, 0, 7}, {0, 0, 0, 0}, {1}} {
		e := &experiment{src: newPolicySource(), released: released}
		const n = 20000
		freq := make([]float64, len(released))
		for range n {
			freq[e.frozenArm()]++
		}
		var sum float64
		for i := range freq {
			p := e.frozenProb(i)
			sum += p
			if d := math.Abs(freq[i]/n - p); d > 5*math.Sqrt(p*(1-p)/n)+1e-12 {
				t.Errorf("released %v, arm %d: frequency %.4f vs frozenProb %.4f", released, i, freq[i]/n, p)
			}
		}
		if math.Abs(sum-1) > 1e-15 {
			t.Errorf("released %v: frozenProb sums to %v", released, sum)
		}
	}
}

// Which served policies state propensities is a privacy decision (docs/privacy-model.md
// rule 2): exactly the non-private ones that can and the AdaPrivate pair,
// whose probabilities are post-processing of their released snapshot. A
// policy added to that set, or a private one in it, fails here until it is
// reviewed, and the 400 message (propensityPolicies) names them all.
func TestPropensityPoliciesListed(t *testing.T) {
	want := map[string]bool{"adaprivate-ts": true, "adaprivate-ucb": true, "beta-ts": true, "ucb1": true, "lints": true, "linucb": true,
		"lazy-dp-ts": true, "anytime-lazy-ucb": true, "adap-ucb": true, "dp-se": true, "dp-ts": true, "mt-ucb": true, "mt-ts": true}
	// Private policies whose SelectProbs reads released state only: the
	// AdaPrivate snapshot, and the pure-DP epoch policies' released noisy
	// values (epoch means, tree sums) with public counts.
	released := map[string]bool{"adaprivate-ts": true, "adaprivate-ucb": true,
		"lazy-dp-ts": true, "anytime-lazy-ucb": true, "adap-ucb": true, "dp-se": true, "dp-ts": true, "mt-ucb": true, "mt-ts": true}
	dim := 2
	for _, d := range bandit.All(bandit.AnyKind) {
		if d.Serving == nil {
			continue
		}
		req := createRequest{Name: d.Name, Arms: []string{"a", "b", "c"}, Policy: d.Name, Horizon: 1000}
		if d.NewContextual != nil {
			req.Dim = &dim
		}
		var cfg *Config
		var errs []error
		for _, b := range []*Budget{{Epsilon: 1, Delta: 1e-6}, {Mu: 3, Delta: 1e-6}, nil} {
			req.Budget = b
			c, err := newConfig(req, newID("exp_"), time.Now())
			if err == nil {
				cfg = c
				break
			}
			errs = append(errs, err)
		}
		if cfg == nil {
			t.Fatalf("%s: no configuration: %v", d.Name, errs)
		}
		private := cfg.Budget != nil
		x, err := newExperiment(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if has := x.props != nil; has != want[d.Name] {
			t.Errorf("%s: states propensities = %v, want %v", d.Name, has, want[d.Name])
		}
		if x.props != nil && private && !released[d.Name] {
			t.Errorf("%s is private and states propensities: only post-processing of released state may", d.Name)
		}
		if want[d.Name] && !strings.Contains(propensityPolicies, d.Name) {
			t.Errorf("propensityPolicies does not name %s", d.Name)
		}
	}
}

// TestValidationMessages: a request that breaks the contract gets a 400
// naming the field and the rule, also inside the allOf that makes budget
// nullable (before, "budget: doesn't match all schemas from allOf").
func TestValidationMessages(t *testing.T) {
	v, err := newValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, want string }{
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":10,"budget":{"epsilon":1,"delta":0}}`, "budget.delta: number must be more than 0"},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":10,"budget":{"epsilon":1,"delta":1e-6,"eps":2}}`, `budget: property "eps" is unsupported`},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":0,"budget":null}`, "horizon: number must be at least 1"},
		{`{"name":"","arms":["a","b"],"policy":"ts-gaussian","horizon":10,"budget":null}`, "name: minimum string length is 1"},
	} {
		r := httptest.NewRequest("POST", "/v1/experiments", strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		e := v.check(r, []byte(c.body))
		if e == nil || e.status != 400 || !strings.HasPrefix(e.Message, c.want) || strings.Contains(e.Message, "doesn't match all schemas") {
			t.Errorf("%s: %+v, want a 400 mentioning %q", c.body, e, c.want)
		}
	}
}
