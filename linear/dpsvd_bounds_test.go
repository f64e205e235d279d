package linear

import (
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
