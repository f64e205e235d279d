package linear

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
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

// TestUCBABNoiseSigmaTight: the calibrated σ meets the target and no more.
// On the certified basis the report's μ = roundUp(2/σ) is ≤ the target μ
// and within 2⁻⁴⁵ of it; on the paper basis μ²/2 is ≤ ρ_BS(ε, δ) and within
// 2⁻⁴⁴ of it. Rounding σ up costs one nudge of 2⁻⁴⁶ relative at most (plus
// a few ulps), so a calibration that overshoots by hundreds of ulps, or
// returns the unnudged σ whose report exceeds the target, fails here.
func TestUCBABNoiseSigmaTight(t *testing.T) {
	o := UCBABNoiseOptions{Dim: 3, Lambda: 1, Alpha: 1, BatchSize: 10, Fail: 0.01}
	report := func(s float64) float64 {
		o := o
		o.Sigma = s
		return ucbABNoiseReport(o).Certified.Value
	}
	for _, eps := range []float64{0.05, 0.3, 1, 2.5, 8, 40} {
		for _, delta := range []float64{1e-9, 1e-5, 0.01} {
			s, err := UCBABNoiseSigma(o, bandit.Target{Epsilon: eps, Delta: delta, Basis: bandit.BasisPaper})
			if err != nil {
				t.Fatal(err)
			}
			rho, err := privacy.ZCDPRhoBS(eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			m := report(s)
			if got := m * m / 2; !(got <= rho && got >= rho*(1-0x1p-44)) {
				t.Errorf("paper basis ε=%v δ=%v: σ=%v gives μ²/2 = %v, want in [ρ(1−2⁻⁴⁴), ρ] with ρ = %v", eps, delta, s, got, rho)
			}
			mu, err := privacy.GDPMu(eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range []bandit.Target{
				{Epsilon: eps, Delta: delta, Basis: bandit.BasisCertified},
				{Mu: mu, Basis: bandit.BasisCertified},
			} {
				s, err := UCBABNoiseSigma(o, tg)
				if err != nil {
					t.Fatal(err)
				}
				if got := report(s); !(got <= mu && got >= mu*(1-0x1p-45)) {
					t.Errorf("certified basis %+v: σ=%v gives μ = %v, want in [μ(1−2⁻⁴⁵), μ] with μ = %v", tg, s, got, mu)
				}
			}
		}
	}
}

// TestUCBABNoiseShiftSearch pins the fallback search: when c_k does not make
// Ĝ + c·I positive definite, the shift is the first of c_k·2^j that does.
// Ĝ = diag(−3c₁, 10⁶, 0) fails at c₁ and 2c₁ and passes at 4c₁ (the
// Gershgorin cap 10⁶ is far above), so the shift is exactly 4c₁.
func TestUCBABNoiseShiftSearch(t *testing.T) {
	q := mustAB(t, abOpts(3, 1), 1)
	base := UCBABNoiseShift(1, 3, 1, 0.01)
	q.releases = 1
	for k := range q.gram {
		q.gram[k] = 0
	}
	q.gram[0] = -3 * base // entry (0,0)
	q.gram[3] = 1e6       // entry (1,1)
	q.rebuild()
	if got := q.Shift(); got != 4*base {
		t.Errorf("fallback shift %v, want 4c₁ = %v (c₁ = %v)", got, 4*base, base)
	}
}
