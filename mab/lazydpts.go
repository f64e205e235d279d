package mab

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// LazyDPTS is Lazy-DP-TS of Hu & Hegde, "Near-optimal Thompson sampling-based
// algorithms for differentially private stochastic bandits", UAI 2022
// (PMLR 180:844–852), Algorithm 2; also in arXiv:2102.07929v3 (Hu, Huang,
// Mehta & Hegde). A comparator in Hu et al. App E.2 (docs/pure-dp-epochs.md §1.12; docs/reproductions.md E9).
//
// # Algorithm
//
// The estimator is the one of Anytime-Lazy-UCB ([LazyUCB]): pull each arm
// once (μ̃_j = x + Lap(1/ε), O_j = 1); afterwards each arm's rewards are
// buffered and, when the buffer holds 2^{r_j+1} of them, released once as
// μ̃_j = (ΣΨ_j + Lap(1/ε))/|Ψ_j| with O_j = |Ψ_j|, and dropped. In round t
// every arm draws
//
//	μ_j = clip(μ̃_j + c·log₂ t/(ε·O_j), 0, 1),
//	θ_j ~ Beta(μ_j·O_j + 1, (1 − μ_j)·O_j + 1)
//
// and the argmax is pulled (ties to the lowest index). c = 3 in the paper
// (Alg 2, line 7: max{0, min{μ̃ + 3·log(t)/(ε·O_j), 1}}), whose log is
// base 2: "log(x) is the base-2 logarithm of x and ln(x) is the base-e
// logarithm of x" (§3, Notation). That published form is the default; the
// parameter logbase = e (2.718281828459045) gives the natural-log variant
// 3·ln t/(ε·O_j), which this code used before the paper's text was
// available (an offset smaller by the factor ln 2 ≈ 0.693; regret only,
// privacy is unchanged).
//
// What was verified: the abstract (PMLR page, through the search tool)
// confirms the two ingredients, "reshape the posterior distribution in an
// optimistic way" and "dropping observations". A detailed public summary of
// the UAI paper (read through the search tool) gives exactly the offset
// 3·log t/(ε·O_j), the clipping of μ̃ + offset to [0, 1], the Beta(α̃+1, β̃+1)
// posterior with α̃ = μ·O, β̃ = (1−μ)·O, one Lap(1/ε) per epoch and epochs of
// 1, 2, 4, … observations; it agrees with the public implementations. The
// paper's text (Alg 2 and §3) confirms all of it and fixes the base of the
// log (base 2). The constant c is a parameter (default 3).
//
// # Privacy (docs/privacy-model.md; docs/pure-dp-epochs.md §1.12)
//
// ε-DP, event-level; paper ε (Hu & Hegde Thm 3), certified ε: each reward
// enters exactly one Laplace release (sensitivity 1 on the epoch sum, or the
// initial x + Lap(1/ε)); releases read disjoint rewards (parallel
// composition; the arm and epoch of round τ are fixed by earlier releases);
// the Beta draws and the argmax depend only on released values and public
// counts (post-processing). This holds for the whole stream at any horizon,
// so a privacy filter charges ε once: NextCost is ε before the first Select
// and 0 afterwards (bandit.Metered; the charge is part of the saved state).
//
// Serving: with Grid set every release is the snapped discrete Laplace on a
// power-of-two grid (noise.GridLaplace; Mironov, CCS 2012; Canonne, Kamath &
// Steinke, NeurIPS 2020), which pays for the snapping itself, so the
// certified ε is unchanged; it reads the policy's generator, and a released
// μ̃ is kept and never redrawn after a restore. The Beta draws of Select are
// fresh sampling randomness that is never stored. Without Grid
// (simulation) the releases are the continuous Laplace draws, as before.
//
// Complexity: Select is K Beta draws (two Gamma draws each) and an argmax;
// Update O(1). No allocation after construction in simulation (a grid
// release allocates a few big.Int words). Not safe for concurrent use.
type LazyDPTS struct {
	opts LazyDPTSOptions
	lazyCore
	th []float64
}

// LazyDPTSOptions configures Lazy-DP-TS.
type LazyDPTSOptions struct {
	K       int     // number of arms, ≥ 1
	Epsilon float64 // pure-DP budget ε, in [1e-6, ∞)
	C       float64 // optimism offset constant c ≥ 0 (paper: 3)
	// LogBase is the base of the logarithm in the offset c·log(t)/(ε·O),
	// in [2, 10]; 0 selects 2 (the published log₂); math.E gives the
	// natural-log variant.
	LogBase float64
	// Grid releases with the secure snapped discrete Laplace (serving);
	// false uses continuous Laplace draws (simulation).
	Grid bool
}

// NewLazyDPTS returns Lazy-DP-TS, drawing its Laplace and Beta samples
// from r.
func NewLazyDPTS(opts LazyDPTSOptions, r *rand.Rand) (*LazyDPTS, error) {
	const name = "lazy-dp-ts"
	if err := pureCheckK(name, opts.K); err != nil {
		return nil, err
	}
	if err := pureCheckEpsilon(name, opts.Epsilon); err != nil {
		return nil, err
	}
	if err := pureCheckNonNeg(name, "c", opts.C); err != nil {
		return nil, err
	}
	var err error
	if opts.LogBase, err = pureCheckLogBase(name, opts.LogBase); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New(name + ": needs a non-nil *rand.Rand")
	}
	return &LazyDPTS{opts: opts, lazyCore: newLazyCore(opts.K, opts.Grid, r), th: make([]float64, opts.K)}, nil
}

// Select returns the next arm: the initial pulls in index order, then the
// argmax of the optimistic Beta samples.
func (p *LazyDPTS) Select() int {
	p.st.Meter.selected()
	if a, ok := p.st.initArm(); ok {
		return a
	}
	return p.sample(p.r, p.th)
}

// sample draws every arm's optimistic Beta sample on r, in index order,
// and returns the argmax (ties to the lowest index, as pureArgmax); th, if
// not nil, receives the samples. It reads the released means μ̃, the
// public epoch sizes O and the round count only, and changes nothing.
func (p *LazyDPTS) sample(r *rand.Rand, th []float64) int {
	best, bv := 0, 0.0
	for j := range p.st.O {
		o := float64(p.st.O[j])
		mu := min(max(p.st.Mu[j]+p.offset(j), 0), 1)
		v := noise.Beta(r, mu*o+1, (1-mu)*o+1)
		if th != nil {
			th[j] = v
		}
		if j == 0 || v > bv {
			best, bv = j, v
		}
	}
	return best
}

// SelectProbs states the distribution of the next Select
// (bandit.Propensities): during the initial pulls the point mass on the
// next arm (exact, 0 returned); afterwards the frequencies of draws
// independent repetitions of Select's rule (the optimistic Beta samples and
// their argmax) on r, and it returns draws. It changes neither the state
// nor the policy's generator.
//
// Privacy: the rule reads the released epoch means μ̃ (each a Laplace
// release), the public epoch sizes O and the round count, never the
// running epochs' buffers, so the probabilities are post-processing of
// released state and cost no privacy (docs/privacy-model.md rule 2).
func (p *LazyDPTS) SelectProbs(_ [][]float64, out []float64, draws int, r *rand.Rand) int {
	out = out[:p.opts.K]
	if a, ok := p.st.initArm(); ok {
		return bandit.PointMass(out, a)
	}
	return bandit.EstimateProbs(out, draws, func() int { return p.sample(r, nil) })
}

// offset is arm j's optimism offset at round t = steps + 1 (Hu & Hegde
// 2022, Alg 2, line 7): c·log(t)/(ε·O_j), log in base LogBase (2: the
// published form).
func (p *LazyDPTS) offset(j int) float64 {
	lt := pureLog(p.opts.LogBase, float64(p.st.Steps+1))
	return p.opts.C * lt / (p.opts.Epsilon * float64(p.st.O[j]))
}

// Update records the reward of the arm just played. It panics on a reward
// outside [0, 1] (the caller's contract).
func (p *LazyDPTS) Update(arm int, reward float64) {
	p.st.add(arm, reward, p.opts.Epsilon, p.noise)
}

// NextCost is the privacy filter's charge for the next Select: the
// certified ε before the first Select, 0 afterwards.
func (p *LazyDPTS) NextCost() privacy.Guarantee { return p.st.Meter.next(p.opts.Epsilon) }

// Privacy reports ε-DP (paper and certified).
func (p *LazyDPTS) Privacy() privacy.Report { return lazyDPTSReport(p.opts.Epsilon, p.opts.Grid) }

func lazyDPTSReport(eps float64, grid bool) privacy.Report {
	return pureReport("lazy-dp-ts", eps, eps,
		"ε-DP (event-level) for the whole reward stream, at any horizon (Hu & Hegde, UAI 2022, Alg 2, Thm 3): "+
			"each reward enters exactly one Laplace release (its epoch's sum + Lap(1/ε), sensitivity 1), releases read "+
			"disjoint rewards (parallel composition), and the optimistic Beta draws use released values and fresh "+
			"randomness only (post-processing); paper and certified values coincide. "+pureNoiseWords(grid, "kept noisy value"))
}

// MarshalJSON encodes the options and the learning state (not the
// generator). The epoch buffers are raw statistics (docs/privacy-model.md rule 2).
func (p *LazyDPTS) MarshalJSON() ([]byte, error) {
	return json.Marshal(pureJSON[LazyDPTSOptions, lazyArms]{Options: p.opts, State: p.st})
}

// UnmarshalJSON restores a state written by MarshalJSON without redrawing
// any released value, keeping the policy's generator. A state that does not
// fit its options, or whose options differ from those the policy was built
// with, is refused.
func (p *LazyDPTS) UnmarshalJSON(b []byte) error {
	return lazyUnmarshal("lazy-dp-ts", p, p.opts, b, NewLazyDPTS)
}

func init() {
	register(bandit.Descriptor{
		Name:    "lazy-dp-ts",
		Summary: "Lazy-DP-TS: optimistic Beta TS on forgetful Laplace epochs, ε-DP (comparator)",
		Source:  "Hu & Hegde, UAI 2022, Alg 2 (docs/pure-dp-epochs.md §1.12)",
		Private: true,
		Params: []bandit.Param{
			pureEpsilonParam,
			{Name: "c", Default: 3, Min: 0, Max: math.Inf(1), Doc: "optimism offset c·log t/(ε·O) (paper: 3)"},
			pureLogBaseParam("base of log in the offset: 2 is the published form (Hu & Hegde 2022 write log for log₂); 2.718281828459045 (e) is the natural-log variant 3·ln t/(ε·O), a smaller offset"),
			gridParam,
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewLazyDPTS(LazyDPTSOptions{K: s.K, Epsilon: p["epsilon"], C: p["c"], LogBase: p["logbase"], Grid: p["grid"] == 1}, r)
		},
		Report:    pureGridReport("lazy-dp-ts", lazyDPTSReport),
		Calibrate: pureCalibrator("lazy-dp-ts"),
		Serving:   pureServing,
	})
}
