package counting

import (
	"math"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/privacy"
)

// TestPrivacyReport checks the certified notion and value (docs/accountant.md §2.5):
// ε for Laplace; μ = √L·Δ/σ (GDP) for continuous Gaussian noise; ρ =
// LΔ²/(2σ²) (zCDP) for discrete Gaussian noise. Tolerance 1e-12 relative,
// and never below the exact value.
func TestPrivacyReport(t *testing.T) {
	const tol = 1e-12
	discrete := &recNoise{discrete: true, rec: &recorder{}}
	cases := []struct {
		name   string
		make   func() (*Counter, error)
		notion privacy.Notion
		value  float64
	}{
		{"laplace ε=1 T=2^20", func() (*Counter, error) {
			return NewLaplace(LaplaceOptions{Capacity: 1 << 20, Epsilon: 1}, SimNoise(pcg(1)))
		}, privacy.NotionPure, 1},
		{"laplace ε=0.1 GLS discrete", func() (*Counter, error) {
			return NewLaplace(LaplaceOptions{Capacity: 1000, Epsilon: 0.1, GLS: true}, discrete)
		}, privacy.NotionPure, 0.1},
		{"gaussian ρ=0.5 → μ=1", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 1 << 20, Rho: 0.5}, SimNoise(pcg(1)))
		}, privacy.NotionGDP, 1},
		{"gaussian σ=7 T=2^20 → μ=√21/7", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 1 << 20, Sigma: 7}, SimNoise(pcg(1)))
		}, privacy.NotionGDP, math.Sqrt(21) / 7},
		{"gaussian σ=7 Δ=2 T=1000 → μ=√10·2/7", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 1000, Sigma: 7, Sensitivity: 2}, SimNoise(pcg(1)))
		}, privacy.NotionGDP, math.Sqrt(10) * 2 / 7},
		{"gaussian μ=0.8", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 77, Mu: 0.8}, SimNoise(pcg(1)))
		}, privacy.NotionGDP, 0.8},
		{"discrete gaussian σ=7 T=2^20 → ρ=21/98", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 1 << 20, Sigma: 7}, discrete)
		}, privacy.NotionZCDP, 21.0 / 98},
		{"discrete gaussian ρ=0.25", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 5, Rho: 0.25, GLS: true}, discrete)
		}, privacy.NotionZCDP, 0.25},
		{"discrete gaussian μ=1 → ρ=0.5", func() (*Counter, error) {
			return NewGaussian(GaussianOptions{Capacity: 5, Mu: 1}, discrete)
		}, privacy.NotionZCDP, 0.5},
	}
	for _, tc := range cases {
		c, err := tc.make()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := c.Privacy()
		if r.Certified.Notion != tc.notion || !relClose(r.Certified.Value, tc.value, tol) || r.Certified.Value < tc.value {
			t.Errorf("%s: certified %+v, want %s %v (never below)", tc.name, r.Certified, tc.notion, tc.value)
		}
		if r.Neighbouring != privacy.EventLevel || r.Paper != nil || !r.Private() {
			t.Errorf("%s: report %+v", tc.name, r)
		}
		for _, cite := range []string{"docs/accountant.md §2.5", "Dwork–Naor–Pitassi–Rothblum 2010", "Chan–Shi–Song 2011"} {
			if !strings.Contains(r.Derivation, cite) {
				t.Errorf("%s: derivation does not cite %q: %s", tc.name, cite, r.Derivation)
			}
		}
		if c.GLS() && !strings.Contains(r.Derivation, "Honaker 2015") {
			t.Errorf("%s: GLS derivation does not cite Honaker", tc.name)
		}
		if _, err := r.At(1e-5); err != nil {
			t.Errorf("%s: At(1e-5): %v", tc.name, err)
		}
	}
	// Consistency of the Gaussian parameters: ρ = μ²/2, and σ, ρ from each
	// other (T = 2^20: L = 21).
	c, _ := NewGaussian(GaussianOptions{Capacity: 1 << 20, Rho: 0.5}, SimNoise(pcg(1)))
	if !relClose(c.Scale()*c.Scale(), 21, tol) || !relClose(c.Rho(), c.Mu()*c.Mu()/2, tol) {
		t.Errorf("ρ=0.5: σ²=%v (want 21), μ=%v", c.Scale()*c.Scale(), c.Mu())
	}
	// At δ = 1e-5, GDP μ = 1 gives ε = 4.37717809568122 (docs/accountant.md T2).
	st, err := c.Privacy().At(1e-5)
	if err != nil || st.Epsilon == nil || !relClose(*st.Epsilon, 4.37717809568122, 1e-9) {
		t.Errorf("GDP μ=1 at δ=1e-5: %+v, %v", st, err)
	}
}
