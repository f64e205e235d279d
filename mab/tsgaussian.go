package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// TSGaussian is Thompson sampling with Gaussian priors, Ou, Avella Medina &
// Cummings, "Thompson Sampling Itself is Differentially Private", AISTATS
// 2024 ([OU]), Algorithm 1 (Agrawal & Goyal's Gaussian TS); "TS-G" in [HU].
// docs/gaussian-ts.md §1.3 ([OU] Alg 1).
//
// # Algorithm
//
// Per arm i the policy stores the reward sum S_i and the pull count n_i (both
// 0 at the start). Each round it draws θ_i ~ N(S_i/(n_i+1), 1/(n_i+1))
// independently for every arm and plays argmax_i θ_i (ties, of probability
// zero, to the lowest index); Update adds the reward to S and 1 to n. The
// paper's recursive mean update equals S/(n+1); storing S and n avoids its
// drift ([OU] Alg 1; docs/gaussian-ts.md §1.3). The posterior mean and s.d. of an arm are cached in
// Update, so Select costs K NormFloat64 draws, K multiply-adds and an argmax.
//
// # Privacy (docs/privacy-model.md, neighbouring relation; docs/gaussian-ts.md §1.3; docs/reproduction-decisions.md A1, A3)
//
// Certified sqrt((T−1)/2)-GDP for T rounds; paper sqrt(T/2)-GDP ([OU]
// Lemma 3, Thm 3), valid. Derivation:
//   - Round t releases a_t = argmax θ, post-processing of the vector θ. A
//     neighbouring stream changes one observed reward X_τ(a_τ) by ≤ 1, which
//     moves only arm a_τ's mean S/(n+1), by ≤ 1/(n+1), against a noise s.d.
//     1/sqrt(n+1) with n ≥ 1 (the arm holds the reward): a Gaussian mechanism
//     with μ_t = 1/sqrt(n+1) ≤ 1/√2 (A1 with (κ_m, κ_v) = (1, 1), c = 1).
//   - Round 1 reads no data (all n = 0), and a reward changed at round τ
//     affects only rounds τ+1..T, so at most T−1 rounds leak. Adaptive GDP
//     composition (Dong, Roth & Su 2022, Cor 3.3) gives sqrt((T−1)/2).
//   - [OU] §5.1's 10^{2.5} at T = 1e5 is Lemma 4 with b = 0, c = 1, looser
//     still (A3); the report shows Lemma 3's sqrt(T/2) as the paper value.
//
// The report is for the horizon T, or for the rounds already played if more
// (the algorithm is anytime). NextCost is max over arms with n ≥ 1 of
// 1/sqrt(n+1), zero while no arm has data.
//
// Complexity: Select O(K), Update O(1), no allocation. Not safe for
// concurrent use. Serving: the θ's are only compared, never released, so
// fast Gaussian draws on a strong generator are acceptable (docs/privacy-model.md rule 4).
type TSGaussian struct {
	opts TSGaussianOptions
	r    *rand.Rand
	st   TSGaussianState
	post []gaussArm // cached posterior (mean, s.d.) per arm, from st
}

// TSGaussianOptions configures TS-Gaussian.
type TSGaussianOptions struct {
	K       int // number of arms, ≥ 1
	Horizon int // T ≥ 1: the horizon the privacy report is stated for
}

// TSGaussianState is the learning state of TS-Gaussian (its JSON form).
type TSGaussianState struct {
	Rounds int       `json:"rounds"` // Select calls so far
	Sum    []float64 `json:"sum"`    // S_i
	Pulls  []int     `json:"pulls"`  // n_i
	// Lagged records that a Thompson round ran while an arm holding data had
	// fewer applied rewards than the pre-pull count (rewards arriving late);
	// M-TS then certifies the n ≥ 1 bound instead (mtsgaussian.go).
	Lagged bool `json:"lagged,omitempty"`
}

// gaussArm is the cached posterior of one arm of a Gaussian Thompson sampler.
// Mean and s.d. sit side by side so that one round reads one stream.
type gaussArm struct{ mean, sd float64 }

// gaussArgmax returns argmax_i mean_i + sd_i·Z_i for independent standard
// normal Z_i drawn from r in index order; ties go to the lowest index.
func gaussArgmax(post []gaussArm, r *rand.Rand) int {
	best, bv := 0, math.Inf(-1)
	for i, a := range post {
		if v := a.mean + a.sd*r.NormFloat64(); v > bv {
			best, bv = i, v
		}
	}
	return best
}

// minPositive returns the smallest n_i ≥ 1, or 0 when every n_i is 0.
func minPositive(n []int) int {
	m := 0
	for _, v := range n {
		if v >= 1 && (m == 0 || v < m) {
			m = v
		}
	}
	return m
}

// checkGaussState validates a restored Gaussian-TS state: lengths K, counts
// ≥ 0, sums in [0, n] (rewards lie in [0, 1]) and Rounds ≥ Σn.
func checkGaussState(name string, k int, st TSGaussianState) error {
	total, err := checkSums(name, k, st.Sum, st.Pulls)
	if err != nil {
		return err
	}
	if st.Rounds < total {
		return fmt.Errorf("%s: %w: %d rounds for %d observed rewards", name, errState, st.Rounds, total)
	}
	return nil
}

// unmarshalGaussState decodes a state of the Gaussian Thompson family
// (ts-gaussian, gaussian-ts, mts-gaussian) saved by marshalSnapshot with
// options opts, and checks it against K (checkGaussState).
func unmarshalGaussState[O comparable](data []byte, name string, opts O, k int) (TSGaussianState, error) {
	st, err := unmarshalSnapshot[O, TSGaussianState](data, name, opts)
	if err != nil {
		return st, err
	}
	return st, checkGaussState(name, k, st)
}

// checkSums validates per-arm reward sums and counts (lengths K, n ≥ 0,
// 0 ≤ S ≤ n) and returns Σn.
func checkSums(name string, k int, sum []float64, pulls []int) (int, error) {
	if err := checkStateLen(name, k, len(sum), len(pulls)); err != nil {
		return 0, err
	}
	total := 0
	for i := range k {
		n, s := pulls[i], sum[i]
		if n < 0 || !(s >= 0 && s <= float64(n)) {
			return 0, fmt.Errorf("%s: %w: arm %d has n = %d, S = %v (need n ≥ 0, 0 ≤ S ≤ n)", name, errState, i, n, s)
		}
		total += n
	}
	return total, nil
}

// NewTSGaussian returns TS-Gaussian for the options, drawing from r.
// It returns an error naming the parameter when K < 1, Horizon < 1 or r is nil.
func NewTSGaussian(opts TSGaussianOptions, r *rand.Rand) (*TSGaussian, error) {
	if err := checkK("ts-gaussian", opts.K); err != nil {
		return nil, err
	}
	if opts.Horizon < 1 {
		return nil, fmt.Errorf("ts-gaussian: horizon T = %d must be ≥ 1 (the privacy report is stated for T rounds)", opts.Horizon)
	}
	if r == nil {
		return nil, fmt.Errorf("ts-gaussian: random generator r must not be nil")
	}
	p := &TSGaussian{opts: opts, r: r, post: make([]gaussArm, opts.K),
		st: TSGaussianState{Sum: make([]float64, opts.K), Pulls: make([]int, opts.K)}}
	p.refresh()
	return p, nil
}

func (p *TSGaussian) refresh() {
	for i := range p.post {
		p.setPost(i)
	}
}

func (p *TSGaussian) setPost(i int) {
	n1 := float64(p.st.Pulls[i] + 1)
	p.post[i] = gaussArm{mean: p.st.Sum[i] / n1, sd: 1 / math.Sqrt(n1)}
}

// Select draws θ_i ~ N(S_i/(n_i+1), 1/(n_i+1)) for every arm and returns the argmax.
func (p *TSGaussian) Select() int {
	p.st.Rounds++
	return gaussArgmax(p.post, p.r)
}

// Update records reward x ∈ [0, 1] for arm. It panics on an arm outside
// [0, K) or a reward outside [0, 1] (caller's error).
func (p *TSGaussian) Update(arm int, x float64) {
	checkReward("ts-gaussian", arm, p.opts.K, x)
	p.st.Sum[arm] += x
	p.st.Pulls[arm]++
	p.setPost(arm)
}

// Privacy reports sqrt((max(T, rounds)−1)/2)-GDP certified and
// sqrt(max(T, rounds)/2) from [OU] Lemma 3.
func (p *TSGaussian) Privacy() privacy.Report {
	return tsGaussianReport(max(p.opts.Horizon, p.st.Rounds))
}

// NextCost is the GDP cost of the next Select: max over arms with n ≥ 1 of
// 1/sqrt(n+1), zero while no arm has data.
func (p *TSGaussian) NextCost() privacy.Guarantee {
	m := minPositive(p.st.Pulls)
	if m == 0 {
		return gdpCost(0)
	}
	return gdpCostInvSqrt(float64(m+1), 1)
}

// State returns a copy of the learning state.
func (p *TSGaussian) State() TSGaussianState {
	return TSGaussianState{Rounds: p.st.Rounds, Sum: append([]float64(nil), p.st.Sum...), Pulls: append([]int(nil), p.st.Pulls...)}
}

// MarshalJSON encodes the options and learning state (not the generator).
func (p *TSGaussian) MarshalJSON() ([]byte, error) {
	return marshalSnapshot("ts-gaussian", p.opts, p.st)
}

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewTSGaussian with the same options; the generator is left as it is.
func (p *TSGaussian) UnmarshalJSON(data []byte) error {
	st, err := unmarshalGaussState(data, "ts-gaussian", p.opts, p.opts.K)
	if err != nil {
		return err
	}
	p.st = st
	p.refresh()
	return nil
}

// tsGaussianReport is TS-Gaussian's report for T rounds.
func tsGaussianReport(T int) privacy.Report {
	return gdpReport("ts-gaussian", math.Sqrt(float64(T-1)/2), math.Sqrt(float64(T)/2), true,
		"Certified sqrt((T−1)/2)-GDP: each round that reads data is a Gaussian mechanism on one arm's mean S/(n+1) "+
			"with sensitivity 1/(n+1) and noise s.d. 1/sqrt(n+1), n ≥ 1, so μ_t ≤ 1/√2 (Ou et al., AISTATS 2024, Alg 1; docs/gaussian-ts.md §1.3; docs/reproduction-decisions.md A1); round 1 reads no data "+
			"and a reward changed at round τ affects only rounds after τ, so at most T−1 rounds compose (GDP composition). "+
			"Paper: [OU] Lemma 3 / Thm 3, sqrt(T/2)-GDP (valid; composes all T rounds). [OU] §5.1's 10^2.5 at T=1e5 is Lemma 4 "+
			"with b=0, c=1, looser still (docs/reproduction-decisions.md A3).")
}

var (
	_ bandit.Policy    = (*TSGaussian)(nil)
	_ bandit.Private   = (*TSGaussian)(nil)
	_ bandit.Metered   = (*TSGaussian)(nil)
	_ json.Marshaler   = (*TSGaussian)(nil)
	_ json.Unmarshaler = (*TSGaussian)(nil)
)

func init() {
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: servingArgmax},
		Name:    "ts-gaussian",
		Summary: "Thompson sampling with Gaussian priors, N(S/(n+1), 1/(n+1)); DP as-is, sqrt((T−1)/2)-GDP",
		Source:  "Ou, Avella Medina & Cummings, AISTATS 2024, Algorithm 1, Lemma 3 (docs/gaussian-ts.md §1.3)",
		Private: true,
		New: func(s bandit.Setting, _ bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewTSGaussian(TSGaussianOptions{K: s.K, Horizon: s.Horizon}, r)
		},
		Report: func(s bandit.Setting, _ bandit.Params) (privacy.Report, error) {
			if err := checkK("ts-gaussian", s.K); err != nil {
				return privacy.Report{}, err
			}
			if s.Horizon < 1 {
				return privacy.Report{}, fmt.Errorf("ts-gaussian: horizon T = %d must be ≥ 1", s.Horizon)
			}
			return tsGaussianReport(s.Horizon), nil
		},
	})
}
