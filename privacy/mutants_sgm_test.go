package privacy

import (
	"math"
	"testing"
)

// Tests that kill mutants gremlins left alive in sgm.go (the
// Poisson-subsampled Gaussian RDP accountant). The contract under test is the
// one in sgm.go's file comment: ε(α) is an upper bound on the exact value for
// the inputs given and lies within about 1e-12 relative of it.

// sgmExactRow is one exact ε(α) of the Poisson-subsampled Gaussian, computed
// with mpmath at 50 significant digits (printed to 25):
//   - integer α: the binomial sum of Mironov, Talwar & Zhang (2019, arXiv
//     1908.10530, §3), A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k} q^k
//     expm1((k²−k)/(2σ²)), ε = log1p(A_α − 1)/(α−1);
//   - fractional α: mpmath.quad of E_{z∼N(0,σ²)}[(1−q+q·e^{(2z−1)/(2σ²)})^α − 1]
//     (MTZ19 eq. for A_α), split at −10σ, −σ, 0, ½, α/2, α, σ, α+10σ, 2α+20σ;
//     ε = log1p(A_α − 1)/(α−1). This is a different algorithm from the
//     library's series (no binomial series, no CRVZ, no Mills ratios).
//
// The 2-order values can be checked by hand: ε(2) = ln(1 + q²(e^{1/σ²} − 1)).
type sgmExactRow struct {
	q, sigma, alpha float64
	exact           string
	// kills lists the mutants (sgm.go line:col) the row is there for.
	kills string
}

var sgmExactRows = []sgmExactRow{
	{1e-6, 5, 2, "4.081077419238739399739967e-14", "150:78 (|(α−k)ln(1−q)| dropped from the int-path error allowance)"},
	{0.7, 1000, 3, "7.350003417750413804438087e-7", "150:112 (the +8 ulps of the int-path allowance becomes −8)"},
	{0.01, 1000, 64, "3.200003564004735632201848e-9", "150:39 (|ln k!| subtracted from the int-path allowance)"},
	{0.01, 1000, 2, "1.000000499950166616711638e-10", "150:99 (2|c| becomes 2/|c|: allowance blows up for tiny c)"},
	{0.999, 20, 8, "9.980183480259113767032707e-3", "150:91 (|k ln q| becomes |k/ln q|: allowance blows up for q near 1)"},
	{1e-6, 0.2, 1.5, "2.241673158242720856389705e-5", "216:38 (|i ln(1−q)| becomes |i/ln(1−q)| in the p2 allowance)"},
	{1e-4, 0.8, 12.3, "8.026063783317122936163969e-4", "242:22, 216:44 (p2 allowance reduced)"},
	{1e-4, 0.5, 4.75, "8.167081902587672461379587e-5", "242:22 (|C(α,i)| allowance subtracted from the p2 allowance)"},
	// Integer orders take the exact integer sum; the fractional series is
	// valid there too (its tail vanishes) but looser at q = ½ and large σ
	// (1.1e-10 here), so an order sent the wrong way misses 1e-12.
	{0.5, 100, 3, "0.00003750234385156401349119627", "134:41 (integer α ≤ 2²⁰ sent to the fractional series)"},
	// The integer sum's own rounding bound: l.err·l.sum instead of
	// l.err/l.sum inflates it by the sum (1.4e-10 here; the original is
	// 1.4e-12 above the exact value, within the 2.9e-12 tolerance).
	{0.5, 100, 256, "0.003220570909457749603103071", "453:46 (log-sum-exp relative error l.err·l.sum)"},
}

// TestMutantsSGMExactOracle: each ε(α) is ≥ the exact value (compared in
// big.Float, so no float64 rounding of the oracle interferes) and within
// sgmTolerance(α) = 1e-13 + 2e-15·α·ln(α+1) relative of it (sgm.go's
// documented bound; 1e-12 before the Lgamma allowance grew to lgammaErr).
//
// Kills: the error-allowance mutants listed in the rows. The ones that shrink
// the allowance (150:78, 150:112, 150:39, 216:44, 242:22) return a value 7 to
// 270 ulps BELOW the exact ε, i.e. under-report the privacy cost; the ones
// that inflate it (150:91, 150:99, 216:38) miss 1e-12 by 1.7× to 440×.
func TestMutantsSGMExactOracle(t *testing.T) {
	for _, r := range sgmExactRows {
		got, err := SubsampledGaussianRDP(r.q, r.sigma, r.alpha)
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := relToExact(got, r.exact)
		if !ok {
			t.Fatalf("bad oracle %q", r.exact)
		}
		if rel < 0 {
			t.Errorf("ε(α=%v; q=%v, σ=%v) = %.17g is BELOW the exact %s (relative %.3g): under-reports [kills %s]",
				r.alpha, r.q, r.sigma, got, r.exact, rel, r.kills)
		}
		if tol := sgmTolerance(r.alpha); !(math.Abs(rel) <= tol) {
			t.Errorf("ε(α=%v; q=%v, σ=%v) = %.17g, exact %s: relative error %.3g > %.3g [kills %s]",
				r.alpha, r.q, r.sigma, got, r.exact, rel, tol, r.kills)
		}
	}
}

// TestMutantsSGMOrderTwoToTheTwentyIsPositive: α = 2²⁰ is the largest order
// that sgmRDP sends to the exact integer sum. Rényi divergence is
// non-decreasing in the order (van Erven & Harremoës, IEEE Trans. Inf. Theory
// 60(7), 2014, Thm 3) and subsampling never costs more than the full-batch
// Gaussian (joint convexity of e^{(α−1)D_α}: A_α(q) ≤ 1 − q + q·A_α(1)), so
// ε(1000) ≤ ε(2²⁰) ≤ 2²⁰/(2σ²).
//
// Kills sgm.go:118:41 (α ≤ 2²⁰ → α < 2²⁰): α = 2²⁰ then goes to the
// fractional series, whose reflection-formula tail has ln|sin πα| = −Inf at an
// integer α; the sum turns NaN and ε(2²⁰) comes back as 0, a zero privacy
// cost. (One O(2²⁰) evaluation: about 0.25 s.)
func TestMutantsSGMOrderTwoToTheTwentyIsPositive(t *testing.T) {
	const q, sigma, alpha = 0.01, 1000.0, 1 << 20
	got, err := SubsampledGaussianRDP(q, sigma, alpha)
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := SubsampledGaussianRDP(q, sigma, 1000)
	hi := sgmGaussianRDPMust(t, sigma, alpha)
	if !(got >= lo && lo > 0 && got <= hi) {
		t.Errorf("ε(2²⁰; q=%v, σ=%v) = %v, want within [ε(1000), α/(2σ²)] = [%v, %v]", q, sigma, got, lo, hi)
	}
}

// sgmGaussianRDPMust is GaussianRDP that fails the test on an error.
func sgmGaussianRDPMust(t *testing.T, sigma, alpha float64) float64 {
	t.Helper()
	e, err := GaussianRDP(sigma, alpha)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
