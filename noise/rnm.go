package noise

import "math/rand/v2"

// LaplaceNoisyMax returns argmax_i f[i] + Lap(b), ties to the lowest index:
// Laplace Report-Noisy-Max ([OU] App C; docs/accountant.md §1.5). Its guarantee is
// privacy.LaplaceRNMEpsilon: s/b when a neighbour moves one score by at most
// s, 2s/b when it may move all of them.
//
// Contract: len(f) ≥ 1 and b ≥ 0 (a negative or NaN b panics, as in
// [Laplace]). Cost: len(f) Laplace draws, no allocation.
//
// Privacy: only the index may leave the system (docs/privacy-model.md rule 4):
// the noisy scores are floating-point and must not be released. Serve it on a
// strong generator (NewSecureSource).
func LaplaceNoisyMax(r *rand.Rand, f []float64, b float64) int {
	best, arg := 0.0, 0
	for i, x := range f {
		if v := x + Laplace(r, b); i == 0 || v > best {
			best, arg = v, i
		}
	}
	return arg
}

// GaussianNoisyMax returns argmax_i f[i] + N(0, sigma[i]²), ties to the
// lowest index: heterogeneous Gaussian Report-Noisy-Max ([OU] App C; docs/accountant.md §1.5), one
// round of Gaussian Thompson sampling when f are the posterior means and
// sigma the posterior standard deviations. Its guarantee is
// privacy.GaussianRNMMu: max_i s_i/σ_i-GDP when a neighbour moves one score.
//
// Contract: len(f) ≥ 1 and len(sigma) == len(f), each sigma[i] ≥ 0 (a
// negative or NaN value panics, as in [Gaussian]). Cost: len(f) NormFloat64,
// no allocation. Privacy: as LaplaceNoisyMax, only the index may leave.
func GaussianNoisyMax(r *rand.Rand, f, sigma []float64) int {
	if len(sigma) != len(f) {
		panic("noise: GaussianNoisyMax needs one sigma per score")
	}
	best, arg := 0.0, 0
	for i, x := range f {
		if v := x + Gaussian(r, sigma[i]); i == 0 || v > best {
			best, arg = v, i
		}
	}
	return arg
}
