package linear

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDPSVDDimensionBounds: the feature dimension may be anything in
// [1, n_items], both ends included (one item, one dimension; as many
// dimensions as items), and the result has that many columns.
func TestDPSVDDimensionBounds(t *testing.T) {
	rows := []RatingRow{{Items: []int{0}, Values: []float64{1}}, {Items: []int{0}, Values: []float64{0.5}}}
	for _, c := range []struct{ items, dim int }{{1, 1}, {3, 3}} {
		r := rows
		if c.items == 3 {
			r = []RatingRow{{Items: []int{0, 2}, Values: []float64{1, 2}}, {Items: []int{1}, Values: []float64{3}}}
		}
		res, err := DPSVD(c.items, r, DPSVDOptions{Dim: c.dim, Sigma: 1, Rand: rand.New(rand.NewPCG(1, 1))})
		if err != nil {
			t.Errorf("n_items = %d, d = %d: %v", c.items, c.dim, err)
			continue
		}
		if len(res.Features) != c.items || len(res.Features[0]) != c.dim {
			t.Errorf("n_items = %d, d = %d: features %d×%d", c.items, c.dim, len(res.Features), len(res.Features[0]))
		}
	}
}

// TestDPSVDSecondMoment: DP-SVD releases C = (1/n)Σ_u x̃_u x̃_uᵀ + noise, x̃_u
// the user's rating vector scaled into the unit ball (the clipping that
// bounds the sensitivity). With a negligible σ its eigenvalues are C's:
// here C = diag(1, ¼, 1)/3 (a rating of 3 clipped to 1, one of ½ kept, one
// of −2 clipped to −1), plus a user with two ratings (0.6, 0.8) of norm 1
// whose cross term 0.48 couples items 0 and 2:
// C = [[1 + 0.36, 0, 0.48], [0, 0.25, 0], [0.48, 0, 1 + 0.64]]/4.
func TestDPSVDSecondMoment(t *testing.T) {
	rows := []RatingRow{
		{Items: []int{0}, Values: []float64{3}},
		{Items: []int{1}, Values: []float64{0.5}},
		{Items: []int{2}, Values: []float64{-2}},
		{Items: []int{2, 0}, Values: []float64{0.8, 0.6}},
	}
	res, err := DPSVD(3, rows, DPSVDOptions{Dim: 3, Sigma: 1e-13, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	// The 2×2 block [[1.36, 0.48], [0.48, 1.64]]/4 has eigenvalues
	// (3 ± √(0.28² + 4·0.48²))/8 = (3 ± 1)/8.
	want := []float64{0.5, 0.25, 0.0625}
	for i, w := range want {
		if math.Abs(res.Eigenvalues[i]-w) > 1e-11 {
			t.Errorf("eigenvalues %v, want %v (the clipped second moment)", res.Eigenvalues, want)
			break
		}
	}
}

// TestDPSVDNoiseScale: with all ratings 0 the one released entry of a
// one-item C is pure noise N(0, σ²), and the PSD projection keeps
// max(0, ·): its mean over 4,000 seeds is σ/√(2π) within 5%.
func TestDPSVDNoiseScale(t *testing.T) {
	const sigma, n = 0.7, 4000
	rows := []RatingRow{{Items: []int{0}, Values: []float64{0}}}
	var sum float64
	for s := range n {
		res, err := DPSVD(1, rows, DPSVDOptions{Dim: 1, Sigma: sigma, Rand: rand.New(rand.NewPCG(uint64(s), 9))})
		if err != nil {
			t.Fatal(err)
		}
		sum += res.Eigenvalues[0]
	}
	want := sigma / math.Sqrt(2*math.Pi)
	if got := sum / n; math.Abs(got-want) > 0.05*want {
		t.Errorf("mean of max(0, noise) = %v, want σ/√(2π) = %v", got, want)
	}
}
