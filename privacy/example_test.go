package privacy_test

import (
	"errors"
	"fmt"

	"github.com/dpbandit/dpbandit/privacy"
)

// A μ-GDP guarantee converts exactly to (ε, δ)-DP.
func ExampleGDPEpsilon() {
	eps, _ := privacy.GDPEpsilon(1, 1e-5)
	delta, _ := privacy.GDPDelta(1, eps)
	fmt.Printf("1-GDP is (%.6f, 1e-5)-DP; δ(ε) = %.3g\n", eps, delta)
	// Output: 1-GDP is (4.377178, 1e-5)-DP; δ(ε) = 1e-05
}

// Gaussian mechanisms compose as √(Σμ²) (here T = 1000 rounds of TS-Gaussian
// at μ = 1/√2 each: √500, Ou et al. Fig. 4).
func ExampleGDPCompose() {
	mus := make([]float64, 1000)
	for i := range mus {
		mus[i] = 0.7071067811865476
	}
	mu, _ := privacy.GDPCompose(mus...)
	eps, _ := privacy.GDPEpsilon(mu, 1e-6)
	fmt.Printf("μ = %.4f, ε(1e-6) = %.2f\n", mu, eps)
	// Output: μ = 22.3607, ε(1e-6) = 355.38
}

// zCDP converts with the tighter of CKS20 and BS16; for a pure Gaussian
// the exact GDP route is tighter still.
func ExampleZCDPEpsilon() {
	eps, method, _ := privacy.ZCDPEpsilon(0.5, 1e-5)
	bs, _ := privacy.ZCDPEpsilonBS(0.5, 1e-5)
	exact, _ := privacy.GDPEpsilon(1, 1e-5) // μ = √(2ρ)
	fmt.Printf("%s: %.4f (bs16: %.4f, Gaussian exact: %.4f)\n", method, eps, bs, exact)
	// Output: cks20: 4.7284 (bs16: 5.2985, Gaussian exact: 4.3772)
}

// The analytic Gaussian mechanism: the least noise for (ε, δ).
func ExampleGaussianSigmaGDP() {
	sigma, mu, _ := privacy.GaussianSigmaGDP(1, 1e-5, 1)
	classic, _ := privacy.GaussianSigmaClassic(0.5, 1e-5, 1)
	s05, _, _ := privacy.GaussianSigmaGDP(0.5, 1e-5, 1)
	fmt.Printf("ε=1: μ = %.5f, σ = %.4f\n", mu, sigma)
	fmt.Printf("ε=0.5: σ = %.4f (classical %.4f)\n", s05, classic)
	// Output:
	// ε=1: μ = 0.26805, σ = 3.7306
	// ε=0.5: σ = 7.0318 (classical 9.6896)
}

// DP-SGD accounting: 1000 steps of the Poisson-subsampled Gaussian.
func ExampleSubsampledGaussianEpsilon() {
	conv, _ := privacy.SubsampledGaussianEpsilon(0.01, 1.1, 1000, 1e-5, nil)
	fmt.Printf("ε = %.4f at α = %v (%s, at edge: %v)\n", conv.Epsilon, conv.Order, conv.Method, conv.AtEdge)
	// Output: ε = 1.7253 at α = 9 (rdp-bbghs20, at edge: false)
}

// The smallest noise multiplier for a target, and the σ_amp of docs/linear.md §1.11 ([ADA])
// (one step, orders {2..6, 8, 16, 32, 64}, classic conversion).
func ExampleSubsampledGaussianSigma() {
	sigma, _, _ := privacy.SubsampledGaussianSigma(0.01, 1000, 1, 1e-5, nil)
	amp, _, _ := privacy.SubsampledGaussianSigma(0.3, 1, 1, 1e-5, &privacy.SGMOptions{
		Orders: []float64{2, 3, 4, 5, 6, 8, 16, 32, 64}, Method: privacy.MethodClassic})
	fmt.Printf("σ = %.4f; σ_amp(ε=1, q=0.3) = %.3f\n", sigma, amp)
	// Output: σ = 1.5131; σ_amp(ε=1, q=0.3) = 2.593
}

// A GDP filter with budget μ = 1: steps run while Σμᵢ² ≤ 1, and the first
// step that would exceed the budget is refused.
func ExampleNewGDPFilter() {
	f, _ := privacy.NewGDPFilter(1)
	for i, mu := range []float64{0.6, 0.6, 0.6} {
		if err := f.Spend(mu); err != nil {
			var be *privacy.BudgetExceededError
			fmt.Println("step", i, "refused:", errors.As(err, &be), "remaining μ =", fmt.Sprintf("%.4f", be.Remaining))
			continue
		}
		fmt.Printf("step %d ran; spent μ = %.4f\n", i, f.Spent())
	}
	// Output:
	// step 0 ran; spent μ = 0.6000
	// step 1 ran; spent μ = 0.8485
	// step 2 refused: true remaining μ = 0.5292
}

// RDP curves compose order by order.
func ExampleRDPCurve_Compose() {
	g, _ := privacy.GaussianCurve(2, nil)
	l, _ := privacy.LaplaceCurve(0.1, nil)
	c, _ := g.Scale(10).Compose(l.Scale(10))
	conv, _ := c.Epsilon(1e-6)
	fmt.Printf("ε = %.3f at α = %v\n", conv.Epsilon, conv.Order)
	// Output: ε = 9.045 at α = 4
}

// A Report evaluated at δ: the certified value and the paper's.
func ExampleReport_At() {
	r := privacy.Report{
		Mechanism:    "ts-gaussian",
		Neighbouring: privacy.EventLevel,
		Certified:    privacy.Guarantee{Notion: privacy.NotionGDP, Value: 22.360679774997898},
		PaperValid:   true,
	}
	s, _ := r.At(1e-6)
	fmt.Printf("%s: ε = %.2f (%s)\n", s.Mechanism, *s.Epsilon, s.Method)
	// Output: ts-gaussian: ε = 355.38 (gdp-exact)
}
