package mab

import (
	"fmt"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/privacy"
)

// Serving the pure-DP epoch policies (DP-SE, Anytime-Lazy-UCB, Lazy-DP-TS,
// DP-TS, AdaP-UCB, [MT]'s private UCB and TS).
//
// These policies keep and reuse noisy statistics (an epoch's noisy sum, a
// tree node) and are ε-DP for the whole stream at any horizon, because each
// reward enters one released statistic (or one leaf per tree level, paid in
// the tree's ε). Two things make them servable:
//
//   - Noise. Every kept noisy value is released through a counting.Noise
//     mechanism: in simulation the continuous Laplace draws on the policy's
//     generator (counting.SimNoise, the same draws as before), and with the
//     parameter grid = 1 (forced by the service) the snapped discrete
//     Laplace on a power-of-two grid (counting.SecureNoise, noise.GridLaplace),
//     which pays for its snapping by enlarging its scale, so the released
//     value is at least as private as the continuous Laplace asked for
//     (Mironov 2012; Canonne, Kamath & Steinke 2020). The draws read the
//     policy's generator: in the service that is a ChaCha8 stream keyed from
//     crypto/rand, and during Update the stream keyed by the seed stored
//     with the rewards, so a replay after a crash draws the same values.
//   - Accounting. A filter can charge such a policy only once: its whole
//     certified ε at the first Select (before any release: the first
//     release is in an Update after a Select), and 0 for every later step,
//     because the analysis composes the releases in parallel. pureMeter
//     keeps whether the charge happened in the policy's state, so a restart
//     neither charges again nor forgets that it did.
//
// Decisions between releases use the released values and fresh sampling
// randomness only (post-processing).

// gridParam is the serving switch of the pure-DP epoch policies.
var gridParam = bandit.Param{Name: "grid", Default: 0, Min: 0, Max: 1, Integer: true,
	Doc:     "1: release every kept noisy value with the secure snapped discrete Laplace on a grid (the service forces it); 0: continuous Laplace draws (simulation)",
	Serving: true}

// pureServing is the Serving entry of the pure-DP epoch policies.
var pureServing = &bandit.Serving{
	Why:    "every kept noisy value (epoch sum or tree node) is released once with the secure discrete Laplace on a grid (grid=1) from the policy's strong generator; decisions use released values and fresh sampling only; the certified ε is charged once",
	Params: bandit.Params{"grid": 1},
}

// pureNoise returns the release noise of a pure-DP epoch policy: the
// secure grid mechanisms on r's stream when grid is set (serving), else
// the continuous simulation samplers on r.
func pureNoise(grid bool, r *rand.Rand) counting.Noise {
	if grid {
		return counting.SecureNoise(r)
	}
	return counting.SimNoise(r)
}

// pureRelease releases x, of sensitivity sens, with ε-DP Laplace noise of
// scale pureLapScale(sens, eps) through n: x + Lap(sens/ε) in simulation,
// the snapped discrete Laplace with serving noise. It panics on parameters
// the policy's constructor should have refused (programmer error).
func pureRelease(n counting.Noise, x, sens, eps float64) float64 {
	m, err := n.Laplace(pureLapScale(sens, eps), sens)
	if err != nil {
		panic(fmt.Sprintf("mab: release noise (sensitivity %v, ε %v): %v", sens, eps, err))
	}
	return m.Release(x)
}

// pureMeter is the filter accounting of a pure-DP epoch policy: its
// certified ε at the first Select, 0 afterwards (see above). It is part of
// the policy's serialised state.
type pureMeter struct {
	Charged bool `json:"charged,omitempty"`
}

// next is NextCost for a policy certifying eps.
func (m *pureMeter) next(eps float64) privacy.Guarantee {
	if m.Charged {
		return privacy.Guarantee{Notion: privacy.NotionPure}
	}
	return privacy.Guarantee{Notion: privacy.NotionPure, Value: eps}
}

// selected records that a Select ran (and so was charged, when metered).
func (m *pureMeter) selected() { m.Charged = true }

// pureNoiseWords states, for a privacy report, how a pure-DP epoch
// policy's kept values are released (what names them: "kept noisy value",
// "tree node").
func pureNoiseWords(grid bool, what string) string {
	if grid {
		return "Noise: every " + what + " is released once with the snapped discrete Laplace on a power-of-two grid " +
			"(Mironov 2012; Canonne, Kamath & Steinke 2020), whose scale is enlarged to pay for the snapping, so each " +
			"release is at least as private as the continuous Laplace it replaces and the certified ε is unchanged; " +
			"released values are kept and never redrawn, and a privacy filter charges the certified ε once, before the " +
			"first decision."
	}
	return "Noise: continuous Laplace draws (simulation only: floating-point noise is attackable, Mironov 2012; " +
		"a service runs grid = 1, the secure discrete Laplace)."
}

// pureNoiseCache is a pure-DP epoch policy's release noise (pureNoise)
// with its last mechanism kept: consecutive releases with the same scale
// and sensitivity reuse one mechanism, so a simulation release does not
// allocate. The mechanisms hold no state of their own (each Release reads
// the generator afresh), so reuse draws exactly what a new mechanism
// would.
type pureNoiseCache struct {
	n    counting.Noise
	b, d float64
	m    counting.Mechanism
}

// newPureNoise returns the release noise of a pure-DP epoch policy drawing
// from r: secure grid mechanisms when grid is set, else continuous draws.
func newPureNoise(grid bool, r *rand.Rand) *pureNoiseCache {
	return &pureNoiseCache{n: pureNoise(grid, r)}
}

// Laplace returns the Laplace mechanism of scale b for sensitivity d.
func (c *pureNoiseCache) Laplace(b, d float64) (counting.Mechanism, error) {
	if c.m != nil && b == c.b && d == c.d {
		return c.m, nil
	}
	m, err := c.n.Laplace(b, d)
	if err != nil {
		return nil, err
	}
	c.b, c.d, c.m = b, d, m
	return m, nil
}

// Gaussian returns the Gaussian mechanism (unused by the pure-DP policies).
func (c *pureNoiseCache) Gaussian(sigma, d float64) (counting.Mechanism, error) {
	return c.n.Gaussian(sigma, d)
}

// Discrete reports whether the releases are on a grid (serving noise).
func (c *pureNoiseCache) Discrete() bool { return c.n.Discrete() }
