package noise

import "math/rand/v2"

// Gaussian returns a draw from N(0, sigma²) for simulation: sigma·Z with Z
// from r.NormFloat64 (the Marsaglia–Tsang ziggurat of math/rand/v2).
//
// Contract: sigma ≥ 0 (sigma = 0 returns 0); a negative or NaN sigma panics
// (programmer error). Cost: one NormFloat64, no allocation. r is used by one
// goroutine at a time (*rand.Rand is not safe for concurrent use).
//
// Privacy: simulation only. The result is a rounded float, so adding it to a
// released value is attackable (Mironov 2012); use [GridGaussian] to release.
// On a strong generator it may drive a decision that only leaves the system
// through an argmax (docs/privacy-model.md rule 4).
func Gaussian(r *rand.Rand, sigma float64) float64 {
	if !(sigma >= 0) {
		panic("noise: Gaussian needs sigma >= 0")
	}
	return sigma * r.NormFloat64()
}
