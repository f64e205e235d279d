package mab

import (
	"math"
	"math/big"

	"github.com/dpbandit/dpbandit/privacy"
)

// Per-step GDP costs, rounded up.
//
// A filter charges the μᵢ it is given exactly (it adds μᵢ² in exact
// arithmetic), so a μ computed in floating point must not be below the true
// cost: 1/math.Sqrt(n+1) is below 1/√(n+1) for about half of all n (two
// roundings to nearest), which would let a run's exact Σμᵢ² exceed its
// budget by about T·2⁻⁵³ relative. These helpers return a float64 μ with
// the stated inequality exact, found by correcting the float result upward
// by an ulp at a time (at most two steps in practice); the checks use
// error-free transformations (fused multiply-add), so they allocate nothing
// and cost a few nanoseconds.

// gdpCost is a Metered cost of μ-GDP, for values that are exact (0).
func gdpCost(mu float64) privacy.Guarantee {
	return privacy.Guarantee{Notion: privacy.NotionGDP, Value: mu}
}

// gdpCostInvSqrt is the cost 1/√(a·b) for float64 a, b > 0 (the product
// taken exactly, not rounded), rounded up: μ with μ²·a·b ≥ 1 exactly.
func gdpCostInvSqrt(a, b float64) privacy.Guarantee {
	x := a * b
	if math.FMA(a, b, -x) < 0 {
		x = math.Nextafter(x, 0) // x ≤ a·b, so 1/√x ≥ 1/√(a·b)
	}
	mu := 1 / math.Sqrt(x)
	for !sqTimesAtLeastOne(mu, x) {
		mu = math.Nextafter(mu, math.Inf(1))
	}
	return gdpCost(mu)
}

// gdpCostSqrt is the cost √d for d ≥ 0, rounded up: μ with μ² ≥ d exactly.
func gdpCostSqrt(d float64) privacy.Guarantee {
	if !(d > 0) {
		return gdpCost(0)
	}
	mu := math.Sqrt(d)
	for !sqAtLeast(mu, d) {
		mu = math.Nextafter(mu, math.Inf(1))
	}
	return gdpCost(mu)
}

// subUp is a − b rounded up (a ≥ b ≥ 0): the exact difference is at most
// the result.
func subUp(a, b float64) float64 {
	s := a - b
	// Two-sum: a − b = s + e exactly.
	bb := s - a
	e := (a - (s - bb)) + (-b - bb)
	if e > 0 {
		s = math.Nextafter(s, math.Inf(1))
	}
	return max(s, 0)
}

// sqAtLeast reports whether μ² ≥ d exactly (μ, d > 0 finite, μ² ≈ d).
// μ² = hi + lo exactly; hi − d is exact (Sterbenz, hi within a factor 2 of
// d) and the float sum of two floats has the sign of their exact sum.
func sqAtLeast(mu, d float64) bool {
	hi := mu * mu
	if hi > 2*d || 2*hi < d {
		return hi > d
	}
	lo := math.FMA(mu, mu, -hi)
	return (hi-d)+lo >= 0
}

// sqTimesAtLeastOne reports whether μ²·x ≥ 1 exactly (μ, x > 0 finite,
// μ²·x ≈ 1). μ² = hi + lo and
// hi·x = p + e1, lo·x = p2 + e2 exactly, so μ²x − 1 = (p − 1) + e1 + p2 + e2
// with p − 1 exact (p within a factor 2 of 1); the float sum of these four
// is within 2⁻¹⁰⁴ of the exact one, so beyond ±2⁻¹⁰⁰ its sign is the
// exact sign; in between, big.Rat decides.
func sqTimesAtLeastOne(mu, x float64) bool {
	hi := mu * mu
	lo := math.FMA(mu, mu, -hi)
	p := hi * x
	if p > 2 || p < 0.5 {
		return p > 1
	}
	e1 := math.FMA(hi, x, -p)
	p2 := lo * x
	e2 := math.FMA(lo, x, -p2)
	switch s := ((p - 1) + e1) + (p2 + e2); {
	case s > 0x1p-100:
		return true
	case s < -0x1p-100:
		return false
	}
	// Too close to tell in floating point (μ²·x = 1 exactly, as for x = 1
	// or 4): decide exactly. Rare, so the allocation does not matter.
	m := new(big.Rat).SetFloat64(mu)
	m.Mul(m, m).Mul(m, new(big.Rat).SetFloat64(x))
	return m.Cmp(big.NewRat(1, 1)) >= 0
}
