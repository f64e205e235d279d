package counting

import (
	"fmt"

	"github.com/dpbandit/dpbandit/privacy"
)

// Privacy returns the counter's guarantee for its whole output stream (all
// Capacity prefix sums, whichever estimate is used), computed from its own
// parameters:
//
//   - Laplace: pure ε (the Epsilon option);
//   - Gaussian, continuous noise: μ-GDP, μ = √L·Δ/σ;
//   - Gaussian, discrete noise: ρ-zCDP, ρ = LΔ²/(2σ²).
//
// The neighbouring relation is event-level substitution (one leaf moves by
// at most Δ). Paper is nil: the tree papers state the same guarantee for the
// same noise (the textbook sizing of docs/accountant.md §2.5 has ⌈log₂T⌉+1 levels, which equals
// L for T = 2ᵏ and is one more, hence more noise for the same ε, otherwise).
// A policy that runs several counters composes their reports.
func (c *Counter) Privacy() privacy.Report {
	est := "plain prefix sums (popcount(t) nodes)"
	if c.gls {
		est = "Honaker's streaming GLS estimate (Honaker 2015; post-processing of the released nodes, no privacy cost)"
	}
	common := fmt.Sprintf("Binary tree mechanism (Dwork–Naor–Pitassi–Rothblum 2010; Chan–Shi–Song 2011; "+
		"Mishra–Thakurta 2015 §2.1), docs/accountant.md §2.5: capacity T = %d, L = ⌊log₂T⌋+1 = %d levels; "+
		"one leaf lies in at most L released nodes and moves by at most Δ = %g under event-level substitution, "+
		"so the released nodes have ℓ₁ sensitivity LΔ and ℓ₂ sensitivity √L·Δ. Output: %s.",
		c.capacity, c.levels, c.delta, est)
	r := privacy.Report{Neighbouring: privacy.EventLevel}
	switch c.kind {
	case kindLaplace:
		r.Mechanism = fmt.Sprintf("binary tree counter, Laplace nodes (T=%d)", c.capacity)
		r.Certified = privacy.Guarantee{Notion: privacy.NotionPure, Value: c.eps}
		r.Derivation = common + fmt.Sprintf(" Node noise Lap(b), b = LΔ/ε = %g, gives ε = %g pure DP "+
			"(Laplace mechanism on the ℓ₁ sensitivity LΔ; DNPR10, CSS11).", c.scale, c.eps)
		if c.discrete {
			r.Derivation += " Nodes are released by the discrete Laplace on a power-of-two grid (CKS20 Alg. 2), " +
				"with the grid rounding paid for in the scale."
		}
	case kindGaussian:
		if c.discrete {
			r.Mechanism = fmt.Sprintf("binary tree counter, discrete Gaussian nodes (T=%d)", c.capacity)
			r.Certified = privacy.Guarantee{Notion: privacy.NotionZCDP, Value: c.rho}
			r.Derivation = common + fmt.Sprintf(" Node noise: discrete Gaussian on a power-of-two grid with σ = %g "+
				"(rounding paid for in the scale); each node is Δ²/(2σ²)-zCDP (CKS20 Thm 4) and the L nodes of a "+
				"leaf compose to ρ = LΔ²/(2σ²) = %g zCDP. The discrete Gaussian is not exactly GDP, so ρ is certified "+
				"and converted to (ε, δ) with CKS20 Cor 13 (docs/accountant.md §2.4).", c.scale, c.rho)
		} else {
			r.Mechanism = fmt.Sprintf("binary tree counter, Gaussian nodes (T=%d)", c.capacity)
			r.Certified = privacy.Guarantee{Notion: privacy.NotionGDP, Value: c.mu}
			r.Derivation = common + fmt.Sprintf(" Node noise N(0, σ²), σ = %g: a Gaussian mechanism with ℓ₂ "+
				"sensitivity √L·Δ, exactly μ-GDP with μ = √L·Δ/σ = %g (Dong–Roth–Su 2022), equivalently "+
				"ρ = LΔ²/(2σ²) = %g zCDP; GDP converts to (ε, δ) exactly (docs/accountant.md §2.1).", c.scale, c.mu, c.rho)
		}
	}
	return r
}

// Rho returns the counter's zCDP ρ = LΔ²/(2σ²) (Gaussian counters; 0 for
// Laplace). It holds for continuous and discrete noise alike.
func (c *Counter) Rho() float64 { return c.rho }

// Mu returns the counter's GDP μ = √L·Δ/σ (Gaussian counters; 0 for
// Laplace). It is certified only for continuous noise ([Counter.Privacy]).
func (c *Counter) Mu() float64 { return c.mu }

// Epsilon returns the counter's pure-DP ε (Laplace counters; 0 for
// Gaussian).
func (c *Counter) Epsilon() float64 { return c.eps }
