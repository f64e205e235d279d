package linear

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// TestLinTSDisjointUpdateBeforeSelectPanics: with one model per arm, an
// Update that comes before any Select has no arm to go to; it must panic,
// not silently train some arm's model.
func TestLinTSDisjointUpdateBeforeSelectPanics(t *testing.T) {
	p, err := NewLinTS(LinTSOptions{Dim: 2, K: 3, Lambda: 1, V: 1, Disjoint: true}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a disjoint Update before any Select did not panic")
		}
	}()
	p.Update([]float64{1, 0}, 1)
}

// TestLinTSDisjointSampleScale: with one model per arm, arm a's sample is
// x_aᵀθ̂_a + v·√(x_aᵀA_a⁻¹x_a)·Z. Arm 0 is fresh (A = λI with λ = 4, so the
// sample is N(0, (v/2)²) at x = e₁, v = 1); arm 1 has seen reward ½ at e₁
// 10⁴ times (its sample is ½ with s.d. 1/√10004 ≈ 0.01, which moves the
// answer by under 1e-3). Arm 0 wins with probability P(Z/2 > ½) = Φ(−1) =
// 0.1587; over 4,000 seeded rounds within 0.02 (more than 5 standard
// errors).
func TestLinTSDisjointSampleScale(t *testing.T) {
	p, err := NewLinTS(LinTSOptions{Dim: 2, K: 2, Lambda: 4, V: 1, Disjoint: true}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	e1 := []float64{1, 0}
	for range 10000 {
		p.UpdateArm(1, e1, 0.5)
	}
	wins := 0
	const n = 4000
	for range n {
		if p.Select([][]float64{e1, e1}) == 0 {
			wins++
		}
	}
	want := 0.5 * math.Erfc(1/math.Sqrt2) // Φ(−1)
	if got := float64(wins) / n; math.Abs(got-want) > 0.02 {
		t.Errorf("the fresh arm won %.4f of the rounds, want Φ(−1) = %.4f", got, want)
	}
}

// TestLinTSTies: equal samples go to the first candidate: a duplicated
// candidate with the shared model, and identical fresh arms with v = 0.
func TestLinTSTies(t *testing.T) {
	shared, _ := NewLinTS(LinTSOptions{Dim: 2, K: 2, Lambda: 1, V: 1}, rand.New(rand.NewPCG(5, 6)))
	disjoint, _ := NewLinTS(LinTSOptions{Dim: 2, K: 2, Lambda: 1, V: 0, Disjoint: true}, rand.New(rand.NewPCG(5, 6)))
	x := []float64{0.3, 0.4}
	for i := range 50 {
		if a := shared.Select([][]float64{x, x}); a != 0 {
			t.Fatalf("round %d, shared model, the same candidate twice: chose %d, want 0", i, a)
		}
		if a := disjoint.Select([][]float64{x, x}); a != 0 {
			t.Fatalf("round %d, disjoint fresh arms with v = 0: chose %d, want 0", i, a)
		}
	}
}

// TestLinTSDisjointParam: the registry's disjoint = 1 selects one model per
// arm, 0 the shared model.
func TestLinTSDisjointParam(t *testing.T) {
	s := bandit.Setting{Dim: 2, K: 3}
	if !lintsOptions(s, bandit.Params{"disjoint": 1}).Disjoint || lintsOptions(s, bandit.Params{"disjoint": 0}).Disjoint {
		t.Error("disjoint = 1 must select the per-arm models and 0 the shared one")
	}
}
