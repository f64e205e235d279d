package privacy

import (
	"errors"
	"fmt"
	"github.com/dpbandit/dpbandit/internal/timebound"
	"math"
	"math/big"
	"testing"
	"time"
)

// Issue 10, item 4: every search of the conversions and calibrations is
// bounded, over the whole float64 range. ε ≥ 5e307 used to loop forever in
// GDPMu (μ/2 − ε/μ was NaN there and a halving reached μ = 0, from which
// doubling never leaves), ε ≥ 1e154 in ZCDPRho (ρ_BS overflowed to +Inf and
// the rounding guard halved +Inf), ε = 5e-324 at δ = 0.5 in GDPMu, and σ for a
// tiny Δ in GaussianSigmaZCDP (a square root corrected ulp by ulp from 1e16
// ulps away). These tests run each call under a time bound, so that a hang
// fails instead of stalling the test binary.

// callBound is the time one call may take. The slowest calls here take about
// 0.1 s (SubsampledGaussianSigma at ε = 5e307); the bound leaves room for a
// loaded 2-core machine running `go test ./...`, and a hang never ends.
const callBound = 5 * time.Second

// within runs fn under callBound (internal/timebound).
func within(t testing.TB, what string, fn func()) {
	t.Helper()
	timebound.Within(t, callBound, what, fn)
}

// exactA returns a = μ/2 − ε/μ computed in 300-bit arithmetic and rounded to
// float64: an evaluation independent of gdpArg.
func exactA(mu, eps float64) float64 {
	const prec = 300
	m := new(big.Float).SetPrec(prec).SetFloat64(mu)
	e := new(big.Float).SetPrec(prec).SetFloat64(eps)
	h := new(big.Float).SetPrec(prec).Quo(m, big.NewFloat(2))
	q := new(big.Float).SetPrec(prec).Quo(e, m)
	a, _ := h.Sub(h, q).Float64()
	return a
}

// TestGDPMuHugeEpsilon: GDPMu(5e307, 1e-6) hung before issue 10; every
// finite ε now has its μ, near √(2ε), and it is valid.
func TestGDPMuHugeEpsilon(t *testing.T) {
	for _, eps := range []float64{1e300, 5e307, 1e308, math.MaxFloat64} {
		for _, delta := range []float64{1e-6, 0.5, 5e-324} {
			var mu float64
			var err error
			within(t, fmt.Sprintf("GDPMu(%v, %v)", eps, delta), func() { mu, err = GDPMu(eps, delta) })
			if err != nil || !(mu > 0) || math.IsInf(mu, 0) {
				t.Fatalf("GDPMu(%v, %v) = %v, %v; want a finite μ > 0", eps, delta, mu, err)
			}
			// μ = a* + √(a*² + 2ε) with |a*| < 40: √(2ε) to 1e-12 here.
			if want := math.Sqrt2 * math.Sqrt(eps); math.Abs(mu-want) > 1e-12*want {
				t.Errorf("GDPMu(%v, %v) = %v, want ≈ √(2ε) = %v", eps, delta, mu, want)
			}
			// Validity, independently of logGDPDelta: δ_μ(ε) ≤ Φ(a), with a
			// formed in 300-bit arithmetic.
			if a := exactA(mu, eps); lnPhi(a) > logSub(delta) {
				t.Errorf("GDPMu(%v, %v) = %v is not valid: a = %v, Φ(a) > δ", eps, delta, mu, a)
			}
			if ld := LogGDPDelta(mu, eps); ld > logSub(delta) || math.IsNaN(ld) {
				t.Errorf("GDPMu(%v, %v) = %v: ln δ_μ(ε) = %v > ln δ", eps, delta, mu, ld)
			}
		}
	}
}

// TestGDPMuSubnormal: a subnormal ε (GDPMu(5e-324, 0.5) hung) or δ (ln of a
// subnormal δ was −709.09 instead of −744.44, which returned a μ 2e15 times
// too large) gets the right μ.
func TestGDPMuSubnormal(t *testing.T) {
	// ε → 0: δ_μ(0) = 2Φ(μ/2) − 1, so μ = 2Φ⁻¹(0.75) at δ = 0.5.
	var mu float64
	var err error
	within(t, "GDPMu(5e-324, 0.5)", func() { mu, err = GDPMu(5e-324, 0.5) })
	if want := 1.3489795003921634; err != nil || mu > want || mu < want*(1-1e-13) {
		t.Errorf("GDPMu(5e-324, 0.5) = %v, %v; want %v rounded down", mu, err, want)
	}
	// δ_μ(0) = μ·φ(0)·(1 + O(μ²)): at δ = 5e-324 = 2⁻¹⁰⁷⁴ the largest valid
	// float μ is 2⁻¹⁰⁷³ (δ(2⁻¹⁰⁷³) = 0.8·2⁻¹⁰⁷⁴; δ(3·2⁻¹⁰⁷⁴) = 1.2·2⁻¹⁰⁷⁴).
	within(t, "GDPMu(0, 5e-324)", func() { mu, err = GDPMu(0, 5e-324) })
	if err != nil || mu != 0x1p-1073 {
		t.Errorf("GDPMu(0, 5e-324) = %v, %v; want 2⁻¹⁰⁷³ = 1e-323", mu, err)
	}
	within(t, "GDPMu(0, 1e-300)", func() { mu, err = GDPMu(0, 1e-300) })
	// (the rounding bound of ln δ, 16 ulps of |ln(1−r)| ≈ 690, costs 3e-12)
	if want := 1e-300 * math.Sqrt(2*math.Pi); err != nil || mu > want*(1+1e-15) || mu < want*(1-1e-11) {
		t.Errorf("GDPMu(0, 1e-300) = %v, %v; want %v", mu, err, want)
	}
	// ε = 1 at δ = 5e-324: ln δ = −744.44 (the GDP curve has ln δ_μ(1) =
	// −744.44 at μ ≈ 0.02612; at ln δ = −709.09 μ would be 0.0266).
	within(t, "GDPMu(1, 5e-324)", func() { mu, err = GDPMu(1, 5e-324) })
	if err != nil || !(mu > 0.026) || !(mu < 0.0262) {
		t.Errorf("GDPMu(1, 5e-324) = %v, %v; want ≈ 0.02612", mu, err)
	}
	if ld := LogGDPDelta(mu, 1); ld > -744.44 {
		t.Errorf("ln δ_μ(1) at μ = GDPMu(1, 5e-324) = %v is above ln 5e-324 = −744.44", ld)
	}
}

// TestLogGDPDeltaWholeRange: ln δ_μ(ε) is a number in [−MaxFloat64, 0] for
// every finite μ > 0 and ε ≥ 0 (it was NaN at μ = ε = 1e308, at μ = 1e-320
// with ε = 1e308, and wherever ε/μ or μ² overflowed), decreasing in ε and
// increasing in μ.
func TestLogGDPDeltaWholeRange(t *testing.T) {
	vals := []float64{5e-324, 1e-320, 1e-310, 1e-300, 1e-150, 1e-10, 0.5, 1, 40, 1e10, 1e150, 1e154, 2e154, 1e200, 1e300, 1e308, math.MaxFloat64}
	for _, mu := range vals {
		prev := 0.0
		for j, eps := range append([]float64{0}, vals...) {
			var ld float64
			var d float64
			var err error
			within(t, fmt.Sprintf("LogGDPDelta(%v, %v)", mu, eps), func() {
				ld = LogGDPDelta(mu, eps)
				d, err = GDPDelta(mu, eps)
			})
			if !(ld <= 0 && ld >= -math.MaxFloat64) {
				t.Errorf("LogGDPDelta(μ=%v, ε=%v) = %v, want a number in [−MaxFloat64, 0]", mu, eps, ld)
			}
			if err != nil || !(d >= 0 && d <= 1) {
				t.Errorf("GDPDelta(μ=%v, ε=%v) = %v, %v", mu, eps, d, err)
			}
			if j > 0 && ld > prev*(1-1e-12)+1e-300 {
				t.Errorf("ln δ_μ=%v not decreasing in ε: %v at ε = %v after %v", mu, ld, eps, prev)
			}
			prev = ld
		}
	}
	for _, eps := range []float64{0, 1, 1e10, 1e300, math.MaxFloat64} {
		prev := math.Inf(-1)
		for _, mu := range vals {
			ld := LogGDPDelta(mu, eps)
			if ld < prev*(1+1e-12)-1e-300 {
				t.Errorf("ln δ(ε=%v) not increasing in μ: %v at μ = %v after %v", eps, ld, mu, prev)
			}
			prev = ld
		}
	}
}

// TestGDPEpsilonWholeRange: ε of μ-GDP is finite until it leaves the float64
// range (μ ≈ 1.9e154), +Inf beyond, and valid.
func TestGDPEpsilonWholeRange(t *testing.T) {
	for _, c := range []struct {
		mu, delta float64
		inf       bool
	}{{1e150, 1e-6, false}, {1e154, 5e-324, false}, {1.8e154, 1e-6, false}, {1.9e154, 1e-6, true}, {1e308, 1e-6, true}, {5e-324, 5e-324, false}} {
		var e float64
		var err error
		within(t, fmt.Sprintf("GDPEpsilon(%v, %v)", c.mu, c.delta), func() { e, err = GDPEpsilon(c.mu, c.delta) })
		if err != nil || math.IsNaN(e) || e < 0 || math.IsInf(e, 1) != c.inf {
			t.Errorf("GDPEpsilon(%v, %v) = %v, %v (want +Inf: %v)", c.mu, c.delta, e, err, c.inf)
			continue
		}
		if !c.inf {
			if ld := LogGDPDelta(c.mu, e); ld > logSub(c.delta) {
				t.Errorf("GDPEpsilon(%v, %v) = %v is not valid: ln δ = %v", c.mu, c.delta, e, ld)
			}
			if c.mu > 1 && e < (c.mu/2)*c.mu*(1-1e-12) { // δ_μ(μ²/2) = ½ − …
				t.Errorf("GDPEpsilon(%v, %v) = %v below μ²/2", c.mu, c.delta, e)
			}
		}
	}
}

// TestZCDPHugeEpsilon: ρ_BS overflowed to +Inf above ε = 1.3e154 (a target
// that allowed infinite ρ, i.e. no noise), and ZCDPRho then hung.
func TestZCDPHugeEpsilon(t *testing.T) {
	for _, eps := range []float64{1e200, 1e300, 5e307, 1e308, math.MaxFloat64} {
		for _, delta := range []float64{1e-6, 5e-324} {
			var bs, rho float64
			var m string
			var err, err2 error
			within(t, fmt.Sprintf("ZCDPRho(%v, %v)", eps, delta), func() {
				bs, err = ZCDPRhoBS(eps, delta)
				rho, m, err2 = ZCDPRho(eps, delta)
			})
			// ρ_BS = ε/(1 + √(L/ε))² ≈ ε(1 − 2√(L/ε)): within 1e-12 of ε here.
			if err != nil || !(bs < eps) || bs < eps*(1-1e-12) {
				t.Errorf("ZCDPRhoBS(%v, %v) = %v, %v; want just below ε", eps, delta, bs, err)
			}
			if err2 != nil || !(rho >= bs) || !(rho < eps) {
				t.Errorf("ZCDPRho(%v, %v) = %v (%s), %v; want in [ρ_BS = %v, ε)", eps, delta, rho, m, err2, bs)
			}
			// The round trip: ρ-zCDP ⇒ (ε', δ) with ε' ≤ ε.
			if e, err := ZCDPEpsilonBS(bs, delta); err != nil || e > eps {
				t.Errorf("ZCDPEpsilonBS(ZCDPRhoBS(%v, %v)) = %v, %v > ε", eps, delta, e, err)
			}
		}
	}
	for _, rho := range []float64{1e200, 1e300, 1e308, math.MaxFloat64} {
		var e, cks float64
		var err, err2 error
		within(t, fmt.Sprintf("ZCDPEpsilon(%v)", rho), func() {
			e, _, err = ZCDPEpsilon(rho, 1e-6)
			cks, err2 = ZCDPEpsilonCKS(rho, 1e-6)
		})
		if err != nil || err2 != nil || !(e >= rho) || !(cks >= rho) {
			t.Errorf("ZCDPEpsilon(%v, 1e-6) = %v, %v; CKS %v, %v; want ≥ ρ", rho, e, err, cks, err2)
		}
	}
}

// TestCalibrateHugeEpsilon: the noise calibrations at ε = 5e307 return at
// once with a σ that meets the target (SubsampledGaussianSigma returned a σ
// whose curve could not be evaluated, reported as ε = 0).
func TestCalibrateHugeEpsilon(t *testing.T) {
	const eps, delta = 5e307, 1e-6
	var sg, mu, sz, rho float64
	var err1, err2 error
	within(t, "GaussianSigmaGDP/ZCDP(5e307)", func() {
		sg, mu, err1 = GaussianSigmaGDP(eps, delta, 1)
		sz, rho, _, err2 = GaussianSigmaZCDP(eps, delta, 1)
	})
	if err1 != nil || !(sg > 0) || sg*mu < 1 || math.Abs(sg-1e-154) > 1e-166 {
		t.Errorf("GaussianSigmaGDP(5e307, 1e-6, 1) = %v (μ = %v), %v; want σ ≈ 1e-154 with σμ ≥ 1", sg, mu, err1)
	}
	if err2 != nil || !(sz > 0) || sz*math.Sqrt(2*rho) < 1-0x1p-50 || math.Abs(sz-1e-154) > 1e-166 {
		t.Errorf("GaussianSigmaZCDP(5e307, 1e-6, 1) = %v (ρ = %v), %v; want σ ≈ 1e-154 with 2σ²ρ ≥ 1", sz, rho, err2)
	}
	var s float64
	var conv RDPConversion
	var err error
	within(t, "SubsampledGaussianSigma(0.3, 1, 5e307)", func() { s, conv, err = SubsampledGaussianSigma(0.3, 1, eps, 1e-5, nil) })
	if err != nil || !(s > 0) || !(conv.Epsilon > 0 && conv.Epsilon <= eps) {
		t.Fatalf("SubsampledGaussianSigma(0.3, 1, 5e307, 1e-5) = %v, %+v, %v; want σ > 0 with 0 < ε ≤ 5e307", s, conv, err)
	}
	c, err := SubsampledGaussianCurve(0.3, s, nil)
	if err != nil {
		t.Fatalf("curve at the returned σ = %v: %v", s, err)
	}
	if e, err := c.Epsilon(1e-5); err != nil || e.Epsilon > eps {
		t.Errorf("ε at the returned σ = %v is %v, %v > 5e307", s, e.Epsilon, err)
	}
}

// TestSqrtSubnormalSquares: the rounded square roots start within an ulp, so
// squares of subnormals do not walk 1e16 ulps (GDPCompose(5e-324) and
// GaussianSigmaZCDP with Δ = 5e-324 hung).
func TestSqrtSubnormalSquares(t *testing.T) {
	var m1, m2, s float64
	var err error
	within(t, "GDPCompose(5e-324)", func() {
		m1, _ = GDPCompose(5e-324)
		m2, _ = GDPCompose(5e-324, 5e-324)
		s, _, _, err = GaussianSigmaZCDP(1e308, 1e-6, 5e-324)
	})
	if m1 != 5e-324 {
		t.Errorf("GDPCompose(5e-324) = %v", m1)
	}
	// √2·2⁻¹⁰⁷⁴ rounds up to 2·2⁻¹⁰⁷⁴.
	if m2 != 0x1p-1073 {
		t.Errorf("GDPCompose(5e-324, 5e-324) = %v, want 1e-323", m2)
	}
	if err != nil || s != 5e-324 {
		t.Errorf("GaussianSigmaZCDP(1e308, 1e-6, 5e-324) = %v, %v; want 5e-324", s, err)
	}
	f, err := NewGDPFilter(0x1p-1073)
	if err != nil {
		t.Fatal(err)
	}
	var r float64
	within(t, "Filter.Remaining at 1e-323", func() { r = f.Remaining() })
	if r != 0x1p-1073 {
		t.Errorf("Remaining of a 1e-323-GDP filter = %v", r)
	}
}

// specials are the float64 values every argument of the fuzz tests below is
// seeded with: the edges of the range, non-numbers and ordinary values.
var specials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 5e-324, 1e-310, 1e-6, 0.5, 1, 40, 1e154, 5e307, 1e308, math.MaxFloat64}

// FuzzConversionsBounded calls every GDP and zCDP conversion and every
// Gaussian calibration with arbitrary float64 arguments (x a privacy
// parameter, y a δ or ε, z a sensitivity) under the time bound: each returns,
// invalid arguments give ErrInvalid, and results are numbers in their range
// that pass cheap validity checks.
//
//	go test -run '^$' -fuzz=FuzzConversionsBounded ./privacy/
func FuzzConversionsBounded(f *testing.F) {
	for _, x := range specials {
		for _, y := range specials {
			f.Add(x, y, 1.0)
		}
	}
	for _, z := range specials {
		f.Add(1.0, 1e-6, z)
		f.Add(5e307, 1e-6, z)
	}
	f.Fuzz(func(t *testing.T, x, y, z float64) {
		validNonNeg := x >= 0                     // μ, ρ or ε (+Inf allowed)
		validDelta := y > 0 && y < 1              // δ
		validEps := y >= 0                        // ε as the second argument
		validTarget := x > 0 && !math.IsInf(x, 1) // target ε of a calibration
		validSens := z > 0 && !math.IsInf(z, 1)   // Δ
		wantErr := func(name string, err error, valid bool) bool {
			t.Helper()
			if !valid {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("%s(%v, %v, %v): error %v, want ErrInvalid", name, x, y, z, err)
				}
				return false
			}
			if err != nil {
				t.Errorf("%s(%v, %v, %v): %v", name, x, y, z, err)
				return false
			}
			return true
		}
		lnD := logSub(y)
		within(t, fmt.Sprintf("GDP(%v, %v)", x, y), func() {
			if mu, err := GDPMu(x, y); wantErr("GDPMu", err, validNonNeg && validDelta) {
				if !(mu >= 0) || (mu == 0) || (math.IsInf(mu, 1) && !math.IsInf(x, 1)) {
					t.Errorf("GDPMu(%v, %v) = %v", x, y, mu)
				} else if !math.IsInf(mu, 1) && LogGDPDelta(mu, x) > lnD {
					t.Errorf("GDPMu(%v, %v) = %v is not valid", x, y, mu)
				}
			}
			if e, err := GDPEpsilon(x, y); wantErr("GDPEpsilon", err, validNonNeg && validDelta) {
				if !(e >= 0) {
					t.Errorf("GDPEpsilon(%v, %v) = %v", x, y, e)
				} else if !math.IsInf(e, 1) && LogGDPDelta(x, e) > lnD {
					t.Errorf("GDPEpsilon(%v, %v) = %v is not valid", x, y, e)
				}
			}
			if d, err := GDPDelta(x, y); wantErr("GDPDelta", err, validNonNeg && validEps) && !(d >= 0 && d <= 1) {
				t.Errorf("GDPDelta(%v, %v) = %v", x, y, d)
			}
		})
		within(t, fmt.Sprintf("zCDP(%v, %v)", x, y), func() {
			bs, err := ZCDPRhoBS(x, y)
			if wantErr("ZCDPRhoBS", err, validNonNeg && validDelta) && (!(bs >= 0) || bs > x) {
				t.Errorf("ZCDPRhoBS(%v, %v) = %v", x, y, bs)
			}
			if r, _, err := ZCDPRho(x, y); wantErr("ZCDPRho", err, validNonNeg && validDelta) && !(r >= bs) {
				t.Errorf("ZCDPRho(%v, %v) = %v, ρ_BS = %v", x, y, r, bs)
			}
			if r, err := ZCDPRhoCKS(x, y); wantErr("ZCDPRhoCKS", err, validNonNeg && validDelta) && !(r >= 0) {
				t.Errorf("ZCDPRhoCKS(%v, %v) = %v", x, y, r)
			}
			ebs, err := ZCDPEpsilonBS(x, y)
			if wantErr("ZCDPEpsilonBS", err, validNonNeg && validDelta) && !(ebs >= x) {
				t.Errorf("ZCDPEpsilonBS(%v, %v) = %v < ρ", x, y, ebs)
			}
			if e, _, err := ZCDPEpsilon(x, y); wantErr("ZCDPEpsilon", err, validNonNeg && validDelta) && !(e >= 0 && e <= ebs) {
				t.Errorf("ZCDPEpsilon(%v, %v) = %v, ε_BS = %v", x, y, e, ebs)
			}
			if e, err := ZCDPEpsilonCKS(x, y); wantErr("ZCDPEpsilonCKS", err, validNonNeg && validDelta) && !(e >= 0) {
				t.Errorf("ZCDPEpsilonCKS(%v, %v) = %v", x, y, e)
			}
			if d, _, err := ZCDPDelta(x, y); wantErr("ZCDPDelta", err, validNonNeg && validEps) && !(d >= 0 && d <= 1) {
				t.Errorf("ZCDPDelta(%v, %v) = %v", x, y, d)
			}
			if d, _, err := ZCDPDeltaCKS(x, y); wantErr("ZCDPDeltaCKS", err, validNonNeg && validEps) && !(d >= 0 && d <= 1) {
				t.Errorf("ZCDPDeltaCKS(%v, %v) = %v", x, y, d)
			}
		})
		within(t, fmt.Sprintf("Gaussian calibration(%v, %v, %v)", x, y, z), func() {
			// A σ beyond the float64 range is an error too, so only the
			// kind of error is checked for invalid input, and valid
			// input may fail with ErrInvalid only for that reason.
			valid := validTarget && validDelta && validSens
			if s, mu, err := GaussianSigmaGDP(x, y, z); err == nil {
				if !valid || !(s > 0) || math.IsInf(s, 0) || !(mu > 0) || s*mu < z*(1-0x1p-50) {
					t.Errorf("GaussianSigmaGDP(%v, %v, %v) = %v, μ = %v", x, y, z, s, mu)
				}
			} else if !errors.Is(err, ErrInvalid) {
				t.Errorf("GaussianSigmaGDP(%v, %v, %v): %v", x, y, z, err)
			}
			if s, rho, _, err := GaussianSigmaZCDP(x, y, z); err == nil {
				if !valid || !(s > 0) || math.IsInf(s, 0) || !(rho > 0) {
					t.Errorf("GaussianSigmaZCDP(%v, %v, %v) = %v, ρ = %v", x, y, z, s, rho)
				}
			} else if !errors.Is(err, ErrInvalid) {
				t.Errorf("GaussianSigmaZCDP(%v, %v, %v): %v", x, y, z, err)
			}
			if s, err := GaussianSigmaClassic(x, y, z); err == nil && (!valid || !(s > 0) || math.IsNaN(s)) {
				t.Errorf("GaussianSigmaClassic(%v, %v, %v) = %v", x, y, z, s)
			}
			if s, err := GaussianSigmaForMu(x, z); err == nil && (!validSens || !(x > 0) || !(s >= 0) || math.IsNaN(s)) {
				t.Errorf("GaussianSigmaForMu(%v, %v) = %v", x, z, s)
			}
			if s, err := GaussianSigmaForRho(x, z); err == nil && (!validSens || !(x > 0) || !(s >= 0) || math.IsNaN(s)) {
				t.Errorf("GaussianSigmaForRho(%v, %v) = %v", x, z, s)
			}
			if m, err := GDPCompose(x, y); err == nil && (!(x >= 0 && y >= 0) || !(m >= math.Max(x, y))) {
				t.Errorf("GDPCompose(%v, %v) = %v", x, y, m)
			}
			if r, err := ZCDPCompose(x, y); err == nil && (!(x >= 0 && y >= 0) || !(r >= x+y)) {
				t.Errorf("ZCDPCompose(%v, %v) = %v", x, y, r)
			}
		})
	})
}

// FuzzSubsampledGaussianSigmaBounded calls SubsampledGaussianSigma with
// arbitrary (q, ε, δ) and T steps under the time bound; a σ it returns must
// meet ε on the curve it was computed from.
//
//	go test -run '^$' -fuzz=FuzzSubsampledGaussianSigmaBounded ./privacy/
func FuzzSubsampledGaussianSigmaBounded(f *testing.F) {
	for _, s := range []struct {
		q, eps, delta float64
		steps         int
	}{
		{0.3, 5e307, 1e-5, 1}, {0.3, math.MaxFloat64, 1e-5, 1}, {1, 5e307, 1e-5, 1}, {0.3, 1, 5e-324, 1},
		{5e-324, 1, 1e-5, 1}, {0.01, 1, 1e-5, 1 << 40}, {0.3, 5e-324, 1e-5, 1}, {math.NaN(), 1, 1e-5, 1},
		{0.3, math.Inf(1), 1e-5, 1}, {0.3, 1, math.NaN(), 1}, {0.3, 1, 1e-5, -1}, {0.3, 1, 1e-5, 0},
	} {
		f.Add(s.q, s.eps, s.delta, s.steps)
	}
	f.Fuzz(func(t *testing.T, q, eps, delta float64, steps int) {
		valid := q >= 0 && q <= 1 && steps >= 0 && eps > 0 && !math.IsInf(eps, 1) && delta > 0 && delta < 1
		within(t, fmt.Sprintf("SubsampledGaussianSigma(%v, %d, %v, %v)", q, steps, eps, delta), func() {
			s, conv, err := SubsampledGaussianSigma(q, steps, eps, delta, nil)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("error %v is not ErrInvalid", err)
				}
				return
			}
			if !valid || !(s >= 0) || math.IsInf(s, 0) || !(conv.Epsilon >= 0 && conv.Epsilon <= eps) {
				t.Errorf("= %v, %+v for invalid or unmet input", s, conv)
				return
			}
			if q == 0 || steps == 0 {
				return
			}
			// The σ returned meets ε when its curve is evaluated afresh.
			c, err := SubsampledGaussianCurve(q, s, nil)
			if err != nil {
				t.Errorf("σ = %v: its curve cannot be evaluated: %v", s, err)
				return
			}
			if e, err := c.Scale(float64(steps)).Epsilon(delta); err != nil || !(e.Epsilon <= eps) || e.Epsilon != conv.Epsilon {
				t.Errorf("σ = %v gives ε = %v, %v; reported %v, target %v", s, e.Epsilon, err, conv.Epsilon, eps)
			}
		})
	})
}
