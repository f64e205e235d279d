package privacy

import (
	"errors"
	"math"
	"testing"
)

// Edge cases, errors and properties that the oracles do not cover.

func TestGDPStressCases(t *testing.T) {
	// No overflow at μ = 651 or ε = 2e5, no underflow at δ = 1e-300
	// (docs/accountant.md §2.1); values are in T2.
	for _, c := range []struct{ mu, delta float64 }{{651, 1e-5}, {1, 1e-300}, {40, 1e-5}, {1e3, 1e-300}, {1e-3, 1e-300}} {
		e, err := GDPEpsilon(c.mu, c.delta)
		if err != nil || !(e > 0) || math.IsInf(e, 0) {
			t.Errorf("GDPEpsilon(%v, %v) = %v, %v", c.mu, c.delta, e, err)
		}
		if ld := LogGDPDelta(c.mu, e); ld > math.Log(c.delta) || math.IsNaN(ld) {
			t.Errorf("δ_μ(ε(δ)) = e^%v > δ = %v", ld, c.delta)
		}
	}
	if ld := LogGDPDelta(1, 2e5); !(ld < -1e10) || math.IsInf(ld, 0) {
		t.Errorf("ln δ_1(2e5) = %v", ld)
	}
	if e, _ := GDPEpsilon(0, 1e-5); e != 0 {
		t.Errorf("ε(μ=0) = %v", e)
	}
	if e, _ := GDPEpsilon(math.Inf(1), 1e-5); !math.IsInf(e, 1) {
		t.Errorf("ε(μ=∞) = %v", e)
	}
	// δ ≥ δ_μ(0) = 2Φ(μ/2) − 1 needs no ε.
	if e, _ := GDPEpsilon(0.5, 0.2); e != 0 {
		t.Errorf("ε(μ=0.5, δ=0.2) = %v, want 0 (δ(0) = 0.1974)", e)
	}
}

func TestGDPComposeAndRounding(t *testing.T) {
	if m, _ := GDPCompose(3, 4); m != 5 {
		t.Errorf("GDPCompose(3,4) = %v", m)
	}
	if m, _ := GDPCompose(0.5, 0.5, 0.5, 0.5); m != 1 {
		t.Errorf("GDPCompose(0.5×4) = %v", m)
	}
	// √(0.1² × 3): the result is the smallest float whose square is ≥ the
	// exact sum, so it is never below the exact composed μ.
	m, _ := GDPCompose(0.1, 0.1, 0.1)
	if s := ratSquare(m); s.Cmp(ratSquare(0.1).Mul(ratSquare(0.1), ratOf(3))) < 0 {
		t.Errorf("GDPCompose(0.1×3) = %v is below the exact value", m)
	}
	if m2 := math.Nextafter(m, 0); ratSquare(m2).Cmp(ratSquare(0.1).Mul(ratSquare(0.1), ratOf(3))) >= 0 {
		t.Errorf("GDPCompose(0.1×3) = %v is not the smallest valid float", m)
	}
	if r, _ := ZCDPCompose(0.1, 0.2); r < 0.30000000000000004 {
		t.Errorf("ZCDPCompose(0.1,0.2) = %v is below the exact sum", r)
	}
	// float64(0.1)+float64(0.2) = 0.3000000000000000166…, rounded up.
	if e, _ := PureCompose(0.1, 0.2); e != 0.30000000000000004 {
		t.Errorf("PureCompose(0.1,0.2) = %v", e)
	}
	// float64(0.1)+float64(0.2)+float64(0.7) = 0.99999999999999997…: rounded up to 1.
	if e, _ := PureCompose(0.1, 0.2, 0.7); e != 1 {
		t.Errorf("PureCompose(0.1,0.2,0.7) = %v", e)
	}
	if _, err := GDPCompose(1, -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("GDPCompose(-1): %v", err)
	}
	if g, _ := ZCDPGroup(0.1, 3); g < 0.9 || g > 0.9*(1+1e-15) {
		t.Errorf("ZCDPGroup = %v", g)
	}
}

func TestSGMEdgeCases(t *testing.T) {
	for _, a := range []float64{2, 2.5, 64, 100.5} {
		if e, _ := SubsampledGaussianRDP(0, 1, a); e != 0 {
			t.Errorf("q=0 α=%v: %v", a, e)
		}
		if e, _ := SubsampledGaussianRDP(1, 2, a); e != a/8 {
			t.Errorf("q=1 σ=2 α=%v: %v, want %v", a, e, a/8)
		}
		if e, _ := SubsampledGaussianRDP(0.1, 0, a); !math.IsInf(e, 1) {
			t.Errorf("σ=0 α=%v: %v", a, e)
		}
		if e, _ := SubsampledGaussianRDP(0.1, math.Inf(1), a); e != 0 {
			t.Errorf("σ=∞ α=%v: %v", a, e)
		}
	}
	for _, bad := range []struct{ q, s, a float64 }{{-0.1, 1, 2}, {1.1, 1, 2}, {0.1, -1, 2}, {0.1, 1, 1}, {0.1, 1, math.NaN()}, {math.NaN(), 1, 2}} {
		if _, err := SubsampledGaussianRDP(bad.q, bad.s, bad.a); !errors.Is(err, ErrInvalid) {
			t.Errorf("SubsampledGaussianRDP(%v): %v", bad, err)
		}
	}
	// Monotone: more noise, less loss; larger q, more loss; larger α, more loss
	// (RDP is non-decreasing in α). Across integer and fractional orders.
	prev := 0.0
	for a := 1.1; a < 40; a += 0.3 {
		e, _ := SubsampledGaussianRDP(0.05, 1.5, a)
		if e < prev*(1-1e-9) {
			t.Errorf("ε(α) decreases at α=%v: %v < %v", a, e, prev)
		}
		prev = e
		lo, _ := SubsampledGaussianRDP(0.05, 1.6, a)
		hi, _ := SubsampledGaussianRDP(0.06, 1.5, a)
		if lo > e || hi < e {
			t.Errorf("α=%v: not monotone in σ or q: %v %v %v", a, lo, e, hi)
		}
	}
	// Never above the unsubsampled Gaussian.
	for _, a := range []float64{1.5, 2, 7.3, 32} {
		e, _ := SubsampledGaussianRDP(0.9, 1, a)
		if e > a/2 {
			t.Errorf("α=%v: subsampled %v > Gaussian %v", a, e, a/2)
		}
	}
	// Fractional orders agree with the neighbouring integer orders' trend
	// across the integer: ε(2−) ≤ ε(2) ≤ ε(2+).
	e1, _ := SubsampledGaussianRDP(0.3, 2, 2-1e-9)
	e2, _ := SubsampledGaussianRDP(0.3, 2, 2)
	e3, _ := SubsampledGaussianRDP(0.3, 2, 2+1e-9)
	if !(e1 <= e2*(1+1e-9) && e2 <= e3*(1+1e-9)) || relErr(e1, e2) > 1e-8 || relErr(e3, e2) > 1e-8 {
		t.Errorf("discontinuity at α = 2: %v %v %v", e1, e2, e3)
	}
}

func TestCurvesAndConversions(t *testing.T) {
	g, err := GaussianCurve(1, nil)
	if err != nil || len(g.Orders) != 67 || g.Epsilons[0] != 1 {
		t.Fatalf("GaussianCurve: %v %v", g, err)
	}
	// Gaussian RDP composed 1000 times vs the exact GDP answer: RDP is valid
	// (never below the exact ε).
	c, _ := g.Scale(1000).Epsilon(1e-5)
	exact, _ := GDPEpsilon(math.Sqrt(1000), 1e-5)
	if c.Epsilon < exact {
		t.Errorf("RDP ε %v below the exact GDP ε %v", c.Epsilon, exact)
	}
	l, _ := LaplaceCurve(1, []float64{2, 8})
	p, _ := PureCurve(1, []float64{2, 8})
	both, err := ComposeCurves(l, p, l)
	if err != nil || relErr(both.Epsilons[0], 2*l.Epsilons[0]+p.Epsilons[0]) > 1e-15 {
		t.Errorf("ComposeCurves: %v %v", both, err)
	}
	if _, err := ComposeCurves(l, g); err == nil {
		t.Error("composed curves on different grids")
	}
	if _, err := ComposeCurves(); err == nil {
		t.Error("ComposeCurves() accepted no curves")
	}
	// Laplace ≤ pure-DP bound ≤ ε, at many orders and scales.
	for _, e := range []float64{1e-6, 1e-3, 0.1, 1, 5, 50} {
		prev := 0.0
		for _, a := range []float64{1.01, 1.5, 2, 3.3, 8, 32, 1024} {
			lr, _ := LaplaceRDP(e, a)
			pr, _ := PureRDP(e, a)
			if !(lr <= pr*(1+1e-13)) || pr > e || lr < prev {
				t.Errorf("εL=%v α=%v: Laplace %v, pure %v", e, a, lr, pr)
			}
			// ε-DP ⇒ ε²/2-zCDP: pure RDP ≤ αε²/2.
			if pr > a*e*e/2*(1+1e-12) {
				t.Errorf("ε=%v α=%v: pure RDP %v > αε²/2", e, a, pr)
			}
			prev = lr
		}
	}
	// Invalid curves.
	if _, err := GaussianCurve(1, []float64{2, 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("order 1 accepted: %v", err)
	}
	if _, err := (RDPCurve{}).Epsilon(1e-5); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty curve: %v", err)
	}
	if _, err := g.Epsilon(1); !errors.Is(err, ErrInvalid) {
		t.Errorf("δ = 1 accepted: %v", err)
	}
}

func TestCalibrationErrors(t *testing.T) {
	if _, _, err := GaussianSigmaGDP(0, 1e-5, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("ε = 0: %v", err)
	}
	if _, _, err := GaussianSigmaGDP(1, 1e-5, -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("Δ < 0: %v", err)
	}
	if _, _, _, err := GaussianSigmaZCDP(1, 2, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("δ = 2: %v", err)
	}
	if _, _, err := SubsampledGaussianSigma(0.01, 1000, 0.001, 1e-5, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("unreachable ε: %v", err)
	}
	if _, _, err := SubsampledGaussianSigma(0.01, 10, 1, 1e-5, &SGMOptions{Method: "pld"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown method: %v", err)
	}
	if s, c, err := SubsampledGaussianSigma(0, 10, 1, 1e-5, nil); s != 0 || err != nil || c.Epsilon != 0 {
		t.Errorf("q = 0: σ = %v, %+v, %v", s, c, err)
	}
	// No steps, or no sampling: nothing is released, ε = 0.
	for _, c := range []struct {
		q     float64
		steps int
	}{{0.1, 0}, {0, 100}} {
		if conv, err := SubsampledGaussianEpsilon(c.q, 1, c.steps, 1e-5, nil); err != nil || conv.Epsilon != 0 {
			t.Errorf("q=%v T=%d: %+v %v", c.q, c.steps, conv, err)
		}
	}
	// Sensitivity scales σ.
	s1, _, _ := GaussianSigmaGDP(1, 1e-5, 1)
	s3, _, _ := GaussianSigmaGDP(1, 1e-5, 3)
	if relErr(s3, 3*s1) > 1e-15 {
		t.Errorf("σ(Δ=3) = %v, 3σ(Δ=1) = %v", s3, 3*s1)
	}
	// zCDP calibration: the Gaussian with that σ is ρ-zCDP and ρ converts
	// to at most ε.
	s, rho, _, _ := GaussianSigmaZCDP(1, 1e-5, 1)
	if 1/(2*s*s) > rho {
		t.Errorf("σ = %v gives ρ = %v > %v", s, 1/(2*s*s), rho)
	}
	if e, _, _ := ZCDPEpsilon(rho, 1e-5); e > 1+1e-12 {
		t.Errorf("ρ = %v converts to ε = %v > 1", rho, e)
	}
	// Pure DP.
	if b, _ := LaplaceScale(1, 0.3); 1/b > 0.3 {
		t.Errorf("Laplace scale %v gives ε = %v > 0.3", b, 1/b)
	}
	if e, _ := LaplaceEpsilon(2, 4); e != 0.5 {
		t.Errorf("LaplaceEpsilon(2,4) = %v", e)
	}
	if _, err := LaplaceScale(1, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("LaplaceScale ε=0: %v", err)
	}
}

func TestZCDPEdgeCases(t *testing.T) {
	if e, m, _ := ZCDPEpsilon(0, 1e-5); e != 0 || m == "" {
		t.Errorf("ρ = 0: %v %q", e, m)
	}
	// Tiny and huge ρ stay finite and valid.
	for _, rho := range []float64{1e-300, 1e-12, 1e6} {
		e, _, err := ZCDPEpsilon(rho, 1e-5)
		if err != nil || math.IsNaN(e) || e < 0 {
			t.Errorf("ZCDPEpsilon(%v) = %v, %v", rho, e, err)
		}
		bs, _ := ZCDPEpsilonBS(rho, 1e-5)
		if e > bs {
			t.Errorf("ρ = %v: %v > BS16 %v", rho, e, bs)
		}
	}
	d, _, _ := ZCDPDelta(0.5, 0.1) // ε < ρ: BS16 says nothing, CKS gives δ < 1
	if !(d > 0 && d <= 1) {
		t.Errorf("ZCDPDelta(0.5, 0.1) = %v", d)
	}
	if _, err := ZCDPGroup(1, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("group 0: %v", err)
	}
}

func TestReportAt(t *testing.T) {
	r := Report{Mechanism: "m", Neighbouring: EventLevel,
		Certified: Guarantee{Notion: NotionGDP, Value: 1},
		Paper:     &Guarantee{Notion: NotionZCDP, Value: 0.5}, PaperValid: true}
	s, err := r.At(1e-5)
	if err != nil || s.Epsilon == nil || s.PaperEpsilon == nil {
		t.Fatalf("%+v %v", s, err)
	}
	if *s.Epsilon > *s.PaperEpsilon {
		t.Errorf("exact GDP %v above CKS20 %v", *s.Epsilon, *s.PaperEpsilon)
	}
	n := NotPrivate("ucb1", "non-private")
	if s, _ := n.At(1e-5); s.Epsilon != nil || n.Private() {
		t.Errorf("non-private: %+v", s)
	}
	curve, _ := SubsampledGaussianCurve(0.01, 1.1, nil)
	curve = curve.Scale(1000)
	g := Guarantee{Notion: NotionRDP, Curve: &curve}
	if e, m, _ := g.Epsilon(1e-5); relErr(e, 1.72529081804495) > 1e-9 || m != MethodImproved {
		t.Errorf("RDP guarantee ε = %v %q", e, m)
	}
}

// TestSGMFractionalContinuity checks the fractional series against the exact
// integer sums across a grid of (q, σ): ε(k−h) ≤ ε(k) ≤ ε(k+h) with the steps
// as small as the smoothness of ε(α) (h = 1e-7), and ε(k) ≤ ε(k+½) ≤ ε(k+1).
// It covers q on both sides of ½ (the centred and plain series) and small σ,
// where the terms are huge and cancel.
func TestSGMFractionalContinuity(t *testing.T) {
	for _, q := range []float64{1e-6, 1e-3, 0.01, 0.3, 0.4999, 0.5, 0.7, 0.999999} {
		for _, s := range []float64{0.3, 0.8, 2, 20} {
			for _, k := range []float64{2, 3, 8, 30, 128} {
				ei, _ := SubsampledGaussianRDP(q, s, k)
				el, _ := SubsampledGaussianRDP(q, s, k-1e-7)
				eh, _ := SubsampledGaussianRDP(q, s, k+1e-7)
				em, _ := SubsampledGaussianRDP(q, s, k+0.5)
				e1, _ := SubsampledGaussianRDP(q, s, k+1)
				if !(el <= ei*(1+1e-9) && ei <= eh*(1+1e-9) && ei <= em && em <= e1) ||
					relErr(el, ei) > 2e-6 || relErr(eh, ei) > 2e-6 {
					t.Errorf("q=%v σ=%v α=%v: ε(α∓h) = %v, %v, %v; ε(α+½) = %v; ε(α+1) = %v", q, s, k, el, ei, eh, em, e1)
				}
			}
		}
	}
}
