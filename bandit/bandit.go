// Package bandit holds the contracts between policies and the things that run
// them (the simulator, the reproductions, the decision service). Policies live
// in mab (K-armed) and linear (contextual); runners import them only through
// these interfaces and the Descriptor registry entries.
package bandit

import (
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/privacy"
)

// Policy is a K-armed bandit policy. Select returns the next arm in [0, K)
// using the policy's own randomness; Update feeds back the reward of the arm
// that was played, which the caller guarantees lies in [0, 1]. Neither method
// allocates. A Policy is not safe for concurrent use.
type Policy interface {
	Select() int
	Update(arm int, reward float64)
}

// Contextual is a contextual policy: it chooses among candidate feature
// vectors (the slice index is returned) and learns from the chosen vector's
// reward. Candidates are owned by the caller and are not retained.
type Contextual interface {
	Select(candidates [][]float64) int
	Update(x []float64, reward float64)
}

// Private is implemented by every policy and mechanism that states a privacy
// guarantee. Non-private policies return privacy.NotPrivate.
type Private interface {
	Privacy() privacy.Report
}

// Setting is the public information a policy is built for: the number of
// arms (or the feature dimension for contextual policies) and the horizon.
type Setting struct {
	K       int // number of arms (K-armed) or candidates per round (contextual)
	Horizon int // T; policies that are not anytime require it
	Dim     int // feature dimension, contextual policies only
}

// Rand is the randomness a policy draws from. In simulation it is a seeded
// PCG stream; in the service it wraps a ChaCha8 source seeded from
// crypto/rand (docs/privacy-model.md rule 4).
type Rand = *rand.Rand

// Metered is implemented by policies whose privacy cost per step is a
// function of public history only (the released actions), so a privacy
// filter can charge it before the step runs (docs/accountant.md §2.6, conditions
// (a)–(c)). NextCost is the cost of the next Select (or of the next release,
// for batched policies); it is zero when the next step reads no data.
type Metered interface {
	NextCost() privacy.Guarantee
}

// Propensities is implemented by policies that can state the distribution
// their next Select draws from: SelectProbs writes into out (length K for a
// K-armed policy, len(candidates) for a contextual one; candidates is nil
// for K-armed policies) the probability that Select, called now with these
// candidates, returns each index. Logged with the decision, the chosen
// index's probability is what inverse-propensity off-policy evaluation needs.
//
// Deterministic rules (UCB indices, round-robin starts) are exact: the
// chosen index gets 1, with Select's own tie-breaking. Randomised ones
// (Thompson sampling) are estimated from draws independent draws of the
// same rule on r, and SelectProbs returns draws; it returns 0 when out is
// exact. The estimate of a probability p has standard error
// sqrt(p(1−p)/draws) ≤ 0.5/sqrt(draws). SelectProbs changes neither the
// policy's state nor its own random stream.
//
// Privacy (docs/privacy-model.md rule 2): a private policy implements Propensities only
// when SelectProbs reads nothing but released state (a published DP
// snapshot) and public inputs, so that the probabilities are
// post-processing with no privacy cost. Probabilities computed from raw
// reward sums (TS-Gaussian's posterior, for instance) are not DP outputs,
// and such policies do not implement it.
type Propensities interface {
	SelectProbs(candidates [][]float64, out []float64, draws int, r Rand) int
}

// EstimateProbs fills out with the frequencies of draw() over draws calls
// (draws ≥ 1): the Monte Carlo estimate behind SelectProbs for randomised
// policies. It returns draws.
func EstimateProbs(out []float64, draws int, draw func() int) int {
	if draws < 1 {
		panic("bandit: EstimateProbs needs at least one draw")
	}
	clear(out)
	for range draws {
		out[draw()]++
	}
	inv := 1 / float64(draws)
	for i := range out {
		out[i] *= inv
	}
	return draws
}

// PointMass sets out to probability 1 at index i: the SelectProbs of a
// deterministic rule. It returns 0 (exact).
func PointMass(out []float64, i int) int {
	clear(out)
	out[i] = 1
	return 0
}
