package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPureTreePoliciesServed runs the tree-based pure-DP policies (DP-TS,
// Mishra & Thakurta's private UCB and TS, the latter with and without its
// gap-estimation phase) through the service with the budget ε = 1,
// δ = 1e-6, horizon 10,000 and 3 arms: each is calibrated to exactly ε = 1
// on the certified basis (the epsilon parameter is ε for dp-ts, k·ε for
// mt-ucb and mt-ts without phase A, 2k·ε for mt-ts) and runs with grid = 1;
// the filter is charged the whole ε at the first decision and never more;
// after a restart the policy's state (tree nodes and released values
// included) is exactly as before, and the decisions go on with the spent ε
// unchanged. Rewards are Bernoulli 0.75/0.51/0.26 from a seeded PCG.
func TestPureTreePoliciesServed(t *testing.T) {
	cases := []struct {
		policy, params string
		wantEps        float64 // the calibrated epsilon parameter
	}{
		{"dp-ts", ``, 1},
		{"mt-ucb", ``, 3},
		{"mt-ts", ``, 6},
		{"mt-ts", `{"skipGap":1,"gap":0.5,"randomPulls":50}`, 3},
	}
	for _, c := range cases {
		t.Run(c.policy+c.params, func(t *testing.T) { testPureTreeServed(t, c.policy, c.params, c.wantEps) })
	}
}

func testPureTreeServed(t *testing.T, policy, params string, wantEps float64) {
	ts := newTS(t)
	body := `{"name":"x","arms":["a","b","c"],"policy":"` + policy + `","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}`
	if params != "" {
		body += `,"params":` + params
	}
	code, c := ts.admin("POST", "/v1/experiments", body+`}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, c)
	}
	id := c["id"].(string)
	path := "/v1/experiments/" + id
	ps, _ := c["params"].(map[string]any)
	if ps["epsilon"] != wantEps || ps["grid"] != 1.0 {
		t.Errorf("params %v: want epsilon = %v (certified ε = 1 exactly) and grid = 1", ps, wantEps)
	}
	pv := c["privacy"].(map[string]any)
	cert := pv["certified"].(map[string]any)
	if cert["notion"] != "pure" || cert["value"] != 1.0 || pv["epsilon"] != 1.0 {
		t.Errorf("privacy %v: want certified pure ε = 1 exactly", pv)
	}
	if c["accounting"] != AccountFilter {
		t.Errorf("accounting %v: want a filter", c["accounting"])
	}
	if w, ok := c["warning"].(string); ok && strings.Contains(w, "pays for only") {
		t.Errorf("warning %q: the budget pays for every decision (the whole ε is charged once)", w)
	}
	if d := fmt.Sprint(pv["derivation"]); !strings.Contains(d, "discrete Laplace on a power-of-two grid") ||
		!strings.Contains(d, "-DP (event-level) for the whole transcript") {
		t.Errorf("the privacy statement does not state the guarantee and the grid noise in words: %q", d)
	}

	rng := rand.New(rand.NewPCG(2025, 6))
	means := map[string]float64{"a": 0.75, "b": 0.51, "c": 0.26}
	n := 0
	spent := func() (float64, bool) {
		t.Helper()
		_, m := ts.admin("GET", path, "")
		pv := m["privacy"].(map[string]any)
		return pv["spent"].(map[string]any)["epsilon"].(float64), pv["exhausted"].(bool)
	}
	// batch makes k decisions in one request and rewards them in one.
	batch := func(k int) {
		t.Helper()
		base := fmt.Sprint("e", n)
		code, d := ts.admin("POST", path+"/decisions", fmt.Sprintf(`{"event_id":"%s","count":%d}`, base, k))
		if code != 200 {
			t.Fatalf("decisions %d..: %d %v", n+1, code, d)
		}
		ds := d["decisions"].([]any)
		if len(ds) != k {
			t.Fatalf("%d decisions, want %d: %v", len(ds), k, d)
		}
		var rs []string
		for _, x := range ds {
			dec := x.(map[string]any)
			mean, ok := means[dec["arm"].(string)]
			if !ok {
				t.Fatalf("decision %v", dec)
			}
			r := 0
			if rng.Float64() < mean {
				r = 1
			}
			rs = append(rs, fmt.Sprintf(`{"event_id":"%s","reward":%d}`, dec["event_id"], r))
		}
		if code, m := ts.admin("POST", path+"/rewards", `{"rewards":[`+strings.Join(rs, ",")+`]}`); code != 202 {
			t.Fatalf("rewards %d..: %d %v", n+1, code, m)
		}
		n += k
	}
	state := func() string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, m := ts.admin("GET", path, "")
			in := m["internal"].(map[string]any)
			if int(in["rewards_applied_seq"].(float64)) == n {
				b, _ := json.Marshal(in["policy_state"])
				return string(b)
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s only %v of %d rewards are applied", in["rewards_applied_seq"], n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	batch(1)
	if s, ex := spent(); s != 1 || ex {
		t.Fatalf("after the first decision: spent ε = %v (exhausted %v), want exactly the budget 1", s, ex)
	}
	for n < 700 {
		batch(33)
		if s, ex := spent(); s != 1 || ex {
			t.Fatalf("after %d decisions: spent ε = %v (exhausted %v), want 1", n, s, ex)
		}
	}
	before := state()
	var st struct {
		Meter *struct {
			Charged bool `json:"charged"`
		} `json:"meter"`
		Trees []json.RawMessage `json:"trees"`
		State struct {
			Meter *struct {
				Charged bool `json:"charged"`
			} `json:"meter"`
			Trees []json.RawMessage `json:"trees"`
		} `json:"state"`
		Options struct {
			Grid    bool
			Epsilon float64
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(before), &st); err != nil {
		t.Fatalf("policy state %s: %v", before, err)
	}
	charged := (st.Meter != nil && st.Meter.Charged) || (st.State.Meter != nil && st.State.Meter.Charged)
	if !charged || !st.Options.Grid || st.Options.Epsilon != wantEps {
		t.Errorf("policy state: charged %v, grid %v, ε %v; want true, true, %v", charged, st.Options.Grid, st.Options.Epsilon, wantEps)
	}
	trees := append(st.Trees, st.State.Trees...)
	if policy != "mt-ts" || params != "" { // mt-ts at the defaults is still in phase A (no tree yet)
		if len(trees) != 3 || !strings.Contains(before, `"discrete":true`) {
			t.Errorf("policy state has no grid trees: %s", before)
		}
	}

	ts.restart()
	if after := state(); after != before {
		t.Fatalf("the policy state changed across the restart (a kept value redrawn?):\nbefore %s\nafter  %s", before, after)
	}
	if s, ex := spent(); s != 1 || ex {
		t.Fatalf("after the restart: spent ε = %v (exhausted %v), want 1 and not exhausted", s, ex)
	}
	for n < 1300 {
		batch(50)
	}
	state()
	_, m := ts.admin("GET", path, "")
	if s, ex := spent(); s != 1 || ex || m["decisions"] != float64(n) || m["frozen_decisions"] != 0.0 {
		t.Errorf("after %d decisions across a restart: spent ε = %v, exhausted %v, decisions %v, frozen %v; want 1, false, %d, 0",
			n, s, ex, m["decisions"], m["frozen_decisions"], n)
	}
}

// TestPureTreeReplay: rewards are applied to the policy after their commit,
// and the state with them applied is written by the next commit; a crash in
// between replays them on restart with the stored update seed. For the tree
// policies that replay inserts leaves and releases tree nodes (and DP-TS's
// logarithmic releases), so the replayed state must equal the live one
// exactly: the same nodes, drawn again from the same seed, not new noise.
func TestPureTreeReplay(t *testing.T) {
	for _, pol := range []string{"dp-ts", "mt-ucb", "mt-ts"} {
		t.Run(pol, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			st := testStore(t, path)
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
					if a >= 200 {
						<-release
					}
				}
			}
			var params map[string]float64
			if pol == "mt-ts" {
				params = map[string]float64{"skipGap": 1, "gap": 0.5, "randomPulls": 20}
			}
			cfg, raw := mustConfig(t, createRequest{Name: "r", Arms: []string{"a", "b", "c"}, Policy: pol, Horizon: 5000,
				Budget: &Budget{Epsilon: 1, Delta: 1e-6}, Params: params})
			x, err = e.create(ctx, cfg, raw)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
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
			live := policyState(t, x)
			if !strings.Contains(live, `"discrete":true`) {
				t.Fatalf("the live state holds no grid tree: %s", live)
			}
			e.w.abort.Store(true)
			close(release)
			e.crash()
			e2, err := openEngine(ctx, st, quietLog(), engineOptions{Retain: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer e2.Close()
			if got := policyState(t, e2.get(cfg.ID)); got != live {
				t.Errorf("after the crash and replay the policy state differs from the live one:\n live %s\n got  %s", live, got)
			}
			s, _ := st.LoadState(ctx, cfg.ID)
			if s.AppliedSeq >= s.RewardSeq {
				t.Errorf("the test did not exercise the replay: durable state applied through %d of %d rewards", s.AppliedSeq, s.RewardSeq)
			}
		})
	}
}
