package noise

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Tests that kill mutants gremlins found surviving in this package
// (docs/mutation-testing.md).

// TestBernoulliExpLargeDenominator: γ = 2⁶²/(2⁶³+1) ≈ 1/2 has a
// denominator d > 2⁶³, so Algorithm 1 (Canonne, Kamath & Steinke 2020)
// leaves its uint64 loop after the first step (d·2 overflows) and continues
// at k = 2 with the big-integer loop. Unlike γ near 1, here the first step
// is a fair-ish coin, so a wrong counter at the hand-over changes the law:
// the frequency of true must be e^{−γ} within 5 standard errors over
// 100,000 draws (fixed seed).
func TestBernoulliExpLargeDenominator(t *testing.T) {
	const n = 100_000
	num := new(big.Int).Lsh(big.NewInt(1), 62)
	den := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 63), big.NewInt(1))
	gamma := new(big.Rat).SetFrac(num, den)
	src := rand.NewPCG(21, 22)
	k := 0
	for range n {
		if BernoulliExp(src, gamma) {
			k++
		}
	}
	g, _ := gamma.Float64()
	p := math.Exp(-g)
	se := math.Sqrt(p * (1 - p) / n)
	if d := math.Abs(float64(k)/n - p); d > seRule*se {
		t.Errorf("γ = 2⁶²/(2⁶³+1): frequency %.5f, want e^{−γ} = %.5f ± %.5f", float64(k)/n, p, seRule*se)
	}
}

// TestBetaRejectsZeroB: Beta(a, 0) has no distribution; it panics like
// Beta(0, b) (programmer error), for a ≥ 1 and a < 1 alike.
func TestBetaRejectsZeroB(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, a := range []float64{2, 0.5} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Beta(r, %v, 0) did not panic", a)
				}
			}()
			Beta(r, a, 0)
		}()
	}
}

// TestUint64NUniformNearTwoTo64: for n = 3·2⁶² multiply-shift alone maps
// two 64-bit words to every value ≡ 0 (mod 3) and one to the others, so
// without Lemire's rejection step (ACM TOMACS 2019) P(x ≡ 0 mod 3) would
// be 1/2; uniform draws give 1/3. 40,000 draws on a fixed seed, ±5 s.e.
func TestUint64NUniformNearTwoTo64(t *testing.T) {
	const draws = 40_000
	const n = uint64(3) << 62
	b := NewBitSource(rand.NewPCG(31, 32))
	zero := 0
	for range draws {
		x := b.Uint64N(n)
		if x >= n {
			t.Fatalf("Uint64N(%d) = %d out of range", n, x)
		}
		if x%3 == 0 {
			zero++
		}
	}
	p := 1.0 / 3
	se := math.Sqrt(p * (1 - p) / draws)
	if d := math.Abs(float64(zero)/draws - p); d > seRule*se {
		t.Errorf("P(x ≡ 0 mod 3) = %.4f, want 1/3 ± %.4f", float64(zero)/draws, seRule*se)
	}
}

// TestIntNBeyondUint64: IntN for n = 3·2⁶⁴ (two words, top word 2 bits)
// draws every value below n uniformly: in range, P(x < 2⁶⁴) = 1/3 and
// P(x even) = 1/2 within 5 s.e. over 20,000 draws; n = 0 panics.
func TestIntNBeyondUint64(t *testing.T) {
	const draws = 20_000
	b := NewBitSource(rand.NewPCG(51, 52))
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	n := new(big.Int).Mul(big.NewInt(3), two64)
	z := new(big.Int)
	low, even := 0, 0
	for range draws {
		b.IntN(z, n)
		if z.Sign() < 0 || z.Cmp(n) >= 0 {
			t.Fatalf("IntN(3·2⁶⁴) = %v out of range", z)
		}
		if z.Cmp(two64) < 0 {
			low++
		}
		if z.Bit(0) == 0 {
			even++
		}
	}
	for _, c := range []struct {
		what string
		k    int
		p    float64
	}{{"x < 2⁶⁴", low, 1.0 / 3}, {"x even", even, 0.5}} {
		se := math.Sqrt(c.p * (1 - c.p) / draws)
		if d := math.Abs(float64(c.k)/draws - c.p); d > seRule*se {
			t.Errorf("P(%s) = %.4f, want %.4f ± %.4f", c.what, float64(c.k)/draws, c.p, seRule*se)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("IntN(z, 0) did not panic")
		}
	}()
	b.IntN(z, new(big.Int))
}

// TestZeroScalesPanic: a zero scale is a programmer error for the exact
// samplers (DiscreteLaplace, DiscreteGaussian: σ² = 0) and for Gamma's
// scale, like a negative one; each panics rather than return a draw.
func TestZeroScalesPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	for name, f := range map[string]func(){
		"DiscreteLaplace scale 0":   func() { DiscreteLaplace(rand.NewPCG(1, 1), new(big.Rat)) },
		"DiscreteGaussian sigma2 0": func() { DiscreteGaussian(rand.NewPCG(1, 1), new(big.Rat)) },
		"Gamma scale 0":             func() { Gamma(r, 2, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}
