package privacy

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
)

// Tests that kill mutants gremlins left alive in normal.go, exact.go,
// calibrate.go and filter.go. The normal-tail routines are checked against
// oracles computed here independently with math/big: the Mills ratio
// M(x) = Φ(−x)/φ(x) from Laplace's continued fraction
// M(x) = 1/(x+1/(x+2/(x+3/(x+…)))) (Abramowitz & Stegun 26.2.14) evaluated
// backwards at 320 bits with far more levels than float64 needs, and
// logarithms from the atanh series, so no oracle value goes through the
// float64 code under test.

// mnMills returns M(x) for x ≥ 1 to far below float64 resolution: the
// truncation error of the fraction after n levels falls like exp(−2x√n),
// so 2000 levels leave < 1e-35 at x = 1 (checked against 4000 levels when
// this test was written).
func mnMills(x float64) *big.Float { return mnMillsBig(bigF(x)) }

// mnMillsBig is mnMills at a 320-bit argument x ≥ 1.
func mnMillsBig(x *big.Float) *big.Float { return mnMillsBigN(x, 2000) }

// mnMillsBigN is the continued fraction with n levels; its truncation error
// falls like exp(−2x√n).
func mnMillsBigN(x *big.Float, n int) *big.Float {
	bx := bigNew().Set(x)
	t := bigNew().Set(x)
	for k := n; k > 0; k-- {
		q := bigNew().Quo(bigF(float64(k)), t)
		t.Add(bx, q)
	}
	return bigNew().Quo(bigF(1), t)
}

// mnULPs returns (got − want)/ulp(want) in float64 ulps of want.
func mnULPs(got float64, want *big.Float) float64 {
	w, _ := want.Float64()
	ulp := math.Nextafter(math.Abs(w), math.Inf(1)) - math.Abs(w)
	d, _ := bigNew().Sub(bigF(got), want).Float64()
	return d / ulp
}

// mnRel returns |got − want|/|want|.
func mnRel(got float64, want *big.Float) float64 {
	d := bigNew().Sub(bigF(got), want)
	r, _ := d.Quo(d, want).Float64()
	return math.Abs(r)
}

// TestMutNormalMillsSeriesTail pins millsSeries, the asymptotic series of
// x·M(x) that lnPhi uses for x ≤ −37 (ln δ of the GDP curve far in the
// tail), against x·M(x) from the continued fraction. Its doc promises the
// series is valid to < 1e-17 relative for x ≥ 37, so the float64 result
// must be within 2 ulps (measured: 0.48 ulp at 37, 0.22 at 38). The last
// term 10395·x⁻¹² is 1.6e-15 ≈ 14 ulps at x = 37, so every mutant of
// line 139 (each sign or operator of the Horner form, down to u*10395 →
// u/10395) moves the value by ≥ 14 ulps.
// Kills normal.go:139 (all ARITHMETIC_BASE and INVERT_NEGATIVES mutants).
func TestMutNormalMillsSeriesTail(t *testing.T) {
	for _, x := range []float64{37, 38} {
		want := bigNew().Mul(mnMills(x), bigF(x))
		if e := mnULPs(millsSeries(x), want); math.Abs(e) > 2 {
			t.Errorf("millsSeries(%v) = %v is %.3g ulps from x·M(x) = %v", x, millsSeries(x), e, want.Text('g', 20))
		}
	}
}

// TestMutNormalLnPhiFarTail: lnPhi(x) for x ≤ −37 (the Mills-series branch)
// equals ln Φ(x) = ln M(−x) − x²/2 − ½ln(2π) to a few ulps, as its doc
// promises (measured ≤ 1 ulp). lnPhi(x) is ln δ for the GDP curve in that
// range, so an error here makes a reported δ too small. Adding instead of
// subtracting ln(series) (≈ −x⁻²) moves the value by 2/x² ≈ 1.5e-3 at
// x = −37, ten billion ulps.
// Kills normal.go:36:47.
func TestMutNormalLnPhiFarTail(t *testing.T) {
	pi, _ := bigNew().SetString("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899863")
	half2pi := bigLog(bigNew().Mul(pi, bigF(2)))
	half2pi.Quo(half2pi, bigF(2))
	for _, x := range []float64{-37, -37.5, -60, -1000} {
		want := bigLog(mnMills(-x))
		sq := bigNew().Mul(bigF(x), bigF(x))
		want.Sub(want, sq.Quo(sq, bigF(2)))
		want.Sub(want, half2pi)
		if e := mnULPs(lnPhi(x), want); math.Abs(e) > 4 {
			t.Errorf("lnPhi(%v) = %v is %.3g ulps from ln Φ = %v", x, lnPhi(x), e, want.Text('g', 20))
		}
	}
}

// TestMutNormalMillsG: millsG(s) = 1/M(s) − s for s ≥ 3, where it runs the
// continued fraction's tail 1/T₂(s) with 8 + ⌈500/s²⌉ levels; checked
// against the 320-bit fraction to 1e-15 relative (measured ≤ 1.9 ulps,
// 2.2e-16). millsG bounds 1 − r in LogGDPDelta for tiny μ, so too small a
// value would understate δ. Mutants: 8 − ⌈500/s²⌉ levels (no level at all
// for s < 8, giving 1/s), k ≥ 1 (one level too many: 1/T₁ = M(s)), k ≤ 1
// (no level), s − k/t, k·t, and 1·t are each off by far more.
// Kills normal.go:107:10, 109:17 (both), 110:10, 110:22, 112:12.
func TestMutNormalMillsG(t *testing.T) {
	for _, s := range []float64{3, 3.5, 5, 8, 10, 30, 100} {
		want := bigNew().Quo(bigF(1), mnMills(s))
		want.Sub(want, bigF(s))
		if e := mnRel(millsG(s), want); e > 1e-15 {
			t.Errorf("millsG(%v) = %v, want %v (relative error %.3g)", s, millsG(s), want.Text('g', 20), e)
		}
	}
}

// TestMutNormalLnMillsDiffQuadrature: for x < 3 and h < 0.1, lnMillsDiff
// computes ln M(x+h) − ln M(x) = −∫ₓ^{x+h} g by 5-point Gauss–Legendre;
// checked against the 320-bit difference to 1e-12 relative (the rule's
// error is ~h¹⁰, millsG's below 1e-14; measured ≤ 3.6e-15). This is ln r in
// LogGDPDelta, so an error moves δ. Shifting the nodes to [x−h, x]
// (x−h/2·(1+ξ)), stretching them to h·2·(1+ξ), or dividing by 1+ξ
// integrates the wrong interval by more than 1%. The last case has nodes
// crossing s = 3, so millsG's fraction branch is integrated too. The oracle
// takes M at the exact x + h (the code integrates over [x, x+h] with the
// float h, not up to the rounded float x+h).
// Kills normal.go:96:35, 96:37, 96:39.
func TestMutNormalLnMillsDiffQuadrature(t *testing.T) {
	for _, c := range []struct{ x, h float64 }{{1, 0.05}, {2, 0.099}, {1.5, 1e-3}, {2.95, 0.09}} {
		mx := mnMills(c.x)
		mxh := mnMillsBig(bigNew().Add(bigF(c.x), bigF(c.h)))
		// ln(M(x+h)/M(x)) = log1p((M(x+h) − M(x))/M(x)) and the ratio minus
		// one is formed at 320 bits, so its float64 log1p is accurate.
		q := bigNew().Sub(mxh, mx)
		q.Quo(q, mx)
		qf, _ := q.Float64()
		want := math.Log1p(qf)
		got := lnMillsDiff(c.x, c.h)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("lnMillsDiff(%v, %v) = %v, want %v (relative error %.3g)", c.x, c.h, got, want, math.Abs(got-want)/math.Abs(want))
		}
	}
}

// TestMutNormalLogSub: logSub(x) = ln x for x ≥ 0, exact to math.Log's
// accuracy for normal x, and for subnormal x never above ln x (a target ln δ
// too high is the unsafe direction) and at most 2⁻³⁹ below it. Oracle:
// ln(m·2^e) = ln m + e·ln 2 at 320 bits.
//   - x = 2⁻¹⁰²² is the smallest normal: math.Log gives ln x to the nearest
//     float, the subnormal path (x < 2⁻¹⁰²² mutated to ≤) would lower it by
//     2⁻⁴⁰ ≈ 8 ulps. Kills normal.go:151:16.
//   - subnormal x: + 2⁻⁴⁰ instead of − 2⁻⁴⁰ puts the result about 8 ulps
//     above ln x. Kills normal.go:152:43 (ARITHMETIC_BASE and
//     INVERT_NEGATIVES, the same edit).
func TestMutNormalLogSub(t *testing.T) {
	if e := mnULPs(logSub(0x1p-1022), bigLog(bigF(0x1p-1022))); math.Abs(e) > 1 {
		t.Errorf("logSub(2⁻¹⁰²²) = %v is %.3g ulps from ln 2⁻¹⁰²²", logSub(0x1p-1022), e)
	}
	for _, x := range []float64{math.SmallestNonzeroFloat64, 3 * 0x1p-1070, 0x1p-1023, math.Nextafter(0x1p-1022, 0)} {
		want := bigLog(bigF(x))
		got := logSub(x)
		d, _ := bigNew().Sub(bigF(got), want).Float64()
		if d > 0 || d < -0x1p-39 {
			t.Errorf("logSub(%v) = %v, ln x = %v: difference %v, want in [−2⁻³⁹, 0]", x, got, want.Text('g', 20), d)
		}
	}
}

// TestMutNormalSigmaForRhoExactSquare: σ = Δ/√(2ρ) rounded up is exactly the
// float σ when Δ²/(2ρ) is the square of one: ρ = ½, Δ = 1 gives σ = 1;
// ρ = ⅛ gives 2; ρ = 2, Δ = 3 gives 3/2. sqrtUp stepping past an exact
// square root (s² ≤ r instead of s² < r in its upward loop) returns one ulp
// more: a valid σ but not the smallest the doc promises. For a root that is
// not a float (ρ = 0.1), σ is checked to be the smallest float with
// σ² ≥ Δ²/(2ρ), in big.Rat.
// Kills exact.go:197:55.
func TestMutNormalSigmaForRhoExactSquare(t *testing.T) {
	for _, c := range []struct{ rho, d, want float64 }{{0.5, 1, 1}, {0.125, 1, 2}, {2, 3, 1.5}, {0.5, 7, 7}} {
		if s, err := GaussianSigmaForRho(c.rho, c.d); err != nil || s != c.want {
			t.Errorf("GaussianSigmaForRho(%v, %v) = %v, %v; want %v", c.rho, c.d, s, err, c.want)
		}
	}
	s, err := GaussianSigmaForRho(0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	target := new(big.Rat).Quo(big.NewRat(1, 1), new(big.Rat).Mul(big.NewRat(2, 1), new(big.Rat).SetFloat64(0.1)))
	sq := func(x float64) *big.Rat { r := new(big.Rat).SetFloat64(x); return r.Mul(r, r) }
	if sq(s).Cmp(target) < 0 || sq(math.Nextafter(s, 0)).Cmp(target) >= 0 {
		t.Errorf("GaussianSigmaForRho(0.1, 1) = %v is not the smallest float with σ² ≥ 1/(2ρ)", s)
	}
}

// mnOpts is a small order grid that keeps the SGM searches fast.
var mnOpts = &SGMOptions{Orders: []float64{2, 4, 8, 16, 32, 64}}

// TestMutNormalSGMSigmaZeroSteps: zero steps of the subsampled Gaussian need
// no noise: σ = 0 with ε = 0, not an error (the doc: "q = 0 or steps = 0
// need no noise"). Kills calibrate.go:187:11 (steps ≤ 0 rejected).
func TestMutNormalSGMSigmaZeroSteps(t *testing.T) {
	s, conv, err := SubsampledGaussianSigma(0.01, 0, 1, 1e-5, mnOpts)
	if err != nil || s != 0 || conv.Epsilon != 0 {
		t.Errorf("SubsampledGaussianSigma(q = 0.01, T = 0) = %v, %+v, %v; want 0, ε = 0, nil", s, conv, err)
	}
}

// TestMutNormalSGMSigmaAtFloor: a target equal to the floor the order grid
// allows (the conversion of an RDP curve → 0) cannot be met with any finite
// σ by a curve that is strictly positive, so the doc's "the target must
// exceed the floor" makes it an ErrInvalid error. With eps < floor in place
// of eps ≤ floor the search runs on, finds a σ so large that the curve's ε
// rounds to the floor, and returns it.
// Kills calibrate.go:209:9.
func TestMutNormalSGMSigmaAtFloor(t *testing.T) {
	const delta = 1e-5
	zero, err := curveOf(mnOpts.Orders, func(float64) float64 { return math.SmallestNonzeroFloat64 })
	if err != nil {
		t.Fatal(err)
	}
	floor, err := mnOpts.convert(zero, delta)
	if err != nil {
		t.Fatal(err)
	}
	if s, conv, err := SubsampledGaussianSigma(0.01, 100, floor.Epsilon, delta, mnOpts); !errors.Is(err, ErrInvalid) {
		t.Errorf("target ε = floor %v: got σ = %v, %+v, %v; want ErrInvalid", floor.Epsilon, s, conv, err)
	}
}

// TestMutNormalSGMSigmaTieAtOne: with the target set to ε(σ = 1) itself,
// σ = 1 meets it (ε ≤ target, with equality), so the search, whose first
// probe is σ = 1, must return σ ≤ 1 with ε ≤ target. Accepting only
// ε < target refuses σ = 1, doubles, and returns a σ in (1, 2]: more noise
// than the smallest that meets the target.
// Kills calibrate.go:225:37.
func TestMutNormalSGMSigmaTieAtOne(t *testing.T) {
	const q, steps, delta = 0.05, 200, 1e-5
	c, err := SubsampledGaussianCurve(q, 1, mnOpts.Orders)
	if err != nil {
		t.Fatal(err)
	}
	at1, err := mnOpts.convert(c.Scale(steps), delta)
	if err != nil {
		t.Fatal(err)
	}
	s, conv, err := SubsampledGaussianSigma(q, steps, at1.Epsilon, delta, mnOpts)
	if err != nil || s > 1 || conv.Epsilon > at1.Epsilon {
		t.Errorf("target ε(σ=1) = %v: got σ = %v, ε = %v, %v; want σ ≤ 1 with ε ≤ target", at1.Epsilon, s, conv.Epsilon, err)
	}
}

// TestMutNormalFilterJSONEdges: states at the edges of validity round-trip
// through JSON: a fresh filter (spent 0, 0 steps), one whose only step was
// x = 0 (spent 0, 1 step) and one spent exactly to its budget (spent =
// budget, nothing remaining). Each restored filter has the same exact spent
// cost and step count, and the fully spent one still refuses any x > 0.
// Kills filter.go:262:32 (spent ≤ 0 rejected), 266:13 (steps ≤ 0
// rejected), 271:24 (spent ≥ budget rejected).
func TestMutNormalFilterJSONEdges(t *testing.T) {
	for _, n := range []Notion{NotionGDP, NotionZCDP, NotionPure} {
		fresh, _ := NewFilter(n, 1)
		zeroStep, _ := NewFilter(n, 1)
		if err := zeroStep.Spend(0); err != nil {
			t.Fatal(err)
		}
		full, _ := NewFilter(n, 0.75)
		if err := full.Spend(0.75); err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]*Filter{"fresh": fresh, "zero-step": zeroStep, "full": full} {
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			var g Filter
			if err := json.Unmarshal(b, &g); err != nil {
				t.Errorf("%s %s filter %s: %v", n, name, b, err)
				continue
			}
			if g.spent.Cmp(f.spent) != 0 || g.Steps() != f.Steps() || g.Budget() != f.Budget() {
				t.Errorf("%s %s filter: round trip %s gave spent %v, %d steps", n, name, b, g.Spent(), g.Steps())
			}
		}
		var g Filter
		b, _ := json.Marshal(full)
		if err := json.Unmarshal(b, &g); err == nil && (g.CanSpend(math.SmallestNonzeroFloat64) || g.Remaining() != 0) {
			t.Errorf("%s: restored full filter still accepts a positive step", n)
		}
	}
}
