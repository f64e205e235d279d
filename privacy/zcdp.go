package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// Zero-concentrated differential privacy (Bun & Steinke 2016; Canonne, Kamath
// & Steinke 2020). docs/accountant.md §2.4.
//
// ρ-zCDP means D_α(M(x)‖M(x')) ≤ ρα for every α > 1. Composition adds the ρ's;
// a group of k records costs k²ρ. Two conversions to (ε, δ)-DP are provided:
// BS16 Prop 1.3 (closed form) and CKS20 Cor 13 (tighter, by optimising the
// Rényi order). Both are valid for every ρ-zCDP mechanism; for mechanisms that
// are purely Gaussian, the exact GDP route (μ = √(2ρ)) is tighter still and
// is what Report uses when the notion is GDP.

// Conversion methods reported beside a converted ε.
const (
	MethodGDP      = "gdp-exact"   // Dong–Roth–Su exact GDP curve
	MethodBS16     = "bs16"        // Bun–Steinke 2016 Prop 1.3
	MethodCKS20    = "cks20"       // Canonne–Kamath–Steinke 2020 Cor 13
	MethodClassic  = "rdp-classic" // Mironov 2017 Prop 3
	MethodImproved = "rdp-bbghs20" // Balle et al. 2020 Thm 21 (≡ CKS20 Prop 12)
	MethodPure     = "pure"
)

// ZCDPEpsilonBS returns ε = ρ + 2√(ρ ln(1/δ)) (BS16 Prop 1.3). ρ = +Inf, or
// a ρ whose ε overflows float64 (ρ near MaxFloat64), gives +Inf.
func ZCDPEpsilonBS(rho, delta float64) (float64, error) {
	if err := checkRho(rho); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	l := lnInv(delta)
	s := math.Sqrt(rho * l)
	if math.IsInf(s, 1) && !math.IsInf(rho, 1) { // ρ·L overflows
		s = math.Sqrt(rho) * math.Sqrt(l)
	}
	// About six faithfully rounded operations: 8 ulps up keeps ε on the safe
	// side of the exact value (docs/accountant.md pitfall 2).
	return roundUp(rho+2*s, 8), nil
}

// ZCDPRhoBS inverts BS16 Prop 1.3: ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))². It is
// computed as ε²/(√(ε+L) + √L)², which has no cancellation for small ε, and
// as (ε/(√(ε+L) + √L))² above ε = 1e150, where ε² would overflow (ρ ≈ ε
// there: every finite ε has a finite ρ). ε = +Inf gives ρ = +Inf; a
// subnormal ε can give ρ = 0 (ρ ≈ ε²/(4L) underflows).
func ZCDPRhoBS(eps, delta float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	if math.IsInf(eps, 1) {
		return eps, nil
	}
	l := lnInv(delta)
	s := math.Sqrt(eps+l) + math.Sqrt(l)
	r := eps * eps / (s * s)
	if eps > 1e150 {
		r = eps / s
		r = math.Min(r*r, eps) // ρ_BS < ε exactly; r² can round up to +Inf at ε = MaxFloat64
	}
	// About eight faithfully rounded operations: 8 ulps down keeps ρ on the
	// safe side (docs/accountant.md pitfall 2).
	return roundDown(r, 8), nil
}

// lnInv returns ln(1/δ) for 0 < δ < 1, also where 1/δ overflows (δ below
// 5.6e-309), where it is −ln δ rounded up (logSub rounds down).
func lnInv(delta float64) float64 {
	if d := 1 / delta; !math.IsInf(d, 1) {
		return math.Log(d)
	}
	return -logSub(delta)
}

// ZCDPDeltaCKS returns the CKS20 (Cor 13) δ for ρ-zCDP at ε:
//
//	δ = inf_{α>1} exp((α−1)(αρ − ε)) · (1 − 1/α)^α / (α − 1),
//
// together with the order α at which it was evaluated. The exponent's
// derivative (2α−1)ρ − ε + ln(1 − 1/α) is increasing in α, so the optimum is
// found by bisection on (1, (ε+1)/(2ρ) + 2]. Every α gives a valid δ, so the
// bisection error can only make δ larger, never invalid (docs/accountant.md §2.4).
func ZCDPDeltaCKS(rho, eps float64) (delta, order float64, err error) {
	if err := checkRho(rho); err != nil {
		return 0, 0, err
	}
	if err := checkEps(eps); err != nil {
		return 0, 0, err
	}
	ld, a := logDeltaCKS(rho, eps)
	return math.Exp(ld), a, nil
}

// logDeltaCKS returns min(0, ln δ_CKS(ρ, ε)) and the order used.
func logDeltaCKS(rho, eps float64) (float64, float64) {
	if rho == 0 {
		return math.Inf(-1), math.Inf(1)
	}
	if math.IsInf(rho, 1) {
		return 0, math.NaN()
	}
	if math.IsInf(eps, 1) {
		return math.Inf(-1), math.Inf(1)
	}
	// Work in t = α − 1, which keeps full precision when α* is close to 1
	// (ε < ρ puts α* − 1 ≈ e^{ε−ρ}, where ln(1 − 1/α) computed from α
	// would lose half its digits):
	//	d/dα ln δ = (2t+1)ρ − ε + ln t − log1p(t)
	//	ln δ(α)   = t((1+t)ρ − ε) + t ln t − (1+t) log1p(t)
	deriv := func(t float64) float64 { return (2*t+1)*rho - eps + math.Log(t) - math.Log1p(t) }
	// Geometric bisection while the bracket spans orders of magnitude (tiny ρ
	// puts α* near (ε+1)/(2ρ), possibly 1e300; ρ ≫ ε puts α*−1 near 0), then
	// linear.
	// Each geometric step halves log(hi/lo) ≤ 1700, so 64 steps are far
	// more than the ~11 it takes; the bound only makes termination explicit.
	lo, hi := 0x1p-1000, math.Min((eps+1)/(2*rho)+1, 1e300)
	if deriv(lo) >= 0 {
		hi = lo
	}
	for i := 0; i < 64 && hi > 2*lo; i++ {
		mid := math.Sqrt(lo) * math.Sqrt(hi)
		if deriv(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if deriv(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	t := lo + (hi-lo)/2
	t1, t2, t3, t4 := t*(1+t)*rho, t*eps, t*math.Log(t), (1+t)*math.Log1p(t)
	ld := t1 - t2 + t3 - t4
	// Round ln δ up by a bound on its rounding error, so δ is never below the
	// exact value at this α (and ε, ρ solved from it stay on the safe side).
	ld += 0x1p-50 * (math.Abs(t1) + math.Abs(t2) + math.Abs(t3) + math.Abs(t4) + 1)
	if ld > 0 || math.IsNaN(ld) {
		ld = 0
	}
	return ld, 1 + t
}

// ZCDPEpsilonCKS returns the smallest ε with δ_CKS(ρ, ε) ≤ δ. ln δ_CKS is an
// infimum of functions affine in ε, hence concave, with slope −(α*−1)
// (envelope theorem); safeguarded Newton steps from ε_BS (BS16 is valid, so
// ε_BS satisfies the condition) descend monotonically to the root, and only
// a verified ε is returned (solveValid). The rounding guard on ε_BS is at most
// maxSearchSteps doublings; ε_BS = +Inf, or no ε verified below +Inf, gives
// +Inf (no finite guarantee; ZCDPEpsilon then keeps BS16's value).
func ZCDPEpsilonCKS(rho, delta float64) (float64, error) {
	hi, err := ZCDPEpsilonBS(rho, delta)
	if err != nil {
		return 0, err
	}
	target := logSub(delta)
	f := func(eps float64) (float64, float64) {
		l, a := logDeltaCKS(rho, eps)
		return l - target, -(a - 1)
	}
	if f0, _ := f(0); f0 <= 0 {
		return 0, nil
	}
	if math.IsInf(hi, 1) {
		return hi, nil
	}
	for i := 0; ; i++ { // f(ε_BS) ≤ 0 in exact arithmetic; guard against rounding
		if fh, _ := f(hi); fh <= 0 {
			break
		}
		hi = 2*hi + 1e-300
		if math.IsInf(hi, 1) || i == maxSearchSteps {
			return math.Inf(1), nil
		}
	}
	return solveValid(f, hi, 0), nil
}

// ZCDPRhoCKS returns the largest ρ with δ_CKS(ρ, ε) ≤ δ. ln δ_CKS is concave
// and increasing in ρ with slope α*(α*−1); Newton steps from ρ_BS (valid)
// climb monotonically to the root, and only a verified ρ is returned, so ρ
// is rounded down. Every finite ε ≥ 0 and 0 < δ < 1 are accepted; ε = +Inf
// gives +Inf. The searches are bounded (maxSearchSteps halvings of the
// rounding guard and as many doublings, then 400 solver steps); where the
// CKS20 δ cannot be evaluated closely (ε above about 1e150, where its
// rounding bound reaches 1) the ρ verified can be far below ρ_BS, and
// ZCDPRho keeps the larger BS16 value.
func ZCDPRhoCKS(eps, delta float64) (float64, error) {
	lo, err := ZCDPRhoBS(eps, delta)
	if err != nil {
		return 0, err
	}
	if math.IsInf(eps, 1) {
		return math.Inf(1), nil
	}
	target := logSub(delta)
	g := func(rho float64) (float64, float64) { // increasing in ρ
		l, a := logDeltaCKS(rho, eps)
		return l - target, a * (a - 1)
	}
	// Rounding guard: ρ_BS is valid in exact arithmetic. g(0) = −Inf, so
	// the halving ends at the latest when lo underflows to 0.
	found := false
	for range maxSearchSteps {
		if gl, _ := g(lo); gl <= 0 {
			found = true
			break
		}
		lo /= 2
	}
	if !found {
		lo = 0 // g(0) = −Inf
	}
	hi := eps + 1
	found = false
	for range maxSearchSteps { // g(+Inf) = −ln δ > 0 ends it
		if gh, _ := g(hi); gh > 0 {
			found = true
			break
		}
		lo, hi = hi, 2*hi
	}
	if !found {
		return lo, nil // verified, and no larger ρ was found to fail
	}
	return solveValid(g, lo, hi), nil
}

// ZCDPDelta returns the smallest δ that the valid conversions give for
// ρ-zCDP at ε: min(δ_CKS20, δ_BS16), where BS16 in δ form is
// exp(−(ε−ρ)²/(4ρ)) for ε ≥ ρ (and 1 below), and names the one used.
func ZCDPDelta(rho, eps float64) (delta float64, method string, err error) {
	if err := checkRho(rho); err != nil {
		return 0, "", err
	}
	if err := checkEps(eps); err != nil {
		return 0, "", err
	}
	lc, _ := logDeltaCKS(rho, eps)
	lb := 0.0
	switch {
	case rho == 0:
		lb = math.Inf(-1)
	case eps > rho && !math.IsInf(rho, 1):
		d := eps - rho
		lb = -d * d / (4 * rho)
	}
	if lb < lc {
		return math.Exp(lb), MethodBS16, nil
	}
	return math.Exp(lc), MethodCKS20, nil
}

// ZCDPEpsilon converts ρ-zCDP to (ε, δ)-DP with the tighter of the valid
// conversions (CKS20 and BS16) and names the one it used.
func ZCDPEpsilon(rho, delta float64) (eps float64, method string, err error) {
	bs, err := ZCDPEpsilonBS(rho, delta)
	if err != nil {
		return 0, "", err
	}
	cks, err := ZCDPEpsilonCKS(rho, delta)
	if err != nil {
		return 0, "", err
	}
	if cks <= bs {
		return cks, MethodCKS20, nil
	}
	return bs, MethodBS16, nil
}

// ZCDPRho returns the largest ρ such that ρ-zCDP implies (ε, δ)-DP under the
// tighter valid conversion (CKS20, falling back to BS16 if it were larger).
func ZCDPRho(eps, delta float64) (rho float64, method string, err error) {
	bs, err := ZCDPRhoBS(eps, delta)
	if err != nil {
		return 0, "", err
	}
	cks, err := ZCDPRhoCKS(eps, delta)
	if err != nil {
		return 0, "", err
	}
	if cks >= bs {
		return cks, MethodCKS20, nil
	}
	return bs, MethodBS16, nil
}

// ZCDPCompose returns Σρᵢ (BS16 Lemma 2.3; fully adaptive with a fixed budget
// by the Rényi filter, Feldman & Zrnic 2021; docs/accountant.md §2.6).
// The sum is formed exactly and rounded up.
func ZCDPCompose(rhos ...float64) (float64, error) {
	s, inf := new(big.Int), false
	for i, r := range rhos {
		if err := checkRho(r); err != nil {
			return 0, fmt.Errorf("component %d: %w", i, err)
		}
		if math.IsInf(r, 1) {
			inf = true // the sum is +Inf, once every component is checked
			continue
		}
		s.Add(s, fixedOf(r))
	}
	if inf {
		return math.Inf(1), nil
	}
	return fixedUp(s), nil
}

// ZCDPGroup returns k²ρ, the zCDP of a ρ-zCDP mechanism for groups of k
// records (BS16 Prop 1.9).
func ZCDPGroup(rho float64, k int) (float64, error) {
	if err := checkRho(rho); err != nil {
		return 0, err
	}
	if k < 1 {
		return 0, fmt.Errorf("%w: group size k = %d must be ≥ 1", ErrInvalid, k)
	}
	if math.IsInf(rho, 1) {
		return rho, nil
	}
	kk := new(big.Rat).SetInt64(int64(k))
	kk.Mul(kk, kk)
	return floatUp(kk.Mul(kk, ratOf(rho))), nil
}

func checkRho(rho float64) error {
	if !(rho >= 0) {
		return fmt.Errorf("%w: zCDP parameter ρ = %v must be ≥ 0", ErrInvalid, rho)
	}
	return nil
}
