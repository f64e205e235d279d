package counting

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/noise"
)

// SecureNoise returns the serving noise: every node is released by
// noise.GridLaplace or noise.GridGaussian, which snap the node's exact sum to
// a power-of-two grid and add an exact discrete Laplace / discrete Gaussian
// multiple of the grid step (CKS20; Mironov 2012), as docs/privacy-model.md rule
// 4 requires for a released tree node. src nil (the only choice the service
// accepts) reads crypto/rand; tests pass a seeded source.
//
// The rounding to the grid is paid for so that each node is at least as
// private as the continuous mechanism the counter asked for, and the
// counter's certified guarantee stays exact:
//
//   - Laplace(b, Δ): GridLaplace with ε_node = Δ/b (rounded down), which it
//     guarantees exactly by enlarging its scale to (Δ + g)/ε_node;
//   - Gaussian(σ, Δ): GridGaussian with the smallest σ′ ≥ σ(Δ + g′)/Δ (g′
//     its grid step), so its ρ_node = (Δ + g′)²/(2σ′²) ≤ Δ²/(2σ²), checked in
//     exact rational arithmetic.
//
// The enlargement is a relative ≈ 2⁻⁴⁰·σ/Δ (or b/Δ) of the scale, and the
// counter's [Counter.NodeVariance] is the grid mechanism's own noise
// variance. Each release also carries a deterministic snapping error of at
// most g/2, which Variance does not include.
//
// Cost: a release takes 1–4 µs and allocates a few big.Int words, so with
// SecureNoise Add allocates (Sum still does not). Concurrency: the
// mechanisms are safe for concurrent use iff src is (crypto/rand is).
func SecureNoise(src rand.Source) Noise { return secureNoise{src: src} }

type secureNoise struct{ src rand.Source }

func (s secureNoise) Discrete() bool { return true }

func (s secureNoise) Laplace(b, delta float64) (Mechanism, error) {
	if !(b > 0) || !(delta > 0) || math.IsInf(b, 1) || math.IsInf(delta, 1) {
		return nil, fmt.Errorf("%w: Laplace node noise needs finite b > 0 and sensitivity > 0 (got b=%v, Δ=%v)", ErrInvalid, b, delta)
	}
	if b/delta > 0x1p36 {
		return nil, fmt.Errorf("%w: Laplace node b/Δ = %v, must be ≤ 2^36 for the grid mechanism (its grid step would approach the sensitivity): the privacy asked for is far stronger than any use needs", ErrInvalid, b/delta)
	}
	// ε_node ≤ Δ/b exactly: round the float quotient down if it rounded up.
	eps := delta / b
	if new(big.Rat).Mul(rat(eps), rat(b)).Cmp(rat(delta)) > 0 {
		eps = math.Nextafter(eps, 0)
	}
	m, err := noise.NewGridLaplace(noise.GridLaplaceOptions{Epsilon: eps, Sensitivity: delta, Source: s.src})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return m, nil
}

func (s secureNoise) Gaussian(sigma, delta float64) (Mechanism, error) {
	if !(sigma > 0) || !(delta > 0) || math.IsInf(sigma, 1) || math.IsInf(delta, 1) {
		return nil, fmt.Errorf("%w: Gaussian node noise needs finite σ > 0 and sensitivity > 0 (got σ=%v, Δ=%v)", ErrInvalid, sigma, delta)
	}
	// The grid step grows with σ (g ≈ σ·2⁻⁴⁰), so paying for it by
	// enlarging σ converges only while g stays well below Δ.
	if sigma/delta > 0x1p36 {
		return nil, fmt.Errorf("%w: Gaussian node σ/Δ = %v, must be ≤ 2^36 for the grid mechanism (its grid step would approach the sensitivity): the privacy asked for is far stronger than any use needs", ErrInvalid, sigma/delta)
	}
	// Find σ′ with (Δ + g(σ′))·σ ≤ Δ·σ′ exactly. g grows with σ′ only at
	// powers of two, so a few rounds settle it.
	s2 := sigma
	for range 8 {
		m, err := noise.NewGridGaussian(noise.GridGaussianOptions{Sigma: s2, Sensitivity: delta, Source: s.src})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		lhs := new(big.Rat).Add(rat(delta), rat(m.Granularity()))
		lhs.Mul(lhs, rat(sigma))
		need := new(big.Rat).Quo(lhs, rat(delta)) // σ(Δ + g)/Δ
		if rat(s2).Cmp(need) >= 0 {
			return m, nil
		}
		f, _ := need.Float64()
		s2 = math.Nextafter(f, math.Inf(1))
	}
	return nil, fmt.Errorf("%w: no grid Gaussian scale found for σ=%v, Δ=%v", ErrInvalid, sigma, delta)
}

func rat(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }
