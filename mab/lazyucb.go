package mab

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// LazyUCB is Anytime-Lazy-UCB of Hu, Huang & Mehta, "Optimal Algorithms for
// Private Online Learning in a Stochastic Environment", arXiv:2102.07929
// (v1–v2; v3 is "Near-Optimal Algorithms for Differentially Private Online
// Learning in a Stochastic Environment" with Hegde), the UCB algorithm with
// "forgetful" per-arm doubling epochs; a comparator in Ou et al. App D and
// Hu et al. App E.2 ([OU] App D; docs/pure-dp-epochs.md §1.12; docs/reproductions.md E4, E9).
//
// # Algorithm
//
// Pull each arm once: μ̃_j = x + Lap(1/ε), O_j = 1, r_j = 0. Then in every
// round t, pull
//
//	argmax_j  μ̃_j + sqrt(c1·log₂ t / O_j) + c2·log₂ t / (ε·O_j)
//
// (ties to the lowest index), append the reward to arm j's buffer Ψ_j, and
// when |Ψ_j| = 2^{r_j+1} release μ̃_j = (ΣΨ_j + Lap(1/ε))/|Ψ_j|, set
// O_j = |Ψ_j|, r_j += 1 and empty Ψ_j. Observations older than the last
// completed epoch are dropped ("forgetfulness"). The index is re-computed in
// every round, so the algorithm is anytime (no T).
//
// What was verified: the skeleton (per-arm doubling epochs 1, 2, 4, …, one
// Laplace draw per epoch sum, each observation used once, the index
// re-selected every round) agrees between the public implementations and the
// detailed summary of Hu & Hegde (UAI 2022), whose Lazy-DP-TS shares it; the
// abstract of arXiv:2102.07929 (read through the search tool) confirms
// "forgetfulness, i.e. decisions are made based on a certain amount of newly
// obtained observations". The exact constants of the two width terms could
// NOT be checked: the stored copies of the arXiv pages hold only the
// abstract. So c1 and c2 are parameters, with defaults chosen to be no less
// optimistic than the sources suggest: c1 = 2 (UCB1's Hoeffding width
// sqrt(2 ln t/O)) and c2 = 3 (the Laplace-tail offset 3·log t/(ε·O) that the
// same authors use for Lazy-DP-TS). The widths are post-processing and do
// not affect privacy.
//
// Assumption (log base): the widths read log as log₂, the convention of
// the same first author's Lazy-DP-TS paper one year later (Hu & Hegde, UAI
// 2022, §3, Notation: "log(x) is the base-2 logarithm of x and ln(x) is the
// base-e logarithm of x"), since no available source states this index.
// In natural-log units the defaults are c1 = 2/ln 2 ≈ 2.885 and
// c2 = 3/ln 2 ≈ 4.328. The parameter logbase = e (2.718281828459045) gives
// the natural-log variant sqrt(c1·ln t/O) + c2·ln t/(ε·O), the reading this
// code used before; the choice changes regret only, never privacy.
//
// # Privacy (docs/privacy-model.md; docs/pure-dp-epochs.md §1.12)
//
// ε-DP, event-level, for the whole stream at any horizon; paper ε,
// certified ε (tight for this construction):
// a changed round τ changes one observation of arm a_τ (the same arm in both
// worlds, since a_τ depends on earlier releases only). That observation
// enters exactly one release, the Laplace-noised sum of its epoch (or the
// initial pull's x + Lap(1/ε)), whose sensitivity is 1, so that release is
// ε-DP; all other releases read disjoint observations (parallel
// composition), and the index and argmax are post-processing. A buffer cut
// off by the horizon is never released. A privacy filter therefore charges
// ε once: NextCost is ε before the first Select and 0 afterwards
// (bandit.Metered; the charge is part of the saved state).
//
// Serving: with Grid set every release (the initial x and each epoch sum)
// is the snapped discrete Laplace on a power-of-two grid (noise.GridLaplace;
// Mironov, CCS 2012; Canonne, Kamath & Steinke, NeurIPS 2020), which pays
// for the snapping itself, so the certified ε is unchanged; it reads the
// policy's generator, and a released μ̃ is kept and never redrawn after a
// restore. Without Grid (simulation) the draws are the continuous Laplace
// ones, as before.
//
// Complexity: Select O(K), Update O(1). No allocation after construction
// in simulation (a grid release allocates a few big.Int words). Not safe
// for concurrent use.
type LazyUCB struct {
	opts LazyUCBOptions
	lazyCore
	idx []float64
}

// LazyUCBOptions configures Anytime-Lazy-UCB.
type LazyUCBOptions struct {
	K       int     // number of arms, ≥ 1
	Epsilon float64 // pure-DP budget ε, in [1e-6, ∞)
	C1      float64 // sampling-width constant c1 ≥ 0 (default 2)
	C2      float64 // privacy-width constant c2 ≥ 0 (default 3)
	// LogBase is the base of the logarithm in both widths, in [2, 10]; 0
	// selects 2 (the log₂ reading, an assumption: see the type); math.E
	// gives the natural-log variant.
	LogBase float64
	// Grid releases with the secure snapped discrete Laplace (serving);
	// false uses continuous Laplace draws (simulation).
	Grid bool
}

// NewLazyUCB returns Anytime-Lazy-UCB, drawing its Laplace noise from r.
func NewLazyUCB(opts LazyUCBOptions, r *rand.Rand) (*LazyUCB, error) {
	const name = "anytime-lazy-ucb"
	if err := pureCheckK(name, opts.K); err != nil {
		return nil, err
	}
	if err := pureCheckEpsilon(name, opts.Epsilon); err != nil {
		return nil, err
	}
	if err := pureCheckNonNeg(name, "c1", opts.C1); err != nil {
		return nil, err
	}
	if err := pureCheckNonNeg(name, "c2", opts.C2); err != nil {
		return nil, err
	}
	var err error
	if opts.LogBase, err = pureCheckLogBase(name, opts.LogBase); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New(name + ": needs a non-nil *rand.Rand")
	}
	return &LazyUCB{opts: opts, lazyCore: newLazyCore(opts.K, opts.Grid, r), idx: make([]float64, opts.K)}, nil
}

// Select returns the next arm: the initial pulls in index order, then the
// largest index.
func (p *LazyUCB) Select() int {
	p.st.Meter.selected()
	if a, ok := p.st.initArm(); ok {
		return a
	}
	for j := range p.idx {
		p.idx[j] = p.index(j)
	}
	return pureArgmax(p.idx)
}

// SelectProbs puts probability 1 on the arm the next Select returns (the
// initial pulls in index order, then the largest index with Select's
// tie-breaking): the rule is deterministic (bandit.Propensities). It returns
// 0 (exact) and changes nothing (Select's index buffer and its filter charge
// included).
//
// Privacy: the index reads the released epoch means μ̃, the public epoch
// sizes O and the round count, never the running epochs' buffers, so the
// probabilities are post-processing of released state (docs/privacy-model.md rule 2).
func (p *LazyUCB) SelectProbs(_ [][]float64, out []float64, _ int, _ *rand.Rand) int {
	out = out[:p.opts.K]
	if a, ok := p.st.initArm(); ok {
		return bandit.PointMass(out, a)
	}
	best, bv := 0, 0.0
	for j := range p.st.O {
		if v := p.index(j); j == 0 || v > bv { // pureArgmax's rule
			best, bv = j, v
		}
	}
	return bandit.PointMass(out, best)
}

// index is arm j's index at round t = steps + 1:
// μ̃_j + sqrt(c1·log t/O_j) + c2·log t/(ε·O_j), log in base LogBase.
func (p *LazyUCB) index(j int) float64 {
	lt := pureLog(p.opts.LogBase, float64(p.st.Steps+1))
	o := float64(p.st.O[j])
	return p.st.Mu[j] + math.Sqrt(p.opts.C1*lt/o) + p.opts.C2*lt/(p.opts.Epsilon*o)
}

// Update records the reward of the arm just played. It panics on a reward
// outside [0, 1] (the caller's contract).
func (p *LazyUCB) Update(arm int, reward float64) {
	p.st.add(arm, reward, p.opts.Epsilon, p.noise)
}

// NextCost is the privacy filter's charge for the next Select: the
// certified ε before the first Select, 0 afterwards.
func (p *LazyUCB) NextCost() privacy.Guarantee { return p.st.Meter.next(p.opts.Epsilon) }

// Privacy reports ε-DP (paper and certified).
func (p *LazyUCB) Privacy() privacy.Report { return lazyUCBReport(p.opts.Epsilon, p.opts.Grid) }

func lazyUCBReport(eps float64, grid bool) privacy.Report {
	return pureReport("anytime-lazy-ucb", eps, eps,
		"ε-DP (event-level) for the whole reward stream, at any horizon (Hu, Huang & Mehta 2021, Anytime-Lazy-UCB): "+
			"each reward enters exactly one Laplace release (its epoch's sum + Lap(1/ε), sensitivity 1), releases read "+
			"disjoint rewards (parallel composition), and the UCB index is post-processing; paper and certified values "+
			"coincide. The index reads log as log₂ (an assumption, from the same first author's Lazy-DP-TS, Hu & Hegde "+
			"UAI 2022, since no available source states this index); it changes regret only, not privacy. "+
			pureNoiseWords(grid, "kept noisy value"))
}

// MarshalJSON encodes the options and the learning state (not the
// generator). The epoch buffers are raw statistics (docs/privacy-model.md rule 2).
func (p *LazyUCB) MarshalJSON() ([]byte, error) {
	return json.Marshal(pureJSON[LazyUCBOptions, lazyArms]{Options: p.opts, State: p.st})
}

// UnmarshalJSON restores a state written by MarshalJSON without redrawing
// any released value, keeping the policy's generator. A state that does not
// fit its options, or whose options differ from those the policy was built
// with, is refused.
func (p *LazyUCB) UnmarshalJSON(b []byte) error {
	return lazyUnmarshal("anytime-lazy-ucb", p, p.opts, b, NewLazyUCB)
}

func init() {
	register(bandit.Descriptor{
		Name:    "anytime-lazy-ucb",
		Summary: "Anytime-Lazy-UCB: UCB on forgetful doubling epochs with Laplace noise, ε-DP (comparator)",
		Source:  "Hu, Huang & Mehta, arXiv:2102.07929, Anytime-Lazy-UCB (docs/pure-dp-epochs.md §1.12)",
		Private: true,
		Params: []bandit.Param{
			pureEpsilonParam,
			{Name: "c1", Default: 2, Min: 0, Max: math.Inf(1), Doc: "sampling width sqrt(c1·log t/O) (unverified constant)"},
			{Name: "c2", Default: 3, Min: 0, Max: math.Inf(1), Doc: "privacy width c2·log t/(ε·O) (unverified constant)"},
			pureLogBaseParam("base of log in both widths: 2 reads log as log₂ (an assumption, from the same author's Lazy-DP-TS, Hu & Hegde UAI 2022); 2.718281828459045 (e) is the natural-log variant"),
			gridParam,
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewLazyUCB(LazyUCBOptions{K: s.K, Epsilon: p["epsilon"], C1: p["c1"], C2: p["c2"], LogBase: p["logbase"], Grid: p["grid"] == 1}, r)
		},
		Report:    pureGridReport("anytime-lazy-ucb", lazyUCBReport),
		Calibrate: pureCalibrator("anytime-lazy-ucb"),
		Serving:   pureServing,
	})
}

// lazyCore is what Anytime-Lazy-UCB and Lazy-DP-TS hold in common: the
// generator, the release noise drawing from it and the forgetful estimator.
type lazyCore struct {
	r     *rand.Rand
	noise *pureNoiseCache
	st    lazyArms
}

func newLazyCore(k int, grid bool, r *rand.Rand) lazyCore {
	return lazyCore{r: r, noise: newPureNoise(grid, r), st: newLazyArms(k)}
}

func (c *lazyCore) core() *lazyCore { return c }

// lazyUnmarshal is the UnmarshalJSON of a policy built on lazyCore with
// options own: it decodes b (written by the policy's MarshalJSON), refuses
// options other than own when p was built (K ≥ 1), builds a fresh policy
// from the options on p's generator (a placeholder when p has none), checks
// the estimator against them and makes *p that policy with the decoded
// state. Nothing is redrawn.
func lazyUnmarshal[O comparable, P any, PP interface {
	*P
	core() *lazyCore
}](name string, p PP, own O, b []byte, build func(O, *rand.Rand) (PP, error)) error {
	j, q, err := pureDecode[lazyArms](name, b, pureGen(p.core().r), build)
	if err != nil {
		return err
	}
	if err := pureSameOptions(name, j.Options, own, len(p.core().st.O) > 0); err != nil {
		return err
	}
	if err := j.State.check(len(q.core().st.O)); err != nil { // K, as built from the options
		return fmt.Errorf("%s: decoding state: %w", name, err)
	}
	*p = *q
	p.core().st = j.State
	return nil
}

// lazyArms is the forgetful estimator shared by Anytime-Lazy-UCB and
// Lazy-DP-TS (Hu, Huang, Mehta & Hegde, arXiv:2102.07929v3): per arm, the
// private mean μ̃ of the last completed epoch and that epoch's size O; the
// epochs have sizes 1 (the initial pull), 2, 4, 8, …, and each epoch sum is
// released once with Lap(1/ε). Only Mu and O are released values; Buf holds
// raw rewards of the running epoch.
type lazyArms struct {
	Mu       []float64 `json:"mu"`       // released μ̃ of the last completed epoch
	O        []int     `json:"o"`        // its size (0 until the initial pull)
	R        []int     `json:"r"`        // completed epochs after the initial pull
	Buf      []float64 `json:"buf"`      // sum of the running epoch (not released)
	BufN     []int     `json:"buf_n"`    // its length
	Pulls    []int     `json:"pulls"`    // total pulls (public)
	Init     int       `json:"init"`     // arms initialised so far (in index order)
	Steps    int       `json:"steps"`    // rounds played
	Releases int       `json:"releases"` // Laplace releases so far
	Meter    pureMeter `json:"meter"`    // whether the filter charged ε
}

func newLazyArms(k int) lazyArms {
	return lazyArms{
		Mu: make([]float64, k), O: make([]int, k), R: make([]int, k),
		Buf: make([]float64, k), BufN: make([]int, k), Pulls: make([]int, k),
	}
}

// initArm returns the next arm of the initial round-robin, if any.
func (s *lazyArms) initArm() (int, bool) {
	if s.Init < len(s.O) {
		return s.Init, true
	}
	return 0, false
}

// add feeds one reward of arm a and releases an epoch mean when the epoch
// is full, through n (pureRelease: x + Lap(1/ε) in simulation, the grid
// mechanism when serving).
func (s *lazyArms) add(a int, x, eps float64, n *pureNoiseCache) {
	pureCheckReward(x)
	s.Steps++
	s.Pulls[a]++
	if s.O[a] == 0 { // the initial pull is an epoch of size 1
		s.Mu[a] = pureRelease(n, x, 1, eps)
		s.O[a] = 1
		s.Init++
		s.Releases++
		return
	}
	s.Buf[a] += x
	s.BufN[a]++
	if m := s.BufN[a]; m == 1<<(s.R[a]+1) {
		// Laplace mechanism on the epoch sum (sensitivity 1), as a mean
		// (m is a power of two, so the division is exact).
		s.Mu[a] = pureRelease(n, s.Buf[a], 1, eps) / float64(m)
		s.O[a] = m
		s.R[a]++
		s.Buf[a], s.BufN[a] = 0, 0
		s.Releases++
	}
}

// check refuses a state that the estimator with k arms cannot reach.
func (s *lazyArms) check(k int) error {
	if err := pureLens(k, map[string]int{"mu": len(s.Mu), "o": len(s.O), "r": len(s.R), "buf": len(s.Buf),
		"buf_n": len(s.BufN), "pulls": len(s.Pulls)}); err != nil {
		return err
	}
	if s.Init < 0 || s.Init > k {
		return fmt.Errorf("init = %d is outside [0, K = %d]", s.Init, k)
	}
	if err := pureCounts(s.Steps, s.Pulls); err != nil {
		return err
	}
	rel := s.Init
	for a := range k {
		if !pureFinite(s.Mu[a]) || !pureFinite(s.Buf[a]) {
			return fmt.Errorf("arm %d: a released mean or a sum is not a finite number", a)
		}
		r, bn := s.R[a], s.BufN[a]
		if r < 0 || r > 60 || bn < 0 || bn >= 1<<(r+1) || s.Buf[a] < 0 || s.Buf[a] > float64(bn) {
			return fmt.Errorf("arm %d: epoch %d, buffer of %d rewards summing to %v: inconsistent (negative, or beyond the epoch)", a, r, bn, s.Buf[a])
		}
		if a < s.Init {
			if s.O[a] != 1<<r || s.Pulls[a] != 1<<(r+1)-1+bn {
				return fmt.Errorf("arm %d: O = %d and %d pulls do not fit epoch %d with %d buffered rewards", a, s.O[a], s.Pulls[a], r, bn)
			}
		} else if s.O[a] != 0 || r != 0 || bn != 0 || s.Pulls[a] != 0 || s.Mu[a] != 0 {
			return fmt.Errorf("arm %d is not initialised (init = %d) but has a state", a, s.Init)
		}
		rel += r
	}
	if s.Releases != rel {
		return fmt.Errorf("releases = %d, but the epochs account for %d", s.Releases, rel)
	}
	return nil
}

func pureCheckNonNeg(name, param string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 1) {
		return fmt.Errorf("%s: parameter %s = %v is outside its valid range [0, ∞) (finite)", name, param, v)
	}
	return nil
}
