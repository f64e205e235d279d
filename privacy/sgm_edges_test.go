package privacy

import (
	"math"
	"testing"
)

// TestSGMOverflowIsInf: at σ just above the early +Inf cutoff (about
// 5e-155) the exact ε(α) ≥ α/(2σ²)·(something of order 1) is far beyond the
// float64 range, and some terms of the fractional series overflow to +Inf;
// the result must be +Inf, not the sum of the terms that did not overflow.
func TestSGMOverflowIsInf(t *testing.T) {
	for _, c := range [][3]float64{{0.7, 1e-153, 100.5}, {0.3, 1e-153, 100.5}, {0.7, 1e-152, 1000.5}} {
		got, err := SubsampledGaussianRDP(c[0], c[1], c[2])
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(got, 1) {
			t.Errorf("ε(α=%v; q=%v, σ=%v) = %v, want +Inf (the exact value overflows)", c[2], c[0], c[1], got)
		}
	}
}

// TestSGMIntegerOrdersAboveTwoToTheTwenty: integer orders above 2²⁰ go
// through the fractional series, whose tail vanishes at an integer order; the
// value must be finite, at least ε(2²⁰) (Rényi divergence grows with the
// order) and at most the full-batch Gaussian's α/(2σ²).
func TestSGMIntegerOrdersAboveTwoToTheTwenty(t *testing.T) {
	const q, sigma = 0.01, 1000.0
	lo, err := SubsampledGaussianRDP(q, sigma, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, alpha := range []float64{1<<20 + 1, 1<<20 + 2} {
		got, err := SubsampledGaussianRDP(q, sigma, alpha)
		if err != nil {
			t.Fatal(err)
		}
		if hi := alpha / (2 * sigma * sigma); !(got >= lo && got <= hi) {
			t.Errorf("ε(α=%v; q=%v, σ=%v) = %v, want within [ε(2²⁰), α/(2σ²)] = [%v, %v]", alpha, q, sigma, got, lo, hi)
		}
	}
}
