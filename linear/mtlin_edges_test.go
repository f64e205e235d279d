package linear

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/internal/chol"
)

// TestBlPDShiftSearch pins the MT policies' shift search: the first of
// warm/2 (0 below λ·2⁻²⁰), then doublings (from λ after 0), at which
// sym + s·I is positive definite, capped at the Gershgorin bound g.
func TestBlPDShiftSearch(t *testing.T) {
	test := chol.New(2, 1)
	for _, c := range []struct {
		off, lambda, warm, want float64
	}{
		// [[1, 3], [3, 1]]: eigenvalues 4 and −2, g = 4.
		{3, 1, 5, 2.5},               // warm/2 = 2.5 > 2: positive definite at once
		{3, 1, 0, 4},                 // 0, 1, 2 fail; 4 reaches g
		{3, 1, 1e-7, 4},              // warm/2 below λ·2⁻²⁰: from 0
		{1.2, 3, 3 * 0x1p-19, 0.375}, // [[1, 1.2], [1.2, 1]] (eigenvalue −0.2): from 3·2⁻²⁰, doubling to 3·2⁻³
	} {
		sym := []float64{1, c.off, 0, 1} // upper triangle; the lower entry is not read
		if got := blPDShift(sym, 2, c.lambda, c.warm, test); got != c.want {
			t.Errorf("off-diagonal %v, λ = %v, warm = %v: shift %v, want %v", c.off, c.lambda, c.warm, got, c.want)
		}
		if sym[0] != 1 || sym[3] != 1 {
			t.Errorf("the diagonal was not restored: %v", sym)
		}
	}
}

// TestMTLinStats: with a negligible noise (ε0 = 1e12) MT-LinUCB's released
// Ŝ and b̃ are Σ x̃x̃ᵀ and Σ r·x̃ over the clipped features.
func TestMTLinStats(t *testing.T) {
	const d = 3
	p, err := NewMTLinUCB(MTLinOptions{Dim: d, Horizon: 64, Epsilon0: 1e12, Lambda: 1, Alpha: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	checkReleasedStats(t, d, p.Update, p.NoisyStats)
}

// TestMTLinBeyondTheHorizon: after T updates the trees are full, and later
// updates read nothing: the released sums, the shift and Ã stay as they
// were (a rebuild at the horizon would restart the shift search).
func TestMTLinBeyondTheHorizon(t *testing.T) {
	const d, T = 2, 8
	for seed := range uint64(20) {
		p, err := NewMTLinUCB(MTLinOptions{Dim: d, Horizon: T, Epsilon0: 0.5, Lambda: 1, Alpha: 1}, rand.New(rand.NewPCG(seed, 2)))
		if err != nil {
			t.Fatal(err)
		}
		x := []float64{0.6, 0.8}
		for range T {
			p.Update(x, 1)
		}
		shift, warm := p.c.shift, p.c.warm
		for range 3 {
			p.Update(x, 1)
		}
		if p.c.shift != shift || p.c.warm != warm {
			t.Fatalf("seed %d: beyond the horizon the shift moved from %v (warm %v) to %v (warm %v)", seed, shift, warm, p.c.shift, p.c.warm)
		}
	}
}

// TestMTLinDerivationCounts: the derivation counts the d(d+1)/2 Gram trees
// and d reward trees (d = 3: 6 and 3, 9 in all).
func TestMTLinDerivationCounts(t *testing.T) {
	p, err := NewMTLinUCB(MTLinOptions{Dim: 3, Horizon: 16, Epsilon0: 0.1, Lambda: 1, Alpha: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	der := p.Privacy().Derivation
	for _, want := range []string{"9 Laplace tree counters", "d(d+1)/2 = 6 Gram entries", "d = 3 entries of b"} {
		if !strings.Contains(der, want) {
			t.Errorf("derivation %q does not say %q", der, want)
		}
	}
}

// TestMTTargetEpsilon: a pure-ε target needs no δ; ε = 0 (and no μ) is
// refused.
func TestMTTargetEpsilon(t *testing.T) {
	if e, err := mtTargetEpsilon("x", bandit.Target{Epsilon: 1}); err != nil || e != 1 {
		t.Errorf("pure ε = 1 without δ: %v, %v; want 1", e, err)
	}
	if e, err := mtTargetEpsilon("x", bandit.Target{Delta: 1e-5}); err == nil {
		t.Errorf("ε = 0 and no μ: %v accepted", e)
	}
}
