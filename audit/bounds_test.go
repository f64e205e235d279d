package audit

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// logBinomTail returns ln P[X ≥ k] for X ~ Binomial(n, p), summed in log
// space from math.Lgamma (independent of the incomplete beta function).
func logBinomTail(k, n int, p float64) float64 {
	if k <= 0 {
		return 0
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	ln, _ := math.Lgamma(float64(n + 1))
	m := math.Inf(-1)
	terms := make([]float64, 0, n-k+1)
	for j := k; j <= n; j++ {
		a, _ := math.Lgamma(float64(j + 1))
		b, _ := math.Lgamma(float64(n - j + 1))
		t := ln - a - b + float64(j)*lp + float64(n-j)*lq
		terms = append(terms, t)
		m = math.Max(m, t)
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	return m + math.Log(s)
}

// oracleLower is the Clopper–Pearson lower bound by bisection on the
// binomial tail: the p with P[X ≥ k | p] = gamma.
func oracleLower(k, n int, gamma float64) float64 {
	if k == 0 {
		return 0
	}
	lo, hi := 0.0, 1.0
	lg := math.Log(gamma)
	for range 200 {
		mid := (lo + hi) / 2
		if logBinomTail(k, n, mid) > lg {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// TestCPKnownValues: published and closed-form values. R's
// binom.test(5, 10)$conf.int (two-sided 95%, i.e. one-sided 2.5% each) is
// [0.1870860, 0.8129140]; for k = 0 the upper bound is 1 − γ^{1/n} and for
// k = n the lower bound is γ^{1/n}, exactly.
func TestCPKnownValues(t *testing.T) {
	lo, _ := CPLower(5, 10, 0.025)
	hi, _ := CPUpper(5, 10, 0.025)
	if math.Abs(lo-0.1870860) > 5e-8 || math.Abs(hi-0.8129140) > 5e-8 {
		t.Errorf("CP(5, 10) = [%v, %v], want [0.1870860, 0.8129140]", lo, hi)
	}
	for _, n := range []int{1, 7, 100, 12345} {
		for _, g := range []float64{0.025, 0.05, 1e-3} {
			want := math.Pow(g, 1/float64(n))
			if l, _ := CPLower(n, n, g); l > want || want-l > 1e-10*want {
				t.Errorf("CPLower(%d, %d, %g) = %v, want %v (never above)", n, n, g, l, want)
			}
			if u, _ := CPUpper(0, n, g); u < 1-want || u-(1-want) > 1e-10 {
				t.Errorf("CPUpper(0, %d, %g) = %v, want %v (never below)", n, g, u, 1-want)
			}
			if l, _ := CPLower(0, n, g); l != 0 {
				t.Errorf("CPLower(0, %d) = %v, want 0", n, l)
			}
			if u, _ := CPUpper(n, n, g); u != 1 {
				t.Errorf("CPUpper(%d, %d) = %v, want 1", n, n, u)
			}
		}
	}
}

// TestCPAgainstBisection: the bounds agree with the independent oracle
// (bisection on the binomial tail summed from Lgamma) to 1e-9 relative and
// are never on the unsafe side of it by more than that.
func TestCPAgainstBisection(t *testing.T) {
	for _, n := range []int{1, 2, 10, 57, 400, 1500} {
		for _, k := range []int{0, 1, n / 3, n / 2, n - 1, n} {
			if k < 0 || k > n {
				continue
			}
			for _, g := range []float64{0.025, 0.005} {
				want := oracleLower(k, n, g)
				got, err := CPLower(k, n, g)
				if err != nil || math.Abs(got-want) > 1e-9*math.Max(want, 1e-300) {
					t.Errorf("CPLower(%d, %d, %g) = %v, %v; oracle %v", k, n, g, got, err, want)
				}
				wantU := 1 - oracleLower(n-k, n, g)
				gotU, _ := CPUpper(k, n, g)
				if math.Abs(gotU-wantU) > 1e-9 || gotU < wantU-1e-12 {
					t.Errorf("CPUpper(%d, %d, %g) = %v; oracle %v", k, n, g, gotU, wantU)
				}
			}
		}
	}
	for _, c := range []struct {
		k, n int
		g    float64
	}{{-1, 5, 0.05}, {6, 5, 0.05}, {1, 0, 0.05}, {1, 5, 0}, {1, 5, 1}, {1, 5, math.NaN()}} {
		if _, err := CPLower(c.k, c.n, c.g); err == nil {
			t.Errorf("CPLower(%d, %d, %v): no error", c.k, c.n, c.g)
		}
		if _, err := CPUpper(c.k, c.n, c.g); err == nil {
			t.Errorf("CPUpper(%d, %d, %v): no error", c.k, c.n, c.g)
		}
	}
}

// TestMuLowerBoundClosedForm: the inversion through privacy.GDPDelta agrees
// with the closed form Φ⁻¹(1−FPR) − Φ⁻¹(FNR) (quantiles from gonum's
// distuv, a separate implementation) to 1e-7, is never above it by more
// than 1e-9, and is 0 on or above the diagonal FPR + FNR ≥ 1.
func TestMuLowerBoundClosedForm(t *testing.T) {
	q := distuv.UnitNormal.Quantile
	for _, fpr := range []float64{1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.8, 0.99} {
		for _, fnr := range []float64{1e-6, 1e-3, 0.02, 0.2, 0.45, 0.7, 0.95} {
			got, err := MuLowerBound(fpr, fnr)
			if err != nil {
				t.Fatal(err)
			}
			want := math.Max(0, q(1-fpr)-q(fnr))
			if fpr+fnr >= 1 {
				want = 0
			}
			if math.Abs(got-want) > 1e-7 || got > want+1e-9 {
				t.Errorf("MuLowerBound(%g, %g) = %.12g, closed form %.12g", fpr, fnr, got, want)
			}
			if cf := muClosedForm(fpr, fnr); math.Abs(cf-want) > 1e-9 {
				t.Errorf("muClosedForm(%g, %g) = %v, want %v", fpr, fnr, cf, want)
			}
		}
	}
	// A point exactly on G_μ for μ = 1.5 at FPR = 0.05.
	fnr := GaussianTradeOff(1.5, 0.05)
	if got, _ := MuLowerBound(0.05, fnr); math.Abs(got-1.5) > 1e-7 {
		t.Errorf("MuLowerBound on G_1.5 = %v, want 1.5", got)
	}
	for _, c := range [][2]float64{{0, 0.5}, {0.5, 0}, {1.1, 0.1}, {math.NaN(), 0.1}} {
		if _, err := MuLowerBound(c[0], c[1]); err == nil {
			t.Errorf("MuLowerBound(%v, %v): no error", c[0], c[1])
		}
	}
}

// TestEpsilonLowerBound: the (ε, δ) bound from an event and its complement.
func TestEpsilonLowerBound(t *testing.T) {
	cases := []struct{ pa, pb, d, want float64 }{
		{0.5, 0.1, 0, math.Log(5)}, // ln(pA/pB)
		{0.5, 0.1, 0.1, math.Log(4)},
		{0.95, 0.5, 0.1, math.Log(8)},        // complement with δ: (1 − pB − δ)/(1 − pA)
		{0.05, 0.01, 0.05, 0},                // both terms vanish              // ln((pA − δ)/pB)
		{0.99, 0.5, 0, math.Log(0.5 / 0.01)}, // complement: ln((1−pB)/(1−pA))
		{0.3, 0.4, 0, math.Log(0.6 / 0.7)},   // negative: floored
		{0.6, 0.2, 0.1, math.Log(2.5)},       // event term wins
		{1, 0.5, 0, math.Log(2)},             // pA = 1: complement term unusable
	}
	for _, c := range cases {
		want := math.Max(0, c.want)
		got := EpsilonLowerBound(c.pa, c.pb, c.d)
		if got > want || want-got > 1e-11*math.Max(want, 1) {
			t.Errorf("EpsilonLowerBound(%v, %v, %v) = %v, want %v (never above)", c.pa, c.pb, c.d, got, want)
		}
	}
}

// TestTradeOffCurves: G_μ at known points (G_0(α) = 1 − α; G_μ(½) = Φ(−μ))
// and the (ε, δ)-DP curve's corners.
func TestTradeOffCurves(t *testing.T) {
	for _, a := range []float64{0, 0.1, 0.5, 0.9, 1} {
		if g := GaussianTradeOff(0, a); math.Abs(g-(1-a)) > 1e-15 {
			t.Errorf("G_0(%v) = %v", a, g)
		}
	}
	if g := GaussianTradeOff(1, 0.5); math.Abs(g-0.15865525393145707) > 1e-15 {
		t.Errorf("G_1(½) = %v, want Φ(−1)", g)
	}
	if f := DPTradeOff(math.Log(3), 0, 0.1); math.Abs(f-0.7) > 1e-15 {
		t.Errorf("f_{ln 3, 0}(0.1) = %v, want 0.7", f)
	}
	if f := DPTradeOff(math.Log(3), 0, 0.7); math.Abs(f-0.1) > 1e-15 {
		t.Errorf("f_{ln 3, 0}(0.7) = %v, want 0.1", f)
	}
}
