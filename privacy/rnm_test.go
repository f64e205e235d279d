package privacy

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// laplaceWin2 is the exact probability that score 0 wins Laplace RNM with two
// scores f0, f1 and scale b: P(Z0 − Z1 > g), g = f1 − f0, where the
// difference of two Lap(b) has density (1 + |x|/b)e^{−|x|/b}/(4b), so
// P(D > g) = e^{−g/b}(2 + g/b)/4 for g ≥ 0 (and 1 − that at −g).
func laplaceWin2(f0, f1, b float64) float64 {
	g := (f1 - f0) / b
	if g >= 0 {
		return math.Exp(-g) * (2 + g) / 4
	}
	return 1 - math.Exp(g)*(2-g)/4
}

// laplaceWinK is P(argmax = i) for Laplace RNM on f by quadrature:
// ∫ p(z) Π_{j≠i} F(f_i + z − f_j) dz on a fine grid (trapezoid, |z| ≤ 60b).
func laplaceWinK(f []float64, i int, b float64) float64 {
	cdf := func(x float64) float64 {
		if x < 0 {
			return 0.5 * math.Exp(x/b)
		}
		return 1 - 0.5*math.Exp(-x/b)
	}
	const n = 400000
	lo, hi := -60*b, 60*b
	h := (hi - lo) / n
	sum := 0.0
	for k := 0; k <= n; k++ {
		z := lo + float64(k)*h
		v := math.Exp(-math.Abs(z)/b) / (2 * b)
		for j, fj := range f {
			if j != i {
				v *= cdf(f[i] + z - fj)
			}
		}
		if k == 0 || k == n {
			v /= 2
		}
		sum += v
	}
	return sum * h
}

// TestLaplaceRNMExact checks the Laplace RNM guarantee against exact
// selection probabilities: with one score moved by ±s every output's
// probability changes by at most e^{s/b} (K = 3 by quadrature, K = 2 in
// closed form); the bound is nearly attained for K = 2 with a large gap; and
// when all scores move, s/b is exceeded (so the 2s/b of AllScores is needed)
// but 2s/b is not.
func TestLaplaceRNMExact(t *testing.T) {
	const s, b = 0.5, 1.0
	eps1, err := LaplaceRNMEpsilon(s, b, OneScore)
	if err != nil || eps1 != 0.5 {
		t.Fatalf("LaplaceRNMEpsilon(OneScore) = %v, %v; want 0.5", eps1, err)
	}
	eps2, err := LaplaceRNMEpsilon(s, b, AllScores)
	if err != nil || eps2 != 1 {
		t.Fatalf("LaplaceRNMEpsilon(AllScores) = %v, %v; want 1", eps2, err)
	}

	r := rand.New(rand.NewPCG(3, 9))
	for trial := range 4 {
		f := []float64{r.Float64() * 4, r.Float64() * 4, r.Float64() * 4}
		p := make([]float64, 3)
		for i := range f {
			p[i] = laplaceWinK(f, i, b)
		}
		if math.Abs(p[0]+p[1]+p[2]-1) > 1e-6 {
			t.Fatalf("trial %d: probabilities %v do not sum to 1", trial, p)
		}
		for j := range f {
			for _, sign := range []float64{-1, 1} {
				g := append([]float64(nil), f...)
				g[j] += sign * s
				for i := range f {
					if lr := math.Abs(math.Log(laplaceWinK(g, i, b) / p[i])); lr > eps1+1e-6 {
						t.Errorf("trial %d: score %d moved by %+g changes P(%d) by e^%.6f > e^ε = e^%v", trial, j, sign*s, i, lr, eps1)
					}
				}
			}
		}
	}

	// K = 2 closed form: the losing arm's probability moves by almost
	// e^{s/b} when the gap is large (the bound is tight), and moving both
	// scores by s in opposite directions needs 2s/b.
	const gap = 40.0
	lr := math.Log(laplaceWin2(s, gap, b) / laplaceWin2(0, gap, b))
	if lr > eps1 || lr < 0.97*eps1 {
		t.Errorf("one score, gap %v: log ratio %.5f, want in [0.97ε, ε] = [%.4f, %v]", gap, lr, 0.97*eps1, eps1)
	}
	lr = math.Log(laplaceWin2(s, gap-s, b) / laplaceWin2(0, gap, b))
	if lr > eps2 || lr <= eps1 {
		t.Errorf("all scores, gap %v: log ratio %.5f, want in (s/b, 2s/b] = (%v, %v]", gap, lr, eps1, eps2)
	}
}

// hockeyStick2 is the hockey-stick divergence δ(ε) of two two-outcome
// distributions (p, 1−p) and (q, 1−q), the larger of both directions.
func hockeyStick2(p, q, eps float64) float64 {
	d := func(p, q float64) float64 {
		return max(p-math.Exp(eps)*q, 0) + max((1-p)-math.Exp(eps)*(1-q), 0)
	}
	return max(d(p, q), d(q, p))
}

// TestGaussianRNMExact checks the heterogeneous Gaussian RNM μ against the
// exact two-score release, P(score 0 wins) = Φ((f0 − f1)/sqrt(σ0² + σ1²)):
// for every ε on a grid, the largest δ(ε) over thresholds f1 − f0 stays at
// or below the GDP curve of μ and comes within 1% of it when the other
// score's noise vanishes (one score moves, docs/reproduction-decisions.md A5) or when both move with
// equal σ. Also docs/gaussian-ts.md §1.3; docs/reproduction-decisions.md A5's TS round: μ = 1/√2 is ε = 3.308 at 1e-6.
func TestGaussianRNMExact(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	worst := func(shift0, shift1, s0, s1, eps float64) float64 {
		sd := math.Hypot(s0, s1)
		m := 0.0
		for g := -8.0; g <= 8; g += 0.002 {
			p := phi(-g / sd)
			q := phi((shift0 - (g + shift1)) / sd)
			m = max(m, hockeyStick2(p, q, eps))
		}
		return m
	}
	const s = 0.5
	for _, c := range []struct {
		name           string
		sens, sigma    []float64
		n              RNMNeighbours
		shift0, shift1 float64 // the neighbour's moves of scores 0 and 1
		want           float64
	}{
		// Score 1's noise (and sensitivity) vanish: the binary output is a
		// threshold on score 0's Gaussian, which reaches its full curve.
		{"one score, other noise vanishing", []float64{s, 1e-12}, []float64{0.8, 1e-9}, OneScore, s, 0, s / 0.8},
		{"all scores, equal σ", []float64{s, s}, []float64{0.8, 0.8}, AllScores, s, -s, math.Sqrt2 * s / 0.8},
	} {
		mu, err := GaussianRNMMu(c.sens, c.sigma, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if mu < c.want*(1-1e-15) || mu > c.want*(1+1e-12) {
			t.Errorf("%s: μ = %v, want %v", c.name, mu, c.want)
		}
		for _, eps := range []float64{0, 0.25, 0.5, 1, 2} {
			got := worst(c.shift0, c.shift1, c.sigma[0], c.sigma[1], eps)
			bound, err := GDPDelta(mu, eps)
			if err != nil {
				t.Fatal(err)
			}
			if got > bound*(1+1e-9)+1e-15 || got < 0.99*bound {
				t.Errorf("%s, ε = %v: exact δ %.6g, want in [0.99, 1]× the %.4g-GDP δ %.6g", c.name, eps, got, mu, bound)
			}
		}
	}

	// A TS round with n ≥ 1 ([OU] Alg 1; docs/gaussian-ts.md §1.3): s = 1/(n+1), σ = 1/sqrt(n+1).
	mu, err := GaussianRNMMu([]float64{0.5, 1.0 / 3}, []float64{1 / math.Sqrt(2), 1 / math.Sqrt(3)}, OneScore)
	if err != nil || math.Abs(mu-1/math.Sqrt2) > 1e-15 || mu < 1/math.Sqrt2 {
		t.Errorf("TS round μ = %v, %v; want 1/√2 rounded up", mu, err)
	}
	if e, _ := GDPEpsilon(mu, 1e-6); math.Abs(e-3.308) > 5e-4 {
		t.Errorf("ε of a TS round at δ = 1e-6: %v, want 3.308 (docs/reproduction-decisions.md A5)", e)
	}
}

// TestRNMRounding checks that the returned values never under-report: the
// scale from LaplaceRNMScale gives back at most ε, and GaussianRNMMu's norm
// is at least the exact one.
func TestRNMRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		s, eps := math.Exp(r.NormFloat64()*3), math.Exp(r.NormFloat64()*3)
		for _, n := range []RNMNeighbours{OneScore, AllScores} {
			b, err := LaplaceRNMScale(s, eps, n)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := LaplaceRNMEpsilon(s, b, n); got > eps {
				t.Fatalf("s=%v ε=%v %v: scale %v gives back ε %v > %v", s, eps, n, b, got, eps)
			}
		}
		sens := []float64{math.Exp(r.NormFloat64()), math.Exp(r.NormFloat64()), math.Exp(r.NormFloat64())}
		sig := []float64{math.Exp(r.NormFloat64()), math.Exp(r.NormFloat64()), math.Exp(r.NormFloat64())}
		mu, err := GaussianRNMMu(sens, sig, AllScores)
		if err != nil {
			t.Fatal(err)
		}
		var ss float64
		for i := range sens {
			ss += (sens[i] / sig[i]) * (sens[i] / sig[i])
		}
		if mu < math.Sqrt(ss)*(1-1e-15) || mu > math.Sqrt(ss)*(1+1e-12) {
			t.Fatalf("μ = %v, want ‖s/σ‖₂ = %v rounded up", mu, math.Sqrt(ss))
		}
	}
}

func TestRNMInvalid(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"neighbours", errOf(LaplaceRNMEpsilon(1, 1, 0)), "neither OneScore nor AllScores"},
		{"sensitivity", errOf(LaplaceRNMScale(-1, 1, OneScore)), "sensitivity Δ = -1"},
		{"epsilon", errOf(LaplaceRNMScale(1, 0, OneScore)), "ε = 0"},
		{"scale", errOf(LaplaceRNMEpsilon(1, math.NaN(), AllScores)), "scale b = NaN"},
		{"lengths", errOf(GaussianRNMMu([]float64{1}, []float64{1, 2}, OneScore)), "got 1 and 2"},
		{"sigma", errOf(GaussianRNMMu([]float64{1, 1}, []float64{1, 0}, OneScore)), "score 1: σ = 0"},
	} {
		if c.err == nil || !errors.Is(c.err, ErrInvalid) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid mentioning %q", c.name, c.err, c.want)
		}
	}
}

func errOf(_ float64, err error) error { return err }
