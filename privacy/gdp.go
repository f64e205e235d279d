package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// Gaussian differential privacy (Dong, Roth & Su 2022, JRSSB, Cor 2.13;
// Balle & Wang 2018, Thm 8). docs/accountant.md §2.1.
//
// A mechanism is μ-GDP iff it is (ε, δ_μ(ε))-DP for every ε ≥ 0, with
//
//	δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
//
// This conversion is exact, so it is the only one used for GDP. It is
// evaluated in log space: with a = μ/2 − ε/μ and b = −μ/2 − ε/μ, the identity
// e^ε φ(b) = φ(a) gives δ = Φ(a)·(1 − r) with r = M(−b)/M(−a), where M is the
// Mills ratio, so e^ε is never formed (docs/accountant.md §2.1, pitfall 1).

// LogGDPDelta returns ln δ_μ(ε), never below the exact value. It returns −Inf
// when δ is exactly zero (μ = 0, or ε = +Inf) and is finite for every finite
// μ > 0 and finite ε ≥ 0: where ln δ is below −MaxFloat64 (δ underflows by
// hundreds of orders of magnitude, e.g. μ = 1e-300, ε = 1), it returns
// −MaxFloat64, an upper bound. It panics on negative or NaN arguments
// (programmer error; the exported callers validate).
func LogGDPDelta(mu, eps float64) float64 {
	ld, _, _ := logGDPDelta(mu, eps)
	return ld
}

// logGDPDelta returns ln δ_μ(ε) and its partial derivatives in ε and μ:
//
//	∂ ln δ/∂ε = −e^ε Φ(b)/δ = −r/(1−r),
//	∂ ln δ/∂μ = φ(a)/δ = 1/(M(−a)·(1−r)),
//
// (dδ/dε = −e^ε Φ(b) and, by e^ε φ(b) = φ(a), dδ/dμ = φ(a)). The derivatives
// only steer the Newton steps of the inversions; every returned bound is
// checked against ln δ itself. They are NaN where they cannot be formed
// (the steps then bisect).
//
// Written in a and μ, δ = Φ(a) − e^{μ²/2 − aμ}Φ(a − μ) increases in a
// (∂δ/∂a = μ e^ε Φ(b) ≥ 0), so a is formed rounded up (gdpArg) and every
// later rounding is covered by a bound added to ln δ: the result is never
// below the exact ln δ_μ(ε) for the float64 μ, ε given, over the whole
// float64 range.
func logGDPDelta(mu, eps float64) (ld, dEps, dMu float64) {
	if !(mu >= 0) || !(eps >= 0) {
		panic(fmt.Sprintf("privacy: LogGDPDelta(μ=%v, ε=%v) needs μ ≥ 0 and ε ≥ 0", mu, eps))
	}
	if mu == 0 {
		return math.Inf(-1), math.NaN(), math.NaN()
	}
	if math.IsInf(mu, 1) {
		return 0, 0, 0
	}
	if math.IsInf(eps, 1) {
		return math.Inf(-1), math.NaN(), math.NaN()
	}
	a := gdpArg(mu, eps)
	if a < -1e150 {
		// ln δ ≤ ln Φ(a) < −a²/2 (Mills: Φ(a) ≤ φ(a)/|a| for a < −1), and a
		// is rounded up, so |a| is not above the exact |a|. Rounded up by
		// 2⁻⁴⁸ relative; below −MaxFloat64 it is clamped there.
		ld = -(a / 2) * a * (1 - 0x1p-48)
		if !(ld >= -math.MaxFloat64) {
			ld = -math.MaxFloat64
		}
		return ld, math.NaN(), math.NaN()
	}
	lnMa := lnMills(-a)
	// ln r = ln M(−b) − ln M(−a) with −b = −a + μ: ln r < 0 because M is
	// decreasing. Computed as one difference, accurate even for tiny μ.
	lnR := lnMillsDiff(-a, mu)
	if lnR > 0 {
		lnR = 0
	}
	oneMinusR := -math.Expm1(lnR)
	var l1r float64
	switch {
	case lnR > -0x1p-1000:
		// 1 − r underflows (μ·g(−a) below about 1e-301, e.g. a subnormal
		// μ): bound it instead. With g = 1/M(s) − s, which decreases
		// (Birnbaum's bound M(s) > (√(s²+4) − s)/2), −ln r = ∫_{−a}^{−a+μ} g
		// ≤ μ·g(−a), and 1 − r ≤ −ln r; the bound is tight to O(μ). Its
		// rounding (millsG to ~1e-14 relative) is covered by 2⁻⁴⁰.
		lm := logSub(mu)
		l1r = lm + math.Log(millsG(-a)) + 0x1p-40*(1+math.Abs(lm))
		oneMinusR = math.Exp(l1r)
	case lnR < -math.Ln2:
		l1r = math.Log1p(-math.Exp(lnR)) // r < ½: keep the digits of ln(1−r) ≈ −r
	default:
		l1r = math.Log(oneMinusR)
	}
	lp := lnPhi(a)
	ld = lp + l1r
	// Round ln δ up by a bound on its rounding error (lnPhi's argument and
	// value, the Mills-ratio difference), so δ is never below the exact value
	// and the ε, μ solved from it stay on the safe side. ln Φ(a) = 0 (a above
	// about 38) is already above the exact value and needs no term.
	mp := 0.0
	if lp != 0 {
		mp = magPhi(a, lp)
	}
	ld += 0x1p-52 * (mp + 16*math.Abs(l1r) + 4*math.Abs(ld))
	if ld > 0 || math.IsNaN(ld) {
		ld = 0 // δ ≤ 1 always; NaN cannot occur, but would be read as "no guarantee"
	}
	if ld < -math.MaxFloat64 {
		ld = -math.MaxFloat64
	}
	dEps = -math.Exp(lnR) / oneMinusR
	dMu = math.Exp(-lnMa) / oneMinusR
	if math.IsInf(dEps, 0) {
		dEps = math.NaN()
	}
	if math.IsInf(dMu, 0) {
		dMu = math.NaN()
	}
	return ld, dEps, dMu
}

// gdpArg returns a value ≥ a = μ/2 − ε/μ (exact, for the float64 μ > 0 and
// ε ≥ 0 given) and within a few ulps of it; −Inf when ε/μ overflows (then
// a < −1e154). Near the root of a GDP inversion μ/2 and ε/μ nearly cancel
// (they are about 7e153 each at ε = 1e308), so a is formed as
// (μ·(μ/2) − ε)/μ with one fused multiply-add, which is exact up to two
// roundings; the plain difference is used where that would overflow or leave
// the normal range (there is no cancellation to speak of there). The error
// bound added covers either form: 2⁻⁵¹ relative to |a| + μ/2 + ε/μ for the
// plain form (2⁻⁵¹|a| for the fused one) plus 2⁻¹⁰⁷³ absolute for
// subnormal intermediates.
func gdpArg(mu, eps float64) float64 {
	h := mu / 2
	var a, e float64
	if r := math.FMA(mu, h, -eps); !math.IsInf(r, 0) && math.Abs(r) >= 0x1p-1000 {
		a = r / mu
		e = math.Abs(a)
	} else {
		q := eps / mu
		a = h - q
		e = math.Abs(a) + h + q
	}
	if math.IsInf(a, -1) {
		return a
	}
	return math.Nextafter(a+(0x1p-51*e+0x1p-1073), math.Inf(1))
}

// GDPDelta returns δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
func GDPDelta(mu, eps float64) (float64, error) {
	if err := checkMu(mu); err != nil {
		return 0, err
	}
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	return math.Exp(LogGDPDelta(mu, eps)), nil
}

// maxSearchSteps bounds every bracketing search (doubling or halving) of the
// conversions. The float64 range, subnormals included, spans 2098 binades,
// so 2200 doublings or halvings from any positive start reach +Inf or 0: the
// bound never stops a search that could succeed, and it makes every search
// finite whatever the arithmetic does.
const maxSearchSteps = 2200

// GDPEpsilon returns the smallest ε ≥ 0 with δ_μ(ε) ≤ δ: the (ε, δ)-DP
// guarantee implied by μ-GDP. δ_μ is decreasing and log-concave in ε; the
// root of ln δ_μ(ε) − ln δ is found by safeguarded Newton steps from the
// BS16 bound (solveValid), and only a point where δ_μ(ε) ≤ δ has been
// verified is returned, so the reported ε is never below the true one
// (docs/accountant.md pitfall 2). Accuracy: about 1e-15 relative. Cost: typically
// 5–10 evaluations of ln δ_μ (a few µs); the searches are bounded (at most
// maxSearchSteps doublings and 400 solver steps, a few ms).
//
// Domain: μ ≥ 0 (+Inf allowed) and 0 < δ < 1, otherwise an ErrInvalid
// error. μ = +Inf, and a finite μ whose ε exceeds the float64 range (μ above
// about 1.9e154, where ε ≈ μ²/2), give ε = +Inf: no finite guarantee.
func GDPEpsilon(mu, delta float64) (float64, error) {
	if err := checkMu(mu); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	return gdpEpsilon(mu, delta), nil
}

func gdpEpsilon(mu, delta float64) float64 {
	if math.IsInf(mu, 1) {
		return math.Inf(1)
	}
	target := logSub(delta)
	f := func(eps float64) (float64, float64) {
		ld, d, _ := logGDPDelta(mu, eps)
		return ld - target, d
	}
	if f0, _ := f(0); mu == 0 || f0 <= 0 {
		return 0
	}
	// μ-GDP ⇒ (μ²/2)-zCDP, so BS16's ε is a valid starting point: it has
	// f ≤ 0 (checked; doubling guards against rounding), and because ln δ_μ
	// is concave in ε (δ_μ is log-concave), Newton steps from it move
	// monotonically down to the root.
	rho := mu * mu / 2
	lo, hi := 0.0, rho+2*math.Sqrt(rho*-target)
	if !(hi > 0) || math.IsInf(hi, 1) {
		hi = 1
	}
	found := false
	for range maxSearchSteps { // f(lo) > 0 throughout
		if fh, _ := f(hi); fh <= 0 {
			found = true
			break
		}
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			break
		}
	}
	if !found {
		if fm, _ := f(math.MaxFloat64); fm > 0 {
			return math.Inf(1) // ε is beyond the float64 range
		}
		hi = math.MaxFloat64
	}
	return solveValid(f, hi, lo)
}

// GDPMu returns the largest μ with δ_μ(ε) ≤ δ: the GDP parameter that exactly
// meets a target (ε, δ). δ_μ(ε) increases in μ; the root is found by a
// safeguarded Newton iteration that keeps a bracket, and a point where
// δ_μ(ε) ≤ δ has been verified is returned, so the certified μ is never above
// the true one (rounded down, docs/accountant.md pitfall 2). For a Gaussian mechanism
// with L2 sensitivity Δ the analytic-Gaussian noise scale (Balle & Wang 2018,
// Alg 1) is σ = Δ/GDPMu(ε, δ); see GaussianSigmaGDP.
//
// Domain: every finite ε ≥ 0 (subnormals and MaxFloat64 included) with
// 0 < δ < 1; μ then lies in (0, 1.9e154] (μ ≈ √(2ε) for large ε) and is
// computed to about 1e-15 relative (logGDPDelta forms μ/2 − ε/μ without
// cancellation), less where its rounding bounds, absolute in ln δ, dominate:
// about 3e-12 for a μ near 1e-300, 1e-9 for a subnormal μ (always rounded
// down). ε = +Inf gives μ = +Inf (no privacy). NaN or negative ε and δ
// outside (0, 1) give an ErrInvalid error. The search is bounded: at most 2·maxSearchSteps bracketing evaluations and 400 solver
// steps (a few ms at worst); if it could not verify a μ > 0 it returns an
// ErrInvalid error saying the target is out of reach, never a guess (no
// valid input is known to do so).
func GDPMu(eps, delta float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	if math.IsInf(eps, 1) {
		return math.Inf(1), nil
	}
	target := logSub(delta)
	g := func(mu float64) (float64, float64) { // increasing in μ
		ld, _, d := logGDPDelta(mu, eps)
		return ld - target, d
	}
	// μ = √(2ρ_BS) is valid (μ-GDP ⇒ μ²/2-zCDP ⇒ BS16) and close: start there.
	l := -target
	sq := math.Sqrt(eps+l) + math.Sqrt(l)
	lo := math.Sqrt2 * eps / sq
	if math.IsInf(lo, 1) { // √2·ε overflows for ε above 1.27e308
		lo = math.Sqrt2 * (eps / sq)
	}
	if !(lo > 0) {
		lo = 1
	}
	found := false
	for range maxSearchSteps { // rounding guard
		if gl, _ := g(lo); gl <= 0 {
			found = lo > 0
			break
		}
		lo /= 2
	}
	if !found {
		return 0, fmt.Errorf("%w: GDPMu: target (ε = %v, δ = %v) is out of reach: no μ > 0 with δ_μ(ε) ≤ δ was verified "+
			"(valid: finite ε ≥ 0, 0 < δ < 1)", ErrInvalid, eps, delta)
	}
	hi := 2 * lo
	found = false
	for range maxSearchSteps { // g(+Inf) = −ln δ > 0 ends it
		if gh, _ := g(hi); gh > 0 {
			found = true
			break
		}
		lo, hi = hi, 2*hi
	}
	if !found {
		return 0, fmt.Errorf("%w: GDPMu: target (ε = %v, δ = %v) is out of reach: δ_μ(ε) ≤ δ held up to μ = %v "+
			"(valid: finite ε ≥ 0, 0 < δ < 1)", ErrInvalid, eps, delta, lo)
	}
	return solveValid(g, lo, hi), nil
}

// GDPCompose returns √(Σ μᵢ²), the exact composition of Gaussian mechanisms
// (Dong, Roth & Su 2022, Cor 3.3). It holds under adaptive composition and,
// with a budget fixed up front, under fully adaptive composition (Smith &
// Thakurta 2022; docs/accountant.md §2.6, theorem 3).
//
// The sum of squares is formed exactly and the square root is rounded up, so
// the composed μ is never below the exact value for the μᵢ given.
func GDPCompose(mus ...float64) (float64, error) {
	s, inf := new(big.Int), false
	for i, m := range mus {
		if err := checkMu(m); err != nil {
			return 0, fmt.Errorf("component %d: %w", i, err)
		}
		if math.IsInf(m, 1) {
			inf = true // the sum is +Inf, once every component is checked
			continue
		}
		s.Add(s, fixedSquare(m))
	}
	if inf {
		return math.Inf(1), nil
	}
	return fixedSqrtUp(s), nil
}

// GDPToZCDP returns ρ = μ²/2: μ-GDP implies (μ²/2)-zCDP (docs/accountant.md §2.1). The
// converse does not hold.
func GDPToZCDP(mu float64) (float64, error) {
	if err := checkMu(mu); err != nil {
		return 0, err
	}
	return mu * mu / 2, nil
}

// bisectUpper finds the crossing of a decreasing f with f(lo) > 0 ≥ f(hi) and
// returns the upper end of the final bracket (a value where f ≤ 0). It stops
// when the bracket can no longer shrink in float64.
func bisectUpper(f func(float64) float64, lo, hi float64) float64 {
	for range 2100 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// solveValid finds the root of a monotone function f, given a point good with
// f(good) ≤ 0 and a point bad with f(bad) > 0 (in either order), and returns a
// point x with f(x) ≤ 0 (verified by evaluation) next to the root. f returns
// its value and derivative. Newton steps are taken from the good end while
// they stay inside the bracket and the bracket keeps shrinking; otherwise the
// bracket is bisected. It stops when a Newton step is below 2⁻⁵² relative
// (quadratic convergence makes the remaining error of the same order) or the
// bracket cannot shrink. Because only points with f ≤ 0 are ever returned,
// rounding in f′ or an early stop can only make the answer conservative.
func solveValid(f func(float64) (float64, float64), good, bad float64) float64 {
	fg, dg := f(good)
	// Step-size control after rtsafe (Numerical Recipes §9.4): a Newton step
	// is taken only if it lands inside the bracket and is less than half the
	// step before last; otherwise the bracket is bisected.
	dxOld := math.Abs(bad - good)
	dx := dxOld
	for range 400 {
		lo, hi := math.Min(good, bad), math.Max(good, bad)
		step := fg / dg
		if math.Abs(step) <= 0x1p-52*math.Abs(good) { // converged (false for NaN)
			return good
		}
		x := good - step
		if !(x > lo && x < hi) || math.Abs(2*step) > dxOld {
			x = lo + (hi-lo)/2
			dxOld, dx = dx, (hi-lo)/2
		} else {
			dxOld, dx = dx, math.Abs(step)
		}
		if x <= lo || x >= hi {
			return good
		}
		fx, dfx := f(x)
		if fx <= 0 {
			good, fg, dg = x, fx, dfx
		} else {
			bad = x
		}
	}
	return good
}

func checkMu(mu float64) error {
	if !(mu >= 0) { // rejects NaN and negatives; +Inf means "no privacy"
		return fmt.Errorf("%w: GDP parameter μ = %v must be ≥ 0", ErrInvalid, mu)
	}
	return nil
}

func checkEps(eps float64) error {
	if !(eps >= 0) {
		return fmt.Errorf("%w: ε = %v must be ≥ 0", ErrInvalid, eps)
	}
	return nil
}

func checkDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("%w: δ = %v must lie in (0, 1)", ErrInvalid, delta)
	}
	return nil
}
