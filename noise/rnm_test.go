package noise

import (
	"math"
	"testing"
)

// TestNoisyMaxFrequencies checks both Report-Noisy-Max samplers against
// exact two-score win probabilities, within 5 s.e. of simN draws (fixed
// seeds):
//   - Laplace: P(score 0 wins) = P(Z0 − Z1 > g) = e^{−g/b}(2 + g/b)/4 for
//     g = f1 − f0 ≥ 0 (the difference of two Lap(b) has density
//     (1 + |x|/b)e^{−|x|/b}/(4b));
//   - Gaussian: Φ((f0 − f1)/sqrt(σ0² + σ1²)).
//
// and that an index is always returned, ties to the lowest.
func TestNoisyMaxFrequencies(t *testing.T) {
	check := func(name string, want float64, pick func() int) {
		t.Helper()
		wins := 0
		for range simN {
			if pick() == 0 {
				wins++
			}
		}
		got := float64(wins) / simN
		se := math.Sqrt(want * (1 - want) / simN)
		if math.Abs(got-want) > 5*se {
			t.Errorf("%s: P(score 0 wins) = %.5f, want %.5f ± %.5f (5 s.e.)", name, got, want, 5*se)
		}
	}
	r := newPCG(11)
	for _, g := range []float64{0, 0.7, 2.5} {
		const b = 1.3
		x := g / b
		check("laplace", math.Exp(-x)*(2+x)/4, func() int { return LaplaceNoisyMax(r, []float64{0, g}, b) })
	}
	for _, c := range []struct{ f1, s0, s1 float64 }{{0.4, 1, 0.5}, {-1, 0.3, 2}, {0, 1, 1}} {
		want := 0.5 * math.Erfc((c.f1-0)/math.Hypot(c.s0, c.s1)/math.Sqrt2)
		check("gaussian", want, func() int { return GaussianNoisyMax(r, []float64{0, c.f1}, []float64{c.s0, c.s1}) })
	}
	if got := LaplaceNoisyMax(r, []float64{5, 5, 5}, 0); got != 0 {
		t.Errorf("ties without noise: %d, want the lowest index 0", got)
	}
	if got := GaussianNoisyMax(r, []float64{1, 3, 2}, []float64{0, 0, 0}); got != 1 {
		t.Errorf("without noise: %d, want the argmax 1", got)
	}
	if got := GaussianNoisyMax(r, []float64{-7}, []float64{1}); got != 0 {
		t.Errorf("one score: %d, want 0", got)
	}
	if n := testing.AllocsPerRun(100, func() { GaussianNoisyMax(r, []float64{1, 2}, []float64{1, 1}) }); n != 0 {
		t.Errorf("GaussianNoisyMax allocates %v times", n)
	}
}
