package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Tests that kill the second batch of gremlins survivors in this package
// (docs/mutation-testing.md, "Open survivors"). Every check is written so
// that a NaN fails it: checkMoments and checkKS compare with `>` and `<`,
// which a NaN statistic passes silently.

// wordSource is a rand.Source that returns its words in turn, cycling, so
// that a sampler documented in terms of the bits of one 64-bit word can be
// checked on chosen words. rand.Rand.Uint64 returns the source's word as is.
type wordSource struct {
	words []uint64
	i     int
}

func (s *wordSource) Uint64() uint64 {
	w := s.words[s.i%len(s.words)]
	s.i++
	return w
}

func wordRand(words ...uint64) *rand.Rand { return rand.New(&wordSource{words: words}) }

// TestOpenUniformWords: openUniform maps a word to (k+½)/2⁵³ with k its top
// 53 bits; for k < 2⁵² the sum k+½ is exact, so the lowest words give
// exactly 2⁻⁵⁴ and 3·2⁻⁵⁴ (never 0: the boost of Gamma takes U^{1/k} and Beta
// takes ln U of it). For k ≥ 2⁵², k+½ needs 54 bits and rounds to an
// integer (ties to even), so the top word gives exactly 1, not 1 − 2⁻⁵⁴:
// every word gives a value in (0, 1], and 1 (probability 2⁻⁵³) is harmless
// to both callers (1^{1/k} = 1, ln 1 = 0). Kills gamma.go:64 `+ 0.5` →
// `− 0.5` (word 0 would give −2⁻⁵⁴).
func TestOpenUniformWords(t *testing.T) {
	for _, c := range []struct {
		word uint64
		want float64
	}{
		{0, 0x1p-54},
		{0x7ff, 0x1p-54}, // the low 11 bits are dropped
		{1 << 11, 0x3p-54},
		{1<<63 - 1<<11, 0.5 - 0x1p-54}, // k = 2⁵² − 1, the largest exact one
	} {
		got := openUniform(wordRand(c.word))
		if got != c.want || !(got > 0 && got < 1) {
			t.Errorf("openUniform(word %#x) = %b, want %b in (0, 1)", c.word, got, c.want)
		}
	}
	src := rand.NewPCG(43, 44)
	for _, w := range append([]uint64{1 << 63, ^uint64(0)}, func() (ws []uint64) {
		for range 1000 {
			ws = append(ws, src.Uint64())
		}
		return ws
	}()...) {
		k := float64(w >> 11)
		if got := openUniform(wordRand(w)); !(got > 0 && got <= 1) || math.Abs(got*0x1p53-k-0.5) > 0.5 {
			t.Fatalf("openUniform(word %#x) = %b, want (k+½)/2⁵³ = (%v+½)/2⁵³ to within 2⁻⁵⁴, in (0, 1]", w, got, k)
		}
	}
}

// TestLaplaceWords: Laplace takes W = (k+½)/2⁵² from the top 52 bits of its
// word and the sign from the lowest bit, so |x| = −b·ln W exactly, the
// extreme words give |x| = b·ln 2⁵³ (the documented bound) and −b·ln(1−2⁻⁵³),
// and flipping the lowest bit flips the sign and nothing else. These hold
// whichever bit value means "negative". Kills laplace.go:30 `+ 0.5` → `− 0.5`
// (word 0 gives W < 0 and a NaN).
func TestLaplaceWords(t *testing.T) {
	for _, b := range []float64{1.7, 300} {
		bound := -b * math.Log(0x1p-53) // b·ln 2⁵³
		for _, c := range []struct {
			word uint64
			abs  float64
		}{
			{0, bound},
			{1 << 12, -b * math.Log(0x3p-53)},
			{^uint64(0) &^ 1, -b * math.Log(1-0x1p-53)},
		} {
			x := Laplace(wordRand(c.word), b)
			y := Laplace(wordRand(c.word|1), b)
			if math.Abs(x) != c.abs || y != -x {
				t.Errorf("b = %v: Laplace(word %#x) = %v and Laplace(word %#x) = %v, want ±%v with opposite signs",
					b, c.word, x, c.word|1, y, c.abs)
			}
		}
		src := rand.NewPCG(41, 42)
		for range 1000 {
			u := src.Uint64()
			x, y := Laplace(wordRand(u), b), Laplace(wordRand(u^1), b)
			if !(math.Abs(x) <= bound) || y != -x {
				t.Fatalf("b = %v, word %#x: Laplace = %v, with the sign bit flipped %v; want |x| ≤ %v and opposite signs", b, u, x, y, bound)
			}
		}
	}
}

// TestGammaShapesBelowOne draws Gamma(k, θ) for shapes k < 1, which go
// through the boost G·U^{1/k} with G ~ Gamma(k+1) by Marsaglia–Tsang (ACM
// TOMS 2000, §6); Marsaglia–Tsang itself needs k > ⅓ (d = k − ⅓ > 0).
// 20,000 draws per shape on a fixed seed: every draw finite and ≥ 0, the
// mean within 5 s.e. of kθ and the KS p-value against the exact Gamma CDF
// (gonum distuv.Gamma) ≥ 10⁻³, all NaN-safe. Kills gamma.go:33
// `shape < 1` → `shape >= 1`, which sends k = 0.05 and 0.3 to
// Marsaglia–Tsang with d < 0 and returns NaN.
func TestGammaShapesBelowOne(t *testing.T) {
	const n = 20_000
	for _, c := range []struct{ shape, scale float64 }{{0.05, 1}, {0.3, 2}, {0.7, 0.5}} {
		r := newPCG(61)
		xs := make([]float64, n)
		var sum float64
		for i := range xs {
			x := Gamma(r, c.shape, c.scale)
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("Gamma(%v, %v) = %v, want a finite value ≥ 0", c.shape, c.scale, x)
			}
			xs[i] = x
			sum += x
		}
		mean := c.shape * c.scale
		se := math.Sqrt(c.shape*c.scale*c.scale) / math.Sqrt(n)
		if m := sum / n; !(math.Abs(m-mean) <= seRule*se) {
			t.Errorf("Gamma(%v, %v): mean %v, want %v ± %v", c.shape, c.scale, m, mean, seRule*se)
		}
		if d, p := ksPValue(xs, distuv.Gamma{Alpha: c.shape, Beta: 1 / c.scale}.CDF); !(p >= 1e-3) {
			t.Errorf("Gamma(%v, %v): KS D = %v, p = %v < 1e-3", c.shape, c.scale, d, p)
		}
	}
}

// TestGridSmallestScaleAccepted: the smallest noise scale the grid
// mechanisms accept is exactly 2⁻⁹⁸² (minScale), where the grid step is
// 2⁻⁹⁸²⁻⁴⁰ = 2⁻¹⁰²², the smallest normal float64; the float just below is
// refused with an error naming the field. Kills gridgaussian.go:66 and
// gridlaplace.go:78 `< minScale` → `<= minScale`.
func TestGridSmallestScaleAccepted(t *testing.T) {
	below := math.Nextafter(minScale, 0)
	gm, err := NewGridGaussian(GridGaussianOptions{Sigma: minScale, Sensitivity: minScale})
	if err != nil {
		t.Fatalf("Sigma = 2^-982: %v", err)
	}
	if gm.Granularity() != 0x1p-1022 || !(gm.Rho() > 0.5 && gm.Rho() < 0.5000001) {
		t.Errorf("Sigma = Sensitivity = 2^-982: g = %b, ρ = %v; want 2^-1022 and (1 + 2^-40)²/2", gm.Granularity(), gm.Rho())
	}
	if x := gm.Release(3 * minScale); math.IsInf(x, 0) || math.IsNaN(x) {
		t.Errorf("Release at the smallest Sigma = %v", x)
	}
	_, err = NewGridGaussian(GridGaussianOptions{Sigma: below, Sensitivity: minScale})
	checkOptionError(t, false, err, "Sigma")

	for _, c := range []struct{ eps, sens float64 }{{1, minScale}, {2, 2 * minScale}, {0.5, minScale / 2}} {
		lm, err := NewGridLaplace(GridLaplaceOptions{Epsilon: c.eps, Sensitivity: c.sens})
		if err != nil {
			t.Fatalf("ε = %v, Δ = %b (Δ/ε = 2^-982): %v", c.eps, c.sens, err)
		}
		if lm.Granularity() != 0x1p-1022 {
			t.Errorf("ε = %v, Δ = %b: g = %b, want 2^-1022", c.eps, c.sens, lm.Granularity())
		}
	}
	_, err = NewGridLaplace(GridLaplaceOptions{Epsilon: 1, Sensitivity: below})
	checkOptionError(t, false, err, "Sensitivity/Epsilon")
}

// TestGridGaussianRatioErrorNamesRatio: when ρ = (Δ+g)²/(2σ²) overflows,
// the error names the offending ratio Sensitivity/Sigma with its value.
// Kills gridgaussian.go:88 `sens/sigma` → `sens*sigma` in the message.
func TestGridGaussianRatioErrorNamesRatio(t *testing.T) {
	for _, c := range []struct{ sigma, sens float64 }{{1e-150, 1e10}, {1, 1e155}, {0x1p-982, 1e-100}} {
		m, err := NewGridGaussian(GridGaussianOptions{Sigma: c.sigma, Sensitivity: c.sens})
		if err == nil || m != nil {
			t.Fatalf("σ = %v, Δ = %v: ρ overflows but was accepted", c.sigma, c.sens)
		}
		want := fmt.Sprintf("Sensitivity/Sigma = %v,", c.sens/c.sigma)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("σ = %v, Δ = %v: error %q does not contain %q", c.sigma, c.sens, err, want)
		}
	}
	if _, err := NewGridGaussian(GridGaussianOptions{Sigma: 1, Sensitivity: 1e150}); err != nil {
		t.Errorf("Sensitivity/Sigma = 1e150 (ρ ≈ 5e299): %v", err)
	}
}

// TestGridLaplaceVarianceExact checks Variance against the variance of g·Z
// for Z ~ DLap(t), computed from the exact t in 256-bit arithmetic:
// Var[Z] = 2e^{−1/t}/(1 − e^{−1/t})² = 1/(2 sinh²(1/(2t))), with sinh by
// its Taylor series x + x³/6 + x⁵/120 (x = 1/(2t) < 2⁻³⁹, so the neglected
// terms are below 2⁻²⁷⁰ relative). Tolerance 10⁻¹⁴ relative: t ≤ 2⁴¹ for
// every valid option, so writing (1−em1) for (1+em1) or dividing by e^{−1/t}
// instead of multiplying, both off by a factor of about e^{2/t}, miss by at
// least 2/t ≥ 2⁻⁴⁰ ≈ 9·10⁻¹³. Kills gridlaplace.go:124 `2 * (1 + em1)` →
// `2 / (1 + em1)` and `(1 + em1)` → `(1 − em1)`. The cases keep Δ/ε ≥ 2⁻⁴⁰²:
// Variance forms g·g first, which leaves the normal range for Δ/ε below
// about 2⁻⁴⁷¹ (docs/mutation-testing.md notes this defect).
func TestGridLaplaceVarianceExact(t *testing.T) {
	const prec = 256
	for _, c := range []struct{ eps, sens float64 }{
		{1, 1.5}, {0.5, 3}, {0x1p-40, 1}, {7, 1e-3}, {0.1, 1e12}, {3, 0x1p-400},
	} {
		m := mustLaplace(t, c.eps, c.sens, nil)
		x := new(big.Float).SetPrec(prec).SetRat(m.Scale())
		x.Quo(big.NewFloat(0.5).SetPrec(prec), x) // 1/(2t)
		x2 := new(big.Float).SetPrec(prec).Mul(x, x)
		// sinh x = x·(1 + x²/6·(1 + x²/20))
		s := new(big.Float).SetPrec(prec).Quo(x2, big.NewFloat(20))
		s.Add(s, big.NewFloat(1))
		s.Mul(s, x2)
		s.Quo(s, big.NewFloat(6))
		s.Add(s, big.NewFloat(1))
		s.Mul(s, x)
		// Var[g·Z] = g²/(2 sinh² x)
		want := new(big.Float).SetPrec(prec).SetFloat64(m.Granularity())
		want.Mul(want, want)
		den := new(big.Float).SetPrec(prec).Mul(s, s)
		den.Mul(den, big.NewFloat(2))
		want.Quo(want, den)
		w, _ := want.Float64()
		got := m.Variance()
		if rel := math.Abs(got-w) / w; !(rel <= 1e-14) {
			t.Errorf("ε = %v, Δ = %v: Variance = %v, want %v (relative error %.3g > 1e-14)", c.eps, c.sens, got, w, rel)
		}
	}
}

// TestNoisyMaxTiesAndNonPositiveScores: without noise (b = 0, σ = 0) both
// Report-Noisy-Max samplers return the argmax with ties to the lowest index,
// also when every score is negative or zero, so that the running best must
// start from the first score and not from 0. Kills rnm.go:41 `v > best` →
// `v >= best` (ties to the highest index), and checks the same at rnm.go:19.
func TestNoisyMaxTiesAndNonPositiveScores(t *testing.T) {
	r := newPCG(71)
	for _, c := range []struct {
		f    []float64
		want int
	}{
		{[]float64{5, 5, 5}, 0},
		{[]float64{-2, -1, -1}, 1},
		{[]float64{-3, -7}, 0},
		{[]float64{0, 0}, 0},
		{[]float64{-7, -3, -3, -9}, 1},
		{[]float64{-1e300, -5e-324}, 1},
		{[]float64{-5e-324, -1e300, -5e-324}, 0},
		{[]float64{-4}, 0},
	} {
		if got := LaplaceNoisyMax(r, c.f, 0); got != c.want {
			t.Errorf("LaplaceNoisyMax(%v, b = 0) = %d, want %d", c.f, got, c.want)
		}
		if got := GaussianNoisyMax(r, c.f, make([]float64, len(c.f))); got != c.want {
			t.Errorf("GaussianNoisyMax(%v, σ = 0) = %d, want %d", c.f, got, c.want)
		}
	}
}
