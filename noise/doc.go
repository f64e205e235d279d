// Package noise provides the random samplers of dpbandit, in two kinds that
// must not be confused (docs/privacy-model.md rule 4; docs/accountant.md pitfall 11).
//
// # Simulation samplers
//
// [Gaussian], [Laplace], [Exponential], [Gamma] and [Beta] are fast
// floating-point samplers on an injected *rand.Rand (math/rand/v2). They are
// allocation-free and reproducible under a fixed seed, and they are meant for
// the hot path of simulations (seeded PCG). Their output is a float64 computed
// with rounding, so a released value "x + Laplace(r, b)" is attackable
// (Mironov 2012): never add them to a value that leaves the system. The one
// serving use they allow is a draw that is only compared (Thompson sampling's
// argmax) when r runs on a cryptographically strong generator
// ([NewSecureSource]); the caller must say why at the call site.
// [LaplaceNoisyMax] and [GaussianNoisyMax] are that use packaged:
// Report-Noisy-Max ([OU] App C; docs/accountant.md §1.5), which returns only the index; their
// guarantees are privacy.LaplaceRNMEpsilon and privacy.GaussianRNMMu.
//
// # Serving samplers
//
// [BernoulliExp], [DiscreteLaplace] and [DiscreteGaussian] are the exact
// samplers of Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for
// Differential Privacy", NeurIPS 2020, arXiv:2004.00010 (CKS20), Algorithms
// 1–3. They use rational arithmetic (math/big) only: no floating-point number
// enters the sampled value. Their randomness comes from a [BitSource], which
// reads crypto/rand by default ([CryptoSource]) and takes an injected
// rand.Source in tests.
//
// [GridLaplace] and [GridGaussian] are the release mechanisms built on them:
// the value to release is snapped to a power-of-two grid (Mironov 2012's
// snapping idea, with the granularity rule of Google's differential-privacy
// library) and integer noise times the grid step is added, with the rounding
// paid for in the sensitivity. They are what every released noisy value (a
// tree node, a batch increment, a published snapshot) must use.
//
// # References
//
//   - [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for
//     Differential Privacy. NeurIPS 2020. arXiv:2004.00010.
//   - [Mir12] I. Mironov. On Significance of the Least Significant Bits for
//     Differential Privacy. ACM CCS 2012.
//   - [MT00] G. Marsaglia, W. W. Tsang. A Simple Method for Generating Gamma
//     Variables. ACM TOMS 26(3), 2000.
//   - Google differential-privacy library, go/noise/laplace_noise.go
//     (granularity 2^⌈log₂(λ/2⁴⁰)⌉ and the +granularity sensitivity).
//
// The package imports nothing from the rest of dpbandit.
package noise
