package sim

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/env"
)

func TestCheckpoints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ T, n int }{
		{1, 200}, {2, 200}, {7, 2}, {199, 200}, {200, 200}, {201, 200}, {1000, 200},
		{100000, 200}, {1000000, 200}, {10000000, 200}, {1 << 40, 200}, {1000, 2}, {1000, 3},
	} {
		cps := Checkpoints(tc.T, tc.n)
		if want := min(tc.T, tc.n); len(cps) != want {
			t.Errorf("T=%d n=%d: %d points, want %d", tc.T, tc.n, len(cps), want)
		}
		if cps[0] != 1 || cps[len(cps)-1] != tc.T {
			t.Errorf("T=%d n=%d: grid runs from %d to %d, want 1 to T", tc.T, tc.n, cps[0], cps[len(cps)-1])
		}
		for i := 1; i < len(cps); i++ {
			if cps[i] <= cps[i-1] {
				t.Fatalf("T=%d n=%d: not strictly increasing at %d: %d, %d", tc.T, tc.n, i, cps[i-1], cps[i])
			}
		}
		// Log spacing: past the start, where geometric gaps are below one
		// round, consecutive ratios stay near the ideal T^{1/(n−1)}.
		if tc.T > 10*tc.n {
			ideal := math.Pow(float64(tc.T), 1/float64(tc.n-1))
			for i := 1; i < len(cps); i++ {
				if cps[i-1] < 2*tc.n {
					continue
				}
				r := float64(cps[i]) / float64(cps[i-1])
				if r > ideal*1.02 || r < ideal/1.02 {
					t.Errorf("T=%d n=%d: ratio %g at %d, want ≈ %g", tc.T, tc.n, r, cps[i], ideal)
				}
			}
		}
	}
}

func testSpec() Spec {
	return Spec{Env: "bernoulli:0.75,0.625,0.5,0.375,0.25", Horizon: 3000, Runs: 6, Seed: 7,
		Policies: mustParse("fake-ts", "fake-ts:c=4", "fixed")}
}

// runAggregate plans spec, runs it with default options and aggregates it.
func runAggregate(t *testing.T, spec Spec, reg Registry) (*Plan, *Aggregate) {
	t.Helper()
	p, err := NewPlan(spec, reg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := res.Aggregate()
	if err != nil {
		t.Fatal(err)
	}
	return p, agg
}

func runSummary(t *testing.T, p *Plan, o Options) []byte {
	t.Helper()
	res, err := p.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return summaryBytes(t, res)
}

func summaryBytes(t *testing.T, res *Result) []byte {
	t.Helper()
	agg, err := res.Aggregate()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := agg.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if err := agg.WriteCurves(&b); err != nil {
		t.Fatal(err)
	}
	if err := agg.WriteRuns(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	one := runSummary(t, p, Options{Workers: 1})
	four := runSummary(t, p, Options{Workers: 4})
	if !bytes.Equal(one, four) {
		t.Fatal("summary, curves and runs differ between 1 and 4 workers")
	}
	// A fresh plan from the same spec gives the same bytes too.
	p2, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if again := runSummary(t, p2, Options{Workers: 3}); !bytes.Equal(one, again) {
		t.Fatal("a second plan from the same spec gives different results")
	}
}

func TestShardsMergeToUnsharded(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	want := runSummary(t, p, Options{Workers: 2})
	for _, n := range []int{2, 3} {
		var dirs []string
		for i := n - 1; i >= 0; i-- { // any order
			res, err := p.Run(context.Background(), Options{Workers: 2, Shard: Shard{Index: i, Count: n}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Runs) == p.Cells() {
				t.Fatalf("shard %d/%d ran every cell", i, n)
			}
			if _, err := res.Aggregate(); err == nil {
				t.Fatalf("aggregating shard %d/%d alone should fail", i, n)
			}
			dir := t.TempDir()
			if err := res.WritePartial(dir); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, dir)
		}
		merged, err := Merge(dirs, fakeRegistry)
		if err != nil {
			t.Fatal(err)
		}
		if got := summaryBytes(t, merged); !bytes.Equal(got, want) {
			t.Fatalf("%d shards merged differ from the unsharded run", n)
		}
	}
}

func TestMergeErrors(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	part := func(i, n int, p *Plan) string {
		res, err := p.Run(context.Background(), Options{Shard: Shard{Index: i, Count: n}})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := res.WritePartial(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	s0, s1 := part(0, 2, p), part(1, 2, p)
	other := testSpec()
	other.Seed++
	po, err := NewPlan(other, fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	o1 := part(1, 2, po)
	t3 := part(2, 3, p)
	// A shard file with one cell removed.
	cut := t.TempDir()
	pp, err := ReadPartial(s1)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Plan: p, Shard: pp.Shard, Runs: pp.Runs[1:]}
	if err := res.WritePartial(cut); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dirs []string
		msg  string
	}{
		{"missing shard", []string{s0}, "shard(s) 1/2 missing"},
		{"duplicate shard", []string{s0, s0}, "are both shard 0/2"},
		{"different sweep", []string{s0, o1}, "different sweep"},
		{"different split", []string{s0, t3}, "split differently"},
		{"missing cell", []string{s0, cut}, "cells are missing"},
		{"not a shard dir", []string{s0, t.TempDir()}, "has no partial.json"},
	} {
		_, err := Merge(tc.dirs, fakeRegistry)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, ErrSpec) {
			t.Errorf("%s: error %v, want one containing %q and matching ErrSpec", tc.name, err, tc.msg)
		}
	}
}

func TestRunInvariants(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	T := p.Spec.Horizon
	fixedRuns := map[int]RunResult{}
	for _, r := range res.Runs {
		var n int64
		pseudo := 0.0
		for a, k := range r.Pulls {
			n += k
			pseudo += float64(k) * (p.Best - p.Means[a])
		}
		if n != int64(T) {
			t.Fatalf("%s run %d: pulls sum to %d, want %d", p.Entries[r.Entry].Name, r.Run, n, T)
		}
		last := len(p.Checkpoints) - 1
		if math.Abs(r.Pseudo[last]-pseudo) > 1e-9*pseudo {
			t.Errorf("pseudo-regret %g, want Σ n_a Δ_a = %g", r.Pseudo[last], pseudo)
		}
		if want := p.Best*float64(T) - r.Reward; math.Abs(r.Realised[last]-want) > 1e-9 {
			t.Errorf("realised regret %g, want μ*T − reward = %g", r.Realised[last], want)
		}
		if p.Entries[r.Entry].Spec.Name == "fixed" {
			fixedRuns[r.Run] = r
		}
	}
	// Common random numbers: the fixed-arm policy's rewards are exactly the
	// arm-0 column of the run's reward table, which every policy shares.
	for run, r := range fixedRuns {
		er, _ := env.Streams(p.streamHash, 12345, run)
		sum := 0.0
		for range T {
			sum += p.Env.Pull(0, er)
		}
		if sum != r.Reward {
			t.Errorf("run %d: fixed policy earned %g, the run's reward table gives %g", run, r.Reward, sum)
		}
	}
}

func TestPlayDoesNotAllocate(t *testing.T) {
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	en := p.Entries[0]
	er, pr := p.Streams(0, 0)
	pol, err := en.desc.New(p.Setting, en.Params, pr)
	if err != nil {
		t.Fatal(err)
	}
	out := RunResult{Pseudo: make([]float64, len(p.Checkpoints)), Realised: make([]float64, len(p.Checkpoints)),
		Pulls: make([]int64, p.Setting.K)}
	gaps := make([]float64, p.Setting.K)
	ticks := 0
	tick := func(int) bool { ticks++; return true }
	allocs := testing.AllocsPerRun(5, func() {
		clear(out.Pulls)
		if err := play(pol, p.Env, er, p.Checkpoints, gaps, p.Best, &out, tick); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("play allocates %v times per run of %d rounds", allocs, p.Spec.Horizon)
	}
}

func TestEqualBudgetFake(t *testing.T) {
	t.Parallel()
	for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
		spec := testSpec()
		spec.Policies = mustParse("fake-ts", "fake-ts:c=3", "fixed")
		spec.Budget = &bandit.Target{Epsilon: 5, Delta: 1e-5, Basis: basis}
		p, err := NewPlan(spec, fakeRegistry)
		if err != nil {
			t.Fatal(err)
		}
		// fake-ts expands into 3; fake-ts:c=3 is calibrated (c replaced); fixed runs as is.
		if len(p.Entries) != 5 {
			t.Fatalf("%d entries, want 5: %v", len(p.Entries), p.Entries)
		}
		if p.Spec.Delta != 1e-5 {
			t.Errorf("privacy δ %g, want the budget's 1e-5", p.Spec.Delta)
		}
		for _, en := range p.Entries {
			if !en.Private {
				if en.Note != "not private" {
					t.Errorf("%s: note %q, want \"not private\"", en.Name, en.Note)
				}
				continue
			}
			a, err := bandit.Achieved(en.Report, *spec.Budget, p.Spec.Delta)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Meets || a.Basis != basis || !strings.Contains(en.Note, "calibrated") {
				t.Errorf("%s (%s basis): %s, note %q", en.Name, basis, a, en.Note)
			}
			if *en.Statement.Epsilon > 5*(1+1e-9) {
				t.Errorf("%s: certified ε %g exceeds the budget 5", en.Name, *en.Statement.Epsilon)
			}
			if len(en.Calibrated) != 1 || en.Calibrated[0] != "c" || !strings.Contains(en.Name, "c=") {
				t.Errorf("%s: calibrated %v", en.Name, en.Calibrated)
			}
		}
	}
}

func TestInputErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		msg  string
	}{
		{"bad env", func(s *Spec) { s.Env = "bernoulli:0.5,1.3" }, "outside [0,1]"},
		{"unknown env", func(s *Spec) { s.Env = "poisson:1" }, "unknown environment kind"},
		{"unknown policy", func(s *Spec) { s.Policies = mustParse("nope") }, `unknown policy "nope" (known: fake-ts, fixed, needs-t)`},
		{"bad parameter", func(s *Spec) { s.Policies = mustParse("fake-ts:c=-1") }, "c = -1 is outside its valid range"},
		{"unknown parameter", func(s *Spec) { s.Policies = mustParse("fake-ts:d=1") }, `unknown parameter "d"`},
		{"New fails", func(s *Spec) { s.Policies = mustParse("needs-t"); s.Horizon = 50 }, "outside its valid range [100, ∞)"},
		{"duplicate", func(s *Spec) { s.Policies = mustParse("fixed", "fixed") }, "listed twice"},
		{"horizon", func(s *Spec) { s.Horizon = 0 }, "horizon 0 is outside"},
		{"runs", func(s *Spec) { s.Runs = -1 }, "runs -1 is outside"},
		{"no policies", func(s *Spec) { s.Policies = nil }, "no policies"},
		{"delta", func(s *Spec) { s.Delta = 2 }, "delta 2 is outside"},
		{"budget", func(s *Spec) { s.Budget = &bandit.Target{Epsilon: 1} }, "delta 0 is outside"},
	} {
		s := testSpec()
		tc.edit(&s)
		_, err := NewPlan(s, fakeRegistry)
		if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want ErrSpec containing %q", tc.name, err, tc.msg)
		}
	}
}

func TestParseBudget(t *testing.T) {
	t.Parallel()
	good := map[string]bandit.Target{
		"epsilon=1,delta=1e-6":                   {Epsilon: 1, Delta: 1e-6, Basis: bandit.BasisPaper},
		"epsilon=1, delta=1e-6, basis=certified": {Epsilon: 1, Delta: 1e-6, Basis: bandit.BasisCertified},
		"gdp=2":                                  {Mu: 2, Basis: bandit.BasisPaper},
		"gdp=2,delta=1e-5,basis=paper":           {Mu: 2, Delta: 1e-5, Basis: bandit.BasisPaper},
	}
	for s, want := range good {
		got, err := ParseBudget(s)
		if err != nil || got != want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if again, err := ParseBudget(FormatBudget(got)); err != nil || again != got {
			t.Errorf("FormatBudget round trip of %q: %+v, %v", s, again, err)
		}
	}
	for _, s := range []string{"", "epsilon=1", "epsilon=-1,delta=1e-6", "gdp=0", "gdp=1,epsilon=1,delta=0.1",
		"epsilon=1,delta=1", "eps", "rho=1", "gdp=1,basis=tight", "gdp=x", "gdp=1,gdp=2"} {
		if _, err := ParseBudget(s); err == nil || !errors.Is(err, ErrSpec) {
			t.Errorf("ParseBudget(%q): error %v, want an input error", s, err)
		}
	}
}

func TestTOML(t *testing.T) {
	t.Parallel()
	good := `
env = "bernoulli:0.6,0.4"
horizon = 1e4
runs = 3
seed = 9
policies = ["fake-ts", "fake-ts:c=3", "fixed"]
checkpoints = 50
[budget]
gdp = 3
basis = "certified"
`
	s, err := ReadTOML(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Horizon != 10000 || s.Runs != 3 || s.Seed != 9 || len(s.Policies) != 3 || s.Checkpoints != 50 ||
		s.Budget == nil || s.Budget.Mu != 3 || s.Budget.Basis != bandit.BasisCertified {
		t.Fatalf("decoded %+v", s)
	}
	if s.Policies[1].Params["c"] != 3 {
		t.Errorf("policy 2: %+v", s.Policies[1])
	}
	// The JSON form round-trips to the same hash.
	p, err := NewPlan(s, fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	b, _ := p.Spec.MarshalJSON()
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if back.Hash() != p.Hash() {
		t.Errorf("JSON round trip changes the hash: %s", b)
	}
	for _, tc := range []struct{ doc, msg string }{
		{"env = \"fixed:1\"\nhorizn = 10\n", "unknown key(s) horizn"},
		{"env = \"fixed:1\"\n[budget]\nepsilom = 1\n", "unknown key(s) budget.epsilom"},
		{"env = \"fixed:1\"\nworkers = 4\npolicy = \"x\"\n", "unknown key(s) workers, policy"},
		{"horizon = 1.5\n", "not an integer"},
		{"policies = [\"fake-ts:c\"]\n", "not key=value"},
		{"env = \n", "spec:"},
		{"[budget]\nepsilon = 1\n", "delta 0 is outside"},
	} {
		_, err := ReadTOML(strings.NewReader(tc.doc))
		if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("TOML %q: error %v, want one containing %q", tc.doc, err, tc.msg)
		}
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	if s, err := ParseShard("2/5"); err != nil || s != (Shard{2, 5}) {
		t.Errorf("ParseShard(2/5) = %v, %v", s, err)
	}
	for _, bad := range []string{"5/5", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	s := testSpec()
	s.Horizon = 500
	p, agg := runAggregate(t, s, fakeRegistry)
	dir := t.TempDir()
	if err := agg.WriteFiles(dir, WriteOptions{LogX: true}); err != nil {
		t.Fatal(err)
	}
	if err := NewManifest(p, Shard{}, 1, nil).WriteManifest(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SummaryFile, CurvesFile, RunsFile, ManifestFile, "regret.svg", "regret.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	s := testSpec()
	s.Horizon = 1 << 30 // would take minutes
	s.Policies = mustParse("fixed")
	p, err := NewPlan(s, fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err = p.Run(ctx, Options{Workers: 2, Progress: func(pr Progress) {
		if n++; n == 50 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// TestQuantile checks the type-7 quantile against values R's quantile() and
// NumPy's percentile() give: 1…10 has median 5.5, 0.9-quantile 9.1 and
// 0.25-quantile 3.25; an even count's median is the mean of the middle two.
func TestQuantile(t *testing.T) {
	xs := []float64{7, 3, 10, 1, 5, 9, 2, 8, 4, 6} // 1…10, shuffled
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.25, 3.25}, {0.5, 5.5}, {0.9, 9.1}, {1, 10}} {
		if got := Quantile(xs, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(1…10, %g) = %v, want %v", c.q, got, c.want)
		}
	}
	if xs[0] != 7 {
		t.Error("Quantile modified its input")
	}
	if got := Quantile([]float64{4, 1, 3}, 0.5); got != 3 {
		t.Errorf("median of {4, 1, 3} = %v, want 3", got)
	}
	for _, bad := range []float64{-0.1, 1.1, math.NaN()} {
		if !math.IsNaN(Quantile(xs, bad)) {
			t.Errorf("Quantile(xs, %v) is not NaN", bad)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile(nil) is not NaN")
	}
}

// TestSummarySpread checks regret_median, regret_p90 and regret_max against
// the runs' final pseudo-regrets, computed here by sorting.
func TestSummarySpread(t *testing.T) {
	t.Parallel()
	s := testSpec()
	s.Horizon, s.Runs = 300, 7
	p, agg := runAggregate(t, s, fakeRegistry)
	last := len(p.Checkpoints) - 1
	for e, ps := range agg.Summary.Policies {
		var fin []float64
		for _, r := range agg.Runs {
			if r.Entry == e {
				fin = append(fin, r.Pseudo[last])
			}
		}
		sort.Float64s(fin)
		// 7 runs: the median is the 4th value, the 0.9-quantile lies 0.4 of
		// the way from the 6th to the 7th.
		p90 := fin[5] + 0.4*(fin[6]-fin[5])
		if ps.RegretMedian != fin[3] || math.Abs(ps.RegretP90-p90) > 1e-9*math.Max(1, p90) || ps.RegretMax != fin[6] {
			t.Errorf("%s: median %v p90 %v max %v; want %v %v %v", ps.Name, ps.RegretMedian, ps.RegretP90, ps.RegretMax, fin[3], p90, fin[6])
		}
	}
}
