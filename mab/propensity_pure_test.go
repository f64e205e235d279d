package mab_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/bandit/conformance"
	"github.com/dpbandit/dpbandit/mab"
)

// The served pure-DP epoch policies state their propensities (issue 11):
// exact for the deterministic rules and the initial pulls, Monte Carlo on
// the given generator for the Thompson rules, from released state only.

type purePropPolicy interface {
	bandit.Policy
	bandit.Propensities
	bandit.Metered
	json.Marshaler
	json.Unmarshaler
}

// purePropStep is a history length and whether SelectProbs is exact there.
type purePropStep struct {
	n     int
	exact bool
}

type purePropCase struct {
	name  string
	build func(r *rand.Rand) purePropPolicy
	means []float64
	steps []purePropStep
	// unreleased perturbs the unreleased raw statistics in a policy's JSON
	// (epoch buffers, running sums, a tree's exact node sums) and reports
	// whether it changed any.
	unreleased func(m map[string]any) bool
	privAt     int // history length of the privacy check (buffers not empty)
}

func purePropCases() []purePropCase {
	const k = 3
	lazyBuf := func(m map[string]any) bool {
		st := m["state"].(map[string]any)
		return perturbArr(st["buf"], st["buf_n"])
	}
	return []purePropCase{
		{
			name: "lazy-dp-ts",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewLazyDPTS(mab.LazyDPTSOptions{K: k, Epsilon: 4, C: 0.5}, r))
			},
			means:      []float64{0.5, 0.55, 0.3},
			steps:      []purePropStep{{0, true}, {2, true}, {3, false}, {40, false}, {300, false}},
			unreleased: lazyBuf,
			privAt:     300,
		},
		{
			name: "anytime-lazy-ucb",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewLazyUCB(mab.LazyUCBOptions{K: k, Epsilon: 1, C1: 2, C2: 3}, r))
			},
			means:      []float64{0.5, 0.55, 0.3},
			steps:      []purePropStep{{0, true}, {1, true}, {3, true}, {40, true}, {301, true}},
			unreleased: lazyBuf,
			privAt:     301,
		},
		{
			name: "adap-ucb",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewAdaPUCB(mab.AdaPUCBOptions{K: k, Epsilon: 1, Alpha: 3.1}, r))
			},
			means: []float64{0.5, 0.55, 0.3},
			// 3: the first episode starts (no episode running); 10, 37,
			// 300: inside an episode or at its end.
			steps: []purePropStep{{0, true}, {2, true}, {3, true}, {4, true}, {10, true}, {37, true}, {300, true}},
			unreleased: func(m map[string]any) bool {
				st := m["state"].(map[string]any)
				done := st["len"].(float64) - st["left"].(float64)
				x := st["sum"].(float64)
				y := perturb(x, done)
				st["sum"] = y
				return y != x
			},
			privAt: 37,
		},
		{
			name: "dp-se",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewDPSE(mab.DPSEOptions{K: k, Epsilon: 5, Beta: 0.5}, r))
			},
			means: []float64{0.9, 0.1, 0.2},
			// 5000: one survivor left (checked below), pulled for good.
			steps: []purePropStep{{0, true}, {1, true}, {2, true}, {100, true}, {1001, true}, {5000, true}},
			unreleased: func(m map[string]any) bool {
				st := m["state"].(map[string]any)
				rounds := st["rounds"].(float64)
				changed := false
				for i, x := range st["sums"].([]any) {
					y := perturb(x.(float64), rounds)
					st["sums"].([]any)[i] = y
					changed = changed || y != x.(float64)
				}
				return changed
			},
			privAt: 100,
		},
		{
			name: "dp-ts",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewDPTS(mab.DPTSOptions{K: k, Horizon: 10000, Epsilon: 4, C: 0.5, Offset: mab.DPTSOffsetSqrtLn}, r))
			},
			means: []float64{0.5, 0.55, 0.3},
			steps: []purePropStep{{0, true}, {2, true}, {3, false}, {40, false}, {300, false}},
			unreleased: func(m map[string]any) bool {
				st := m["state"].(map[string]any)
				changed := perturbArr(st["chunk_sum"], st["chunk_n"])
				for _, tr := range st["trees"].([]any) {
					if tr != nil {
						changed = perturbTree(tr) || changed
					}
				}
				return changed
			},
			privAt: 300,
		},
		{
			name: "mt-ucb",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewMTUCB(mab.MTUCBOptions{K: k, Horizon: 1000, Epsilon: 4, Gamma: 1e-3}, r))
			},
			means: []float64{0.5, 0.55, 0.3},
			steps: []purePropStep{{0, true}, {2, true}, {3, true}, {40, true}, {300, true}},
			unreleased: func(m map[string]any) bool {
				changed := false
				for _, tr := range m["trees"].([]any) {
					changed = perturbTree(tr) || changed
				}
				return changed
			},
			privAt: 300,
		},
		{
			name: "mt-ts",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewMTTS(mab.MTTSOptions{K: k, Horizon: 2000, Epsilon: 8, SkipGap: true, Gap: 1, RandomPulls: 5}, r))
			},
			means: []float64{0.5, 0.55, 0.3},
			// Phase B (round-robin, exact) for 15 rounds, then phase C.
			steps: []purePropStep{{0, true}, {7, true}, {14, true}, {15, false}, {40, false}, {300, false}},
			unreleased: func(m map[string]any) bool {
				st := m["state"].(map[string]any)
				changed := false
				for _, tr := range st["trees"].([]any) {
					changed = perturbTree(tr) || changed
				}
				return changed
			},
			privAt: 300,
		},
		{
			name: "mt-ts-gap-estimation",
			build: func(r *rand.Rand) purePropPolicy {
				return must(mab.NewMTTS(mab.MTTSOptions{K: k, Horizon: 2000, Epsilon: 100}, r))
			},
			means: []float64{0.5, 0.55, 0.3},
			steps: []purePropStep{{0, true}, {10, true}, {200, true}},
			unreleased: func(m map[string]any) bool {
				st := m["state"].(map[string]any)
				changed := false
				for i, x := range st["sums"].([]any) {
					y := perturb(x.(float64), 1)
					st["sums"].([]any)[i] = y
					changed = changed || y != x.(float64)
				}
				return changed
			},
			privAt: 10,
		},
	}
}

// perturb returns x/2 for x > 0, else hi/2: a value in [0, hi] when x is,
// different from x unless both are 0.
func perturb(x, hi float64) float64 {
	if x > 0 {
		return x / 2
	}
	return hi / 2
}

// perturbArr perturbs the JSON array of sums vals, each bounded by the
// matching entry of his.
func perturbArr(vals, his any) bool {
	v, h := vals.([]any), his.([]any)
	changed := false
	for i := range v {
		x := v[i].(float64)
		y := perturb(x, h[i].(float64))
		v[i] = y
		changed = changed || y != x
	}
	return changed
}

// perturbTree perturbs the exact (unreleased) node sums of a counting.State
// in JSON form on the occupied levels, leaving the released nodes alone.
func perturbTree(tr any) bool {
	s := tr.(map[string]any)
	count := int(s["count"].(float64))
	changed := false
	for j, x := range s["exact"].([]any) {
		if count>>j&1 == 1 {
			s["exact"].([]any)[j] = x.(float64) + 0.75
			changed = true
		}
	}
	return changed
}

// purePlay runs n rounds of p on Bernoulli rewards with the given means,
// the rewards drawn from a fixed seed, so that two policies built from the
// same seed have the same history.
func purePlay(p bandit.Policy, means []float64, n int) {
	env := rand.New(rand.NewPCG(51, 52))
	for range n {
		a := p.Select()
		r := 0.0
		if env.Float64() < means[a] {
			r = 1
		}
		p.Update(a, r)
	}
}

func marshal(t *testing.T, p json.Marshaler) []byte {
	t.Helper()
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPureSelectProbsMatchSelect: for each policy and history, two
// policies built from the same seed with the same history: SelectProbs of
// one (on its own generator r) against the Select frequencies of the other,
// within 5 standard errors (conformance.CheckPropensities, which also
// checks that the probabilities sum to 1). SelectProbs leaves the state
// (MarshalJSON) and the policy's generator unchanged (the next Select of
// both agrees); exact ones are one-hot on Select's choice.
func TestPureSelectProbsMatchSelect(t *testing.T) {
	const k, n, draws = 3, 20000, 20000
	for _, c := range purePropCases() {
		nondegenerate := false
		for _, s := range c.steps {
			pa := c.build(rand.New(rand.NewPCG(7, 8)))
			pb := c.build(rand.New(rand.NewPCG(7, 8)))
			purePlay(pa, c.means, s.n)
			purePlay(pb, c.means, s.n)
			before := marshal(t, pa)
			if !bytes.Equal(before, marshal(t, pb)) {
				t.Fatalf("%s after %d rounds: the two copies differ", c.name, s.n)
			}
			out := make([]float64, k)
			d := pa.SelectProbs(nil, out, draws, rand.New(rand.NewPCG(41, uint64(s.n))))
			if after := marshal(t, pa); !bytes.Equal(before, after) {
				t.Fatalf("%s after %d rounds: SelectProbs changed the state:\n%s\n%s", c.name, s.n, before, after)
			}
			if s.exact != (d == 0) || (!s.exact && d != draws) {
				t.Fatalf("%s after %d rounds: SelectProbs returned %d draws, want exact = %v (or %d draws)", c.name, s.n, d, s.exact, draws)
			}
			a, b := pa.Select(), pb.Select()
			if a != b {
				t.Fatalf("%s after %d rounds: after SelectProbs, Select chose %d, its twin %d: SelectProbs moved the policy's generator", c.name, s.n, a, b)
			}
			if d == 0 {
				want := make([]float64, k)
				want[a] = 1
				if !slices.Equal(out, want) {
					t.Errorf("%s after %d rounds: exact SelectProbs %v, want one-hot on Select's choice %d", c.name, s.n, out, a)
				}
			} else if slices.Max(out) < 0.98 {
				nondegenerate = true
			}
			t.Logf("%s after %d rounds: %v (draws %d), Select %d", c.name, s.n, out, d, a)
			if se, ok := pa.(*mab.DPSE); ok && s.n == 5000 && len(se.Survivors()) != 1 {
				t.Errorf("dp-se after 5000 rounds: survivors %v, want one (the exploitation branch)", se.Survivors())
			}
			sel := pb.Select
			nsel := n
			if d == 0 {
				nsel = 200 // exact: Select must repeat its choice
			}
			conformance.CheckPropensities(t, k, nsel, func(o []float64) int { copy(o, out); return d }, sel)
		}
		for _, s := range c.steps {
			if !s.exact && !nondegenerate {
				t.Errorf("%s: no state with a non-degenerate distribution was tested", c.name)
				break
			}
		}
	}
}

// TestPureSelectProbsRecordsNoCharge: SelectProbs before the first Select
// is the first initial pull, exact, and does not record the filter's
// one-time charge (it is not a Select).
func TestPureSelectProbsRecordsNoCharge(t *testing.T) {
	for _, c := range purePropCases() {
		p := c.build(rand.New(rand.NewPCG(3, 4)))
		cost := p.NextCost()
		before := marshal(t, p)
		out := []float64{0.3, 0.3, 0.4}
		if d := p.SelectProbs(nil, out, 100, rand.New(rand.NewPCG(1, 1))); d != 0 || !slices.Equal(out, []float64{1, 0, 0}) {
			t.Errorf("%s: first SelectProbs %v (draws %d), want exact [1 0 0]", c.name, out, d)
		}
		if got := p.NextCost(); got != cost || cost.Value <= 0 {
			t.Errorf("%s: NextCost %v after SelectProbs, want %v (> 0) still", c.name, got, cost)
		}
		if !bytes.Equal(before, marshal(t, p)) {
			t.Errorf("%s: SelectProbs changed the state", c.name)
		}
		if a := p.Select(); a != 0 {
			t.Errorf("%s: first Select %d, want 0", c.name, a)
		}
	}
}

// TestPureSelectProbsReleasedOnly: two policies whose released state is
// equal but whose unreleased statistics differ (the running epoch's or
// batch's sums, a tree's exact node sums) state identical propensities: the
// probabilities are post-processing of released state (docs/privacy-model.md rule 2).
func TestPureSelectProbsReleasedOnly(t *testing.T) {
	const k, draws = 3, 4096
	for _, c := range purePropCases() {
		p := c.build(rand.New(rand.NewPCG(7, 8)))
		purePlay(p, c.means, c.privAt)
		b := marshal(t, p)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if !c.unreleased(m) {
			t.Fatalf("%s after %d rounds: no unreleased statistic to perturb (the test would be empty)", c.name, c.privAt)
		}
		b2, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		q := c.build(rand.New(rand.NewPCG(99, 100)))
		if err := q.UnmarshalJSON(b2); err != nil {
			t.Fatalf("%s: restoring the perturbed state: %v", c.name, err)
		}
		if bytes.Equal(marshal(t, q), b) {
			t.Fatalf("%s: the perturbed state equals the original", c.name)
		}
		o1, o2 := make([]float64, k), make([]float64, k)
		d1 := p.SelectProbs(nil, o1, draws, rand.New(rand.NewPCG(5, 6)))
		d2 := q.SelectProbs(nil, o2, draws, rand.New(rand.NewPCG(5, 6)))
		if d1 != d2 || !slices.Equal(o1, o2) {
			t.Errorf("%s after %d rounds: SelectProbs %v (%d draws) vs %v (%d draws) with only unreleased statistics changed", c.name, c.privAt, o1, d1, o2, d2)
		}
	}
}
