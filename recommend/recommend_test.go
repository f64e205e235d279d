package recommend

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	// The K-armed policies register themselves with package bandit.
	_ "github.com/dpbandit/dpbandit/mab"
)

var budget1 = bandit.Target{Epsilon: 1, Delta: 1e-6}

// easy is the easy instance of the issue: means 0.9 and 0.1, T = 2000.
func easy() Options {
	return Options{Arms: 2, Horizon: 2000, Budget: budget1, Means: []float64{0.9, 0.1}, Runs: 4, Seed: 7}
}

func mustRun(t *testing.T, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// comparable strips what depends on the clock.
func comparable(r *Result) *Result {
	c := *r
	c.Elapsed, c.ElapsedSeconds = 0, 0
	return &c
}

// TestDeterministicForSeed: two runs with the same seed give identical
// results, whatever the number of workers; another seed gives other draws.
func TestDeterministicForSeed(t *testing.T) {
	t.Parallel()
	o := Options{Arms: 3, Horizon: 3000, Budget: budget1, Runs: 3, Seed: 11}
	a := mustRun(t, o)
	o.Workers = 1
	b := mustRun(t, o)
	if !reflect.DeepEqual(comparable(a), comparable(b)) {
		ja, _ := json.Marshal(comparable(a))
		jb, _ := json.Marshal(comparable(b))
		t.Fatalf("same seed, different results:\n%s\n%s", ja, jb)
	}
	o.Seed = 12
	c := mustRun(t, o)
	if reflect.DeepEqual(comparable(a).Rows, comparable(c).Rows) {
		t.Error("seeds 11 and 12 gave identical rows")
	}
}

// TestValidation: every bad option is refused with an error naming the
// value and its valid range.
func TestValidation(t *testing.T) {
	t.Parallel()
	good := Options{Arms: 3, Horizon: 100, Budget: budget1}
	for _, c := range []struct {
		name string
		edit func(*Options)
		want []string
	}{
		{"one arm", func(o *Options) { o.Arms = 1 }, []string{"K = 1", "[2, 1000]"}},
		{"too many arms", func(o *Options) { o.Arms = 1001 }, []string{"K = 1001", "[2, 1000]"}},
		{"zero horizon", func(o *Options) { o.Horizon = 0 }, []string{"T = 0", "[1, 10000000]"}},
		{"long horizon", func(o *Options) { o.Horizon = 1e7 + 1 }, []string{"T = 10000001", "[1, 10000000]"}},
		{"no epsilon", func(o *Options) { o.Budget.Epsilon = 0 }, []string{"epsilon = 0", "(0, 1000]"}},
		{"huge epsilon", func(o *Options) { o.Budget.Epsilon = 1e4 }, []string{"epsilon = 10000", "(0, 1000]"}},
		{"delta 1", func(o *Options) { o.Budget.Delta = 1 }, []string{"delta = 1", "(0, 1)"}},
		{"gdp", func(o *Options) { o.Budget.Mu = 1 }, []string{"gdp μ = 1", "(epsilon, delta)"}},
		{"paper basis", func(o *Options) { o.Budget.Basis = bandit.BasisPaper }, []string{`basis "paper"`, "certified"}},
		{"means length", func(o *Options) { o.Means = []float64{0.5, 0.4} }, []string{"2 values", "K = 3"}},
		{"mean range", func(o *Options) { o.Means = []float64{0.5, 1.5, 0.1} }, []string{"1.5", "arm 2", "[0, 1]"}},
		{"negative runs", func(o *Options) { o.Runs = -1 }, []string{"runs: -1", "[1, 10000]"}},
		{"too many runs", func(o *Options) { o.Runs = 10001 }, []string{"runs: 10001", "[1, 10000]"}},
		{"negative max time", func(o *Options) { o.MaxTime = -time.Second }, []string{"-1s", "[0, ∞)"}},
		{"unknown policy", func(o *Options) { o.Candidates = []string{"nope"} }, []string{`"nope"`, "known:"}},
		{"duplicate policy", func(o *Options) { o.Candidates = []string{"mts-gaussian", "mts-gaussian"} }, []string{"mts-gaussian", "twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := good
			c.edit(&o)
			_, err := Run(context.Background(), o)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestSimulationOnlyPolicyRefused: a policy the service does not run is not
// a candidate.
func TestSimulationOnlyPolicyRefused(t *testing.T) {
	t.Parallel()
	var sim string
	for _, d := range bandit.All(bandit.KArmed) {
		if d.Serving == nil {
			sim = d.Name
			break
		}
	}
	if sim == "" {
		t.Skip("every K-armed policy is served")
	}
	o := Options{Arms: 3, Horizon: 100, Budget: budget1, Candidates: []string{sim}}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "simulation only") {
		t.Errorf("%s: err = %v", sim, err)
	}
}

// TestEasyInstance: on means 0.9/0.1 at T = 2000, ε = 1, the reference row
// has ratio 1, every share lies in [0, 1], every private row meets the
// budget or says the filter stops it, and the candidates come from the
// registry (every served private K-armed policy is a row or a skip).
func TestEasyInstance(t *testing.T) {
	t.Parallel()
	res := mustRun(t, easy())
	var ref *Row
	names := map[string]bool{}
	for i := range res.Rows {
		r := &res.Rows[i]
		names[r.Policy] = true
		if r.Policy == Reference {
			ref = r
			if r.Private || r.Epsilon != nil || r.Guarantee != "not private" {
				t.Errorf("reference row %+v", r)
			}
			continue
		}
		if !r.Private || r.Epsilon == nil {
			t.Errorf("%s: private %v, ε %v", r.Policy, r.Private, r.Epsilon)
		}
		if !strings.HasPrefix(r.Guarantee, "certified ε") {
			t.Errorf("%s: guarantee %q", r.Policy, r.Guarantee)
		}
		if *r.Epsilon > 1*(1+1e-9) && !strings.Contains(r.Note, "filter") {
			t.Errorf("%s: ε = %v above the budget without a note", r.Policy, *r.Epsilon)
		}
		if r.BestShare < 0 || r.BestShare > 1 {
			t.Errorf("%s: best-arm share %v outside [0, 1]", r.Policy, r.BestShare)
		}
		for i, s := range r.Instances {
			if s.BestShare < 0 || s.BestShare > 1 || s.MedianRegret < 0 || s.MeanRegret < 0 {
				t.Errorf("%s, instance %d: %+v", r.Policy, i, s)
			}
		}
	}
	if ref == nil {
		t.Fatal("no reference row")
	}
	if ref.Ratio != 1 || ref.Instances[0].Ratio != 1 {
		t.Errorf("reference ratio %v (instance %v), want 1", ref.Ratio, ref.Instances[0].Ratio)
	}
	if ref.BestShare < 0.9 {
		t.Errorf("UCB1 plays the best of 0.9/0.1 in only %v of the last 20%%", ref.BestShare)
	}
	for _, s := range res.Skipped {
		names[s.Policy] = true
		if s.Reason == "" {
			t.Errorf("%s skipped without a reason", s.Policy)
		}
	}
	for _, n := range Candidates() {
		if !names[n] {
			t.Errorf("served policy %s is neither a row nor skipped", n)
		}
	}
	if len(res.Instances) != 1 || res.Panel || !slices.Equal(res.Instances[0].Means, []float64{0.9, 0.1}) {
		t.Errorf("instances %+v", res.Instances)
	}
	rec := res.Recommendation
	if rec.Policy == "" || rec.Policy == Reference || !strings.Contains(rec.Reason, "lowest regret") || len(rec.Params) == 0 {
		t.Errorf("recommendation %+v", rec)
	}
}

// TestRankedByRatio: rows are sorted by ratio, then mean regret, then name;
// ranks count from 1; the recommendation is the first private row.
func TestRankedByRatio(t *testing.T) {
	t.Parallel()
	res := mustRun(t, Options{Arms: 3, Horizon: 2000, Budget: bandit.Target{Epsilon: 2, Delta: 1e-6}, Runs: 3, Seed: 3})
	if len(res.Rows) < 2 {
		t.Fatalf("only %d rows", len(res.Rows))
	}
	if len(res.Instances) != len(Panel(3)) || !res.Panel {
		t.Errorf("instances %+v, want the panel", res.Instances)
	}
	firstPrivate := ""
	for i, r := range res.Rows {
		if r.Rank != i+1 {
			t.Errorf("row %d has rank %d", i, r.Rank)
		}
		if len(r.Instances) != len(res.Instances) {
			t.Errorf("%s: %d instance stats", r.Policy, len(r.Instances))
		}
		if firstPrivate == "" && r.Private {
			firstPrivate = r.Policy
		}
		if i == 0 {
			continue
		}
		p := res.Rows[i-1]
		if p.Ratio > r.Ratio || (p.Ratio == r.Ratio && (p.MeanRegret > r.MeanRegret ||
			(p.MeanRegret == r.MeanRegret && p.Policy > r.Policy))) {
			t.Errorf("rows %d (%s, %v, %v) and %d (%s, %v, %v) out of order", i, p.Policy, p.Ratio, p.MeanRegret,
				i+1, r.Policy, r.Ratio, r.MeanRegret)
		}
	}
	if res.Recommendation.Policy != firstPrivate {
		t.Errorf("recommended %q, first private row %q", res.Recommendation.Policy, firstPrivate)
	}
}

// TestMaxTime: a tiny time limit returns quickly, with fewer runs or a
// shorter horizon and a note saying so.
func TestMaxTime(t *testing.T) {
	t.Parallel()
	o := Options{Arms: 5, Horizon: 1e6, Budget: budget1, Runs: 50, Seed: 1, MaxTime: 50 * time.Millisecond}
	t0 := time.Now()
	res := mustRun(t, o)
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("took %v with MaxTime %v", el, o.MaxTime)
	}
	if len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, " "), "time limit") {
		t.Errorf("no note: %q", res.Notes)
	}
	if res.Horizon >= o.Horizon && res.Runs >= o.Runs {
		t.Errorf("horizon %d, runs %d: nothing reduced", res.Horizon, res.Runs)
	}
	if res.Runs < 1 || len(res.Rows) == 0 {
		t.Errorf("runs %d, %d rows", res.Runs, len(res.Rows))
	}
}

// TestCandidatesRestrict: naming candidates restricts the rows (the
// reference is always added); progress reaches the total.
func TestCandidatesRestrict(t *testing.T) {
	t.Parallel()
	o := easy()
	o.Candidates = []string{"mts-gaussian"}
	var last, total int
	o.Progress = func(d, n int) { last, total = d, n }
	res := mustRun(t, o)
	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Policy)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"mts-gaussian", Reference}) {
		t.Errorf("rows %v", got)
	}
	if total != 2*o.Runs || last != total {
		t.Errorf("progress %d/%d, want %d/%d", last, total, 2*o.Runs, 2*o.Runs)
	}
}

// TestCancel: a cancelled context stops the comparison with its error.
func TestCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{Arms: 3, Horizon: 1e5, Budget: budget1}); err == nil {
		t.Error("cancelled run returned no error")
	}
}

// TestRowsIndependentOfOtherCandidates: a policy's row depends on the seed,
// the instances and itself only (its own policy stream, the shared reward
// stream), so adding candidates does not change it.
func TestRowsIndependentOfOtherCandidates(t *testing.T) {
	t.Parallel()
	o := easy()
	o.Candidates = []string{"mts-gaussian"}
	few := mustRun(t, o)
	o.Candidates = nil
	all := mustRun(t, o)
	find := func(r *Result, name string) Row {
		for _, row := range r.Rows {
			if row.Policy == name {
				row.Rank = 0
				return row
			}
		}
		t.Fatalf("no row %s", name)
		return Row{}
	}
	for _, n := range []string{Reference, "mts-gaussian"} {
		if a, b := find(few, n), find(all, n); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %+v alone, %+v among all", n, a, b)
		}
	}
}
