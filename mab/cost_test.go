package mab

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The per-step GDP costs the filters are charged are rounded up (issue 14:
// 1/math.Sqrt(n+1) is below 1/√(n+1) for about half of all n, so a run's
// exact Σμ² could exceed its budget). Each test compares the charged μ with
// the true cost in exact rational arithmetic.

// atLeastInvSqrt reports μ²·x ≥ 1 exactly (x an exact rational).
func atLeastInvSqrt(mu float64, x *big.Rat) bool {
	m := new(big.Rat).SetFloat64(mu)
	m.Mul(m, m).Mul(m, x)
	return m.Cmp(big.NewRat(1, 1)) >= 0
}

// TestTSGaussianCostRoundedUp: ts-gaussian's NextCost 1/√(n+1) for every
// n ≤ 200,000, and the overshoot is at most 2 ulps.
func TestTSGaussianCostRoundedUp(t *testing.T) {
	p, _ := NewTSGaussian(TSGaussianOptions{K: 1, Horizon: 10}, rand.New(rand.NewPCG(1, 2)))
	below := 0
	for n := 1; n <= 200_000; n++ {
		p.st.Pulls[0] = n
		mu := p.NextCost().Value
		if !atLeastInvSqrt(mu, new(big.Rat).SetInt64(int64(n+1))) {
			below++
		}
		if naive := 1 / math.Sqrt(float64(n+1)); mu > math.Nextafter(math.Nextafter(naive, 2), 2) {
			t.Fatalf("n = %d: μ = %v is more than 2 ulps above %v", n, mu, naive)
		}
	}
	if below > 0 {
		t.Errorf("ts-gaussian charged less than 1/√(n+1) for %d of 200,000 n", below)
	}
}

// TestMTSGaussianCostRoundedUp: M-TS's cost 1/√(c·(m+1)) with the product
// taken exactly, for random c and m, and GaussianTS's 1/√n.
func TestMTSGaussianCostRoundedUp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 100_000 {
		c := math.Exp(r.Float64()*20 - 5)
		m := 1 + r.IntN(1_000_000)
		p, err := NewMTSGaussian(MTSGaussianOptions{K: 1, Horizon: 10, C: c}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		p.st.Pulls[0] = m
		mu := p.NextCost().Value
		x := new(big.Rat).SetFloat64(c)
		x.Mul(x, new(big.Rat).SetInt64(int64(m+1)))
		if mu > 0 && !atLeastInvSqrt(mu, x) {
			t.Fatalf("case %d: c = %v, m = %d: μ = %v < 1/√(c(m+1))", i, c, m, mu)
		}
	}
	g, _ := NewGaussianTS(GaussianTSOptions{K: 1, Horizon: 10}, rand.New(rand.NewPCG(1, 2)))
	for n := 1; n <= 100_000; n++ {
		g.st.Pulls[0], g.unseen = n, 0
		if mu := g.NextCost().Value; !atLeastInvSqrt(mu, new(big.Rat).SetInt64(int64(n))) {
			t.Fatalf("gaussian-ts n = %d: μ = %v < 1/√n", n, mu)
		}
	}
}

// TestCostSqrtUp: √d rounded up (μ² ≥ d exactly) and subUp (a − b ≤ the
// result exactly), the pieces of DP-TS-UCB's cost.
func TestCostSqrtUp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200_000 {
		a := math.Exp(r.Float64()*40 - 20)
		b := a * r.Float64()
		d := subUp(a, b)
		exact := new(big.Rat).Sub(new(big.Rat).SetFloat64(a), new(big.Rat).SetFloat64(b))
		if new(big.Rat).SetFloat64(d).Cmp(exact) < 0 {
			t.Fatalf("case %d: subUp(%v, %v) = %v below the exact difference", i, a, b, d)
		}
		mu := gdpCostSqrt(d).Value
		m := new(big.Rat).SetFloat64(mu)
		if m.Mul(m, m).Cmp(new(big.Rat).SetFloat64(d)) < 0 {
			t.Fatalf("case %d: gdpCostSqrt(%v) = %v, μ² < d", i, d, mu)
		}
	}
	if gdpCostSqrt(0).Value != 0 || subUp(1, 2) != 0 {
		t.Error("zero costs must stay zero")
	}
}
