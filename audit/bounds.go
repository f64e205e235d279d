package audit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/dpbandit/dpbandit/privacy"
)

// Clopper–Pearson bounds (Clopper & Pearson, Biometrika 1934), one-sided.
// For k successes in n independent trials with success probability p,
//
//	P[X ≥ k | p] = I_p(k, n−k+1)     and     P[X ≤ k | p] = 1 − I_p(k+1, n−k),
//
// with I the regularised incomplete beta function. The one-sided lower bound
// at level γ is the p with P[X ≥ k | p] = γ, i.e. the γ-quantile of
// Beta(k, n−k+1) (0 when k = 0); the upper bound is the (1−γ)-quantile of
// Beta(k+1, n−k) (1 when k = n). Whatever p is, P[lower > p] ≤ γ and
// P[upper < p] ≤ γ.
//
// The quantiles come from gonum's InvRegIncBeta (Cephes incbi); each result is
// then checked against RegIncBeta and moved outwards until the defining
// inequality holds, so the returned bound is never on the unsafe side of the
// exact one by more than the accuracy of RegIncBeta itself (about 1e-13
// relative), and a relative margin of 1e-12 is added to cover that.

// CPLower returns the one-sided Clopper–Pearson lower bound at level gamma
// ∈ (0, 1) for k successes in n ≥ 1 trials: P[CPLower > p] ≤ gamma.
func CPLower(k, n int, gamma float64) (float64, error) {
	if err := checkBinom(k, n, gamma); err != nil {
		return 0, err
	}
	if k == 0 {
		return 0, nil
	}
	a, b := float64(k), float64(n-k+1)
	l := mathext.InvRegIncBeta(a, b, gamma)
	if !(l >= 0) { // NaN
		l = 0
	}
	l = math.Min(l, 1) * (1 - 1e-12)
	// P[X ≥ k | p = l] = I_l(k, n−k+1) must not exceed gamma.
	for i := 0; i < 200 && l > 0 && mathext.RegIncBeta(a, b, l) > gamma; i++ {
		l *= 1 - math.Min(0.5, 1e-9*math.Pow(2, float64(i)))
		if l < 1e-300 {
			l = 0
		}
	}
	return math.Max(l, 0), nil
}

// CPUpper returns the one-sided Clopper–Pearson upper bound at level gamma
// ∈ (0, 1) for k successes in n ≥ 1 trials: P[CPUpper < p] ≤ gamma.
func CPUpper(k, n int, gamma float64) (float64, error) {
	if err := checkBinom(k, n, gamma); err != nil {
		return 0, err
	}
	if k == n {
		return 1, nil
	}
	// By symmetry, the upper bound for k of n is 1 − the lower bound for
	// n − k of n.
	// 1 − l is rounded up by one ulp (the subtraction rounds to nearest).
	l, _ := CPLower(n-k, n, gamma)
	return math.Min(1, math.Nextafter(1-l, 2)), nil
}

func checkBinom(k, n int, gamma float64) error {
	if n < 1 {
		return fmt.Errorf("audit: %d trials is outside the valid range [1, ∞)", n)
	}
	if k < 0 || k > n {
		return fmt.Errorf("audit: %d successes is outside the valid range [0, %d]", k, n)
	}
	if !(gamma > 0 && gamma < 1) {
		return fmt.Errorf("audit: level %v is outside the valid range (0, 1)", gamma)
	}
	return nil
}

// EpsilonLowerBound returns the ε that an event E refutes at δ: if a
// mechanism is (ε, δ)-DP then for the neighbours A, B and every event,
// P_A[E] ≤ e^ε P_B[E] + δ and P_B[Eᶜ] ≤ e^ε P_A[Eᶜ] + δ (Dwork & Roth 2014,
// Def 2.4, applied to E and to its complement), so with pA ≥ pALo and
// pB ≤ pBHi,
//
//	ε ≥ max( ln((pALo − δ)/pBHi), ln((1 − pBHi − δ)/(1 − pALo)) ),
//
// floored at 0 (Jagielski, Ullman & Oprea, NeurIPS 2020, §3). The result is
// rounded down (a lower bound).
func EpsilonLowerBound(pALo, pBHi, delta float64) float64 {
	best := 0.0
	if num := pALo - delta; num > 0 && pBHi > 0 {
		best = math.Max(best, math.Log(num)-math.Log(pBHi))
	}
	if num := 1 - pBHi - delta; num > 0 && pALo < 1 {
		best = math.Max(best, math.Log(num)-math.Log1p(-pALo))
	}
	if best > 0 {
		best = math.Nextafter(math.Nextafter(best*(1-1e-12), 0), 0)
	}
	return best
}

// normQuantile returns Φ⁻¹(p) for p ∈ (0, 1).
func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// normCDF returns Φ(x).
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// GaussianTradeOff returns G_μ(α) = Φ(Φ⁻¹(1−α) − μ), the trade-off curve of
// μ-GDP (Dong, Roth & Su, JRSSB 2022, Def 2.7): the smallest type II error
// of any test at type I error α between the outputs of a μ-GDP mechanism
// on neighbouring inputs. Used for the plot.
func GaussianTradeOff(mu, alpha float64) float64 {
	switch {
	case alpha <= 0:
		return 1
	case alpha >= 1:
		return 0
	}
	return normCDF(normQuantile(1-alpha) - mu)
}

// DPTradeOff returns the trade-off curve of (ε, δ)-DP (Dong, Roth & Su 2022,
// Prop 2.5; Kairouz, Oh & Viswanath 2015):
// f(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)).
func DPTradeOff(eps, delta, alpha float64) float64 {
	return math.Max(0, math.Max(1-delta-math.Exp(eps)*alpha, math.Exp(-eps)*(1-delta-alpha)))
}

// muClosedForm is the closed form of MuLowerBound, Φ⁻¹(1−fpr) − Φ⁻¹(fnr)
// floored at 0: the μ of the Gaussian trade-off curve through (fpr, fnr).
// The audit uses it only to rank candidate events (fast); the reported
// bound is MuLowerBound's.
func muClosedForm(fpr, fnr float64) float64 {
	if !(fpr > 0 && fnr > 0) {
		return math.Inf(1)
	}
	if fpr+fnr >= 1 {
		return 0
	}
	return math.Max(0, normQuantile(1-fpr)-normQuantile(fnr))
}

// muScore and epsScore rank candidate events in selection: the closed-form
// μ and the ε of EpsilonLowerBound without the floor at 0, so that events
// that refute nothing on the selection runs are still ordered by how close
// they come (a weak but real effect is then still found on the evaluation
// runs). The reported bounds never use them.
func muScore(fpr, fnr float64) float64 {
	if !(fpr > 0 && fnr > 0) {
		return math.Inf(1)
	}
	if !(fpr < 1 && fnr < 1) {
		return math.Inf(-1)
	}
	return normQuantile(1-fpr) - normQuantile(fnr)
}

func epsScore(pALo, pBHi, delta float64) float64 {
	best := math.Inf(-1)
	if num := pALo - delta; num > 0 && pBHi > 0 {
		best = math.Max(best, math.Log(num)-math.Log(pBHi))
	}
	if num := 1 - pBHi - delta; num > 0 && pALo < 1 {
		best = math.Max(best, math.Log(num)-math.Log1p(-pALo))
	}
	return best
}

// MuLowerBound returns the largest μ such that the point (fpr, fnr) lies
// below the μ-GDP trade-off curve, i.e. fnr < G_μ(fpr) for every μ below the
// result: a mechanism with a test of type I error ≤ fpr and type II error ≤
// fnr is not μ-GDP for any smaller μ. Both errors must lie in (0, 1].
//
// It does not use the closed form Φ⁻¹(1−fpr) − Φ⁻¹(fnr) (which the tests
// check it against). It uses the project's exact GDP conversion
// privacy.GDPDelta: by Dong, Roth & Su (2022, Prop 2.12), a mechanism is
// μ-GDP iff it is (ε, δ_μ(ε))-DP for every ε ≥ 0, so (fpr, fnr) is
// impossible for μ-GDP iff some ε ≥ 0 has
//
//	fpr + e^ε·fnr < 1 − δ_μ(ε)   or   fnr + e^ε·fpr < 1 − δ_μ(ε).
//
// For each form the slack h(ε) = 1 − δ_μ(ε) − p − e^ε q has derivative
// e^ε(Φ(−ε/μ − μ/2) − q) (dδ_μ/dε = −e^ε Φ(−ε/μ − μ/2)), so it is unimodal
// and its maximiser is found by bisection on that sign. The slack falls as
// μ grows, so μ is found by bisection, and only a μ whose slack was verified
// positive (with privacy.GDPDelta, which is never below the exact δ) is
// returned: the result never exceeds the exact bound.
func MuLowerBound(fpr, fnr float64) (float64, error) {
	if !(fpr > 0 && fpr <= 1) || !(fnr > 0 && fnr <= 1) {
		return 0, fmt.Errorf("audit: error rates (%v, %v) are outside the valid range (0, 1]", fpr, fnr)
	}
	if fpr+fnr >= 1 {
		return 0, nil // no μ ≥ 0 is refuted: G_0(α) = 1 − α
	}
	lo, hi := 0.0, 1.0
	for range 64 {
		if !refutes(hi, fpr, fnr) {
			break
		}
		lo, hi = hi, 2*hi
	}
	if refutes(hi, fpr, fnr) {
		return lo, nil // beyond 2⁶⁴: cannot happen for error rates above 1e-300
	}
	for range 80 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if refutes(mid, fpr, fnr) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// refutes reports whether (fpr, fnr) lies strictly below G_μ, checked on
// the (ε, δ_μ(ε)) characterisation (MuLowerBound).
func refutes(mu, fpr, fnr float64) bool {
	if mu == 0 {
		return fpr+fnr < 1
	}
	return slack(mu, fpr, fnr) > 0 || slack(mu, fnr, fpr) > 0
}

// slack returns max_{ε ≥ 0} 1 − δ_μ(ε) − p − e^ε q, evaluated at the
// maximiser found by bisection (any ε gives a valid witness; the maximiser
// gives the largest).
func slack(mu, p, q float64) float64 {
	grow := func(eps float64) bool { return normCDF(-eps/mu-mu/2) > q } // h still increasing
	eps := 0.0
	if grow(0) {
		lo, hi := 0.0, 1.0
		for range 2000 {
			if !grow(hi) {
				break
			}
			lo, hi = hi, 2*hi
		}
		for range 200 {
			mid := lo + (hi-lo)/2
			if mid <= lo || mid >= hi {
				break
			}
			if grow(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		eps = lo
	}
	d, err := privacy.GDPDelta(mu, eps)
	if err != nil || math.IsInf(eps, 0) {
		return math.Inf(-1)
	}
	e := math.Exp(eps)
	if math.IsInf(e, 1) {
		return math.Inf(-1)
	}
	// The margin covers the rounding of this sum (a few ulps of its terms).
	return 1 - d - p - e*q - 0x1p-50*(1+e*q)
}
