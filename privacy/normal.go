package privacy

import "math"

// Log-space standard normal functions used by every Gaussian conversion.
// They follow docs/accountant.md §2.1 ("Robust log-space evaluation") so that the GDP
// curve can be evaluated at μ = 651, ε = 2·10⁵ or δ = 1e-300 without overflow
// or underflow.

const (
	halfLog2Pi = 0.91893853320467274178032973640561763986139747363778 // ½·ln(2π)
	// asymptoticCut is where lnPhi switches to the asymptotic series. At
	// x = −37 the first omitted term of the series (135135·x⁻¹⁴) is < 1e-17
	// relative, and erfc(37/√2) ≈ 1e-300 is still a normal float64, so both
	// branches are accurate at the seam.
	asymptoticCut = -37.0
)

// lnPhi returns ln Φ(x) for the standard normal CDF Φ, accurate to a few ulps
// of ln Φ(x) over the whole real line.
//
//   - x > 0:        log1p(−½·erfc(x/√2))  (the naive log(Φ) returns 0 for x > 8)
//   - −37 < x ≤ 0:  ln(½·erfc(−x/√2))
//   - x ≤ −37:      −x²/2 − ln(−x) − ½ln(2π) + ln(1 − x⁻² + 3x⁻⁴ − …) (Mills series)
func lnPhi(x float64) float64 {
	switch {
	case math.IsInf(x, 1):
		return 0
	case math.IsInf(x, -1):
		return math.Inf(-1)
	case x > 0:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x > asymptoticCut:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	default:
		return -0.5*x*x - math.Log(-x) - halfLog2Pi + math.Log(millsSeries(-x))
	}
}

// lnMills returns ln M(x) where M(x) = Φ(−x)/φ(x) is the Mills ratio.
//
//   - x ≥ 3: the Laplace continued fraction M(x) = 1/(x+1/(x+2/(x+3/(x+…)))),
//     evaluated backwards with 8 + ⌈500/x²⌉ levels (truncation error < 1e-17
//     relative on [3, ∞), checked against mpmath). It involves only x, so it
//     avoids the cancellation of ln Φ(−x) + x²/2, whose absolute error grows
//     like x²·2⁻⁵³ (6e-13 relative in T1 at μ = 0.5, ε = 10 before this).
//   - x < 3: ln Φ(−x) + x²/2 + ½ln(2π), accurate to ~x²·2⁻⁵³ ≤ 1e-15.
func lnMills(x float64) float64 {
	if x >= millsCFCut {
		if math.IsInf(x, 1) {
			return math.Inf(-1)
		}
		n := 8 + int(math.Ceil(500/(x*x)))
		t := x
		for k := n; k > 0; k-- {
			t = x + float64(k)/t
		}
		return -math.Log(t)
	}
	return lnPhi(-x) + 0.5*x*x + halfLog2Pi
}

// millsCFCut is where lnMills switches to the continued fraction (at most 64
// levels there).
const millsCFCut = 3.0

// lnMillsDiff returns ln M(x+h) − ln M(x) for h ≥ 0, accurate relative to
// the difference itself even when h is tiny against x (GDP with small μ: the
// two Mills ratios then agree to many digits and their logs cancel).
//
//   - x ≥ 3: the continued fraction is evaluated at x and at x+h together,
//     with the difference of each level carried exactly in form:
//     Dₖ = h − k·Dₖ₊₁/(Tₖ₊₁(x+h)·Tₖ₊₁(x)), where Tₖ is the k-th tail; then
//     ln M(x+h) − ln M(x) = −log1p(D₁/T₁(x)).
//   - x < 3, h < 0.1: ln M(x+h) − ln M(x) = −∫ₓ^{x+h} g, g(s) = 1/M(s) − s
//     (because (ln M)′ = s − 1/M), by 5-point Gauss–Legendre (error ~h¹⁰).
//   - otherwise the plain difference, which is then well conditioned.
func lnMillsDiff(x, h float64) float64 {
	switch {
	case h == 0:
		return 0
	case x >= millsCFCut && !math.IsInf(x, 1) && !math.IsInf(h, 1):
		n := 8 + int(math.Ceil(500/(x*x)))
		y := x + h
		tx, ty, d := x, y, h
		for k := n; k > 0; k-- {
			fk := float64(k)
			d = h - fk*d/(ty*tx)
			tx = x + fk/tx
			ty = y + fk/ty
		}
		return -math.Log1p(d / tx)
	case h < 0.1:
		var sum float64
		for i, xi := range glNodes5 {
			sum += glWeights5[i] * millsG(x+h/2*(1+xi))
		}
		return -h / 2 * sum
	}
	return lnMills(x+h) - lnMills(x)
}

// millsG returns g(s) = 1/M(s) − s > 0 without cancellation for s ≥ 3 (the
// continued fraction's tail 1/T₂(s)).
func millsG(s float64) float64 {
	if s >= millsCFCut {
		n := 8 + int(math.Ceil(500/(s*s)))
		t := s
		for k := n; k > 1; k-- {
			t = s + float64(k)/t
		}
		return 1 / t
	}
	return math.Exp(-lnMills(s)) - s
}

// 5-point Gauss–Legendre nodes and weights on [−1, 1].
var (
	glNodes5 = [5]float64{
		-0.90617984593866399279762687829939296512565191076253,
		-0.53846931010568309103631442070020880496728660690556,
		0,
		0.53846931010568309103631442070020880496728660690556,
		0.90617984593866399279762687829939296512565191076253,
	}
	glWeights5 = [5]float64{
		0.23692688505618908751426404071991736264326000221241,
		0.47862867049936646804129151483563819291229555334314,
		0.56888888888888888888888888888888888888888888888889,
		0.47862867049936646804129151483563819291229555334314,
		0.23692688505618908751426404071991736264326000221241,
	}
)

// millsSeries returns 1 − x⁻² + 3x⁻⁴ − 15x⁻⁶ + 105x⁻⁸ − 945x⁻¹⁰ + 10395x⁻¹², the
// asymptotic expansion of x·M(x); valid (to < 1e-17 relative) for x ≥ 37.
func millsSeries(x float64) float64 {
	u := 1 / (x * x)
	return 1 + u*(-1+u*(3+u*(-15+u*(105+u*(-945+u*10395)))))
}

// logSub returns ln x for x ≥ 0, subnormal x included. math.Log is not
// accurate below the normal range on every platform (with Go 1.26 on amd64 it
// returns about −709.09 for every x < 2⁻¹⁰²², where ln 5e-324 = −744.44): a
// target ln δ computed that way would be too high, the unsafe direction.
// A subnormal x is scaled into the normal range exactly (x·2⁶⁴) first, and
// the result, within about 1e-13 of ln x, is lowered by 2⁻⁴⁰ so that it is
// never above ln x (the safe side for a target ln δ; callers that need an
// upper bound add their own margin).
func logSub(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p64) - 64*math.Ln2 - 0x1p-40
	}
	return math.Log(x)
}
