package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The subsampled Gaussian's result is an upper bound because every rounded
// quantity in it carries an allowance, in units of 2⁻⁵², that bounds its
// rounding error (sgm.go). The end-to-end tests (sgm_grid_test.go,
// sgm_lgamma_test.go) cannot see an allowance that is too small as long as
// the others have slack. The tests here check each allowance against its own
// contract, one quantity at a time, against 320-bit values computed without
// the float64 code: an allowance that does not cover the real error of its
// own quantity fails here even where the final ε(α) still lands above the
// exact value.

// bigLnPhi returns ln Φ(x) to far below float64 resolution, by one of two
// routes that do not touch normal.go:
//   - |x| < 4: bigLnPhiSeries;
//   - |x| ≥ 4: bigLnPhiMills.
func bigLnPhi(x float64) *big.Float {
	if math.Abs(x) < 4 {
		return bigLnPhiSeries(x)
	}
	return bigLnPhiMills(x)
}

// bigLnPhiSeries returns ln Φ(x) from Φ(x) = ½ + φ(0)·Σₙ (−1)ⁿ x^{2n+1}/(2ⁿ
// n! (2n+1)). Its largest term is about e^{x²/2}, so at 320 bits it keeps
// more than 200 bits of Φ for |x| ≤ 8.
func bigLnPhiSeries(x float64) *big.Float {
	bx := bigF(x)
	sum, term := bigNew().Set(bx), bigNew().Set(bx) // term = (−1)ⁿ x^{2n+1}/(2ⁿ n!)
	negHalfX2 := bigNew().Mul(bx, bx)
	negHalfX2.Quo(negHalfX2, bigF(-2))
	eps := bigF(0x1p-340)
	for n := 1; n < 4000; n++ {
		term.Mul(term, negHalfX2)
		term.Quo(term, bigF(float64(n)))
		d := bigNew().Quo(term, bigF(float64(2*n+1)))
		sum.Add(sum, d)
		if bigNew().Abs(d).Cmp(eps) < 0 && n > 10 {
			break
		}
	}
	p := sum.Mul(sum, bigExp(bigNew().Neg(bigHalfLn2Pi)))
	return bigLog(p.Add(p, bigF(0.5)))
}

// bigLnPhiMills returns ln Φ(x) for |x| ≥ 1 from the Mills ratio
// M(u) = Φ(−u)/φ(u), u = |x|, by Laplace's continued fraction (mnMillsBigN)
// with 60 + (90/u)² levels (its truncation error falls like e^{−2u√n}, below
// 1e-70 here): ln Φ(x) = ln M(−x) + ln φ(x) for x < 0, and for x > 0
// ln Φ(x) = ln(1 − s) = −Σₖ sᵏ/k with s = M(x)φ(x) ≤ 0.16.
func bigLnPhiMills(x float64) *big.Float {
	u := bigF(math.Abs(x))
	mills := mnMillsBigN(u, 60+int(math.Ceil(8100/(x*x))))
	lnPhiDensity := bigNew().Mul(u, u) // ln φ(x) = −x²/2 − ½ ln 2π
	lnPhiDensity.Quo(lnPhiDensity, bigF(-2)).Sub(lnPhiDensity, bigHalfLn2Pi)
	lnTail := bigNew().Add(lnPhiDensity, bigLog(mills)) // ln Φ(−|x|)
	if x < 0 {
		return lnTail
	}
	s := bigExp(lnTail)
	sum, pw := bigNew(), bigF(1)
	eps := bigF(0x1p-340)
	for k := 1; k < 4000; k++ {
		pw.Mul(pw, s)
		d := bigNew().Quo(pw, bigF(float64(k)))
		sum.Sub(sum, d)
		if d.Cmp(eps) < 0 {
			break
		}
	}
	return sum
}

// allowanceUnits returns |got − want| in units of 2⁻⁵².
func allowanceUnits(got float64, want *big.Float) float64 {
	d, _ := bigNew().Sub(bigF(got), want).Float64()
	return math.Abs(d) / 0x1p-52
}

// TestBigLnPhiRoutesAgree: the oracle's two routes, one a power series and
// one a continued fraction, give the same ln Φ(x) to 1e-50 where both hold
// (|x| from 1 to 8), and the series gives ln Φ(0) = −ln 2. A wrong constant or
// a sign slip in either route shows here before it could excuse an
// allowance.
func TestBigLnPhiRoutesAgree(t *testing.T) {
	if d, _ := bigNew().Add(bigLnPhi(0), bigLn2()).Float64(); math.Abs(d) > 1e-60 {
		t.Errorf("ln Φ(0) + ln 2 = %g, want 0", d)
	}
	for _, x := range []float64{-8, -6, -4, -2.5, -1, 1, 1.5, 3.999, 4, 6.5, 8} {
		a, b := bigLnPhiSeries(x), bigLnPhiMills(x)
		d, _ := bigNew().Quo(bigNew().Sub(a, b), b).Float64()
		if math.Abs(d) > 1e-50 {
			t.Errorf("ln Φ(%v): the series and the continued fraction differ by %g relative", x, d)
		}
	}
}

// magPhiPoints returns the arguments at which magPhi is checked: a dense
// sweep of [−60, 40], the neighbourhood of every power of two there (where
// an ulp of x doubles) and of the switches inside lnPhi (0, −37), and 400
// seeded random points.
func magPhiPoints() []float64 {
	var xs []float64
	for x := -60.0; x <= 40; x += 0.0625 {
		xs = append(xs, x+0.03125*0.7)
	}
	for e := -6; e <= 5; e++ {
		p := math.Ldexp(1, e)
		for _, s := range []float64{-1, 1} {
			v := s * p
			xs = append(xs, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)))
		}
	}
	xs = append(xs, 0, 1e-300, -1e-300, -37, math.Nextafter(-37, 0), math.Nextafter(-37, math.Inf(-1)))
	r := rand.New(rand.NewPCG(21, 4))
	for range 400 {
		xs = append(xs, -60+100*r.Float64())
	}
	return xs
}

// TestMagPhiCoversLnPhi checks magPhi's contract: f = lnPhi(x̃) is within
// magPhi(x̃, f)·2⁻⁵² of ln Φ(x) for the x̃ given and for x one ulp either
// side of it, since the callers pass an x̃ that carries its own rounding
// (sgm.go's (z₀ − i)/σ, gdp.go's argument). Where ln Φ(x) moves by more than
// an ulp of x times |x| (x ≤ 0) or by |f|·x² relative (x > 0) a smaller
// allowance would not cover the step to the neighbouring x, which is what
// makes each term of magPhi necessary: at x ≈ −16 the step is about x²
// units and the rounding of f ≈ −130 is up to 64 more, so both 2|f| and x²
// are needed; at x = 5 the step is φ(5)/Φ(5)·ulp(5) ≈ 6e-6 units and the
// rounding inside erfc up to |f|·x² ≈ 7e-6, against |f|·(2x² + 8) = 1.7e-5
// (the earlier |f|·(x² + 4) failed at x = 5.97).
func TestMagPhiCoversLnPhi(t *testing.T) {
	worst, at := 0.0, 0.0
	for _, xt := range magPhiPoints() {
		f := lnPhi(xt)
		m := magPhi(xt, f)
		for _, x := range []float64{xt, math.Nextafter(xt, math.Inf(-1)), math.Nextafter(xt, math.Inf(1))} {
			e := allowanceUnits(f, bigLnPhi(x))
			if !(e <= m) {
				t.Errorf("lnPhi(%v) = %.17g is %.4g units (2⁻⁵²) from ln Φ(%v); magPhi allows %.4g", xt, f, e, x, m)
			}
			if m > 0 && e/m > worst {
				worst, at = e/m, xt
			}
		}
	}
	t.Logf("largest error/allowance %.3f at x = %v", worst, at)
}

// bigSGMIntTerm returns ln[C(α,k)(1−q)^{α−k}qᵏ(e^{(k²−k)/(2σ²)} − 1)] at 320
// bits, with C(α,k) an exact integer.
func bigSGMIntTerm(q, sigma float64, alpha, k int) *big.Float {
	binom := new(big.Int).Binomial(int64(alpha), int64(k))
	t := bigLog(bigNew().SetInt(binom))
	t.Add(t, bigNew().Mul(bigF(float64(alpha-k)), bigLog(bigNew().Sub(bigF(1), bigF(q)))))
	t.Add(t, bigNew().Mul(bigF(float64(k)), bigLog(bigF(q))))
	c := bigNew().Quo(bigF(float64(k*k-k)), bigNew().Mul(bigF(2), bigNew().Mul(bigF(sigma), bigF(sigma))))
	return t.Add(t, bigLog(bigNew().Sub(bigExp(c), bigF(1))))
}

// TestSGMIntTermAllowance: each term of the integer-order sum is within its
// allowance mag·2⁻⁵² of the exact value, in seven seeded families of 60
// points chosen so that each part of mag is the largest in one of them:
// large orders (the Lgamma values), q down to 1e-300 (k·ln q), q within
// 1e-15 of 1 ((α−k)·ln(1−q)), σ down to 0.02 (c = (k²−k)/(2σ²) up to 10⁵,
// L ≈ c), σ up to 10⁷ (L = ln(e^c − 1) near −32), c near ln 2 with q near 1
// (L and the products near 0: the constant carries c's rounding) and q, σ
// near 1 with α ≤ 4. A part that is dropped or subtracted leaves the
// allowance below the real error in its family.
func TestSGMIntTermAllowance(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 9))
	logU := func(lo, hi float64) float64 { return math.Exp(math.Log(lo) + r.Float64()*math.Log(hi/lo)) }
	type pt struct {
		q, sigma float64
		alpha    int
	}
	families := map[string]func() pt{
		"large α":     func() pt { return pt{logU(1e-6, 0.999), logU(0.3, 300), 50 + r.IntN(900)} },
		"tiny q":      func() pt { return pt{logU(1e-300, 1e-3), logU(0.5, 50), 2 + r.IntN(5)} },
		"q near 1":    func() pt { return pt{1 - logU(1e-15, 1e-3), logU(0.5, 50), 3 + r.IntN(40)} },
		"small σ":     func() pt { return pt{logU(1e-3, 0.9), logU(0.02, 0.3), 2 + r.IntN(9)} },
		"large σ":     func() pt { return pt{logU(1e-3, 0.9), logU(1e4, 1e7), 2 + r.IntN(3)} },
		"q and σ ≈ 1": func() pt { return pt{0.2 + 0.6*r.Float64(), 0.5 + r.Float64(), 2 + r.IntN(3)} },
		// c = 1/σ² at k = 2, so σ near 1/√(ln 2) puts c near ln 2.
		"c ≈ ln 2": func() pt { return pt{1 - logU(1e-12, 1e-6), (1 + 0.02*(r.Float64()-0.5)) / math.Sqrt(math.Ln2), 2} },
	}
	for _, name := range []string{"large α", "tiny q", "q near 1", "small σ", "large σ", "q and σ ≈ 1", "c ≈ ln 2"} {
		worst := 0.0
		for range 60 {
			p := families[name]()
			s := newSGMIntSum(p.q, p.sigma, p.alpha)
			ks := []int{2, p.alpha}
			if p.alpha <= 12 {
				ks = ks[:0]
				for k := 2; k <= p.alpha; k++ {
					ks = append(ks, k)
				}
			} else {
				ks = append(ks, 3, p.alpha/2, p.alpha-1, 2+r.IntN(p.alpha-1), 2+r.IntN(p.alpha-1))
			}
			for _, k := range ks {
				got, mag := s.term(k)
				e := allowanceUnits(got, bigSGMIntTerm(p.q, p.sigma, p.alpha, k))
				if !(e <= mag) {
					t.Errorf("%s: term k=%d of α=%d (q=%v, σ=%v) is %.4g units from exact; its allowance is %.4g", name, k, p.alpha, p.q, p.sigma, e, mag)
				}
				worst = max(worst, e/mag)
			}
		}
		t.Logf("%s: largest error/allowance %.3f", name, worst)
	}
}

// bigLnAbsBinom returns ln|C(α, i)| = ln|Π_{j<i} (α−j)/(j+1)| at 320 bits.
func bigLnAbsBinom(alpha float64, i int) *big.Float {
	p := bigF(1)
	for j := range i {
		p.Mul(p, bigNew().Sub(bigF(alpha), bigF(float64(j))))
		p.Quo(p, bigF(float64(j+1)))
	}
	return bigLog(p.Abs(p))
}

// TestSGMFracBinomAllowance: ln|C(α, i)| of the fractional-order series is
// within its allowance mc·2⁻⁵² of the exact product, for every head index
// i ≤ ⌊α⌋+1 and every one of the 32 tail indices, at orders in five seeded
// families: α in (1, 2) (all three Lgamma values below 1, where the
// constant is the largest part), α up to 1000.5 (the Lgamma values near
// 6000 cancel to ln|C| of a few units), α within 1e-12 to 1e-4 of an
// integer (ln|sin πα| down to −26 in the tail), half-integers and random
// orders up to 60.
func TestSGMFracBinomAllowance(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 2))
	var alphas []float64
	for range 12 {
		alphas = append(alphas, 1+r.Float64())
	}
	for range 6 {
		alphas = append(alphas, 100+900*r.Float64())
	}
	for range 12 {
		n := float64(1 + r.IntN(40))
		d := math.Exp(math.Log(1e-12) + r.Float64()*math.Log(1e8))
		if r.IntN(2) == 0 {
			d = -d
		}
		if n+d > 1 {
			alphas = append(alphas, n+d)
		}
	}
	for range 6 {
		alphas = append(alphas, float64(1+r.IntN(30))+0.5)
	}
	for range 12 {
		alphas = append(alphas, 1+59*r.Float64())
	}
	alphas = append(alphas, 1000.5)
	worst, at := 0.0, ""
	for _, alpha := range alphas {
		s := newSGMFrac(0.01, 1, alpha)
		m := int(math.Floor(alpha)) + 1
		for i := 0; i <= m+crvzTerms; i++ {
			if alpha > 100 && i > 3 && i < m-3 && i%37 != 0 {
				continue // a sample of the long head
			}
			lc, mc := s.lnAbsBinom(i)
			e := allowanceUnits(lc, bigLnAbsBinom(alpha, i))
			if !(e <= mc) {
				t.Errorf("ln|C(%v, %d)| = %.17g is %.4g units from exact; its allowance is %.4g", alpha, i, lc, e, mc)
			}
			if e/mc > worst {
				worst, at = e/mc, fmt.Sprintf("α = %v, i = %d", alpha, i)
			}
		}
	}
	t.Logf("largest error/allowance %.3f at %s", worst, at)
}

// TestLogSumExpAllowance: logSumExp's result (l, rel) satisfies
// |e^l − Σ e^{tᵢ}| ≤ rel·Σ e^{tᵢ} against 320-bit sums, for terms that are
// exact (mag 0): one term at 0 (the logarithm's own rounding), 2,000 terms
// of random sizes near e⁰ (the sum's n + 4 ulps), terms near −700 and +700
// (|max|·2⁻⁵² of relative error from rounding ln Σ), and sums of one large
// term with many below half its ulp, which the float64 sum drops.
func TestLogSumExpAllowance(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 6))
	cases := map[string][]float64{"one term at 0": {0}}
	var many, neg, pos, dropped []float64
	for range 2000 {
		many = append(many, -r.Float64())
	}
	for range 50 {
		neg = append(neg, -700-3*r.Float64())
		pos = append(pos, 700+3*r.Float64())
	}
	dropped = append(dropped, 0)
	for range 3000 {
		dropped = append(dropped, -37.5-r.Float64()) // e^t below 2⁻⁵³
	}
	cases["2,000 terms"], cases["near −700"], cases["near +700"], cases["dropped terms"] = many, neg, pos, dropped
	for name, ts := range cases {
		var lse logSumExp
		exact := bigNew()
		for _, x := range ts {
			lse.add(x, 0)
			exact.Add(exact, bigExp(bigF(x)))
		}
		l, rel := lse.result()
		d := bigNew().Sub(bigExp(bigF(l)), exact)
		e, _ := d.Quo(d, exact).Float64()
		if !(math.Abs(e) <= rel) {
			t.Errorf("%s: ln Σ = %.17g is %.4g relative from the exact sum; the bound is %.4g", name, l, e, rel)
		}
		t.Logf("%s: error %.3g of the bound", name, math.Abs(e)/rel)
	}
}
