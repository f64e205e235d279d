package counting

import (
	"fmt"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/noise"
)

// Mechanism releases one tree node: Release(x) returns the node's exact sum
// x plus noise, in whatever representation the mechanism needs (a secure
// mechanism snaps x to its grid first). The counter calls Release exactly
// once per node and keeps the result (docs/privacy-model.md rule 5).
//
// Contract: Release must be at least as private, for inputs that differ by at
// most the sensitivity the mechanism was built for, as the continuous
// mechanism with the scale it was built for (Lap(b) or N(0, σ²)); a grid
// mechanism pays for its rounding itself (docs/accountant.md pitfall 11). The counter
// never calls Release concurrently.
type Mechanism interface {
	Release(x float64) float64
}

// Noise builds the node mechanism of a counter, from the scale and the
// per-node sensitivity the counter computed from its own options. Making the
// counter ask for the scale, instead of taking a ready-made sampler, means a
// sampler cannot be mis-calibrated against the privacy the counter reports.
type Noise interface {
	// Laplace returns a mechanism adding Laplace noise of scale b to values
	// of sensitivity delta (so each node is (delta/b)-DP).
	Laplace(b, delta float64) (Mechanism, error)
	// Gaussian returns a mechanism adding Gaussian noise of standard
	// deviation sigma to values of sensitivity delta (so each node is
	// delta²/(2σ²)-zCDP).
	Gaussian(sigma, delta float64) (Mechanism, error)
	// Discrete reports whether the mechanisms release exact discrete noise
	// on a grid (the serving samplers). A Gaussian counter reports μ-GDP for
	// continuous noise and ρ-zCDP for discrete noise (see [NewGaussian]).
	Discrete() bool
}

// SimNoise returns the simulation noise on r: continuous Laplace and
// Gaussian draws from noise.Laplace and noise.Gaussian (one 64-bit word and
// a Log, or one ziggurat normal, per node; no allocation).
//
// Privacy: simulation only. The node values are rounded floats, so releasing
// them is attackable (Mironov 2012; docs/privacy-model.md rule 4): the service
// must use [SecureNoise]. r must not be used concurrently by anything else
// while the counter adds.
func SimNoise(r *rand.Rand) Noise { return simNoise{r: r} }

type simNoise struct{ r *rand.Rand }

func (s simNoise) Discrete() bool { return false }

func (s simNoise) Laplace(b, delta float64) (Mechanism, error) {
	if s.r == nil {
		return nil, fmt.Errorf("%w: SimNoise needs a non-nil *rand.Rand", ErrInvalid)
	}
	if !(b > 0) || !(delta > 0) {
		return nil, fmt.Errorf("%w: Laplace node noise needs b > 0 and sensitivity > 0 (got b=%v, Δ=%v)", ErrInvalid, b, delta)
	}
	return simLaplace{r: s.r, b: b}, nil
}

func (s simNoise) Gaussian(sigma, delta float64) (Mechanism, error) {
	if s.r == nil {
		return nil, fmt.Errorf("%w: SimNoise needs a non-nil *rand.Rand", ErrInvalid)
	}
	if !(sigma > 0) || !(delta > 0) {
		return nil, fmt.Errorf("%w: Gaussian node noise needs σ > 0 and sensitivity > 0 (got σ=%v, Δ=%v)", ErrInvalid, sigma, delta)
	}
	return simGaussian{r: s.r, sigma: sigma}, nil
}

type simLaplace struct {
	r *rand.Rand
	b float64
}

func (m simLaplace) Release(x float64) float64 { return x + noise.Laplace(m.r, m.b) }

type simGaussian struct {
	r     *rand.Rand
	sigma float64
}

func (m simGaussian) Release(x float64) float64 { return x + noise.Gaussian(m.r, m.sigma) }
