package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// BetaTS is Beta–Bernoulli Thompson sampling, lecture notes of L. Wang,
// "Lecture 11: Thompson Sampling, Differential Privacy" ([LEC]) Algorithm 1
// (Agrawal & Goyal 2012; background in [MT] §4). docs/baselines.md §1.2.
//
// # Algorithm
//
// Prior Beta(1, 1) per arm; state S_a (successes) and F_a (failures). Each
// round draw θ_a ~ Beta(S_a+1, F_a+1) for every arm and play the argmax
// (ties, of probability zero, to the lowest index). A reward r ∈ {0, 1} is
// counted directly; any other r ∈ [0, 1] is first turned into a coin
// r̃ ~ Bernoulli(r) drawn from the policy's generator ([LEC] Alg 1 line 5),
// which keeps the Beta posterior conjugate for rewards in [0, 1]. Beta draws
// are noise.Beta (two Marsaglia–Tsang Gamma draws).
//
// # Privacy
//
// None (privacy.NotPrivate; Agrawal & Goyal 2012; docs/baselines.md §1.2: no DP guarantee exists in the
// documents). A single draw is not even pure-DP: changing one reward moves
// Beta(S+1, F+1) to Beta(S+2, F), whose density ratio (F+1)/(S+1)·x/(1−x) is
// unbounded near x ∈ {0, 1}, and no (ε, δ) analysis of the composed policy is
// given in [LEC], [MT] or the other sources.
//
// Complexity: Select O(K) Beta draws, Update O(1), no allocation. Not safe
// for concurrent use.
type BetaTS struct {
	opts BetaTSOptions
	r    *rand.Rand
	st   BetaTSState
}

// BetaTSOptions configures Beta–Bernoulli TS.
type BetaTSOptions struct {
	K int // number of arms, ≥ 1
}

// BetaTSState is the learning state of Beta TS (its JSON form).
type BetaTSState struct {
	Successes []int `json:"successes"` // S_a
	Failures  []int `json:"failures"`  // F_a
}

// NewBetaTS returns Beta–Bernoulli TS for the options, drawing from r. It
// returns an error naming the parameter when K < 1 or r is nil.
func NewBetaTS(opts BetaTSOptions, r *rand.Rand) (*BetaTS, error) {
	if err := checkK("beta-ts", opts.K); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("beta-ts: random generator r must not be nil")
	}
	return &BetaTS{opts: opts, r: r, st: BetaTSState{Successes: make([]int, opts.K), Failures: make([]int, opts.K)}}, nil
}

// Select draws θ_a ~ Beta(S_a+1, F_a+1) for every arm and returns the argmax.
func (p *BetaTS) Select() int { return p.pick(p.r) }

// pick draws one posterior sample per arm from r and returns the argmax.
func (p *BetaTS) pick(r *rand.Rand) int {
	best, bv := 0, math.Inf(-1)
	f := p.st.Failures[:len(p.st.Successes)]
	for i, s := range p.st.Successes {
		if v := noise.Beta(r, float64(s+1), float64(f[i]+1)); v > bv {
			best, bv = i, v
		}
	}
	return best
}

// SelectProbs estimates the probability that Select returns each arm from
// draws posterior draws on r (bandit.Propensities). The policy is not
// private, so there is no privacy question.
func (p *BetaTS) SelectProbs(_ [][]float64, out []float64, draws int, r *rand.Rand) int {
	return bandit.EstimateProbs(out[:p.opts.K], draws, func() int { return p.pick(r) })
}

// Update records reward x ∈ [0, 1] for arm, through a Bernoulli(x) coin when
// x is not 0 or 1. It panics on an arm outside [0, K) or a reward outside
// [0, 1] (caller's error).
func (p *BetaTS) Update(arm int, x float64) {
	checkReward("beta-ts", arm, p.opts.K, x)
	success := x == 1
	if x != 0 && x != 1 {
		success = p.r.Float64() < x
	}
	if success {
		p.st.Successes[arm]++
	} else {
		p.st.Failures[arm]++
	}
}

// Privacy reports no guarantee.
func (p *BetaTS) Privacy() privacy.Report { return betaTSReport() }

func betaTSReport() privacy.Report {
	return privacy.NotPrivate("beta-ts", "No DP guarantee exists in the source documents (Agrawal & Goyal 2012; docs/baselines.md §1.2). One changed reward "+
		"moves Beta(S+1,F+1) to Beta(S+2,F), whose density ratio (F+1)/(S+1)·x/(1−x) is unbounded near 0 and 1, so a single "+
		"draw is not pure-DP, and no (ε,δ) analysis of the policy is given.")
}

// State returns a copy of the learning state.
func (p *BetaTS) State() BetaTSState {
	return BetaTSState{Successes: append([]int(nil), p.st.Successes...), Failures: append([]int(nil), p.st.Failures...)}
}

// MarshalJSON encodes the options and learning state (not the generator).
func (p *BetaTS) MarshalJSON() ([]byte, error) { return marshalSnapshot("beta-ts", p.opts, p.st) }

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewBetaTS with the same options; the generator is left as it is.
func (p *BetaTS) UnmarshalJSON(data []byte) error {
	st, err := unmarshalSnapshot[BetaTSOptions, BetaTSState](data, "beta-ts", p.opts)
	if err != nil {
		return err
	}
	if err := checkStateLen("beta-ts", p.opts.K, len(st.Successes), len(st.Failures)); err != nil {
		return err
	}
	for i := range st.Successes {
		if st.Successes[i] < 0 || st.Failures[i] < 0 {
			return fmt.Errorf("beta-ts: %w: arm %d has negative counts", errState, i)
		}
	}
	p.st = st
	return nil
}

var (
	_ bandit.Policy    = (*BetaTS)(nil)
	_ bandit.Private   = (*BetaTS)(nil)
	_ json.Marshaler   = (*BetaTS)(nil)
	_ json.Unmarshaler = (*BetaTS)(nil)
)

func init() {
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: "not private"},
		Name:    "beta-ts",
		Summary: "Beta–Bernoulli Thompson sampling, Beta(1,1) prior, Bernoulli coin for rewards in (0,1) (non-private)",
		Source:  "[LEC] Algorithm 1; Agrawal & Goyal 2012 (docs/baselines.md §1.2)",
		Private: false,
		New: func(s bandit.Setting, _ bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewBetaTS(BetaTSOptions{K: s.K}, r)
		},
		Report: func(s bandit.Setting, _ bandit.Params) (privacy.Report, error) {
			if err := checkK("beta-ts", s.K); err != nil {
				return privacy.Report{}, err
			}
			return betaTSReport(), nil
		},
	})
}
