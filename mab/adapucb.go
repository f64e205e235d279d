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

// AdaPUCB is AdaP-UCB of Azize & Basu, "When Privacy Meets Partial
// Information: A Refined Analysis of Differentially Private Bandits",
// NeurIPS 2022: Algorithm 1 (the generic ε-global-DP framework) with the
// UCB index of Eq. (7) (docs/pure-dp-epochs.md §1.12).
//
// # Algorithm
//
// Pull each arm once: μ̃_a = x + Lap(1/ε), n_a = N_a = 1. Then in episodes
// ℓ = 1, 2, …: at the episode's first round t_ℓ pick
//
//	A_ℓ = argmax_a μ̃_a + sqrt(α·ln(2t_ℓ)/(2n_a)) + α·ln(t_ℓ)/(ε·n_a)
//
// (ties to the lowest index) and play it N_{A_ℓ} times in a row, so that
// its pull count doubles. At the end of the episode the arm's private mean
// is replaced by the mean of that episode's rewards only plus
// Lap(1/(ε·len)), n_A = len, N_A += len. α > 3 in the regret bound; the
// paper's experiments use α = 3.1 (the default).
//
// What was verified: I read the paper text (the anonymised NeurIPS
// submission, stored in a public repository found through the search tool):
// Algorithm 1 (lines 3–7: initialise, t_ℓ = t+1, argmax of the index at
// t_ℓ − 1, play A_ℓ until T_A(t) = 2T_A(t_ℓ − 1)), Lemma 1 (private mean
// with Lap(1/((j−i)ε)) on disjoint sub-sequences), Eq. (7) with
// ½N_a(t_ℓ − 1) = the last episode's length n_a, and §5 (α = 3.1). All agree
// with the public implementations. One reading choice: after the initial
// pull the last "episode" of an arm has length 1 = N_a, not ½N_a; n_a is
// always the actual number of rewards behind μ̃_a, which is what Lemma 1's
// noise scale and the index need. The initial single-pull means are noised
// (the public Nash-regret copy that stores them without noise is a bug).
//
// # Privacy (docs/privacy-model.md; docs/pure-dp-epochs.md §1.12)
//
// ε-DP, event-level; paper ε (Azize & Basu Thm 6/7), certified ε: a changed
// round τ's observation belongs to exactly one episode of one arm (fixed by
// the earlier releases), whose mean has sensitivity 1/len and gets
// Lap(1/(ε·len)), hence ε-DP; releases read disjoint rewards (Lemma 1,
// parallel composition) and the index, the argmax and the commitment are
// post-processing. An episode cut off by the horizon is never released.
// This holds for the whole stream at any horizon, so a privacy filter
// charges ε once: NextCost is ε before the first Select and 0 afterwards
// (bandit.Metered; the charge is part of the saved state).
//
// The release is computed as (Σ episode rewards + Lap(1/ε))/len, the
// Laplace mechanism on the episode sum (sensitivity 1); len is a power of
// two, so this is exactly the mean plus Lap(1/(ε·len)) above, draw for
// draw, and every release has the same scale and sensitivity.
//
// Serving: with Grid set every release is the snapped discrete Laplace on a
// power-of-two grid (noise.GridLaplace; Mironov, CCS 2012; Canonne, Kamath &
// Steinke, NeurIPS 2020), which pays for the snapping itself, so the
// certified ε is unchanged; it reads the policy's generator, and a released
// mean is kept and never redrawn after a restore. Without Grid
// (simulation) the releases are the continuous Laplace draws, as before.
//
// Complexity: Select is O(K) at an episode start and O(1) inside an
// episode; Update O(1). No allocation after construction in simulation (a
// grid release allocates a few big.Int words). Not safe for concurrent use.
type AdaPUCB struct {
	opts  AdaPUCBOptions
	r     *rand.Rand
	noise *pureNoiseCache // release noise on r
	st    adapState
	idx   []float64
}

// AdaPUCBOptions configures AdaP-UCB.
type AdaPUCBOptions struct {
	K       int     // number of arms, ≥ 1
	Epsilon float64 // pure-DP budget ε, in [1e-6, ∞)
	Alpha   float64 // index parameter α ≥ 0 (the regret bound needs α > 3; paper 3.1)
	// Grid releases with the secure snapped discrete Laplace (serving);
	// false uses continuous Laplace draws (simulation).
	Grid bool
}

type adapState struct {
	Mu      []float64 `json:"mu"`      // released private mean of the last episode
	N       []int     `json:"n_last"`  // length of that episode (rewards behind Mu)
	Total   []int     `json:"n_total"` // N_a: pulls counted by the doubling rule
	Pulls   []int     `json:"pulls"`   // all pulls (public)
	Init    int       `json:"init"`    // arms initialised so far
	Cur     int       `json:"cur"`     // arm of the running episode (−1: none)
	Len     int       `json:"len"`     // length of the running episode
	Left    int       `json:"left"`    // pulls left in it
	Sum     float64   `json:"sum"`     // its reward sum (not released)
	Steps   int       `json:"steps"`   // rounds played
	Episode int       `json:"episode"` // episodes started
	Meter   pureMeter `json:"meter"`   // whether the filter charged ε
}

// NewAdaPUCB returns AdaP-UCB, drawing its Laplace noise from r.
func NewAdaPUCB(opts AdaPUCBOptions, r *rand.Rand) (*AdaPUCB, error) {
	const name = "adap-ucb"
	if err := pureCheckK(name, opts.K); err != nil {
		return nil, err
	}
	if err := pureCheckEpsilon(name, opts.Epsilon); err != nil {
		return nil, err
	}
	if err := pureCheckNonNeg(name, "alpha", opts.Alpha); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New(name + ": needs a non-nil *rand.Rand")
	}
	k := opts.K
	return &AdaPUCB{opts: opts, r: r, noise: newPureNoise(opts.Grid, r), idx: make([]float64, k), st: adapState{
		Mu: make([]float64, k), N: make([]int, k), Total: make([]int, k), Pulls: make([]int, k), Cur: -1,
	}}, nil
}

// Select returns the next arm: the initial pulls in index order, then the
// arm of the running episode, starting a new episode when the last one is
// complete.
func (p *AdaPUCB) Select() int {
	st := &p.st
	st.Meter.selected()
	if st.Init < len(st.Mu) {
		return st.Init
	}
	if st.Left == 0 {
		for j := range p.idx {
			p.idx[j] = p.index(j)
		}
		st.Cur = pureArgmax(p.idx)
		st.Len = st.Total[st.Cur]
		st.Left = st.Len
		st.Sum = 0
		st.Episode++
	}
	return st.Cur
}

// index is arm j's index (Eq. 7) at the next episode's first round
// t_ℓ = steps + 1: μ̃_j + sqrt(α·ln(2t_ℓ)/(2n_j)) + α·ln(t_ℓ)/(ε·n_j).
func (p *AdaPUCB) index(j int) float64 {
	st := &p.st
	tl := float64(st.Steps + 1) // t_ℓ, the episode's first round
	a := p.opts.Alpha
	n := float64(st.N[j])
	return st.Mu[j] + math.Sqrt(a*math.Log(2*tl)/(2*n)) + a*math.Log(tl)/(p.opts.Epsilon*n)
}

// SelectProbs puts probability 1 on the arm the next Select returns: the
// next initial pull, the running episode's arm, or, when no episode is
// running, the arm of largest index with Select's tie-breaking (the arm
// the next Select commits to). The rule is deterministic
// (bandit.Propensities); it returns 0 (exact) and changes nothing (no
// episode is started, no filter charge recorded).
//
// Privacy: the rule reads the released episode means μ̃, the public
// episode lengths, the schedule and the round count, never the running
// episode's reward sum, so the probabilities are post-processing of
// released state (docs/privacy-model.md rule 2).
func (p *AdaPUCB) SelectProbs(_ [][]float64, out []float64, _ int, _ *rand.Rand) int {
	st := &p.st
	out = out[:p.opts.K]
	switch {
	case st.Init < len(st.Mu):
		return bandit.PointMass(out, st.Init)
	case st.Left > 0:
		return bandit.PointMass(out, st.Cur)
	}
	best, bv := 0, 0.0
	for j := range st.Mu {
		if v := p.index(j); j == 0 || v > bv { // pureArgmax's rule
			best, bv = j, v
		}
	}
	return bandit.PointMass(out, best)
}

// Update records the reward of the arm just played. It panics on a reward
// outside [0, 1] (the caller's contract).
func (p *AdaPUCB) Update(arm int, reward float64) {
	pureCheckReward(reward)
	st := &p.st
	st.Steps++
	st.Pulls[arm]++
	if st.Init < len(st.Mu) && arm == st.Init && st.N[arm] == 0 {
		st.Mu[arm] = pureRelease(p.noise, reward, 1, p.opts.Epsilon)
		st.N[arm], st.Total[arm] = 1, 1
		st.Init++
		return
	}
	if st.Left == 0 || arm != st.Cur {
		// No episode open (Update without Select), or a reward of another
		// arm (in the service several decisions can be out before their
		// rewards arrive, so a late reward of an earlier episode's arm can
		// come in during this one): the reward is not read.
		return
	}
	st.Sum += reward
	st.Left--
	if st.Left == 0 {
		l := float64(st.Len)
		// Laplace mechanism on the episode sum (sensitivity 1), as a mean:
		// the same draw as the mean + Lap(1/(ε·len)), len a power of two.
		st.Mu[st.Cur] = pureRelease(p.noise, st.Sum, 1, p.opts.Epsilon) / l
		st.N[st.Cur] = st.Len
		st.Total[st.Cur] += st.Len
		st.Sum = 0
	}
}

// NextCost is the privacy filter's charge for the next Select: the
// certified ε before the first Select, 0 afterwards.
func (p *AdaPUCB) NextCost() privacy.Guarantee { return p.st.Meter.next(p.opts.Epsilon) }

// Privacy reports ε-DP (paper and certified).
func (p *AdaPUCB) Privacy() privacy.Report { return adapReport(p.opts.Epsilon, p.opts.Grid) }

func adapReport(eps float64, grid bool) privacy.Report {
	return pureReport("adap-ucb", eps, eps,
		"ε-DP (event-level) for the whole reward stream, at any horizon (Azize & Basu, NeurIPS 2022, Alg 1 + Eq. (7), "+
			"Thm 6/7): each reward enters exactly one released episode mean (sensitivity 1/len, Laplace noise of scale "+
			"1/(ε·len)), episodes read disjoint rewards (Lemma 1, parallel composition), and the index and the "+
			"commitment are post-processing; paper and certified values coincide. "+pureNoiseWords(grid, "kept noisy value"))
}

// MarshalJSON encodes the options and the learning state (not the
// generator). The running episode's sum is a raw statistic (docs/privacy-model.md
// rule 2).
func (p *AdaPUCB) MarshalJSON() ([]byte, error) {
	return json.Marshal(pureJSON[AdaPUCBOptions, adapState]{Options: p.opts, State: p.st})
}

// UnmarshalJSON restores a state written by MarshalJSON without redrawing
// any released mean, keeping the policy's generator. A state that does not
// fit its options, or whose options differ from those the policy was built
// with, is refused.
func (p *AdaPUCB) UnmarshalJSON(b []byte) error {
	const name = "adap-ucb"
	j, q, err := pureDecode[adapState](name, b, pureGen(p.r), NewAdaPUCB)
	if err != nil {
		return err
	}
	if err := pureSameOptions(name, j.Options, p.opts, p.opts.K > 0); err != nil {
		return err
	}
	st := j.State
	if err := st.check(j.Options.K); err != nil {
		return fmt.Errorf("%s: decoding state: %w", name, err)
	}
	*p = *q
	p.st = st
	return nil
}

// check refuses a state that AdaP-UCB with k arms cannot reach.
func (st *adapState) check(k int) error {
	if err := pureLens(k, map[string]int{"mu": len(st.Mu), "n_last": len(st.N), "n_total": len(st.Total), "pulls": len(st.Pulls)}); err != nil {
		return err
	}
	if st.Init < 0 || st.Init > k {
		return fmt.Errorf("init = %d is outside [0, K = %d]", st.Init, k)
	}
	if err := pureCounts(st.Steps, st.Pulls); err != nil {
		return err
	}
	if st.Episode < 0 {
		return fmt.Errorf("episode = %d is negative", st.Episode)
	}
	for a := range k {
		if !pureFinite(st.Mu[a]) {
			return fmt.Errorf("arm %d: the released mean is not a finite number", a)
		}
		n, tot := st.N[a], st.Total[a]
		if a < st.Init {
			if n < 1 || tot < n || tot > st.Pulls[a] {
				return fmt.Errorf("arm %d: last episode %d, total %d, pulls %d: inconsistent", a, n, tot, st.Pulls[a])
			}
		} else if n != 0 || tot != 0 || st.Mu[a] != 0 {
			return fmt.Errorf("arm %d is not initialised (init = %d) but has a state", a, st.Init)
		}
	}
	if st.Cur < -1 || st.Cur >= k || st.Len < 0 || st.Left < 0 || st.Left > st.Len || (st.Left > 0 && st.Cur < 0) {
		return fmt.Errorf("running episode (arm %d, length %d, %d left) is inconsistent with K = %d", st.Cur, st.Len, st.Left, k)
	}
	if st.Left > 0 && st.Len != st.Total[st.Cur] {
		return fmt.Errorf("running episode of arm %d has length %d, want its total %d", st.Cur, st.Len, st.Total[st.Cur])
	}
	if !pureFinite(st.Sum) || st.Sum < 0 || st.Sum > float64(st.Len-st.Left) {
		return fmt.Errorf("running episode sum %v is outside [0, %d]", st.Sum, st.Len-st.Left)
	}
	return nil
}

func init() {
	register(bandit.Descriptor{
		Name:    "adap-ucb",
		Summary: "AdaP-UCB: UCB with committed doubling episodes and Laplace episode means, ε-DP (comparator)",
		Source:  "Azize & Basu, NeurIPS 2022, Alg 1 + Eq. 7 (docs/pure-dp-epochs.md §1.12)",
		Private: true,
		Params: []bandit.Param{
			pureEpsilonParam,
			{Name: "alpha", Default: 3.1, Min: 0, Max: math.Inf(1), Doc: "index parameter α (regret bound needs α > 3)"},
			gridParam,
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewAdaPUCB(AdaPUCBOptions{K: s.K, Epsilon: p["epsilon"], Alpha: p["alpha"], Grid: p["grid"] == 1}, r)
		},
		Report:    pureGridReport("adap-ucb", adapReport),
		Calibrate: pureCalibrator("adap-ucb"),
		Serving:   pureServing,
	})
}
