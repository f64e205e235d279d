package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Test contextual policies, so that the simulator's tests do not depend on
// package linear. They are registered under the real names of the
// counterpart mapping (lints, adaprivate-ts) in a test registry only.

// fakeLin is linear Thompson sampling with a diagonal Gram matrix:
// θ̃_j = b_j/A_jj + v·z_j/sqrt(A_jj), A = I + Σ diag(xxᵀ). With sigma > 0,
// every batch rounds b also receives N(0, sigma²) per coordinate (a stand-in
// for AdaPrivate-TS's noise on b).
type fakeLin struct {
	a, b, s, th  []float64
	v, sigma     float64
	batch, count int
	r            *rand.Rand
}

func newFakeLin(d int, v, sigma float64, batch int, r *rand.Rand) *fakeLin {
	p := &fakeLin{a: make([]float64, d), b: make([]float64, d), s: make([]float64, d), th: make([]float64, d),
		v: v, sigma: sigma, batch: batch, r: r}
	for j := range p.a {
		p.a[j] = 1
	}
	return p
}

func (p *fakeLin) Select(cands [][]float64) int {
	for j := range p.th {
		p.th[j] = p.b[j]/p.a[j] + p.v*p.r.NormFloat64()/math.Sqrt(p.a[j])
	}
	best, arm := math.Inf(-1), 0
	for i, x := range cands {
		s := 0.0
		for j, xj := range x {
			s += xj * p.th[j]
		}
		if s > best {
			best, arm = s, i
		}
	}
	return arm
}

func (p *fakeLin) Update(x []float64, r float64) {
	for j, xj := range x {
		p.a[j] += xj * xj
	}
	if p.sigma == 0 {
		for j, xj := range x {
			p.b[j] += r * xj
		}
		return
	}
	for j, xj := range x {
		p.s[j] += r * xj
	}
	if p.count++; p.count == p.batch {
		for j := range p.b {
			p.b[j] += p.s[j] + p.sigma*p.r.NormFloat64()
			p.s[j] = 0
		}
		p.count = 0
	}
}

// fakeCtxReport: ρ-zCDP with ρ = 1/(2σ²) (the batch Gaussian on b, event
// level, parallel composition).
func fakeCtxReport(_ bandit.Setting, p bandit.Params) (privacy.Report, error) {
	rho, _, err := privacy.ZCDPRho(p["epsilon"], p["delta"])
	if err != nil {
		return privacy.Report{}, err
	}
	g := privacy.Guarantee{Notion: privacy.NotionZCDP, Value: rho}
	return privacy.Report{Mechanism: "fake adaprivate-ts", Neighbouring: privacy.EventLevel, Certified: g, Paper: &g, PaperValid: true}, nil
}

func fakeCtxSigma(p bandit.Params) float64 {
	rho, _, err := privacy.ZCDPRho(p["epsilon"], p["delta"])
	if err != nil {
		panic(err)
	}
	return 1 / math.Sqrt(2*rho)
}

var ctxParams = []bandit.Param{
	{Name: "v", Default: 1, Min: 0, Max: math.Inf(1)},
	{Name: "lambda", Default: 1, Min: 1e-9, Max: math.Inf(1)},
}

var fakeCtxDescs = map[string]bandit.Descriptor{
	"lints": {
		Name: "lints", Summary: "test diagonal LinTS", Params: ctxParams,
		NewContextual: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			return newFakeLin(s.Dim, p["v"], 0, 0, r), nil
		},
	},
	"adaprivate-ts": {
		Name: "adaprivate-ts", Summary: "test diagonal AdaPrivate-TS", Private: true,
		Params: append(slices.Clone(ctxParams),
			bandit.Param{Name: "epsilon", Default: 1, Min: 1e-6, Max: math.Inf(1)},
			bandit.Param{Name: "delta", Default: 1e-5, Min: 1e-300, Max: 0.5},
			bandit.Param{Name: "batch", Default: 300, Min: 1, Max: math.Inf(1), Integer: true}),
		NewContextual: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			if r == nil {
				return nil, errors.New("nil rand")
			}
			return newFakeLin(s.Dim, p["v"], fakeCtxSigma(p), int(p["batch"]), r), nil
		},
		Report: fakeCtxReport,
		Calibrate: func(_ bandit.Setting, t bandit.Target, _ bandit.Params) (bandit.Params, error) {
			if t.Mu > 0 {
				return nil, errors.New("only (ε, δ) budgets")
			}
			return bandit.Params{"epsilon": t.Epsilon, "delta": t.Delta}, nil
		},
	},
	// fake-ucb has no counterpart in the mapping.
	"fake-greedy": {
		Name: "fake-greedy", Summary: "test greedy",
		NewContextual: func(s bandit.Setting, _ bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			return newFakeLin(s.Dim, 0, 0, 0, r), nil
		},
	},
}

var fakeCtxRegistry = Registry{
	Lookup: fakeRegistry.Lookup,
	LookupContextual: func(name string) (bandit.Descriptor, error) {
		d, ok := fakeCtxDescs[name]
		if !ok {
			return d, fmt.Errorf("unknown contextual policy %q", name)
		}
		return d, nil
	},
}

const ctxTestEnv = "synthetic-linear:d=8,pool=40,k=5,problem=per-run"

func ctxSpec() Spec {
	return Spec{Env: ctxTestEnv, Horizon: 2000, Runs: 5, Seed: 11,
		Policies: mustParse("lints", "adaprivate-ts:epsilon=1", "adaprivate-ts:epsilon=5,v=0.5", "lints:v=0.5", "fake-greedy")}
}

func TestContextualPlan(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(ctxSpec(), fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Contextual() || p.Env != nil || p.Setting.K != 5 || p.Setting.Dim != 8 || p.Means != nil {
		t.Fatalf("plan: contextual %v, setting %+v", p.Contextual(), p.Setting)
	}
	if !strings.HasPrefix(p.Spec.Env, "synthetic-linear:d=8,pool=40,k=5,theta=2") {
		t.Errorf("env not canonical: %s", p.Spec.Env)
	}
	// Counterparts: adaprivate-ts (v=1) ↔ lints; adaprivate-ts (v=0.5) ↔
	// lints:v=0.5 (more shared parameters agree); no counterpart for
	// non-private entries and for policies outside the mapping.
	want := map[int]int{0: -1, 1: 0, 2: 3, 3: -1, 4: -1}
	for i, w := range want {
		c, ok := p.CounterpartOf(i)
		if ok != (w >= 0) || (ok && c != w) {
			t.Errorf("entry %s: counterpart %d, %v; want %d", p.Entries[i].Name, c, ok, w)
		}
	}
	var desc bytes.Buffer
	if err := p.Describe(&desc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(desc.String(), "non-private counterpart") {
		t.Errorf("Describe does not show counterparts:\n%s", desc.String())
	}
	// A K-armed policy name is refused with the contextual names.
	bad := ctxSpec()
	bad.Policies = mustParse("fake-ts")
	if _, err := NewPlan(bad, fakeCtxRegistry); err == nil || !errors.Is(err, ErrSpec) {
		t.Errorf("K-armed policy on a contextual env: %v", err)
	}
	if _, err := NewPlan(bad, fakeCtxRegistry); err == nil || !strings.Contains(err.Error(), "fake-ts is a policy for a K-armed environment") {
		t.Errorf("K-armed policy on a contextual env: no hint in %v", err)
	}
	kb := testSpec()
	kb.Policies = mustParse("lints")
	if _, err := NewPlan(kb, fakeCtxRegistry); err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "lints is a policy for a contextual environment") {
		t.Errorf("contextual policy on a K-armed env: %v", err)
	}
	if _, err := NewPlan(ctxSpec(), fakeRegistry); err == nil || !strings.Contains(err.Error(), "no contextual policies") {
		t.Errorf("registry without contextual policies: %v", err)
	}
	bad = ctxSpec()
	bad.Env = "synthetic-linear:d=0"
	if _, err := NewPlan(bad, fakeCtxRegistry); err == nil || !errors.Is(err, ErrSpec) {
		t.Errorf("bad contextual env: %v", err)
	}
}

func TestContextualDeterminismAndShards(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(ctxSpec(), fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	one := runSummary(t, p, Options{Workers: 1})
	four := runSummary(t, p, Options{Workers: 4})
	if !bytes.Equal(one, four) {
		t.Fatal("contextual results differ between 1 and 4 workers")
	}
	p2, err := NewPlan(ctxSpec(), fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if again := runSummary(t, p2, Options{Workers: 3}); !bytes.Equal(one, again) {
		t.Fatal("a second contextual plan from the same spec gives different results")
	}
	for _, n := range []int{2, 3} {
		var dirs []string
		for i := n - 1; i >= 0; i-- {
			res, err := p.Run(context.Background(), Options{Workers: 2, Shard: Shard{Index: i, Count: n}})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := res.WritePartial(dir); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, dir)
		}
		merged, err := Merge(dirs, fakeCtxRegistry)
		if err != nil {
			t.Fatal(err)
		}
		if got := summaryBytes(t, merged); !bytes.Equal(got, one) {
			t.Fatalf("%d contextual shards merged differ from the unsharded run", n)
		}
	}
	// Adding a policy does not change the others' results (policy streams
	// hash the complete spec; the environment stream is shared).
	more := ctxSpec()
	more.Policies = append(mustParse("lints:v=2"), more.Policies...)
	pm, err := NewPlan(more, fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := p.Run(context.Background(), Options{})
	rb, _ := pm.Run(context.Background(), Options{})
	for i, r := range ra.Runs {
		o := rb.Runs[i+p.Spec.Runs]
		if r.Reward != o.Reward || r.Oracle != o.Oracle || !slices.Equal(r.Pseudo, o.Pseudo) {
			t.Fatalf("cell %d changed when a policy was added", i)
		}
	}
}

// TestContextualInvariants checks the regret bookkeeping against an
// independent replay of the environment stream, the common random numbers
// (every cell of a run sees the same candidates, hence the same oracle
// reward), pulls summing to T and the counterpart percentages.
func TestContextualInvariants(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(ctxSpec(), fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	T, R := p.Spec.Horizon, p.Spec.Runs
	last := len(p.Checkpoints) - 1
	for _, r := range res.Runs {
		n := int64(0)
		for _, c := range r.Pulls {
			n += c
		}
		if n != int64(T) {
			t.Errorf("%s run %d: %d pulls, want %d", p.Entries[r.Entry].Name, r.Run, n, T)
		}
		if base := res.Runs[r.Run]; r.Oracle != base.Oracle {
			t.Errorf("%s run %d: oracle reward %v differs from entry 0's %v (common random numbers)", p.Entries[r.Entry].Name, r.Run, r.Oracle, base.Oracle)
		}
		if got := r.Oracle - r.Reward; math.Abs(r.Realised[last]-got) > 1e-9 {
			t.Errorf("realised regret %v, want oracle − reward %v", r.Realised[last], got)
		}
		for j := 1; j < len(p.Checkpoints); j++ {
			if r.Pseudo[j] < r.Pseudo[j-1]-1e-12 {
				t.Fatalf("pseudo-regret decreases at t=%d", p.Checkpoints[j])
			}
		}
	}
	// Replay run 2 with the environment alone: the oracle reward must agree.
	er, _ := p.Streams(0, 2)
	e := p.Ctx.ForRun(2)
	cands := candidateBuffers(e.K(), e.Dim())
	oracle := 0.0
	for range T {
		e.Next(er, cands)
		oracle += e.Best()
	}
	if got := res.Runs[2].Oracle; got != oracle {
		t.Errorf("oracle reward %v, replay %v", got, oracle)
	}
	agg, err := res.Aggregate()
	if err != nil {
		t.Fatal(err)
	}
	s := agg.Summary
	if !s.Env.Contextual || s.Env.Dim != 8 || s.Env.K != 5 {
		t.Errorf("env summary %+v", s.Env)
	}
	for i, ps := range s.Policies {
		if math.Abs(ps.OracleRewardMean-ps.ExpectedRewardMean-ps.RegretMean) > 1e-6 {
			t.Errorf("%s: oracle %v − expected %v ≠ regret %v", ps.Name, ps.OracleRewardMean, ps.ExpectedRewardMean, ps.RegretMean)
		}
		c, ok := p.CounterpartOf(i)
		if ok != (ps.PctOfCounterpart != nil) {
			t.Fatalf("%s: pct %v but counterpart %v", ps.Name, ps.PctOfCounterpart, ok)
		}
		if !ok {
			continue
		}
		if ps.Counterpart != p.Entries[c].Name {
			t.Errorf("%s: counterpart %q", ps.Name, ps.Counterpart)
		}
		m, se, _ := agg.Pct(i, c)
		if *ps.PctOfCounterpart != m || *ps.PctOfCounterpartStderr != se {
			t.Errorf("%s: pct %v ± %v, Pct gives %v ± %v", ps.Name, *ps.PctOfCounterpart, *ps.PctOfCounterpartStderr, m, se)
		}
		// By hand for run 0.
		x, y := agg.Runs[i*R], agg.Runs[c*R]
		if want := 100 * (x.Oracle - x.Pseudo[last]) / (y.Oracle - y.Pseudo[last]); !(want > 50 && want < 150) {
			t.Errorf("%s: run 0 at %v%% of its counterpart", ps.Name, want)
		}
	}
	// A learner beats greedy-without-exploration or at least random: the
	// expected reward of every policy is above half the oracle's.
	for _, ps := range s.Policies {
		if ps.ExpectedRewardMean < 0.5*ps.OracleRewardMean {
			t.Errorf("%s: expected reward %v vs oracle %v", ps.Name, ps.ExpectedRewardMean, ps.OracleRewardMean)
		}
	}
}

func TestContextualEqualBudget(t *testing.T) {
	t.Parallel()
	spec := ctxSpec()
	spec.Policies = mustParse("lints", "adaprivate-ts", "adaprivate-ts:epsilon=3,v=0.5")
	spec.Budget = &bandit.Target{Epsilon: 2, Delta: 1e-5}
	p, err := NewPlan(spec, fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if p.Entries[0].Note != "not private" {
		t.Errorf("lints note %q", p.Entries[0].Note)
	}
	for _, en := range p.Entries[1:] {
		if en.Params["epsilon"] != 2 || en.Params["delta"] != 1e-5 || !strings.Contains(en.Note, "calibrated") {
			t.Errorf("%s: params %v, note %q", en.Name, en.Params, en.Note)
		}
	}
	if !strings.Contains(p.Entries[2].Note, "calibration replaced epsilon=3") {
		t.Errorf("note %q", p.Entries[2].Note)
	}
}

func TestPlayContextualDoesNotAllocate(t *testing.T) {
	for _, tc := range []struct {
		pol string
		reg Registry
	}{
		{"lints", fakeCtxRegistry}, {"lints", Default}, {"linucb", Default},
		{"adaprivate-ts:epsilon=1", Default}, {"adaprivate-ucb:epsilon=1", Default}, {"adaprivate-ts:epsilon=1,amp=0.3", Default},
	} {
		p, err := NewPlan(Spec{Env: "synthetic-linear:d=20,pool=100,k=5", Horizon: 5000, Runs: 1,
			Policies: mustParse(tc.pol)}, tc.reg)
		if err != nil {
			t.Fatal(err)
		}
		er, pr := p.Streams(0, 0)
		en := p.Entries[0]
		pol, err := en.desc.NewContextual(p.Setting, en.Params, pr)
		if err != nil {
			t.Fatal(err)
		}
		e := p.Ctx.ForRun(0)
		cands := candidateBuffers(e.K(), e.Dim())
		out := RunResult{Pseudo: make([]float64, len(p.Checkpoints)), Realised: make([]float64, len(p.Checkpoints)),
			Pulls: make([]int64, p.Setting.K)}
		tick := func(int) bool { return true }
		if n := testing.AllocsPerRun(3, func() {
			if err := playContextual(pol, e, er, cands, p.Checkpoints, &out, tick); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: playContextual allocates %v times per run of %d rounds", tc.pol, n, p.Spec.Horizon)
		}
	}
}

func TestContextualWriteFiles(t *testing.T) {
	t.Parallel()
	spec := ctxSpec()
	spec.Runs, spec.Horizon = 2, 300
	_, agg := runAggregate(t, spec, fakeCtxRegistry)
	dir := t.TempDir()
	if err := agg.WriteFiles(dir, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SummaryFile, CurvesFile, RunsFile, PlotBase + ".svg", PlotBase + ".png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	var sum struct {
		Env      map[string]any   `json:"env"`
		Policies []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Env["contextual"] != true || sum.Env["dim"] != 8.0 {
		t.Errorf("env %v", sum.Env)
	}
	for _, k := range []string{"regret_mean", "reward_mean", "expected_reward_mean", "oracle_reward_mean"} {
		if _, ok := sum.Policies[1][k]; !ok {
			t.Errorf("summary policy has no %s", k)
		}
	}
	if sum.Policies[1]["counterpart"] != "lints" || sum.Policies[1]["pct_of_counterpart"] == nil {
		t.Errorf("adaprivate-ts summary: %v", sum.Policies[1])
	}
	if _, ok := sum.Policies[0]["pct_of_counterpart"]; ok {
		t.Errorf("lints has a pct_of_counterpart")
	}
	runs, _ := os.ReadFile(filepath.Join(dir, RunsFile))
	if !strings.HasPrefix(string(runs), "policy,run,regret,realised_regret,reward,expected_reward,oracle_reward,pulls_0,") {
		t.Errorf("runs.csv header: %s", strings.SplitN(string(runs), "\n", 2)[0])
	}
}

// The K-armed summary has none of the contextual keys.
func TestKArmedSummaryUnchanged(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	b := runSummary(t, p, Options{})
	for _, k := range []string{"contextual", "expected_reward_mean", "oracle_reward_mean", "counterpart", "pct_of", `"oracle"`, "expected_reward"} {
		if bytes.Contains(b, []byte(k)) {
			t.Errorf("K-armed output contains %s", k)
		}
	}
}

func TestCounterparts(t *testing.T) {
	if c, ok := Counterpart("adaprivate-ts"); !ok || c != "lints" {
		t.Errorf("adaprivate-ts → %q", c)
	}
	if c, ok := Counterpart("adaprivate-ucb"); !ok || c != "linucb" {
		t.Errorf("adaprivate-ucb → %q", c)
	}
	if _, ok := Counterpart("lints"); ok {
		t.Error("lints has a counterpart")
	}
	for k, v := range Counterparts() {
		if _, ok := Counterpart(v); ok || k == v {
			t.Errorf("%s → %s: a counterpart must be non-private", k, v)
		}
	}
}

// Every policy of the counterpart mapping is a registered contextual policy:
// the keys private, the counterparts not.
func TestCounterpartsRegistered(t *testing.T) {
	for k, v := range Counterparts() {
		d, err := Default.LookupContextual(k)
		if err != nil || !d.Private {
			t.Errorf("%s: %v, private %v", k, err, d.Private)
		}
		c, err := Default.LookupContextual(v)
		if err != nil || c.Private {
			t.Errorf("counterpart %s of %s: %v, private %v", v, k, err, c.Private)
		}
	}
}

// A counterpart that earned nothing in some run gives no percentage (and the
// summary still encodes: no NaN or Inf).
func TestContextualPctZeroBase(t *testing.T) {
	p, err := NewPlan(ctxSpec(), fakeCtxRegistry)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := len(p.Checkpoints) - 1
	r0 := &res.Runs[0] // lints, run 0: the counterpart of entry 1
	r0.Pseudo[last] = r0.Oracle
	agg, err := res.Aggregate()
	if err != nil {
		t.Fatal(err)
	}
	if agg.Summary.Policies[1].PctOfCounterpart != nil {
		t.Error("percentage of a counterpart with zero expected reward")
	}
	if _, _, ok := agg.Pct(1, 0); ok {
		t.Error("Pct ok with a zero base")
	}
	var b bytes.Buffer
	if err := agg.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
}
