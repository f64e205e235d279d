package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// UCB1 is the upper-confidence-bound policy of Auer, Cesa-Bianchi & Fischer,
// "Finite-time Analysis of the Multiarmed Bandit Problem", Machine Learning
// 47 (2002), Fig. 1; the non-private comparator of [HU] and [MT] Thm 2.
// docs/baselines.md §1.1 (Auer, Cesa-Bianchi & Fischer 2002).
//
// # Algorithm
//
// Per arm the policy stores the reward sum S_a and pull count n_a. While an
// arm has n_a = 0 it plays the lowest-index such arm (one pull per arm).
// Afterwards it plays argmax_a S_a/n_a + w_a(t), ties to the lowest index,
// where t = Σ_a n_a is the number of rewards observed so far and the width is
//
//   - WidthAuer (width=0): w = sqrt(2 ln t / n_a), Auer et al. / [MT] §3;
//   - WidthChapelleLi (width=1): w = sqrt(max(S_a, 0)·ln t)/n_a + ln t/n_a,
//     the interval of Chapelle & Li (2011) that [MT] §5 used in its
//     experiments ("the 1.1 width" of docs/reproductions.md E10 ([MT] Fig 1)).
//
// Per-arm factors (1/sqrt(n), sqrt(S)/n, 1/n) are cached in Update, so Select
// costs one logarithm, one square root and K multiply-adds.
//
// # Privacy
//
// None (privacy.NotPrivate): the index is a deterministic function of the
// rewards, so one changed reward can flip an arm choice with probability 1.
//
// Complexity: Select O(K), Update O(1), no allocation. Not safe for
// concurrent use.
type UCB1 struct {
	opts   UCB1Options
	st     UCB1State
	unseen int
	total  int
	idx    []ucbArm
}

// UCB1Width selects the confidence width of UCB1.
type UCB1Width int

// UCB1 widths.
const (
	WidthAuer       UCB1Width = 0 // sqrt(2 ln t / n)
	WidthChapelleLi UCB1Width = 1 // sqrt(max(S,0) ln t)/n + ln t/n ([MT] §5)
)

// UCB1Options configures UCB1.
type UCB1Options struct {
	K     int       // number of arms, ≥ 1
	Width UCB1Width // WidthAuer or WidthChapelleLi
}

// UCB1State is the learning state of UCB1 (its JSON form).
type UCB1State struct {
	Sum   []float64 `json:"sum"`   // S_a
	Pulls []int     `json:"pulls"` // n_a
}

// ucbArm caches an arm's index as mean + x·u + y·v, where (x, y) depend on t
// only: (sqrt(2 ln t), 0) with u = 1/sqrt(n) for WidthAuer, and
// (sqrt(ln t), ln t) with u = sqrt(max(S,0))/n, v = 1/n for WidthChapelleLi.
type ucbArm struct{ mean, u, v float64 }

// NewUCB1 returns UCB1 for the options. UCB1 is deterministic: r is accepted
// for a uniform constructor signature, is never used and may be nil. It
// returns an error naming the parameter when K < 1 or the width is not 0 or 1.
func NewUCB1(opts UCB1Options, _ *rand.Rand) (*UCB1, error) {
	if err := checkK("ucb1", opts.K); err != nil {
		return nil, err
	}
	if opts.Width != WidthAuer && opts.Width != WidthChapelleLi {
		return nil, fmt.Errorf("ucb1: parameter width = %d must be 0 (sqrt(2 ln t/n)) or 1 (Chapelle–Li, [MT] §5)", opts.Width)
	}
	p := &UCB1{opts: opts, idx: make([]ucbArm, opts.K),
		st: UCB1State{Sum: make([]float64, opts.K), Pulls: make([]int, opts.K)}}
	p.refresh()
	return p, nil
}

func (p *UCB1) refresh() {
	p.unseen, p.total = 0, 0
	for i := range p.idx {
		p.setArm(i)
		if p.st.Pulls[i] == 0 {
			p.unseen++
		}
		p.total += p.st.Pulls[i]
	}
}

func (p *UCB1) setArm(i int) {
	n := float64(p.st.Pulls[i])
	if n == 0 {
		return
	}
	s := p.st.Sum[i]
	if p.opts.Width == WidthAuer {
		p.idx[i] = ucbArm{mean: s / n, u: 1 / math.Sqrt(n)}
	} else {
		p.idx[i] = ucbArm{mean: s / n, u: math.Sqrt(max(s, 0)) / n, v: 1 / n}
	}
}

// Select returns the lowest-index unplayed arm while there is one, and the
// arm of largest upper confidence bound afterwards.
func (p *UCB1) Select() int {
	if p.unseen > 0 {
		for i, n := range p.st.Pulls {
			if n == 0 {
				return i
			}
		}
	}
	lt := math.Log(float64(p.total))
	var x, y float64
	if p.opts.Width == WidthAuer {
		x = math.Sqrt(2 * lt)
	} else {
		x, y = math.Sqrt(lt), lt
	}
	best, bv := 0, math.Inf(-1)
	for i, a := range p.idx {
		if v := a.mean + x*a.u + y*a.v; v > bv {
			best, bv = i, v
		}
	}
	return best
}

// SelectProbs puts probability 1 on the arm Select returns now: the rule is
// deterministic (bandit.Propensities). It returns 0 (exact).
func (p *UCB1) SelectProbs(_ [][]float64, out []float64, _ int, _ *rand.Rand) int {
	return bandit.PointMass(out[:p.opts.K], p.Select())
}

// Update records reward x ∈ [0, 1] for arm. It panics on an arm outside
// [0, K) or a reward outside [0, 1] (caller's error).
func (p *UCB1) Update(arm int, x float64) {
	checkReward("ucb1", arm, p.opts.K, x)
	if p.st.Pulls[arm] == 0 {
		p.unseen--
	}
	p.st.Sum[arm] += x
	p.st.Pulls[arm]++
	p.total++
	p.setArm(arm)
}

// Privacy reports no guarantee.
func (p *UCB1) Privacy() privacy.Report { return ucb1Report() }

func ucb1Report() privacy.Report {
	return privacy.NotPrivate("ucb1", "UCB1 is deterministic given the rewards: one changed reward can change an arm choice "+
		"with probability 1, so no DP guarantee holds (Auer, Cesa-Bianchi & Fischer 2002; docs/baselines.md §1.1).")
}

// State returns a copy of the learning state.
func (p *UCB1) State() UCB1State {
	return UCB1State{Sum: append([]float64(nil), p.st.Sum...), Pulls: append([]int(nil), p.st.Pulls...)}
}

// MarshalJSON encodes the options and learning state.
func (p *UCB1) MarshalJSON() ([]byte, error) { return marshalSnapshot("ucb1", p.opts, p.st) }

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewUCB1 with the same options.
func (p *UCB1) UnmarshalJSON(data []byte) error {
	st, err := unmarshalSnapshot[UCB1Options, UCB1State](data, "ucb1", p.opts)
	if err != nil {
		return err
	}
	if _, err := checkSums("ucb1", p.opts.K, st.Sum, st.Pulls); err != nil {
		return err
	}
	p.st = st
	p.refresh()
	return nil
}

var (
	_ bandit.Policy    = (*UCB1)(nil)
	_ bandit.Private   = (*UCB1)(nil)
	_ json.Marshaler   = (*UCB1)(nil)
	_ json.Unmarshaler = (*UCB1)(nil)
)

func init() {
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: "not private"},
		Name:    "ucb1",
		Summary: "UCB1 (non-private); width=1 selects the Chapelle–Li interval used by [MT] §5",
		Source:  "Auer, Cesa-Bianchi & Fischer 2002, Fig. 1; [MT] §5 width (docs/baselines.md §1.1)",
		Private: false,
		Params: []bandit.Param{
			{Name: "width", Default: 0, Min: 0, Max: 1, Integer: true,
				Doc: "0: sqrt(2 ln t/n) (Auer et al.); 1: sqrt(max(S,0) ln t)/n + ln t/n (Chapelle–Li, [MT] §5)"},
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewUCB1(UCB1Options{K: s.K, Width: UCB1Width(satInt(p["width"]))}, r)
		},
		Report: func(s bandit.Setting, _ bandit.Params) (privacy.Report, error) {
			if err := checkK("ucb1", s.K); err != nil {
				return privacy.Report{}, err
			}
			return ucb1Report(), nil
		},
	})
}
