package linear

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/privacy"
)

// TestBaselineParameterBounds pins the closed and open ends of the shared
// baseline checks: each valid range is stated in its error message, and a
// value exactly at a closed end must be accepted, one at an open end refused.
func TestBaselineParameterBounds(t *testing.T) {
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v, want accepted", what, err)
		}
	}
	bad := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", what, err, want)
		}
	}
	_, err := blRho("x", 1e-6, 0.5, 0) // ε = 1e-6 and δ = ½: both closed ends
	ok("ε = 1e-6, δ = 0.5", err)
	_, err = blRho("x", 1, 0, 0)
	bad("δ = 0", err, "delta = 0 is outside its valid range (0, 0.5]")
	_, err = blRho("x", math.Nextafter(1e-6, 0), 1e-5, 0)
	bad("ε just below 1e-6", err, "outside its valid range [1e-06, ∞)")
	r, err := blRho("x", 0, 0, 0x1p-1074) // the smallest positive ρ is a ρ
	if err != nil || r != 0x1p-1074 {
		t.Errorf("ρ = 2⁻¹⁰⁷⁴: %v, %v; want it back", r, err)
	}
	_, err = blRho("x", 1, 1e-5, -1)
	bad("ρ = −1", err, "rho = -1 must be finite and > 0")

	_, _, err = blTargetEpsDelta("x", bandit.Target{Epsilon: 1, Delta: 0})
	bad("target δ = 0", err, "δ in (0, 1) (got δ = 0)")
	_, _, err = blTargetEpsDelta("x", bandit.Target{Epsilon: 1, Delta: 1})
	bad("target δ = 1", err, "δ in (0, 1) (got δ = 1)")

	ok("T = 1", blCheckHorizon("x", 1))
	bad("T = 0", blCheckHorizon("x", 0), "horizon T = 0 must be ≥ 1")
	ok("B = 1 ≤ T = 5", blCheckBatch("x", 1, 5))
	ok("B = T = 5", blCheckBatch("x", 5, 5))
	bad("B = 0", blCheckBatch("x", 0, 5), "batch = 0 is outside its valid range [1, T = 5]")
	bad("B = 6 > T = 5", blCheckBatch("x", 6, 5), "batch = 6 is outside")
}

// TestBaselineReportPaperZero: a paper value of exactly 0 is a value (a
// paper that claims no cost is shown, and shown wrong), only a negative one
// means "none stated".
func TestBaselineReportPaperZero(t *testing.T) {
	r := blZCDPReport("m", 0.5, 0, false, "d")
	if r.Paper == nil || r.Paper.Value != 0 || r.Paper.Notion != privacy.NotionZCDP {
		t.Errorf("paper 0: %+v, want a ρ = 0 paper value", r.Paper)
	}
	if r = blZCDPReport("m", 0.5, -1, false, "d"); r.Paper != nil {
		t.Errorf("paper −1: %+v, want none", r.Paper)
	}
}

// TestBlUCBAlphaZeroIsGreedy: with α = 0 the UCB rule is the greedy one on
// xᵀθ (no width term at all, not even a 0·√(…) that could be NaN), ties to
// the lowest index.
func TestBlUCBAlphaZeroIsGreedy(t *testing.T) {
	f := chol.New(2, 1)
	theta := []float64{1, 0}
	buf := make([]float64, 2)
	cands := [][]float64{{0.2, 0.9}, {0.5, 0}, {0.5, 0.8}}
	if got := blUCB("x", cands, 2, f, theta, 0, buf); got != 1 {
		t.Errorf("α = 0: chose %d, want 1 (the first of the two with xᵀθ = 0.5)", got)
	}
	if got := blUCB("x", cands, 2, f, theta, 1, buf); got != 2 {
		t.Errorf("α = 1: chose %d, want 2 (the widest of the tied means)", got)
	}
}

// TestBlCalibrateOutOfReach: a target whose ρ underflows to 0 once divided
// by the certified factor is refused; a 0 would read as "derive ρ from ε
// and δ" in the policy's parameters.
func TestBlCalibrateOutOfReach(t *testing.T) {
	// At δ = 1e-300 the largest ρ meeting ε = 1e-160 is below the smallest
	// float64 (privacy.ZCDPRho returns 0, the safe side).
	for _, eps := range []float64{1e-160, 1e-200} {
		p, err := blCalibrateZCDP("x", bandit.Target{Epsilon: eps, Delta: 1e-300, Basis: bandit.BasisCertified}, 4, false)
		if err == nil || !strings.Contains(err.Error(), "out of reach") {
			t.Errorf("ε = %v: %v, %v; want an out-of-reach error", eps, p, err)
		}
	}
}

// TestBaselineLambdaMinBoundIllConditioned: A = I + N·uuᵀ with u = (1, 1)/√2
// has λ_min = 1 exactly, but at N = 1e12…1e16 its floating-point Cholesky
// factor is off by up to N·2⁻⁵³ in its last pivot, and so are the power
// iteration's estimate and the Cholesky test of A − cI. The certified bound
// must still be ≤ 1: the margin 4d(d+1)·2⁻⁵³·max Aᵢᵢ covers the test's
// rounding.
func TestBaselineLambdaMinBoundIllConditioned(t *testing.T) {
	for _, n := range []float64{1e12, 1e14, 1e15, 3e15, 1e16} {
		f := chol.New(2, 1)
		s := math.Sqrt(n / 2)
		f.Update([]float64{s, s})
		if got := newBLEig(2).lowerBound(f, 1e-9); got > 1 || got < 1e-9 {
			t.Errorf("N = %g: certified λ_min bound %v, want in [1e-9, 1] (λ_min = 1)", n, got)
		}
	}
}

// TestBlArgmaxDotTies: ties go to the lowest index (as the other argmax
// rules of the package), so a logged choice is reproducible.
func TestBlArgmaxDotTies(t *testing.T) {
	buf := make([]float64, 2)
	cands := [][]float64{{0, 1}, {0.5, 0}, {0.5, 0.3}, {0.5, -0.2}}
	if got := blArgmaxDot("x", cands, 2, []float64{1, 0}, buf); got != 1 {
		t.Errorf("three candidates tied at xᵀθ = 0.5: chose %d, want the first, 1", got)
	}
}

// TestBlEigCertifies: the restore check accepts the bound lowerBound
// certified, and refuses λ_min itself when A is ill-conditioned, where the
// Cholesky test's rounding could otherwise let through a bound above λ_min
// (a restored state must not bring a λ_min bound A does not have).
func TestBlEigCertifies(t *testing.T) {
	for _, n := range []float64{1e14, 1e15, 1e16} {
		f := chol.New(2, 1)
		s := math.Sqrt(n / 2)
		f.Update([]float64{s, s})
		e := newBLEig(2)
		if lo := e.lowerBound(f, 1e-9); lo > 1e-9 && !e.certifies(f, lo) {
			t.Errorf("N = %g: lowerBound's own %v is not certified", n, lo)
		}
		for _, c := range []float64{1, 1.5} {
			if e.certifies(f, c) {
				t.Errorf("N = %g: c = %v certified, but λ_min = 1 and the margin is %v", n, c, 4*6*0x1p-53*(1+n/2))
			}
		}
	}
}

// TestBlRestoreTreesCountsMustAgree: the tree counters of one policy hold the
// same number of leaves; a state whose first tree is empty and whose second
// is not (a tampered or mixed-up state) is refused, in either order.
func TestBlRestoreTreesCountsMustAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	mk := func(n int) *counting.Counter {
		c, err := counting.NewGaussian(counting.GaussianOptions{Capacity: 16, Sigma: 1, Lower: -1, Sensitivity: 2}, counting.SimNoise(r))
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := c.Add(0.5); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	for _, counts := range [][2]int{{0, 3}, {3, 0}, {2, 3}} {
		states := blTreeStates([]*counting.Counter{mk(counts[0]), mk(counts[1])})
		cs := []*counting.Counter{mk(0), mk(0)}
		if err := blRestoreTrees("x", cs, states, r); err == nil || !strings.Contains(err.Error(), "different numbers of leaves") {
			t.Errorf("trees with %d and %d leaves: %v, want refused", counts[0], counts[1], err)
		}
	}
	cs := []*counting.Counter{mk(0), mk(0)}
	if err := blRestoreTrees("x", cs, blTreeStates([]*counting.Counter{mk(0), mk(0)}), r); err != nil {
		t.Errorf("two empty trees: %v", err)
	}
}

// TestBlAddLeafFullCounter: past the horizon a counter is full; the leaf is
// not read (false), with no panic, and the counter is unchanged.
func TestBlAddLeafFullCounter(t *testing.T) {
	c, err := counting.NewGaussian(counting.GaussianOptions{Capacity: 2, Sigma: 1, Lower: -1, Sensitivity: 2}, counting.SimNoise(rand.New(rand.NewPCG(1, 2))))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false, false} {
		var got bool
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("leaf %d: panic %v", i, r)
				}
			}()
			got = blAddLeaf(c, 0.5, -1, 1)
		}()
		if got != want || c.Count() != min(i+1, 2) {
			t.Errorf("leaf %d into a counter of capacity 2: %v (count %d), want %v", i, got, c.Count(), want)
		}
	}
}
