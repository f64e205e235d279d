package noise

import (
	"math"
	"math/rand/v2"
)

// Laplace returns a draw from the Laplace distribution with mean 0 and scale b
// (density exp(−|x|/b)/(2b), variance 2b²) for simulation, by inversion of
// the CDF as docs/accountant.md §2.2 specifies (Lap(Δ₁/ε), sampled by inverse
// CDF): F⁻¹(p) = −b·sgn(p−½)·ln(1−2|p−½|). With W = 1−2|p−½| uniform on
// (0, 1] and an independent fair sign, this is ±b·(−ln W); Laplace draws one
// 64-bit word, takes the sign from its lowest bit and W = (k+½)/2⁵² from its
// top 52 bits (exact in float64, never 0, symmetric about ½).
//
// Contract: b ≥ 0 (b = 0 returns ±0); a negative or NaN b panics (programmer
// error). Cost: one Uint64 and one math.Log, no allocation. r is used by one
// goroutine at a time. The resolution of W bounds |x| ≤ b·ln(2⁵³) ≈ 36.7·b,
// a tail of probability 2⁻⁵³ that simulation may ignore.
//
// Privacy: simulation only. This is the textbook floating-point Laplace
// sampler whose output set has input-dependent holes: releasing x + Laplace
// leaks x, and with it all privacy (Mironov 2012). Release with
// [GridLaplace].
func Laplace(r *rand.Rand, b float64) float64 {
	if !(b >= 0) {
		panic("noise: Laplace needs b >= 0")
	}
	u := r.Uint64()
	w := (float64(u>>12) + 0.5) * 0x1p-52 // uniform on (0, 1), exact
	x := -b * math.Log(w)
	if u&1 != 0 {
		x = -x
	}
	return x
}
