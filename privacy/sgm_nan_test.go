package privacy

import (
	"math"
	"testing"
)

// TestSGMNeverZeroWhenTheSumBreaksDown: where the fractional-order series
// cannot be evaluated (its terms or error bound overflow to NaN), ε(α) must
// be the safe +Inf, never 0, which would claim the mechanism costs nothing.
// Two regions used to return 0: integer orders above 2²⁰ (they skip the
// exact integer sum; the series now evaluates them, its tail vanishing at an
// integer order) and fractional orders at σ below about 1e-8 (the tail terms
// overflow). Rényi divergence does not decrease with the order, nor with a
// smaller σ, so each value must be at least a finite neighbour's.
func TestSGMNeverZeroWhenTheSumBreaksDown(t *testing.T) {
	for _, c := range []struct {
		q, sigma, alpha  float64 // the case that used to return 0
		nq, nsigma, nalp float64 // a neighbour it must not be below
	}{
		{0.01, 1000, 1<<20 + 1, 0.01, 1000, 1 << 20},
		{0.7, 1000, 1<<20 + 1, 0.7, 1000, 1 << 20},
		{0.3, 1.4125375446242172e-08, 1.5, 0.3, 1e-7, 1.5},
	} {
		got, err := SubsampledGaussianRDP(c.q, c.sigma, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := SubsampledGaussianRDP(c.nq, c.nsigma, c.nalp)
		if err != nil {
			t.Fatal(err)
		}
		if !(ref > 0) || !(got >= ref) {
			t.Errorf("ε(q=%v, σ=%v, α=%v) = %v, below ε(q=%v, σ=%v, α=%v) = %v", c.q, c.sigma, c.alpha, got, c.nq, c.nsigma, c.nalp, ref)
		}
		if math.IsNaN(got) {
			t.Errorf("NaN for q=%v σ=%v α=%v", c.q, c.sigma, c.alpha)
		}
	}
}
