package noise

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// GridLaplaceOptions configures a [GridLaplace] mechanism.
type GridLaplaceOptions struct {
	// Epsilon is the pure-DP parameter ε of one release. It must be finite and
	// ≥ 2⁻⁴⁰ (below that the grid step would exceed the sensitivity).
	Epsilon float64
	// Sensitivity is the L1 sensitivity Δ of the released value: any two
	// neighbouring inputs give values x, x′ with |x − x′| ≤ Δ. It must be
	// finite and > 0, and Δ/ε must be finite and ≥ 2⁻⁹⁸².
	Sensitivity float64
	// Source supplies the randomness. nil (the default, and the only choice
	// the decision service accepts) reads crypto/rand; tests inject a seeded
	// generator to make the draws reproducible. See [BitSource].
	Source rand.Source
}

// GridLaplace is the snapped discrete Laplace mechanism that releases a real
// value with pure ε-DP and without floating-point noise (Mironov 2012;
// Google differential-privacy library, go/noise/laplace_noise.go; CKS20
// Algorithm 2).
//
// With λ = Δ/ε, the grid step is g = 2^⌈log₂(λ/2⁴⁰)⌉ and the integer noise
// scale is t = (Δ + g)/(g·ε), an exact rational (every float64 is). A release
// of x is
//
//	Release(x) = g·(round(x/g) + Z),   Z ~ DLap(t) (P(Z = z) ∝ e^{−|z|/t}),
//
// with the sum computed in exact integer arithmetic and rounded to float64
// once at the end.
//
// Privacy (ε-DP for |x − x′| ≤ Δ). Let m = round(x/g) and m′ = round(x′/g).
// Since |x/g − m| ≤ ½ and likewise for x′, |m − m′| ≤ |x − x′|/g + 1 ≤
// (Δ + g)/g. For every integer j, P(m + Z = j)/P(m′ + Z = j) =
// e^{(|j−m′| − |j−m|)/t} ≤ e^{|m−m′|/t} ≤ e^{((Δ+g)/g)/t} = e^{ε}. The
// float64 conversion is a function of the integer m + Z alone, so it is
// post-processing. The guarantee is exactly ε: no rounding of ε happens
// anywhere. (docs/accountant.md pitfall 11; Mironov 2012 for the snapping
// argument; the integer step is the geometric mechanism of Ghosh,
// Roughgarden & Sundararajan 2009.)
//
// Cost: the relative inflation of the noise scale over Laplace(Δ/ε) is g/Δ ≤
// 2⁻³⁹/ε; a release takes about 1–2 µs with crypto/rand (BENCHMARKS.txt) and
// makes about 7 small allocations. The running time depends on the noise drawn
// (see [DiscreteGaussian] on timing).
//
// Concurrency: a GridLaplace is immutable after construction; it is safe for
// concurrent use iff its Source is (the crypto/rand default is).
type GridLaplace struct {
	eps, sens float64
	g         float64 // grid step 2^e
	e         int
	tNum      *big.Int // t = tNum/tDen in lowest terms
	tDen      *big.Int
	tFloat    float64 // t rounded to nearest, for Variance only
	bits      BitSource
}

// NewGridLaplace validates opts and returns the mechanism. The error names
// the first bad field and its valid range.
func NewGridLaplace(opts GridLaplaceOptions) (*GridLaplace, error) {
	eps, sens := opts.Epsilon, opts.Sensitivity
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0x1p-40 {
		return nil, fmt.Errorf("noise: GridLaplace Epsilon = %v, want a finite value ≥ 2^-40 (≈ 9.09e-13)", eps)
	}
	if math.IsNaN(sens) || math.IsInf(sens, 0) || sens <= 0 {
		return nil, fmt.Errorf("noise: GridLaplace Sensitivity = %v, want a finite value > 0", sens)
	}
	lambda := sens / eps
	if math.IsInf(lambda, 0) || lambda < minScale {
		return nil, fmt.Errorf("noise: GridLaplace Sensitivity/Epsilon = %v, want a value in [2^-982, 1.8e308]: change Sensitivity or Epsilon", lambda)
	}
	g, e := granularity(lambda)
	// t = (Δ + g)/(g·ε), exactly.
	num := new(big.Rat).SetFloat64(sens)
	gRat := new(big.Rat).SetFloat64(g)
	num.Add(num, gRat)
	den := new(big.Rat).SetFloat64(eps)
	den.Mul(den, gRat)
	t := num.Quo(num, den)
	tf, _ := t.Float64()
	return &GridLaplace{
		eps: eps, sens: sens, g: g, e: e,
		tNum:   new(big.Int).Set(t.Num()),
		tDen:   new(big.Int).Set(t.Denom()),
		tFloat: tf,
		bits:   NewBitSource(opts.Source),
	}, nil
}

// Epsilon returns the ε of one release, which the mechanism guarantees
// exactly.
func (m *GridLaplace) Epsilon() float64 { return m.eps }

// Sensitivity returns Δ.
func (m *GridLaplace) Sensitivity() float64 { return m.sens }

// Granularity returns the grid step g: every value Release and Sample return
// is an integer multiple of g.
func (m *GridLaplace) Granularity() float64 { return m.g }

// Scale returns the integer noise scale t = (Δ + g)/(g·ε) as an exact
// rational (a new value the caller owns).
func (m *GridLaplace) Scale() *big.Rat { return new(big.Rat).SetFrac(m.tNum, m.tDen) }

// Secure reports whether the mechanism draws from crypto/rand (Source was
// nil or a [CryptoSource]). The decision service refuses it otherwise.
func (m *GridLaplace) Secure() bool { return m.bits.Secure() }

// Variance returns the variance of the noise g·Z, g²·2e^{−1/t}/(1 − e^{−1/t})²
// (≈ 2(Δ+g)²/ε², slightly above the 2Δ²/ε² of continuous Laplace). It does
// not include the snapping error of Release, which is deterministic given x
// and at most g/2 in absolute value.
func (m *GridLaplace) Variance() float64 {
	em1 := math.Expm1(-1 / m.tFloat) // e^{−1/t} − 1 < 0
	return m.g * m.g * 2 * (1 + em1) / (em1 * em1)
}

// Snap returns g·round(x/g), the grid point nearest to x (ties away from
// zero). It is exact: the result is always representable. It panics on a
// NaN or infinite x (programmer error).
func (m *GridLaplace) Snap(x float64) float64 {
	checkFinite(x)
	return gridValue(snapIndex(new(big.Int), x, m.e), m.e)
}

// Release returns g·(round(x/g) + Z) with Z ~ DLap(t), rounded to float64
// once. It is ε-DP with respect to any change of x by at most Sensitivity
// (see the type's documentation). It panics on a NaN or infinite x
// (programmer error: such an x has no sensitivity bound).
//
// Each call draws fresh noise: releasing the same statistic twice costs 2ε.
// Persist a released value instead of releasing it again (docs/privacy-model.md rule 5).
func (m *GridLaplace) Release(x float64) float64 {
	checkFinite(x)
	s := exact{bits: m.bits}
	k := snapIndex(new(big.Int), x, m.e)
	k.Add(k, s.discreteLaplace(new(big.Int), m.tNum, m.tDen))
	return gridValue(k, m.e)
}

// Sample returns the noise alone, g·Z with Z ~ DLap(t), for callers that
// draw a tree node's noise when the node is created and add the node's value
// later (docs/privacy-model.md rule 5).
//
// Privacy: Sample's output is independent of the data. The sum
// Snap(x) + Sample(), computed in float64, is ε-DP for |x − x′| ≤ Δ, like
// Release: both terms are exact multiples of g (Snap always, Sample unless
// |Z| > 2⁵³) and IEEE addition is correctly rounded, so the float sum is a
// function of the integer round(x/g) + Z alone. The exception |Z| > 2⁵³ has
// probability 2e^{−(2⁵³+1)/t}/(1+e^{−1/t}) < e^{−4096} for every valid
// option (t ≤ 2⁴⁰ + 1/ε ≤ 2⁴¹); it is the δ of Snap(x) + Sample() and is
// absent from Release, which sums exactly.
//
// Adding Sample() to an unsnapped x is NOT private: the output then reveals
// x modulo g exactly (Mironov 2012).
func (m *GridLaplace) Sample() float64 {
	s := exact{bits: m.bits}
	return gridValue(s.discreteLaplace(new(big.Int), m.tNum, m.tDen), m.e)
}

// SampleInt returns the integer noise Z ~ DLap(t) itself (a new value), for
// callers that keep exact integer state.
func (m *GridLaplace) SampleInt() *big.Int {
	s := exact{bits: m.bits}
	return s.discreteLaplace(new(big.Int), m.tNum, m.tDen)
}

// errNotFinite is the panic value of Release and Snap on NaN or ±Inf.
var errNotFinite = errors.New("noise: release of a NaN or infinite value")

func checkFinite(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		panic(errNotFinite)
	}
}
