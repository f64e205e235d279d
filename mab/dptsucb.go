package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// DefaultC0 is [HU]'s constant c0 = sqrt(2πe) ≈ 4.1327314 (docs/dp-ts-ucb.md §1.6).
var DefaultC0 = math.Sqrt(2 * math.Pi * math.E)

// DPTSUCB is DP-TS-UCB of Hu, Huang, Zhang, Lécuyer & Hegde, "Differentially
// Private Thompson Sampling meets UCB" (ICML 2025, [HU]), Algorithm 1.
// docs/dp-ts-ucb.md §1.6 ([HU] Alg 1).
//
// # Algorithm
//
// Inputs α ∈ [0, 1], the horizon T (the algorithm is not anytime; the
// analysis assumes T > e³) and c0 (default sqrt(2πe); docs/reproduction-decisions.md A10 explains
// why it is a parameter). The sampling budget is the real number
//
//	φ = c0 · T^{(1−α)/2} · (ln T)^{(3−α)/2}.
//
// Rounds 1..K pull arm 1..K once (data-independent); arm i's estimate is then
// μ̂ = X, n = 1, epoch r = 1, O = U = 0, h = φ, MAX = 0 (0, not −∞, as in
// the paper). In every later round, for each arm: if h_i ≥ 1 draw a fresh
// θ_i ~ N(μ̂_i, (ln T)^α/n_i), set h_i −= 1 and MAX_i = max(MAX_i, θ_i);
// otherwise θ_i = MAX_i (the "UCB phase"). Play argmax θ (ties to the lowest
// index); then O += 1, U += X, and when O = 2^r the epoch closes: μ̂ = U/2^r,
// n = 2^r, h = φ, MAX = 0, r += 1, O = U = 0 (arm-specific doubling epochs).
// Because h starts at the real φ and drops by 1, every estimate yields ⌊φ⌋
// fresh samples; the code counts draws against the integer ⌊φ⌋ instead of
// carrying the real h (h_i = φ − draws_i).
//
// # Privacy (docs/dp-ts-ucb.md §1.6; docs/reproduction-decisions.md A7, A11; docs/reproductions.md E6)
//
// Paper ([HU] Thm 4.4): η = sqrt(2φ/(ln T)^α) = sqrt(2c0·T^{(1−α)/2}·(ln
// T)^{1.5(1−α)})-GDP, valid. Certified: sqrt(⌊φ⌋/(ln T)^α)-GDP. Derivation:
//   - A neighbouring stream changes one observation X_τ(a_τ); a_τ does not
//     depend on it. By the epoch structure that observation enters exactly one
//     estimate μ̂ (of n = 2^{r} observations, or the n = 1 initial estimate,
//     whose observation is data even though its pull is not; A11).
//   - Each fresh sample from that estimate is a Gaussian mechanism with
//     sensitivity 1/n and s.d. sqrt((ln T)^α/n): η_s = 1/sqrt(n(ln T)^α) ≤
//     (ln T)^{−α/2}. At most ⌊φ⌋ samples are drawn per estimate.
//   - MAX and the UCB phase reuse those samples, and the argmax is taken over
//     them: post-processing. GDP composition of ⌊φ⌋ samples gives
//     sqrt(⌊φ⌋/(ln T)^α) for the whole run; the paper composes the UCB phase
//     "again" (×2) and uses the real φ (A7, A11). Thm 4.6 is not used (A7).
//
// NextCost uses per-record accounting (docs/accountant.md §2.6, last bullet): a
// record's loss so far is (draws from its estimate)·η_s², and NextCost² is
// the increase of the largest such loss that the next round would cause.
// Summed over a run it equals the final largest per-record loss, ≤ ⌊φ⌋/(ln
// T)^α. A global filter charging these costs therefore halts exactly when
// some record's individual GDP² would exceed the budget (individual GDP
// filter); charging the per-round maximum over arms instead would be valid
// but would count every arm's samples against one record.
//
// Complexity: Select O(K), Update O(1), no allocation. Not safe for
// concurrent use. Serving: the θ's are only compared (docs/privacy-model.md rule 4).
type DPTSUCB struct {
	opts   DPTSUCBOptions
	r      *rand.Rand
	budget int     // ⌊φ⌋ fresh samples per estimate
	lna    float64 // (ln T)^α
	st     DPTSUCBState
	sd     []float64 // sqrt((ln T)^α / n_i), cached
}

// DPTSUCBOptions configures DP-TS-UCB.
type DPTSUCBOptions struct {
	K       int     // number of arms, ≥ 1
	Horizon int     // T ≥ max(K, 21): T > e³ is assumed by [HU]
	Alpha   float64 // trade-off α ∈ [0, 1]; larger is more private
	C0      float64 // budget constant c0 > 0; [HU] uses DefaultC0
}

// DPTSUCBState is the learning state of DP-TS-UCB (its JSON form).
type DPTSUCBState struct {
	Rounds int          `json:"rounds"` // Select calls so far
	Arms   []DPTSUCBArm `json:"arms"`
	// PastLoss is the largest per-record GDP² loss of the closed estimates.
	PastLoss float64 `json:"past_loss"`
}

// DPTSUCBArm is one arm's state in [HU] Alg 1's notation.
type DPTSUCBArm struct {
	Mean   float64 `json:"mean"`   // μ̂_i of the current estimate
	N      int     `json:"n"`      // n_i, the estimate's size (0 before the initial pull)
	Epoch  int     `json:"epoch"`  // r_i
	O      int     `json:"o"`      // unprocessed observations O_i
	U      float64 `json:"u"`      // unprocessed sum U_i
	Draws  int     `json:"draws"`  // fresh samples drawn from the estimate (h_i = φ − Draws)
	Max    float64 `json:"max"`    // MAX_i
	Pulled int     `json:"pulled"` // total observations of the arm
}

// dptsucbPhi returns φ = c0·T^{(1−α)/2}·(ln T)^{(3−α)/2}.
func dptsucbPhi(T int, alpha, c0 float64) float64 {
	t := float64(T)
	lt := math.Log(t)
	return c0 * math.Pow(t, (1-alpha)/2) * math.Pow(lt, (3-alpha)/2)
}

// dptsucbValues returns the paper (Thm 4.4) and certified (A7) GDP values,
// before rounding up.
func dptsucbValues(T int, alpha, c0 float64) (paper, certified float64) {
	phi := dptsucbPhi(T, alpha, c0)
	lna := math.Pow(math.Log(float64(T)), alpha)
	return math.Sqrt(2 * phi / lna), math.Sqrt(math.Floor(phi) / lna)
}

func checkDPTSUCB(o DPTSUCBOptions) error {
	if err := checkK("dp-ts-ucb", o.K); err != nil {
		return err
	}
	if o.Horizon < 21 || o.Horizon < o.K {
		return fmt.Errorf("dp-ts-ucb: horizon T = %d must be ≥ max(K, 21) (the algorithm needs T in advance, one initial pull per arm, and T > e³)", o.Horizon)
	}
	if !(o.Alpha >= 0 && o.Alpha <= 1) {
		return fmt.Errorf("dp-ts-ucb: parameter alpha = %v must lie in [0, 1]", o.Alpha)
	}
	if !(o.C0 > 0) || math.IsInf(o.C0, 1) {
		return fmt.Errorf("dp-ts-ucb: parameter c0 = %v must be finite and > 0", o.C0)
	}
	if phi := dptsucbPhi(o.Horizon, o.Alpha, o.C0); phi > 1<<52 {
		return fmt.Errorf("dp-ts-ucb: sampling budget φ = %g is too large; lower c0 or T", phi)
	}
	return nil
}

// NewDPTSUCB returns DP-TS-UCB for the options, drawing from r. It returns an
// error naming the parameter and its valid range when K < 1,
// T < max(K, 21), α ∉ [0, 1], c0 ∉ (0, ∞) or r is nil.
func NewDPTSUCB(opts DPTSUCBOptions, r *rand.Rand) (*DPTSUCB, error) {
	if err := checkDPTSUCB(opts); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("dp-ts-ucb: random generator r must not be nil")
	}
	p := &DPTSUCB{opts: opts, r: r,
		budget: int(math.Floor(dptsucbPhi(opts.Horizon, opts.Alpha, opts.C0))),
		lna:    math.Pow(math.Log(float64(opts.Horizon)), opts.Alpha),
		sd:     make([]float64, opts.K),
		st:     DPTSUCBState{Arms: make([]DPTSUCBArm, opts.K)}}
	return p, nil
}

// Select pulls arm t during rounds t = 0..K−1 and afterwards returns the
// argmax of the fresh or reused (MAX) samples.
func (p *DPTSUCB) Select() int {
	t := p.st.Rounds
	p.st.Rounds++
	if t < p.opts.K {
		return t
	}
	best, bv := 0, math.Inf(-1)
	arms := p.st.Arms
	sd := p.sd[:len(arms)]
	for i := range arms {
		a := &arms[i]
		th := a.Max
		if a.N > 0 && a.Draws < p.budget {
			th = a.Mean + sd[i]*p.r.NormFloat64()
			a.Draws++
			if th > a.Max {
				a.Max = th
			}
		}
		if th > bv {
			best, bv = i, th
		}
	}
	return best
}

// Update records reward x ∈ [0, 1] for arm: the initial estimate on the first
// observation, otherwise into the open epoch, closing it at O = 2^r. It
// panics on an arm outside [0, K) or a reward outside [0, 1] (caller's error).
func (p *DPTSUCB) Update(arm int, x float64) {
	checkReward("dp-ts-ucb", arm, p.opts.K, x)
	a := &p.st.Arms[arm]
	a.Pulled++
	if a.N == 0 {
		*a = DPTSUCBArm{Mean: x, N: 1, Epoch: 1, Pulled: a.Pulled}
		p.sd[arm] = math.Sqrt(p.lna)
		return
	}
	a.O++
	a.U += x
	if a.O == 1<<a.Epoch {
		if l := float64(a.Draws) * p.eta2(a.N); l > p.st.PastLoss {
			p.st.PastLoss = l
		}
		a.N = a.O
		a.Mean = a.U / float64(a.N)
		a.Draws, a.Max = 0, 0
		a.Epoch++
		a.O, a.U = 0, 0
		p.sd[arm] = math.Sqrt(p.lna / float64(a.N))
	}
}

// eta2 is the GDP² of one fresh sample from an estimate of n observations:
// (1/n)² / ((ln T)^α/n) = 1/(n (ln T)^α).
func (p *DPTSUCB) eta2(n int) float64 { return 1 / (float64(n) * p.lna) }

// Privacy reports [HU] Thm 4.4's η and the certified sqrt(⌊φ⌋/(ln T)^α);
// both hold for any number of rounds.
func (p *DPTSUCB) Privacy() privacy.Report {
	return dptsucbReport(p.opts.Horizon, p.opts.Alpha, p.opts.C0)
}

// NextCost is the increase of the largest per-record GDP² loss that the next
// Select would cause (see the type's documentation), as a GDP μ: zero during
// the K initial pulls and whenever no arm draws a fresh sample.
func (p *DPTSUCB) NextCost() privacy.Guarantee {
	if p.st.Rounds < p.opts.K {
		return gdpCost(0)
	}
	cur, next := p.st.PastLoss, 0.0
	for _, a := range p.st.Arms {
		if a.N == 0 {
			continue
		}
		e := p.eta2(a.N)
		cur = max(cur, float64(a.Draws)*e)
		if a.Draws < p.budget {
			next = max(next, float64(a.Draws+1)*e)
		}
	}
	return gdpCostSqrt(subUp(next, cur))
}

// State returns a copy of the learning state.
func (p *DPTSUCB) State() DPTSUCBState {
	st := p.st
	st.Arms = append([]DPTSUCBArm(nil), p.st.Arms...)
	return st
}

// MarshalJSON encodes the options and learning state (not the generator).
func (p *DPTSUCB) MarshalJSON() ([]byte, error) { return marshalSnapshot("dp-ts-ucb", p.opts, p.st) }

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewDPTSUCB with the same options; the generator is left as it is.
func (p *DPTSUCB) UnmarshalJSON(data []byte) error {
	st, err := unmarshalSnapshot[DPTSUCBOptions, DPTSUCBState](data, "dp-ts-ucb", p.opts)
	if err != nil {
		return err
	}
	if err := checkStateLen("dp-ts-ucb", p.opts.K, len(st.Arms)); err != nil {
		return err
	}
	for i, a := range st.Arms {
		ok := a.Draws >= 0 && a.Draws <= p.budget && a.O >= 0 && a.U >= 0 && a.U <= float64(a.O) && a.Pulled >= 0
		if a.N == 0 {
			ok = ok && a.O == 0 && a.Draws == 0 && a.Pulled == 0
		} else {
			ok = ok && a.Epoch >= 1 && a.Epoch < 62 && a.N == 1<<(a.Epoch-1) && a.O < 1<<a.Epoch &&
				a.Mean >= 0 && a.Mean <= 1 && a.Pulled == 2*a.N-1+a.O
		}
		if !ok {
			return fmt.Errorf("dp-ts-ucb: %w: arm %d: %+v", errState, i, a)
		}
	}
	if !(st.PastLoss >= 0) || st.Rounds < 0 {
		return fmt.Errorf("dp-ts-ucb: %w: rounds %d, past loss %v", errState, st.Rounds, st.PastLoss)
	}
	p.st = st
	for i, a := range st.Arms {
		if a.N > 0 {
			p.sd[i] = math.Sqrt(p.lna / float64(a.N))
		}
	}
	return nil
}

func dptsucbReport(T int, alpha, c0 float64) privacy.Report {
	paper, cert := dptsucbValues(T, alpha, c0)
	phi := dptsucbPhi(T, alpha, c0)
	return gdpReport("dp-ts-ucb", cert, paper, true, fmt.Sprintf(
		"Certified sqrt(⌊φ⌋/(ln T)^α)-GDP with φ = c0·T^((1−α)/2)·(ln T)^((3−α)/2) = %.6g: each observation enters exactly one "+
			"estimate (arm-specific doubling epochs; the initial pull's observation too), each of its ≤ ⌊φ⌋ fresh samples is a "+
			"Gaussian mechanism with GDP 1/sqrt(n (ln T)^α) ≤ (ln T)^(−α/2), and MAX/UCB-phase reuse and the argmax are "+
			"post-processing (docs/dp-ts-ucb.md §1.6; docs/reproduction-decisions.md A7). Paper: [HU] Thm 4.4, sqrt(2φ/(ln T)^α)-GDP (valid; composes the UCB phase "+
			"again and uses the real φ). Thm 4.6 omits the division by (ln T)^α and is not used (A7).", phi))
}

var (
	_ bandit.Policy    = (*DPTSUCB)(nil)
	_ bandit.Private   = (*DPTSUCB)(nil)
	_ bandit.Metered   = (*DPTSUCB)(nil)
	_ json.Marshaler   = (*DPTSUCB)(nil)
	_ json.Unmarshaler = (*DPTSUCB)(nil)
)

func dptsucbOptions(s bandit.Setting, p bandit.Params) DPTSUCBOptions {
	return DPTSUCBOptions{K: s.K, Horizon: s.Horizon, Alpha: p["alpha"], C0: p["c0"]}
}

func init() {
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: servingArgmax + "; Select counts the fresh samples the accounting relies on, so decisions are durable", DurableSelect: true},
		Name:    "dp-ts-ucb",
		Summary: "DP-TS-UCB: ⌊φ⌋ Gaussian samples per epoch estimate, then their max (UCB phase); sqrt(2φ/(ln T)^α)-GDP (paper)",
		Source:  "Hu, Huang, Zhang, Lécuyer & Hegde, ICML 2025, Algorithm 1, Thm 4.4 (docs/dp-ts-ucb.md §1.6)",
		Private: true,
		Params: []bandit.Param{
			{Name: "alpha", Default: 1, Min: 0, Max: 1,
				Doc: "privacy–regret trade-off α: 1 gives constant GDP sqrt(2c0), 0 the optimal regret order"},
			{Name: "c0", Default: DefaultC0, Min: math.SmallestNonzeroFloat64, Max: math.Inf(1),
				Doc: "budget constant c0 > 0 in φ = c0·T^((1−α)/2)·(ln T)^((3−α)/2); the paper's sqrt(2πe)"},
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewDPTSUCB(dptsucbOptions(s, p), r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			o := dptsucbOptions(s, p)
			if err := checkDPTSUCB(o); err != nil {
				return privacy.Report{}, err
			}
			return dptsucbReport(o.Horizon, o.Alpha, o.C0), nil
		},
		Calibrate: calibrateDPTSUCB,
	})
}
