package mab

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/counting"
)

// Tests that kill mutants that survived the rest of the suite
// (docs/mutation-testing.md, scripts/mutants/).

// TestGDPReportCertifiedNeverBelowExact: ts-gaussian's certified μ for T
// rounds is sqrt((T−1)/2) (Ou et al., AISTATS 2024, Alg 1; composition of
// T−1 rounds of cost ≤ 1/√2). The float square root rounds to nearest, so
// for about half of all T it lies below the exact value; the report must
// round up (docs/privacy-model.md rule 1): μ² ≥ (T−1)/2 exactly, for every
// T ≤ 5000.
func TestGDPReportCertifiedNeverBelowExact(t *testing.T) {
	for T := 2; T <= 5000; T++ {
		mu := tsGaussianReport(T).Certified.Value
		m := new(big.Rat).SetFloat64(mu)
		m.Mul(m, m)
		if m.Cmp(big.NewRat(int64(T-1), 2)) < 0 {
			t.Fatalf("T = %d: certified μ = %v has μ² = %s below the exact (T−1)/2", T, mu, m.FloatString(20))
		}
	}
}

// recNoise is a counting.Noise that records the Laplace scale and the
// sensitivity it is asked for and releases x unchanged.
type recNoise struct{ b, d []float64 }

type recMech struct{}

func (recMech) Release(x float64) float64 { return x }

func (r *recNoise) Laplace(b, d float64) (counting.Mechanism, error) {
	r.b, r.d = append(r.b, b), append(r.d, d)
	return recMech{}, nil
}
func (r *recNoise) Gaussian(float64, float64) (counting.Mechanism, error) { return recMech{}, nil }
func (r *recNoise) Discrete() bool                                        { return false }

// TestPureReleaseScaleRoundedUp: the pure policies' Laplace releases ask
// for the scale b = Δ/ε rounded up, so that the release is ε-DP despite
// the float division: b·ε ≥ Δ exactly (big.Rat), and b is within 2⁻⁴⁸
// (relative) of Δ/ε, for sensitivities and budgets over many magnitudes.
func TestPureReleaseScaleRoundedUp(t *testing.T) {
	rec := &recNoise{}
	for _, sens := range []float64{1, 1.0 / 3, 0.1, 2, 1.0 / 7, 1e-3} {
		for _, eps := range []float64{1, 0.1, 0.3, 1.0 / 3, 2.5, 1e-4, 7} {
			pureRelease(rec, 0.25, sens, eps)
		}
	}
	i := 0
	for _, sens := range []float64{1, 1.0 / 3, 0.1, 2, 1.0 / 7, 1e-3} {
		for _, eps := range []float64{1, 0.1, 0.3, 1.0 / 3, 2.5, 1e-4, 7} {
			b, d := rec.b[i], rec.d[i]
			i++
			if d != sens {
				t.Fatalf("Δ = %v, want the sensitivity %v", d, sens)
			}
			be := new(big.Rat).Mul(new(big.Rat).SetFloat64(b), new(big.Rat).SetFloat64(eps))
			if be.Cmp(new(big.Rat).SetFloat64(sens)) < 0 {
				t.Errorf("Δ = %v, ε = %v: scale b = %v has b·ε below Δ (rounded down)", sens, eps, b)
			}
			if b > sens/eps*(1+0x1p-48) {
				t.Errorf("Δ = %v, ε = %v: scale b = %v more than 2⁻⁴⁸ above Δ/ε = %v", sens, eps, b, sens/eps)
			}
		}
	}
}

// TestSubUpIsTheSmallestFloatAbove: subUp(a, b) is the exact a − b rounded
// up, i.e. the smallest float64 d ≥ a − b (exact rationals), for a ≥ b ≥ 0
// of every relative magnitude (the two-sum error term decides the
// rounding: a wrong sign or operand in it rounds the wrong way or too far).
func TestSubUpIsTheSmallestFloatAbove(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for i := 0; i < 5000; i++ {
		a := math.Ldexp(r.Float64()+0.5, r.IntN(40)-20)
		b := a * r.Float64()
		if i%3 == 0 {
			b = math.Ldexp(r.Float64(), r.IntN(60)-80) // b far below a
		}
		d := subUp(a, b)
		exact := new(big.Rat).Sub(new(big.Rat).SetFloat64(a), new(big.Rat).SetFloat64(b))
		if new(big.Rat).SetFloat64(d).Cmp(exact) < 0 {
			t.Fatalf("subUp(%v, %v) = %v is below the exact difference", a, b, d)
		}
		if below := math.Nextafter(d, 0); d > 0 && new(big.Rat).SetFloat64(below).Cmp(exact) >= 0 {
			t.Fatalf("subUp(%v, %v) = %v is not the smallest float ≥ a − b (%v is too)", a, b, d, below)
		}
	}
}

// TestSqAtLeastIsExact: sqAtLeast(μ, d) decides μ² ≥ d exactly (the cost
// rounding of gdpCostSqrt rests on it), on random pairs far apart (its fast
// path), within a few ulps of equality (its FMA path) and at exact squares.
func TestSqAtLeastIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	check := func(mu, d float64) {
		m := new(big.Rat).SetFloat64(mu)
		want := m.Mul(m, m).Cmp(new(big.Rat).SetFloat64(d)) >= 0
		if got := sqAtLeast(mu, d); got != want {
			t.Fatalf("sqAtLeast(%v, %v) = %v, want μ² ≥ d = %v", mu, d, got, want)
		}
	}
	for i := 0; i < 5000; i++ {
		d := math.Ldexp(r.Float64()+0.5, r.IntN(60)-30)
		mu := math.Sqrt(d)
		for k := -3; k <= 3; k++ { // near equality
			m := mu
			for j := 0; j < k; j++ {
				m = math.Nextafter(m, math.Inf(1))
			}
			for j := 0; j > k; j-- {
				m = math.Nextafter(m, 0)
			}
			check(m, d)
		}
		check(mu*(1+r.Float64()), d) // μ² up to 4d
		check(mu*r.Float64(), d)     // below
		check(mu*math.Sqrt2, d)      // μ² ≈ 2d, the fast path's edge
		check(mu/math.Sqrt2, d)      // μ² ≈ d/2
	}
	check(3, 9)
	check(0.5, 0.25)
	check(0, 0)
}

// TestSqTimesAtLeastOneIsExact: sqTimesAtLeastOne(μ, x) decides μ²·x ≥ 1
// exactly (gdpCostInvSqrt's rounding rests on it): for μ within a few ulps
// of 1/√x (the error-free-transformation path), far from it (the fast
// path) and at exact cases such as μ = 1/2, x = 4.
func TestSqTimesAtLeastOneIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	check := func(mu, x float64) {
		m := new(big.Rat).SetFloat64(mu)
		m.Mul(m, m).Mul(m, new(big.Rat).SetFloat64(x))
		want := m.Cmp(big.NewRat(1, 1)) >= 0
		if got := sqTimesAtLeastOne(mu, x); got != want {
			t.Fatalf("sqTimesAtLeastOne(%v, %v) = %v, want μ²x ≥ 1 = %v", mu, x, got, want)
		}
	}
	for i := 0; i < 5000; i++ {
		x := math.Ldexp(r.Float64()+0.5, r.IntN(60)-30)
		mu := 1 / math.Sqrt(x)
		for k := -3; k <= 3; k++ {
			m := mu
			for j := 0; j < k; j++ {
				m = math.Nextafter(m, math.Inf(1))
			}
			for j := 0; j > k; j-- {
				m = math.Nextafter(m, 0)
			}
			check(m, x)
		}
		check(mu*(1+r.Float64()), x)
		check(mu*r.Float64(), x)
		check(mu*math.Sqrt2, x)
		check(mu/math.Sqrt2, x)
	}
	check(0.5, 4)
	check(1, 1)
	check(3, 1.0/9)
}
