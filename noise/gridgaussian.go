package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// GridGaussianOptions configures a [GridGaussian] mechanism.
type GridGaussianOptions struct {
	// Sigma is the standard deviation σ of the noise in the units of the
	// released value. It must be finite and ≥ 2⁻⁹⁸².
	Sigma float64
	// Sensitivity is the L2 (for a scalar, absolute) sensitivity Δ of the
	// released value: neighbouring inputs give |x − x′| ≤ Δ. It must be finite
	// and > 0.
	Sensitivity float64
	// Source supplies the randomness. nil (the default, and the only choice
	// the decision service accepts) reads crypto/rand; tests inject a seeded
	// generator. See [BitSource].
	Source rand.Source
}

// GridGaussian is the snapped discrete Gaussian mechanism that releases a
// real value under zero-concentrated DP without floating-point noise
// (Mironov 2012 for the snapping; CKS20 Algorithm 3 and Theorem 4 for the
// noise).
//
// The grid step is g = 2^⌈log₂(σ/2⁴⁰)⌉ and the integer noise is
// Z ~ N_ℤ(0, (σ/g)²), with (σ/g)² an exact rational. A release of x is
//
//	Release(x) = g·(round(x/g) + Z),
//
// with the sum computed in exact integer arithmetic and rounded to float64
// once at the end.
//
// Privacy (ρ-zCDP for |x − x′| ≤ Δ, ρ = (Δ + g)²/(2σ²)). With m = round(x/g),
// |m − m′| ≤ |x − x′|/g + 1 ≤ (Δ + g)/g (the snapping costs one grid step;
// docs/accountant.md pitfall 11). CKS20 Theorem 4: adding N_ℤ(0, s²) to an
// integer query of sensitivity Δ_ℤ is (Δ_ℤ²/(2s²))-zCDP. With
// Δ_ℤ = (Δ + g)/g and s = σ/g this gives ((Δ+g)/g)²/(2(σ/g)²) =
// (Δ + g)²/(2σ²). The float64 conversion is post-processing of m + Z. [Rho]
// rounds ρ up, so the reported value is never below the true one (docs/privacy-model.md
// rule 1). The snapping inflates ρ over the continuous Gaussian's
// Δ²/(2σ²) by the factor (1 + g/Δ)², with g ≤ 2⁻³⁹σ.
//
// Cost: about 1–2 µs per release with crypto/rand (BENCHMARKS.txt); the
// running time depends on the noise drawn (see [DiscreteGaussian] on timing).
//
// Concurrency: a GridGaussian is immutable after construction; it is safe for
// concurrent use iff its Source is (the crypto/rand default is).
type GridGaussian struct {
	sigma, sens float64
	g           float64
	e           int
	rho         float64
	params      *dgaussParams // for (σ/g)²
	bits        BitSource
}

// NewGridGaussian validates opts and returns the mechanism. The error names
// the first bad field and its valid range.
func NewGridGaussian(opts GridGaussianOptions) (*GridGaussian, error) {
	sigma, sens := opts.Sigma, opts.Sensitivity
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma < minScale {
		return nil, fmt.Errorf("noise: GridGaussian Sigma = %v, want a finite value ≥ 2^-982 (≈ 2.5e-296)", sigma)
	}
	if math.IsNaN(sens) || math.IsInf(sens, 0) || sens <= 0 {
		return nil, fmt.Errorf("noise: GridGaussian Sensitivity = %v, want a finite value > 0", sens)
	}
	g, e := granularity(sigma)
	gRat := new(big.Rat).SetFloat64(g)
	// (σ/g)², exactly.
	s := new(big.Rat).SetFloat64(sigma)
	s.Quo(s, gRat)
	s.Mul(s, s)
	// ρ = (Δ + g)²/(2σ²), exactly, then rounded up to a float64.
	r := new(big.Rat).SetFloat64(sens)
	r.Add(r, gRat)
	r.Mul(r, r)
	sig2 := new(big.Rat).SetFloat64(sigma)
	sig2.Mul(sig2, sig2)
	sig2.Add(sig2, sig2)
	r.Quo(r, sig2)
	rho := ratFloatUp(r)
	if math.IsInf(rho, 0) {
		return nil, fmt.Errorf("noise: GridGaussian Sensitivity/Sigma = %v, want a ratio below about 1.8e154 so that ρ = (Sensitivity+g)²/(2·Sigma²) is finite: lower Sensitivity or raise Sigma", sens/sigma)
	}
	return &GridGaussian{
		sigma: sigma, sens: sens, g: g, e: e, rho: rho,
		params: newDGaussParams(s),
		bits:   NewBitSource(opts.Source),
	}, nil
}

// ratFloatUp returns the smallest float64 ≥ r (+Inf if r exceeds
// math.MaxFloat64).
func ratFloatUp(r *big.Rat) float64 {
	f, exact := r.Float64()
	if !exact && !math.IsInf(f, 0) && new(big.Rat).SetFloat64(f).Cmp(r) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// Sigma returns σ.
func (m *GridGaussian) Sigma() float64 { return m.sigma }

// Sensitivity returns Δ.
func (m *GridGaussian) Sensitivity() float64 { return m.sens }

// Granularity returns the grid step g: every value Release and Sample return
// is an integer multiple of g.
func (m *GridGaussian) Granularity() float64 { return m.g }

// Rho returns the zCDP parameter of one release, (Δ + g)²/(2σ²) rounded up
// to a float64 (see the type's documentation for the derivation).
func (m *GridGaussian) Rho() float64 { return m.rho }

// Secure reports whether the mechanism draws from crypto/rand (Source was
// nil or a [CryptoSource]). The decision service refuses it otherwise.
func (m *GridGaussian) Secure() bool { return m.bits.Secure() }

// Variance returns σ², an upper bound on the variance of the noise g·Z:
// Var[N_ℤ(0, s²)] < s² (CKS20, utility analysis; the tests check it on the
// exact pmf), and by Poisson summation the gap is O(s⁴e^{−2π²s²}), which for
// s = σ/g > 2³⁹ is far below float64 resolution, so σ² is also the exact
// variance rounded to float64. It does not include the snapping error of
// Release (deterministic given x, at most g/2).
func (m *GridGaussian) Variance() float64 { return m.sigma * m.sigma }

// Snap returns g·round(x/g), the grid point nearest to x (ties away from
// zero). It is exact. It panics on a NaN or infinite x (programmer error).
func (m *GridGaussian) Snap(x float64) float64 {
	checkFinite(x)
	return gridValue(snapIndex(new(big.Int), x, m.e), m.e)
}

// Release returns g·(round(x/g) + Z) with Z ~ N_ℤ(0, (σ/g)²), rounded to
// float64 once. It is [GridGaussian.Rho]-zCDP with respect to any change of
// x by at most Sensitivity. It panics on a NaN or infinite x (programmer
// error). Each call draws fresh noise; persist a released value instead of
// releasing it again (docs/privacy-model.md rule 5).
func (m *GridGaussian) Release(x float64) float64 {
	checkFinite(x)
	s := exact{bits: m.bits}
	k := snapIndex(new(big.Int), x, m.e)
	k.Add(k, s.discreteGaussian(new(big.Int), m.params))
	return gridValue(k, m.e)
}

// Sample returns the noise alone, g·Z with Z ~ N_ℤ(0, (σ/g)²), for tree
// nodes whose noise is drawn when the node is created (docs/privacy-model.md rule 5).
//
// Privacy: Sample's output is independent of the data. The float64 sum
// Snap(x) + Sample() is Rho()-zCDP for |x − x′| ≤ Δ except on the event
// |Z| > 2⁵³, where g·Z is not exactly representable; since N_ℤ(0, s²) is
// sub-Gaussian (CKS20's tail bound P(|Z| ≥ k) ≤ 2e^{−k²/(2s²)}) and
// s ≤ 2⁴⁰, that event has probability below 2e^{−2²⁵}. Release sums exactly and has no
// such event. Adding Sample() to an unsnapped x is NOT private: the output
// then reveals x modulo g (Mironov 2012).
func (m *GridGaussian) Sample() float64 {
	s := exact{bits: m.bits}
	return gridValue(s.discreteGaussian(new(big.Int), m.params), m.e)
}

// SampleInt returns the integer noise Z ~ N_ℤ(0, (σ/g)²) itself (a new
// value), for callers that keep exact integer state.
func (m *GridGaussian) SampleInt() *big.Int {
	s := exact{bits: m.bits}
	return s.discreteGaussian(new(big.Int), m.params)
}
