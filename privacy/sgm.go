package privacy

import (
	"fmt"
	"math"
)

// The Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019,
// arXiv 1908.10530 §3; docs/accountant.md §2.2, T5, T6). Each record enters a step
// independently with probability q, the step adds N(0, σ²Δ²) noise to a sum
// with L2 sensitivity Δ, and the neighbouring relation is add/remove of one
// record. With μ₀ = N(0, σ²) and μ_q = (1−q)N(0, σ²) + qN(1, σ²),
//
//	A_α = E_{z∼μ₀}[(1 − q + q·e^{(2z−1)/(2σ²)})^α],   ε(α) = ln A_α/(α−1),
//
// and the theorem shows this direction dominates the other.
//
// Integer α: A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k} q^k (e^{(k²−k)/(2σ²)} − 1),
// a sum of positive terms (the k = 0, 1 terms of the binomial sum add up to
// the 1 that is subtracted), evaluated by log-sum-exp with math.Lgamma, and
// ε(α) = log1p(A_α − 1)/(α−1). This keeps full relative accuracy when
// A_α − 1 is tiny (q = 0.01: ε(2) ≈ 1.3e-4), where ln of the plain sum loses
// four digits.
//
// Fractional α (MTZ19 §3.3): with z₀ = σ² ln(1/q − 1) + ½,
//
//	A_α = Σ_{i≥0} C(α,i)·[p1ᵢ + p2ᵢ],
//	p1ᵢ = q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} Φ((z₀−i)/σ),
//	p2ᵢ = q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2σ²)} Φ((α−i−z₀)/σ).
//
// C(α,i) > 0 for i ≤ m = ⌊α⌋+1 and alternates in sign after. Completing the
// square gives p1ᵢ = K·M((i−z₀)/σ) and p2ᵢ = K·M((i+z₀−α)/σ) with
// K = (1−q)^α φ(z₀/σ) and M the Mills ratio, which is completely monotone
// (M(x) = ∫₀^∞ e^{−xt−t²/2} dt). For i > α, |C(α,i)| = |sin πα|/π ·
// B(i−α, α+1) is a Hausdorff moment sequence in i, and so is the product. The
// tail Σ_{k≥0} (−1)^k a_k, a_k = |C(α,m+1+k)|(p1+p2)_{m+1+k}, is therefore
// summed by the Cohen–Rodriguez Villegas–Zagier algorithm (Experimental
// Math. 9, 2000, Prop 1), whose error on such series is at most
// 2·S/(3+√8)^n: about 3e-25 relative with n = 32 terms. The signs are kept
// exactly; nothing is truncated early (the failure mode of Opacus), and no
// |C(α,i)| over-estimate is used (dp_accounting's 2× loss at α = 1.5;
// docs/accountant.md pitfall 6).
//
// A − 1 is formed without cancelling a sum near 1 against the 1: a binomial
// series that sums to 1 is subtracted term by term (sgmLogAm1Frac), and the
// tail of the difference is one CRVZ sum.
//
// Both paths carry a running forward bound on their floating-point rounding
// error, which is added to A_α before the logarithm: the returned ε(α) is an
// upper bound on the exact value for the inputs given. How close it is was
// measured against 591 independent 50-digit values (sgm_grid_test.go;
// q from 1e-6 to 0.999, σ from 0.01 to 10⁴): within 1e-13 + 2e-15·α·ln(α+1)
// relative for α ≥ 2 (1.1e-11 at α = 999.5, most of it the Lgamma
// allowance, lgammaErr), 3e-13 for 1.01 ≤ α < 2 (lgammaAbs), and looser in
// two corners. As α → 1 the
// head terms cancel (they sum to exactly 0 at α = 1): up to 6e-10 at
// α = 1.001 and 1e-4 at α = 1 + 1e-7. For q within about 0.05 of ½ and
// σ ≥ 2, z₀ comes close to ½, the integrand is near 1 on both sides of the
// split, and the subtracted series no longer removes the cancellation: up
// to 6.1e-5 at q = ½, σ = 10⁴, α = 1.3 (2e-2 at α = 1.001). Integer orders, a
// sum of positive terms whose allowances are proven worst-case bounds
// (sgmIntSum.term), are within 2e-13 + 4e-15·α·ln(α+1) of an exact 320-bit
// binomial sum (sgm_lgamma_test.go).

// lgammaErr bounds the rounding error of math.Lgamma, in units of |lnΓ(x)|·2⁻⁵²:
// every ln C(α, k) here is a difference of three Lgamma values that nearly
// cancel (lnΓ(411) − lnΓ(409) = ln(410·409) ≈ 12 from terms near 2050), so
// their errors, not the result's size, set the allowance. Measured against
// 256-bit values (sgm_lgamma_test.go), Go's Lgamma is within 1.4·|lnΓ|·2⁻⁵²
// (about 1.7 ulps) at every integer argument up to 5001 and at random
// integers and non-integers up to 2²⁰; 4 leaves a factor near 3. An allowance
// of 1 (what each Lgamma value was given before) was too small: at q =
// 0.000227, σ = 129.7, α = 410 the integer sum returned ε 1.6e-14 relative
// BELOW the exact value (mpmath, 60 digits).
const lgammaErr = 4

// lgammaAbs is the part of math.Lgamma's error that the relative model
// above misses, in units of 2⁻⁵² absolute: near its zeros at 1 and 2 lnΓ is
// small, and at x ≈ 1.1916 (and x ≈ 0.1917, which Lgamma reduces to it) Go's
// Lgamma is off by up to 23 units, 270 ulps of the value −0.083 (mpmath
// agrees). Only non-integer arguments below 3 meet it (Lgamma is exact at 1
// and 2); 48 is twice the largest seen (TestLgammaWithinItsAllowance).
const lgammaAbs = 48

// lgammaBelow3 returns lgammaAbs for an argument of Lgamma where its
// relative model does not hold (below 3, not an integer), and 0 elsewhere.
func lgammaBelow3(x float64) float64 {
	if x < 3 && x != math.Trunc(x) {
		return lgammaAbs
	}
	return 0
}

// lnPi is ln π.
const lnPi = 1.14472988584940017414342735135305871164729481291531157151362307

// crvzTerms is the number of tail terms summed by the CRVZ algorithm.
const crvzTerms = 32

// SubsampledGaussianRDP returns ε(α) of one step of the Poisson-subsampled
// Gaussian mechanism with sampling rate q ∈ [0, 1] and noise multiplier σ ≥ 0
// (noise standard deviation ÷ L2 sensitivity), at any real order α > 1.
// Edge cases: q = 0 gives 0; q = 1 gives the Gaussian α/(2σ²); σ = 0 with
// q > 0 gives +Inf, and so does a σ so small (below about 5e-155) that ε(α)
// leaves the float64 range. Integer orders above 2²⁰ go through the
// fractional-order series, which holds at integer α too (its tail vanishes:
// C(α, i) = 0 for i > α). Where that series cannot be evaluated (σ below
// about 1e-8 at a fractional α) the result is +Inf, the safe side.
// Cost: O(α) for integer α, O(α + 32) otherwise.
func SubsampledGaussianRDP(q, sigma, alpha float64) (float64, error) {
	if err := checkRate(q); err != nil {
		return 0, err
	}
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	if err := checkOrder(alpha); err != nil {
		return 0, err
	}
	return sgmRDP(q, sigma, alpha), nil
}

// SubsampledGaussianCurve returns the one-step RDP curve of the
// Poisson-subsampled Gaussian on orders (DefaultOrders when nil). Compose T
// steps with Scale(T).
func SubsampledGaussianCurve(q, sigma float64, orders []float64) (RDPCurve, error) {
	if err := checkRate(q); err != nil {
		return RDPCurve{}, err
	}
	if err := checkSigma(sigma); err != nil {
		return RDPCurve{}, err
	}
	return curveOf(orders, func(a float64) float64 { return sgmRDP(q, sigma, a) })
}

// SubsampledGaussianEpsilon returns the (ε, δ) guarantee of T = steps
// compositions of the Poisson-subsampled Gaussian: the T-fold RDP curve on
// orders (DefaultOrders when nil) converted by the better of the classic and
// improved conversions, with the order used and an edge warning
// (RDPCurve.Epsilon).
func SubsampledGaussianEpsilon(q, sigma float64, steps int, delta float64, orders []float64) (RDPConversion, error) {
	if steps < 0 {
		return RDPConversion{}, fmt.Errorf("%w: number of steps T = %d must be ≥ 0", ErrInvalid, steps)
	}
	c, err := SubsampledGaussianCurve(q, sigma, orders)
	if err != nil {
		return RDPConversion{}, err
	}
	return c.Scale(float64(steps)).Epsilon(delta)
}

func sgmRDP(q, sigma, alpha float64) float64 {
	switch {
	case q == 0 || math.IsInf(sigma, 1):
		return 0
	case sigma == 0:
		return math.Inf(1)
	case q == 1:
		return gaussianRDP(sigma, alpha)
	case math.IsInf(1/(2*sigma*sigma), 1):
		// σ below about 5e-155: the k = α term alone gives ε(α) ≥
		// α/(2σ²) + α ln q/(α−1), beyond the float64 range (the sums
		// below would be Inf − Inf). +Inf is the safe side.
		return math.Inf(1)
	}
	var lnAm1, relErr float64
	if alpha == math.Trunc(alpha) && alpha <= 1<<20 {
		lnAm1, relErr = sgmLogAm1Int(q, sigma, int(alpha))
	} else {
		lnAm1, relErr = sgmLogAm1Frac(q, sigma, alpha)
	}
	if math.IsInf(lnAm1, -1) {
		return 0
	}
	// A − 1 ≤ exp(lnAm1)·(1 + relErr); 4 more ulps for log1p and the division.
	lnAm1 += math.Log1p(relErr)
	e := roundUp(log1pExp(lnAm1)/(alpha-1), 4)
	if math.IsNaN(e) {
		return math.Inf(1) // not known to occur; NaN would fail every check downstream
	}
	return e
}

// sgmLogAm1Int returns ln(A_α − 1) for integer α ≥ 2 and a bound on the
// relative rounding error of A_α − 1.
func sgmLogAm1Int(q, sigma float64, alpha int) (lnAm1, relErr float64) {
	s := newSGMIntSum(q, sigma, alpha)
	var lse logSumExp
	for k := 2; k <= alpha; k++ {
		lse.add(s.term(k))
	}
	return lse.result()
}

// sgmIntSum holds what every term of the integer-order sum shares: α,
// lnΓ(α+1), ln q, ln(1−q) and 1/(2σ²), each rounded once.
type sgmIntSum struct {
	a, lga, lq, l1q, inv2s2 float64
}

func newSGMIntSum(q, sigma float64, alpha int) sgmIntSum {
	a := float64(alpha)
	lga, _ := math.Lgamma(a + 1)
	return sgmIntSum{a: a, lga: lga, lq: math.Log(q), l1q: math.Log1p(-q), inv2s2: 1 / (2 * sigma * sigma)}
}

// term returns t = ln[C(α,k)(1−q)^{α−k}qᵏ(e^{(k²−k)/(2σ²)} − 1)] and mag, a
// bound on |t − exact| in units of 2⁻⁵² (docs/accountant.md, "Rounding
// allowances"). t is the sum of six values, lnΓ(α+1) − lnΓ(k+1) −
// lnΓ(α−k+1), the products p₁ = (α−k)·ln(1−q) and p₂ = k·ln q, and
// L = ln(e^c − 1) with c = (k²−k)/(2σ²). Their own errors are at most
// lgammaErr·|lnΓ| for each Lgamma value, 1.5|p| for each product (the
// logarithm's error below one ulp, the product's rounding half of one), and
// 1.5(1 + c) + 1 + |L| for L (c carries 1.5 ulps: 1/(2σ²) and the product,
// k² − k being exact; that moves L by at most (1 + c) times as much, and
// logExpm1 adds an ulp of its expm1 and one of its logarithm). The five
// additions round by at most half an ulp of a partial sum each, and a
// partial sum is at most Σ|v| over the six values: 2.5Σ|v| in all. L's part,
// 2.5 + 1.5c + 3.5|L|, is at most 5 + 5|L| (for c ≤ 1, 1.5c ≤ 1.5; for
// c > 1, L ≥ c − 0.46), so, rounded up,
//
//	mag = (lgammaErr+3)·Σ|lnΓ| + 4(|p₁| + |p₂|) + 5|L| + 5.
//
// TestSGMIntTermAllowance checks it against 320-bit values at points where
// each part is the largest.
func (s sgmIntSum) term(k int) (t, mag float64) {
	fk := float64(k)
	lk, _ := math.Lgamma(fk + 1)
	lak, _ := math.Lgamma(s.a - fk + 1)
	c := (fk*fk - fk) * s.inv2s2
	p1, p2, l := (s.a-fk)*s.l1q, fk*s.lq, logExpm1(c)
	t = s.lga - lk - lak + p1 + p2 + l
	mag = (lgammaErr+3)*(math.Abs(s.lga)+math.Abs(lk)+math.Abs(lak)) + 4*(math.Abs(p1)+math.Abs(p2)) + 5*math.Abs(l) + 5
	return t, mag
}

// sgmLogAm1Frac returns ln(A_α − 1) for non-integer α > 1 (an upper bound
// including rounding and CRVZ errors) and the relative error of the final
// logarithm, by the series in the file comment.
//
// A − 1 is small when σ is large or α is near 1, and a plain head sum minus 1
// would cancel (A − 1 can be 1e-18 at q = 1e-6, σ = 1000). So a binomial
// series that sums to exactly 1 is subtracted term by term, next to the
// factor it cancels:
//
//   - q < ½: Σᵢ C(α,i)bᵢ = (q + 1 − q)^α = 1 with bᵢ = (1−q)^{α−i}qⁱ (it
//     converges since q/(1−q) < 1), and p1ᵢ = bᵢe^{c1ᵢ}Φ(x1ᵢ), so
//     p1ᵢ − bᵢ = bᵢ·expm1(c1ᵢ) − bᵢe^{c1ᵢ}Φ(−x1ᵢ);
//   - q ≥ ½: the mirror image, b'ᵢ = q^{α−i}(1−q)ⁱ ((1−q)/q ≤ 1) next to
//     p2ᵢ = b'ᵢe^{c2ᵢ}Φ(x2ᵢ).
//
// Then A − 1 = Σᵢ C(α,i)(p1ᵢ + p2ᵢ − Bᵢ) with B = b or b'. Where Φ(x) < ½
// the two pieces of P − B (P = p1 or p2) do not cancel and are kept apart.
// The tail beyond m = ⌊α⌋ + 1 is summed by CRVZ (addSubtractedTail).
func sgmLogAm1Frac(q, sigma, alpha float64) (lnAm1, relErr float64) {
	s := newSGMFrac(q, sigma, alpha)

	// Every contribution to A − 1 is ±e^{l} with an absolute error of
	// mag ulps in l; they are summed relative to the largest.
	var cs []sgmPiece
	add := func(l, mag float64, neg bool) {
		if !math.IsInf(l, -1) {
			cs = append(cs, sgmPiece{l, mag, neg})
		}
	}
	m := int(math.Floor(alpha)) + 1 // C(α,i) > 0 for i ≤ m, alternating after
	for i := 0; i <= m; i++ {
		t := s.term(i)
		for _, p := range t.pieces {
			add(t.lc+p.l, t.mc+p.mag, p.neg)
		}
	}
	// The tail from i = m+1, where C(α,i) alternates starting with a
	// negative sign.
	tails := make([]sgmTerm, crvzTerms)
	for k := range tails {
		tails[k] = s.term(m + 1 + k)
	}
	addSubtractedTail(add, tails)
	// Sum relative to the largest contribution, with the error bound.
	lmax := math.Inf(-1)
	for _, c := range cs {
		lmax = math.Max(lmax, c.l)
	}
	var sum, abs, errSum float64
	for _, c := range cs {
		v := math.Exp(c.l - lmax)
		abs += v
		errSum += v * c.mag
		if c.neg {
			sum -= v
		} else {
			sum += v
		}
	}
	errSum = 0x1p-52 * (errSum + float64(len(cs)+4)*abs)
	up := sum + errSum // an upper bound on (A − 1)·e^{−lmax}
	if math.IsNaN(up) || math.IsNaN(lmax) {
		// The series broke down (terms or their error bound overflowed,
		// as for σ below about 1e-8). Nothing is known, so the safe answer
		// is A − 1 = +Inf, never the 0 that "not above 0" would mean.
		return math.Inf(1), 0
	}
	if !(up > 0) {
		return math.Inf(-1), 0
	}
	return lmax + math.Log(up), 0x1p-50 * (math.Abs(lmax) + 2)
}

// sgmFrac holds what every term of the fractional-order series shares.
type sgmFrac struct {
	alpha, sigma, lq, l1q, inv2s2, z0, lga float64
	lnSinPiAlpha                           float64 // ln|sin πα|
	mirrored                               bool    // q ≥ ½: the subtracted series is b′
}

func newSGMFrac(q, sigma, alpha float64) sgmFrac {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := sigma * sigma
	inv2s2 := 1 / (2 * s2)
	z0 := s2*(l1q-lq) + 0.5
	lga, _ := math.Lgamma(alpha + 1)
	// ln|sin πα| from the exact distance of α to the nearest integer.
	lnSinPiAlpha := math.Log(math.Abs(math.Sin(math.Pi * (alpha - math.Round(alpha)))))
	mirrored := q >= 0.5
	return sgmFrac{alpha: alpha, sigma: sigma, lq: lq, l1q: l1q, inv2s2: inv2s2, z0: z0, lga: lga,
		lnSinPiAlpha: lnSinPiAlpha, mirrored: mirrored}
}

// lnAbsBinom returns ln|C(α, i)| and a bound on its error in units of 2⁻⁵²
// (TestSGMFracBinomAllowance checks it against exact products).
//
//   - Head (i ≤ α+1): lnΓ(α+1) − lnΓ(i+1) − lnΓ(α−i+1). Each Lgamma value
//     is within 2·|lnΓ| ulps (TestLgammaWithinItsAllowance) and each of the
//     two subtractions rounds by at most half an ulp of Σ|lnΓ|, so
//     lgammaErr = 4 times Σ|lnΓ| covers both; lgammaAbs for lnΓ(α−i+1)
//     when its argument is below 3 (it can be near 0.19 or 1.19), and 4
//     more for the sum's last bits.
//   - Tail (i > α+1): |C(α,i)| = |sin πα|/π · Γ(α+1)Γ(i−α)/Γ(i+1) by the
//     reflection formula, which has no pole near integer α (math.Lgamma
//     near a negative integer loses all accuracy). ln|sin πα| is within
//     3 + |ln|sin πα|| ulps (the product π·d, π's rounding and sin's error,
//     2.5 ulps relative, then the logarithm's own ulp), ln π within one,
//     and the four additions round by at most half an ulp of the sum of
//     the magnitudes each: lgammaErr·Σ|lnΓ| + 3|ln|sin πα|| + 6 in all,
//     and lgammaAbs for lnΓ(i−α) when i − α < 3.
func (s *sgmFrac) lnAbsBinom(i int) (lc, mc float64) {
	fi := float64(i)
	li, _ := math.Lgamma(fi + 1)
	if s.alpha-fi+1 > 0 {
		y := s.alpha - fi + 1
		lai, _ := math.Lgamma(y)
		return s.lga - li - lai, lgammaErr*(math.Abs(s.lga)+math.Abs(li)+math.Abs(lai)) + lgammaBelow3(y) + 4
	}
	y := fi - s.alpha
	lai, _ := math.Lgamma(y)
	return s.lnSinPiAlpha - lnPi + s.lga + lai - li, 3*math.Abs(s.lnSinPiAlpha) + lgammaErr*(math.Abs(s.lga)+math.Abs(lai)+math.Abs(li)) + lgammaBelow3(y) + 6
}

// term returns the sgmTerm of index i.
func (s *sgmFrac) term(i int) sgmTerm {
	fi := float64(i)
	var t sgmTerm
	t.lc, t.mc = s.lnAbsBinom(i)
	j := s.alpha - fi
	x1 := (s.z0 - fi) / s.sigma
	x2 := (j - s.z0) / s.sigma
	c1 := (fi*fi - fi) * s.inv2s2 // i² − i is exact: 2 ulps of c1 cover it
	// j(j−1), not j² − j: for α near 1 the difference cancels (at
	// α = 1 + 1e-7, j² − j loses 7 digits), while j(j−1) keeps a relative
	// error of a few ulps (j − 1 is exact for j in [½, 2] and rounded
	// once otherwise), which 4|c2| ulps cover.
	c2 := j * (j - 1) * s.inv2s2
	f1, f2 := lnPhi(x1), lnPhi(x2)
	lb1, mb1 := fi*s.lq+j*s.l1q, math.Abs(fi*s.lq)+math.Abs(j*s.l1q)+4 // ln b
	lb2, mb2 := j*s.lq+fi*s.l1q, math.Abs(j*s.lq)+math.Abs(fi*s.l1q)+4 // ln b'
	t.l1, t.m1 = lb1+c1+f1, mb1+2*math.Abs(c1)+magPhi(x1, f1)
	t.l2, t.m2 = lb2+c2+f2, mb2+4*math.Abs(c2)+magPhi(x2, f2)
	// P = B·e^c·Φ(x) is the side B is subtracted from; O the other.
	lB, mB, c, mcc, x, lO, mO := lb1, mb1, c1, 2*math.Abs(c1), x1, t.l2, t.m2
	lP, mP := t.l1, t.m1
	if s.mirrored {
		lB, mB, c, mcc, x, lO, mO = lb2, mb2, c2, 4*math.Abs(c2), x2, t.l1, t.m1
		lP, mP = t.l2, t.m2
	}
	t.lB = lB
	t.pieces[0] = sgmPiece{lO, mO, false}
	if x >= 0 {
		// P − B = B·expm1(c) − B·e^c·Φ(−x), the second part ≤ P.
		t.pieces[1] = sgmPiece{math.Inf(-1), 0, false}
		if c != 0 {
			// ln|expm1 c| moves by at most max(1, |c/expm1 c|)·|δc|:
			// the relative error of c for |c| ≤ 1, |δc| above; plus
			// the rounding of the logarithm and of the sum.
			var le float64
			if c > 0 {
				le = logExpm1(c)
			} else { // the mirrored side at 0 < α−i < 1
				le = math.Log(-math.Expm1(c))
			}
			t.pieces[1] = sgmPiece{lB + le, mB + mcc + math.Abs(le) + 8, c < 0}
		}
		fn := lnPhi(-x)
		t.pieces[2] = sgmPiece{lB + c + fn, mB + mcc + magPhi(-x, fn) + 4, true}
	} else {
		// Φ(x) < ½: P ≤ B·e^c/2; keep P and −B apart.
		t.pieces[1] = sgmPiece{lP, mP, false}
		t.pieces[2] = sgmPiece{lB, mB, true}
	}
	return t
}

// sgmPiece is ±e^{l} with an absolute error of mag ulps (2⁻⁵²) in l.
type sgmPiece struct {
	l, mag float64
	neg    bool
}

// sgmTerm holds, for one index i of the fractional-order series, ln|C(α,i)|
// (lc, with its error size mc), ln p1ᵢ and ln p2ᵢ, ln Bᵢ of the subtracted
// binomial series, and the three pieces whose sum is p1ᵢ + p2ᵢ − Bᵢ.
type sgmTerm struct {
	lc, mc float64
	l1, m1 float64 // ln p1
	l2, m2 float64 // ln p2
	lB     float64
	pieces [3]sgmPiece
}

// crvzTruncUlps is the CRVZ truncation error in ulps of the first term a₀
// of an alternating moment sequence (whose sum is at most a₀): at most
// 2a₀/(3+√8)ⁿ ≈ 6.4e-25·a₀ with n = 32, entered as 1e-8 ulps (2.2e-24) with
// room to spare.
const crvzTruncUlps = 1e-8

// addSubtractedTail enters the tail −Σ_k (−1)^k d_k, d_k = |C|(p1 + p2 − B)
// of the terms t (i = m+1, m+2, ...). It is the difference of the CRVZ sums
// of two alternating moment sequences, |C|(p1+p2) and |C|B, and CRVZ is
// linear, so one pass over d_k has a truncation error of at most the sum of
// theirs. Summing d_k, each from the pieces of its own term, avoids the
// cancellation of the two tails against each other: at σ = 1000 they agree
// to about 1e-6 relative, and separate sums with separate rounding
// allowances inflated ε(α) by up to 1e-4.
//
// The result can have either sign (or be 0), so the rounding and truncation
// bound E is entered as a separate positive contribution and −S as one with
// no error of its own: A − 1 ≤ (others) − S + E. The rounding of the weighted
// sum is at most 2n+8 ulps of Σ|d_k| (CRVZ's weights are in [0, 1]).
func addSubtractedTail(add func(l, mag float64, neg bool), t []sgmTerm) {
	l0 := math.Inf(-1)
	for _, tk := range t {
		for _, p := range tk.pieces {
			l0 = math.Max(l0, tk.lc+p.l)
		}
	}
	if math.IsInf(l0, -1) {
		return // every tail term is 0
	}
	d := make([]float64, len(t))
	var errUlps, dabs float64 // in units of 2⁻⁵²·e^{l0}
	for k, tk := range t {
		var abs float64
		for _, p := range tk.pieces {
			v := math.Exp(tk.lc + p.l - l0)
			abs += v
			errUlps += v * (tk.mc + p.mag)
			if p.neg {
				d[k] -= v
			} else {
				d[k] += v
			}
		}
		errUlps += 4 * abs // the two additions and the exponentials' rounding
		dabs += math.Abs(d[k])
	}
	t0 := t[0]
	a0 := math.Exp(t0.lc+t0.l1-l0) + math.Exp(t0.lc+t0.l2-l0) + math.Exp(t0.lc+t0.lB-l0)
	errUlps += dabs*(2*float64(len(d))+8) + a0*crvzTruncUlps
	sum := crvz(d)
	if sum != 0 {
		add(l0+math.Log(math.Abs(sum)), 0, sum > 0)
	}
	add(l0+math.Log(errUlps*0x1p-52), 0, false)
}

// magPhi bounds |lnPhi(x) − ln Φ(x′)| in ulps for x′ within an ulp of x: for
// x ≤ 0 the step costs x², erfc's argument 2|f|; for x > 0 each costs |f|·x²
// relative, and 2⁻¹⁰²⁰ covers a subnormal f (docs/accountant.md).
func magPhi(x, f float64) float64 {
	if x > 0 {
		return math.Abs(f)*(2*x*x+8) + 0x1p-1020
	}
	return 2*math.Abs(f) + x*x + 4
}

// crvz sums the alternating series Σ_{k≥0} (−1)^k a_k from its first n terms
// by Algorithm 1 of Cohen, Rodriguez Villegas & Zagier (2000). For a Hausdorff
// moment sequence a_k = ∫₀¹ x^k dμ(x), μ ≥ 0, the relative error is at most
// 2/(3+√8)^n (their Prop 1); the weights are in [0, 1], so the rounding error
// is at most about n ulps of Σ a_k.
func crvz(a []float64) float64 {
	n := len(a)
	d := math.Pow(3+math.Sqrt(8), float64(n))
	d = (d + 1/d) / 2
	b, c, s := -1.0, -d, 0.0
	for k := range n {
		c = b - c
		s += c * a[k]
		fk, fn := float64(k), float64(n)
		b = (fk + fn) * (fk - fn) * b / ((fk + 0.5) * (fk + 1))
	}
	return s / d
}

// logSumExp accumulates ln Σ e^{tᵢ} in one pass, with a running bound on the
// relative error of the sum from the rounding of each tᵢ (magᵢ·2⁻⁵² absolute
// in tᵢ) and of the accumulation.
type logSumExp struct {
	max, sum, err float64
	n             int
}

func (l *logSumExp) add(t, mag float64) {
	if math.IsInf(t, -1) {
		return
	}
	l.n++
	if l.n == 1 || t > l.max {
		if l.n > 1 {
			r := math.Exp(l.max - t)
			l.sum *= r
			l.err *= r
		}
		l.max = t
	}
	e := math.Exp(t - l.max)
	l.sum += e
	l.err += e * mag * 0x1p-52
}

// result returns ln Σ e^{tᵢ} and the relative error bound of Σ e^{tᵢ}: the
// terms' own (err/sum), the sum's (n+4 ulps), and the rounding of the
// logarithm itself. That last one is an absolute error of up to an ulp of
// |max| in ln Σ (max + ln sum, then the caller's addition), which is a
// RELATIVE error of Σ = e^{ln Σ} as large as |max|·2⁻⁵²; at A − 1 = 1e-17
// (ln ≈ −39) it is 9e-15, beyond the final 4-ulp round-up, and leaving it
// out made ε(3) 2e-15 relative BELOW the exact value at q = 6.9e-5,
// σ = 11,895. 2⁻⁵⁰·(|max| + 2) covers it four times over, as the
// fractional path's result does.
func (l *logSumExp) result() (float64, float64) {
	if l.n == 0 {
		return math.Inf(-1), 0
	}
	return l.max + math.Log(l.sum), l.err/l.sum + float64(l.n+4)*0x1p-52 + 0x1p-50*(math.Abs(l.max)+2)
}

func checkRate(q float64) error {
	if !(q >= 0 && q <= 1) {
		return fmt.Errorf("%w: sampling rate q = %v must lie in [0, 1]", ErrInvalid, q)
	}
	return nil
}
