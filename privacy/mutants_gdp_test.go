package privacy

import (
	"math"
	"math/big"
	"testing"
)

// Tests that kill mutants gremlins found surviving in gdp.go and rnm.go
// (docs/mutation-testing.md). The GDP curve is
//
//	δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
//
// (Dong, Roth & Su 2022, JRSSB, Cor 2.13). Oracle values were computed with
// mpmath 1.3 at 420 significant digits straight from that formula, with μ
// and ε the exact values of the float64 arguments.

// gdpMutBig returns x as a 200-bit big.Float (exact for every float64).
func gdpMutBig(x float64) *big.Float { return new(big.Float).SetPrec(200).SetFloat64(x) }

// gdpMutParse parses a decimal oracle value at 200 bits.
func gdpMutParse(t *testing.T, s string) *big.Float {
	t.Helper()
	f, _, err := big.ParseFloat(s, 10, 200, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// gdpMutExactArg returns a = μ/2 − ε/μ exactly, for the float64 μ > 0, ε given.
func gdpMutExactArg(mu, eps float64) *big.Rat {
	h := new(big.Rat).Quo(ratOf(mu), big.NewRat(2, 1))
	return h.Sub(h, new(big.Rat).Quo(ratOf(eps), ratOf(mu)))
}

// TestGDPArgRoundsUpByFewUlps checks gdpArg's contract: a value ≥ the exact
// a = μ/2 − ε/μ and, where a is formed with the fused multiply-add, within a
// few ulps of it.
//
// Kills gdp.go:147:25 (the margin subtracted: a falls ~3 ulps below the
// exact value, so ln δ could fall below the truth), gdp.go:147:36 (−2⁻¹⁰⁷³:
// at μ = 5e-324, ε = 0 the exact a = 2⁻¹⁰⁷⁵ but a − 2⁻¹⁰⁷³ rounds to
// −2⁻¹⁰⁷⁴), gdp.go:136:66 (|r| > 2⁻¹⁰⁰⁰ instead of ≥: at μ = 2⁻⁴⁹⁰,
// ε = 2⁻⁹⁸¹ − 2⁻¹⁰⁰⁰, r = μ²/2 − ε = 2⁻¹⁰⁰⁰ exactly is normal, so a must come
// from the FMA, a = 2⁻⁵¹⁰ to a few ulps; the plain form's bound
// 2⁻⁵¹(μ/2 + ε/μ) is 2²¹ ulps of a) and gdp.go:142:19, 142:23 (the plain
// form's error term loses μ/2 or ε/μ: where μ·μ/2 − ε is below 2⁻¹⁰⁰⁰
// with μ/2 ≈ ε/μ, their difference a is of the order of the rounding of ε/μ,
// which only 2⁻⁵¹(μ/2 + ε/μ) covers).
func TestGDPArgRoundsUpByFewUlps(t *testing.T) {
	type tc struct {
		mu, eps float64
		ulps    float64 // 0: only the lower bound is checked
	}
	cases := []tc{
		{1, 0.3, 8}, {1, 2, 8}, {0.1, 7, 8}, {3, 0.01, 8}, {1e-5, 1e-9, 8},
		{1e100, 1e150, 8}, {1e-150, 1e-290, 8},
		{0x1p-490, 0x1p-981 - 0x1p-1000, 8}, // r = 2⁻¹⁰⁰⁰ exactly: the FMA form
		{5e-324, 0, 0}, {1e-320, 0, 0}, {1e-310, 3e-310, 0}, {1, 0.5, 0},
	}
	// μ·μ/2 − ε overflows: the plain form (no cancellation there).
	for _, mu := range []float64{1.9e154, 1.95e154, 2e154, 2.5e154} {
		for _, eps := range []float64{math.MaxFloat64, 1.7e308, 1.6e308, 1.5e308, 1.3e308, 1.1e308, 9e307, 7e307, 3e307} {
			cases = append(cases, tc{mu, eps, 0})
		}
	}
	// μ·μ/2 − ε below 2⁻¹⁰⁰⁰ (μ < 2⁻⁴⁴⁶, ε the float nearest μ²/2): the
	// plain form, where μ/2 and ε/μ cancel and the rounding of ε/μ is about
	// an ulp of a; only the full term 2⁻⁵¹(|a| + μ/2 + ε/μ) covers it (found
	// by a random search).
	cases = append(cases, tc{4.015829045094554e-147, 8.063441459712518e-294, 0},
		tc{2.3027386158975725e-145, 2.6513025665729343e-290, 0},
		tc{3.255453280298795e-151, 5.298988030104092e-302, 0})
	below := 0
	for _, c := range cases {
		got := gdpArg(c.mu, c.eps)
		exact := gdpMutExactArg(c.mu, c.eps)
		if ratOf(got).Cmp(exact) < 0 {
			below++
			t.Errorf("gdpArg(%v, %v) = %v is below the exact a = %v", c.mu, c.eps, got, new(big.Float).SetRat(exact).Text('g', 25))
			continue
		}
		if c.ulps > 0 {
			ex, _ := exact.Float64()
			if d := got - ex; d > c.ulps*gdpMutUlp(ex) {
				t.Errorf("gdpArg(%v, %v) = %v is %v ulps above the exact a = %v, want ≤ %v", c.mu, c.eps, got, d/gdpMutUlp(ex), ex, c.ulps)
			}
		}
	}
}

// gdpMutUlp returns the spacing of float64 values at |x|.
func gdpMutUlp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// TestLogGDPDeltaFarTail pins the branch a < −1e150 of logGDPDelta, where
// ln δ is bounded by −a²/2 (rounded up by 2⁻⁴⁸ relative). With μ = 1 and
// x = −a = ε − ½ ∈ [1e151, 1e154], the exact value obeys (Mills' bounds
// φ(x)x/(x²+1) ≤ Φ(−x) ≤ φ(x)/x, and 1 − r ≥ (xμ − 1)/(x² + xμ))
//
//	−x²/2 − 2000 < ln δ < −x²/2,
//
// so the returned upper bound must lie in [−x²/2 − 2000, −x²/2·(1 − 2⁻⁴⁵)].
// Kills gdp.go:65:12 (a·2: −2a²), gdp.go:65:21 and gdp.go:65:26 ×2 (the
// factor 1 ± 2⁻⁴⁸ inverted: −a²/2·(1 + 2⁻⁴⁸), 1.8e289 below the truth at
// x = 1e152) and gdp.go:66:14 ×2 (every value clamped to −MaxFloat64).
func TestLogGDPDeltaFarTail(t *testing.T) {
	for _, eps := range []float64{1e151, 1e152, 3e153, 1e154} {
		ld := LogGDPDelta(1, eps)
		x := new(big.Float).SetPrec(400).SetRat(gdpMutExactArg(1, eps))
		half := new(big.Float).SetPrec(400).Mul(x, x)
		half.Quo(half, big.NewFloat(2)) // x²/2
		lower := new(big.Float).SetPrec(400).Neg(half)
		lower.Sub(lower, big.NewFloat(2000))
		if gdpMutBig(ld).Cmp(lower) < 0 {
			t.Errorf("LogGDPDelta(1, %v) = %v is below the exact ln δ (> %v)", eps, ld, lower.Text('g', 20))
		}
		h, _ := half.Float64()
		if ld > -h*(1-0x1p-45) {
			t.Errorf("LogGDPDelta(1, %v) = %v, want within 2⁻⁴⁵ of −x²/2 = %v", eps, ld, -h)
		}
	}
}

// TestLogGDPDeltaSubnormalMu pins the branch of logGDPDelta where 1 − r
// underflows (μ subnormal): there ln(1 − r) is bounded by ln μ + ln g(−a)
// plus 2⁻⁴⁰(1 + |ln μ|), which covers logSub's 2⁻⁴⁰ lowering of ln μ and
// millsG's rounding. The result must not be below the exact ln δ (mpmath,
// 420 digits) and must be within 1e-8 of it (GDPMu documents about 1e-9
// relative for a subnormal μ).
//
// Kills gdp.go:88:35 and gdp.go:88:47 (the margin subtracted, or
// 2⁻⁴⁰(1 − |ln μ|) < 0: ln δ falls about 6.5e-10 below the truth) and
// gdp.go:88:30 ×2 (g(a) for g(−a): at a ≈ −3, g(3) = 0.28 but g(−3) = 3.004,
// ln δ off by 2.4).
func TestLogGDPDeltaSubnormalMu(t *testing.T) {
	for _, c := range []struct {
		mu, eps float64
		want    string
	}{
		{1e-310, 3e-310, "-721.671064887757193617756466437"},
		{1e-310, 1e-309, "-769.354500864277024697271684403"},
		{1e-320, 0, "-737.746179424178578892767235408"},
		{5e-324, 0, "-745.359010454585935055887628182"},
		{1e-315, 2e-315, "-730.083087831797899177610641218"},
		{3e-309, 1e-308, "-719.496497967389717123210255977"},
	} {
		ld := LogGDPDelta(c.mu, c.eps)
		want := gdpMutParse(t, c.want)
		if gdpMutBig(ld).Cmp(want) < 0 {
			t.Errorf("LogGDPDelta(%v, %v) = %.17g is below the exact %s", c.mu, c.eps, ld, c.want)
		}
		if w, _ := want.Float64(); ld > w+1e-8 {
			t.Errorf("LogGDPDelta(%v, %v) = %.17g, want %s to 1e-8", c.mu, c.eps, ld, c.want)
		}
	}
}

// TestLogGDPDeltaDerivatives checks the partial derivatives logGDPDelta
// documents (they steer the Newton steps of GDPEpsilon and GDPMu):
//
//	∂ ln δ/∂ε = −e^ε Φ(b)/δ,  ∂ ln δ/∂μ = φ(a)/δ,
//
// a = μ/2 − ε/μ, b = −μ/2 − ε/μ, against mpmath (50 digits), to 1e-9
// relative; the cases cover a < 0, a = 0 and a > 0.
//
// Kills gdp.go:71:18 ×2 (M(a) for M(−a) in ∂/∂μ), gdp.go:112:9 ×2 (the sign
// of ∂/∂ε), gdp.go:112:24 and gdp.go:113:24 (multiplying by 1 − r instead
// of dividing).
func TestLogGDPDeltaDerivatives(t *testing.T) {
	for _, c := range []struct{ mu, eps, dEps, dMu float64 }{
		{1, 0.5, -1.0971244770931131882, 1.6732632423543772848},
		{1, 2, -2.1929059480878513173, 6.1900138567312205635},
		{3, 1, -0.11519384035688728632, 0.25647345786541078397},
		{0.5, 3, -12.120518263076613334, 77.603990009105252171},
		{10, 1, -4.6163737758913660613e-7, 2.4389630405191023887e-6},
		{12, 0.5, -1.2574000430716919186e-9, 7.7948187543881973886e-9},
		{0.1, 0.2, -26.295503561575805689, 63.571350941122972889},
		{2, 10, -2.186176622248053099, 13.463530698576703804},
	} {
		_, de, dm := logGDPDelta(c.mu, c.eps)
		if math.Abs(de-c.dEps) > 1e-9*math.Abs(c.dEps) {
			t.Errorf("∂ ln δ/∂ε at μ=%v, ε=%v = %v, want %v", c.mu, c.eps, de, c.dEps)
		}
		if math.Abs(dm-c.dMu) > 1e-9*math.Abs(c.dMu) {
			t.Errorf("∂ ln δ/∂μ at μ=%v, ε=%v = %v, want %v", c.mu, c.eps, dm, c.dMu)
		}
	}
}

// TestLogGDPDeltaNearOne: for a = μ/2 − ε/μ between 5 and 7, δ is 1 − 1e-12
// or closer and ln δ ≈ −(1 − δ) is computed from Φ(−a): a rounded down by a
// few ulps puts ln δ below the exact value (mpmath, 260 digits).
//
// Kills gdp.go:147:25 through the public API (gdpArg's margin subtracted
// instead of added).
func TestLogGDPDeltaNearOne(t *testing.T) {
	for _, c := range []struct {
		mu, eps float64
		want    string
	}{
		{14.31219641972468, 3.0914482343879723, "-3.80748235456478472926438876836e-12"},
		{16.89682660104072, 24.96759182694785, "-2.69379298668327154110350953185e-12"},
		{12.863589533769833, 2.458093635588367, "-4.23563524728608790651375947265e-10"},
		{25.351265640673688, 61.37661751945273, "-9.49504583198046418709230980354e-25"},
	} {
		ld := LogGDPDelta(c.mu, c.eps)
		want := gdpMutParse(t, c.want)
		if gdpMutBig(ld).Cmp(want) < 0 {
			t.Errorf("LogGDPDelta(%v, %v) = %.17g is below the exact %s", c.mu, c.eps, ld, c.want)
		}
		if w, _ := want.Float64(); math.Abs(ld-w) > 1e-12*math.Abs(w) {
			t.Errorf("LogGDPDelta(%v, %v) = %.17g, want %s to 1e-12", c.mu, c.eps, ld, c.want)
		}
	}
}

// TestGDPEpsilonIsZeroAtDeltaZero: δ_μ(0) = 2Φ(μ/2) − 1 > 0, and at
// δ = δ_μ(0) (taken as the float whose logarithm is exactly LogGDPDelta(μ, 0),
// so the first check meets a tie) the smallest ε with δ_μ(ε) ≤ δ is 0.
//
// Kills gdp.go:199:34 (f(0) < 0 instead of ≤ 0: the tie is sent to the
// search, which returns an ε > 0).
func TestGDPEpsilonIsZeroAtDeltaZero(t *testing.T) {
	n := 0
	for mu := 0.05; mu < 3 && n < 4; mu += 0.0137 {
		ld := LogGDPDelta(mu, 0)
		d := math.Exp(ld)
		if logSub(d) != ld {
			continue
		}
		n++
		if e, err := GDPEpsilon(mu, d); err != nil || e != 0 {
			t.Errorf("GDPEpsilon(%v, δ_μ(0) = %v) = %v, %v; want 0", mu, d, e, err)
		}
		// Below δ_μ(0) some ε > 0 is needed.
		if e, err := GDPEpsilon(mu, d*(1-1e-9)); err != nil || !(e > 0) {
			t.Errorf("GDPEpsilon(%v, %v) = %v, %v; want > 0", mu, d*(1-1e-9), e, err)
		}
	}
	if n == 0 {
		t.Fatal("no μ with ln(e^{ln δ_μ(0)}) = ln δ_μ(0) found")
	}
}

// TestSolveValidExactRoot: for an exact linear f with a float root, the root
// itself has f = 0 ≤ 0 and is the point solveValid must return (f(bad) > 0
// and f(good) ≤ 0 are its definitions of the two ends). Newton's first step
// lands on the root, whose step is then 0.
//
// Kills gdp.go:387:9 (f(x) < 0 instead of ≤ 0: the root is taken as a bad
// end and a point above it is returned).
func TestSolveValidExactRoot(t *testing.T) {
	dec := func(x float64) (float64, float64) { return 3 - x, -1 }
	if x := solveValid(dec, 4, 0); x != 3 {
		t.Errorf("solveValid(3 − x, good 4, bad 0) = %v, want 3", x)
	}
	inc := func(x float64) (float64, float64) { return 2*x - 5, 2 }
	if x := solveValid(inc, 1, 100); x != 2.5 {
		t.Errorf("solveValid(2x − 5, good 1, bad 100) = %v, want 2.5", x)
	}
}

// TestGDPEpsilonExtremeMu: the BS16 start ρ + 2√(ρ·ln(1/δ)) overflows for
// μ ≥ 1e154 (ρ·ln(1/δ) above MaxFloat64), and underflows to 0 for
// μ < 1.5e-162 (ρ = μ²/2 = 0); the search then starts at ε = 1. Where it
// overflows the ε returned must be valid (not below the exact root, mpmath
// at 700 digits) and accurate to 1e-13 relative (GDPEpsilon documents about
// 1e-15). Where it underflows the ε must still be valid, and not above the ε
// of a larger μ (ε_μ(δ) increases in μ).
//
// Kills gdp.go:208:10 ×2 (hi ≥ 0 or hi ≤ 0 instead of > 0: at ρ = 0 the
// search starts at hi = 0 and never leaves it; 400 bisections from
// MaxFloat64 then stop at ε ≈ 7e187), gdp.go:372:14 (step = f·f′: at
// μ ≥ 4.5e153 the solver stops 1e-5 relative above the root), and, at
// μ = 1e-161 where the
// start matters because ln δ has no usable derivative for a < −1e150 and the
// solver only bisects from a start far above the root, gdp.go:206:12 (ρ =
// μ/μ/2), gdp.go:207:20 (ρ − 2√…: hi ≤ 0, start 1), gdp.go:207:22 (ρ +
// 2/√…: hi = 1.4e160), gdp.go:207:37 ×2 (√(ρ·ln δ) = NaN, start 1): each
// returns ε ≥ 3.9e-121 instead of 2.5e-160.
func TestGDPEpsilonExtremeMu(t *testing.T) {
	for _, c := range []struct {
		mu, delta float64
		root      string
		accurate  bool
	}{
		{1e-200, 1e-201, "9.023463475100345249812189e-201", false},
		{1e-170, 1e-171, "9.023463475100345063375485e-171", false},
		{1e-162, 1e-163, "9.023463475100344967533474e-163", false},
		{4.5e153, 1e-6, "1.012500000000000041326052e+307", true},
		{1e154, 1e-6, "5.000000000000000369475457e+307", true},
		{1.85e154, 1e-6, "1.711249999999999947452949e+308", true},
		// ρ = 5e-323 is subnormal but > 0: the BS16 start 3.7e-160 is used.
		{1e-161, 1e-300, "2.500788821078725055024266e-160", true},
	} {
		e, err := GDPEpsilon(c.mu, c.delta)
		root := gdpMutParse(t, c.root)
		if err != nil || gdpMutBig(e).Cmp(root) < 0 {
			t.Errorf("GDPEpsilon(%v, %v) = %v, %v; below the exact ε = %s", c.mu, c.delta, e, err, c.root)
			continue
		}
		if r, _ := root.Float64(); c.accurate && e > r*(1+1e-13) {
			t.Errorf("GDPEpsilon(%v, %v) = %v, want %s to 1e-13", c.mu, c.delta, e, c.root)
		}
		if e1, _ := GDPEpsilon(1, c.delta); !c.accurate && e > e1 {
			t.Errorf("GDPEpsilon(%v, %v) = %v is above GDPEpsilon(1, %v) = %v", c.mu, c.delta, e, c.delta, e1)
		}
	}
}

// TestSolveValidTakesNewtonSteps: on a bracket far too wide to bisect in
// solveValid's 400 steps ([1, 1e300]), Newton steps from the good end reach
// the root of a smooth monotone f. ln x − ln 2 is concave and increasing, so
// every Newton step from a point left of the root stays left of it (a valid
// point) and converges quadratically; 3 − x is linear, so one step is exact.
// The answer must be the root to a few ulps, in few evaluations.
//
// On [1.9, 2.5] bisection would need about 50 evaluations.
//
// Kills gdp.go:376:13 ×2 (x = good + step: every step leaves the bracket and
// only bisection is left), gdp.go:377:10 and gdp.go:377:20 (the bracket test
// negated: Newton never taken), gdp.go:377:39 (|2/step| > dxOld: Newton
// refused once steps are small) and gdp.go:377:46 CONDITIONALS_NEGATION
// (Newton taken only when the step did not shrink).
func TestSolveValidTakesNewtonSteps(t *testing.T) {
	calls := 0
	lg := func(x float64) (float64, float64) { calls++; return math.Log(x) - math.Ln2, 1 / x }
	x := solveValid(lg, 1, 1e300)
	if !(x <= 2 && x >= 2*(1-0x1p-50)) {
		t.Errorf("solveValid(ln x − ln 2, good 1, bad 1e300) = %v, want 2 to a few ulps (not above)", x)
	}
	if calls > 30 {
		t.Errorf("solveValid(ln x − ln 2) took %d evaluations; Newton needs about 8", calls)
	}
	// A narrow bracket: bisection alone needs about 50 evaluations.
	calls = 0
	if x := solveValid(lg, 1.9, 2.5); !(x <= 2 && x >= 2*(1-0x1p-50)) || calls > 12 {
		t.Errorf("solveValid(ln x − ln 2, good 1.9, bad 2.5) = %v in %d evaluations, want 2 in about 5", x, calls)
	}
	calls = 0
	lin := func(x float64) (float64, float64) { calls++; return 3 - x, -1 }
	if x := solveValid(lin, 0, 1e300); x != 3 || calls > 3 {
		t.Errorf("solveValid(3 − x, good 0, bad 1e300) = %v in %d evaluations, want 3 in 2", x, calls)
	}
}

// TestSolveValidStopsWhenBracketCannotShrink: without a derivative (NaN)
// solveValid bisects, and it stops as soon as the midpoint of the bracket
// equals one of its ends (the ends are adjacent floats): about 53 evaluations
// on [1, 2], not the 400 of its step bound. The answer is the upper
// neighbour of the root for an increasing f (the smallest float with f ≤ 0
// is not required, but a valid one next to it is).
//
// Kills gdp.go:383:8 and gdp.go:383:19 (x < lo, x > hi: a midpoint equal to
// an end is evaluated again and again until the 400 steps are spent).
func TestSolveValidStopsWhenBracketCannotShrink(t *testing.T) {
	for _, root := range []float64{1.3, 1.7, 1.1, 1.9, 1.55, 1.2345678} {
		calls := 0
		f := func(x float64) (float64, float64) { calls++; return root - x, math.NaN() } // decreasing
		x := solveValid(f, 2, 1)
		if x < root || x > math.Nextafter(root, 3) {
			t.Errorf("root %v: solveValid = %v, want the root or its upper neighbour", root, x)
		}
		if calls > 70 {
			t.Errorf("root %v: solveValid took %d evaluations, want about 53 (bisection to adjacent floats)", root, calls)
		}
		calls = 0
		g := func(x float64) (float64, float64) { calls++; return x - root, math.NaN() } // increasing
		if x := solveValid(g, 1, 2); x > root || x < math.Nextafter(root, 0) {
			t.Errorf("root %v: solveValid (increasing) = %v, want the root or its lower neighbour", root, x)
		}
		if calls > 70 {
			t.Errorf("root %v: solveValid (increasing) took %d evaluations, want about 53", root, calls)
		}
	}
}

// TestGDPEpsilonLargeMuNeedsDoubling: for 1e80 ≤ μ ≤ 1e150 the BS16 start
// ρ + 2√(ρ·ln(1/δ)) rounds to ρ = μ²/2 (the second term is below an ulp of
// ρ), where δ_μ(ρ) ≈ ½ > δ, so the search must double it once. The exact ε
// lies in [μ²/2, μ²/2 + 40μ] for δ ≥ 5e-324 (at a = −t, δ_μ ≤ Φ(−t) <
// 5e-324 for t ≥ 38.5; at a = 0, δ_μ > ¼), i.e. within 1e-14 relative of μ²/2,
// and GDPEpsilon must land there.
//
// Kills gdp.go:217:17 (hi = 2/hi: the doubling oscillates between ρ and
// 2/ρ, the search gives up and the solver, started from MaxFloat64, stops
// 1.4e-12 relative above the root at μ = 1e100, δ = 5e-324).
func TestGDPEpsilonLargeMuNeedsDoubling(t *testing.T) {
	for _, mu := range []float64{1e80, 1e100, 1e120, 1e150} {
		for _, delta := range []float64{5e-324, 1e-300, 1e-20} {
			e, err := GDPEpsilon(mu, delta)
			rho := new(big.Rat).Mul(ratOf(mu), ratOf(mu))
			rho.Quo(rho, big.NewRat(2, 1))
			r, _ := rho.Float64()
			if err != nil || ratOf(e).Cmp(rho) < 0 || e > r*(1+1e-14) {
				t.Errorf("GDPEpsilon(%v, %v) = %v, %v; want within 1e-14 above μ²/2 = %v", mu, delta, e, err, r)
			}
		}
	}
}
