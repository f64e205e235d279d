package linear

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestUCBABNoiseReleaseNoise: a release adds N(0, σ²) to each coordinate of
// b̃ and N(0, σ²) / N(0, 2σ²) to the off-diagonal / diagonal entries of Ĝ.
// With all rewards 0 and features 0 the released statistics are the noise
// alone: over 3,000 seeded releases their standard deviations are σ, σ√2 and
// σ within 5%.
func TestUCBABNoiseReleaseNoise(t *testing.T) {
	const sigma, n = 0.8, 3000
	var sb, sd, so float64
	for s := range uint64(n) {
		p, err := NewUCBABNoise(UCBABNoiseOptions{Dim: 2, Lambda: 1, Alpha: 1, BatchSize: 1, Sigma: sigma, Fail: 0.1}, rand.New(rand.NewPCG(s, 5)))
		if err != nil {
			t.Fatal(err)
		}
		p.Update([]float64{0, 0}, 0)
		sb += p.b[0] * p.b[0]
		sd += p.gram[0] * p.gram[0] // entry (0, 0)
		so += p.gram[1] * p.gram[1] // entry (0, 1)
	}
	for _, c := range []struct {
		name      string
		sum, want float64
	}{{"b̃", sb, sigma}, {"Ĝ diagonal", sd, sigma * math.Sqrt2}, {"Ĝ off-diagonal", so, sigma}} {
		if got := math.Sqrt(c.sum / n); math.Abs(got-c.want) > 0.05*c.want {
			t.Errorf("%s noise s.d. %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUCBABNoiseFailBounds: the failure probability γ lies in (0, 1).
func TestUCBABNoiseFailBounds(t *testing.T) {
	for _, f := range []float64{0, 1} {
		err := checkUCBABNoise(UCBABNoiseOptions{Dim: 2, Lambda: 1, Alpha: 1, BatchSize: 1, Sigma: 1, Fail: f})
		if err == nil || !strings.Contains(err.Error(), "fail") {
			t.Errorf("fail = %v: %v, want refused", f, err)
		}
	}
}

// TestUCBABNoiseShiftFormula pins c_k = σ√k·(2√d + 2√ln(1/γ)) at a point
// where it is exact: σ = ½, k = 9, d = 4, γ = e⁻⁴ gives ½·3·(4 + 4) = 12.
func TestUCBABNoiseShiftFormula(t *testing.T) {
	if got := UCBABNoiseShift(0.5, 4, 9, math.Exp(-4)); !(math.Abs(got-12) <= 1e-12) {
		t.Errorf("c_9 = %v, want 12", got)
	}
}
