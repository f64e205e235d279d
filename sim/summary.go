package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Summary is the content of summary.json.
type Summary struct {
	Spec     Spec           `json:"spec"`
	SpecHash string         `json:"spec_hash"`
	Env      EnvSummary     `json:"env"`
	Delta    float64        `json:"delta"` // δ of every privacy statement
	Budget   *BudgetSummary `json:"budget,omitempty"`
	// Checkpoints is the number of checkpoints per run in curves.csv.
	Checkpoints int             `json:"checkpoints"`
	Policies    []PolicySummary `json:"policies"`
}

// EnvSummary describes the environment. For a contextual environment K is
// the number of candidates per round, Dim the feature dimension, and Means
// and Best are empty (they change every round).
type EnvSummary struct {
	Name       string    `json:"name"`
	K          int       `json:"k"`
	Means      []float64 `json:"means"`
	Best       float64   `json:"best"`
	Contextual bool      `json:"contextual,omitempty"`
	Dim        int       `json:"dim,omitempty"`
}

// BudgetSummary is the equal-budget target.
type BudgetSummary struct {
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta,omitempty"`
	GDP     float64 `json:"gdp,omitempty"`
	Basis   string  `json:"basis"`
}

// PolicySummary is one entry of summary.json's "policies". Regret figures
// are at the horizon, over runs; stderr is the standard error of the mean.
type PolicySummary struct {
	Name       string        `json:"name"`
	Spec       string        `json:"spec"`
	Params     bandit.Params `json:"params"`
	Calibrated []string      `json:"calibrated,omitempty"`
	Private    bool          `json:"private"`
	Note       string        `json:"note,omitempty"`
	Runs       int           `json:"runs"`

	RegretMean   float64 `json:"regret_mean"`
	RegretStderr float64 `json:"regret_stderr"`
	// RegretMedian, RegretP90 and RegretMax describe the spread of the final
	// pseudo-regret over runs (Quantile). Private policies whose noise is
	// drawn once can bury the best arm for good in a few runs; a mean far
	// above the median shows such a heavy tail.
	RegretMedian         float64   `json:"regret_median"`
	RegretP90            float64   `json:"regret_p90"`
	RegretMax            float64   `json:"regret_max"`
	RealisedRegretMean   float64   `json:"realised_regret_mean"`
	RealisedRegretStderr float64   `json:"realised_regret_stderr"`
	RewardMean           float64   `json:"reward_mean"`
	PullsMean            []float64 `json:"pulls_mean"`

	// Contextual plans only (omitted otherwise). ExpectedRewardMean is the
	// mean over runs of Σ_t μ_t(a_t) and OracleRewardMean of Σ_t max_i
	// μ_t(i), so RegretMean = OracleRewardMean − ExpectedRewardMean.
	// Counterpart names the entry of the non-private counterpart (see
	// sim.Counterpart) when the plan has one; PctOfCounterpart is then 100 ×
	// this policy's expected reward over the counterpart's, per run (paired
	// on common random numbers), averaged over runs, with its standard error.
	ExpectedRewardMean     float64  `json:"expected_reward_mean,omitempty"`
	OracleRewardMean       float64  `json:"oracle_reward_mean,omitempty"`
	Counterpart            string   `json:"counterpart,omitempty"`
	PctOfCounterpart       *float64 `json:"pct_of_counterpart,omitempty"`
	PctOfCounterpartStderr *float64 `json:"pct_of_counterpart_stderr,omitempty"`

	Privacy privacy.Statement `json:"privacy"`
}

// Band is a mean with a 95% confidence band of the mean at each checkpoint:
// mean ± t_{0.975, R−1}·s/√R over the R runs (zero width when R = 1).
type Band struct {
	Mean, Lo, Hi []float64
}

// Curve is one entry's regret curves at the plan's checkpoints.
type Curve struct {
	Name     string
	T        []int
	Pseudo   Band
	Realised Band
}

// Aggregate is a complete sweep's summary and curves.
type Aggregate struct {
	Plan    *Plan
	Summary Summary
	Curves  []Curve
	Runs    []RunResult // every cell, in cell order
}

// Aggregate combines the runs of every cell into the summary and curves. It
// fails unless r holds every cell of the plan exactly once (Merge first for
// shards). The output depends only on the plan and the runs, not on their
// order.
func (r *Result) Aggregate() (*Aggregate, error) {
	p := r.Plan
	runs, err := complete(p, r.Runs)
	if err != nil {
		return nil, err
	}
	a := &Aggregate{Plan: p, Runs: runs}
	s := &a.Summary
	s.Spec, s.SpecHash, s.Delta = p.Spec, HashString(p.hash), p.Spec.Delta
	s.Env = EnvSummary{Name: p.envName(), K: p.Setting.K, Means: p.Means, Best: p.Best}
	if p.Contextual() {
		s.Env.Contextual, s.Env.Dim = true, p.Setting.Dim
	}
	if t := p.Spec.Budget; t != nil {
		s.Budget = &BudgetSummary{Epsilon: t.Epsilon, Delta: t.Delta, GDP: t.Mu, Basis: t.Basis}
	}
	s.Checkpoints = len(p.Checkpoints)
	R := p.Spec.Runs
	tq := 0.0
	if R > 1 {
		tq = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(R - 1)}.Quantile(0.975)
	}
	last := len(p.Checkpoints) - 1
	col := make([]float64, R)
	for i, en := range p.Entries {
		cell := runs[i*R : (i+1)*R]
		ps := PolicySummary{Name: en.Name, Spec: en.Spec.String(), Params: en.Params, Calibrated: en.Calibrated,
			Private: en.Private, Note: en.Note, Runs: R, Privacy: en.Statement, PullsMean: make([]float64, p.Setting.K)}
		cv := Curve{Name: en.Name, T: p.Checkpoints, Pseudo: newBand(len(p.Checkpoints)), Realised: newBand(len(p.Checkpoints))}
		for j := range p.Checkpoints {
			for k, rr := range cell {
				col[k] = rr.Pseudo[j]
			}
			cv.Pseudo.set(j, col, tq)
			for k, rr := range cell {
				col[k] = rr.Realised[j]
			}
			cv.Realised.set(j, col, tq)
		}
		for k, rr := range cell {
			col[k] = rr.Pseudo[last]
		}
		ps.RegretMean, ps.RegretStderr = meanStderr(col)
		sorted := slices.Sorted(slices.Values(col))
		ps.RegretMedian, ps.RegretP90, ps.RegretMax = quantileSorted(sorted, 0.5), quantileSorted(sorted, 0.9), sorted[len(sorted)-1]
		for k, rr := range cell {
			col[k] = rr.Realised[last]
		}
		ps.RealisedRegretMean, ps.RealisedRegretStderr = meanStderr(col)
		for k, rr := range cell {
			col[k] = rr.Reward
		}
		ps.RewardMean, _ = meanStderr(col)
		for arm := range ps.PullsMean {
			for k, rr := range cell {
				col[k] = float64(rr.Pulls[arm])
			}
			ps.PullsMean[arm], _ = meanStderr(col)
		}
		if p.Contextual() {
			st := p.contextualStats(i, runs)
			ps.ExpectedRewardMean, ps.OracleRewardMean, ps.Counterpart = st.expected, st.oracle, st.cp
			if st.hasPct {
				ps.PctOfCounterpart, ps.PctOfCounterpartStderr = &st.pct, &st.pctSE
			}
		}
		s.Policies = append(s.Policies, ps)
		a.Curves = append(a.Curves, cv)
	}
	return a, nil
}

// complete orders runs by cell and checks that every cell is there exactly
// once with consistent shapes.
func complete(p *Plan, runs []RunResult) ([]RunResult, error) {
	n := p.Cells()
	out := make([]RunResult, n)
	have := make([]bool, n)
	var missing []string
	for _, r := range runs {
		if r.Entry < 0 || r.Entry >= len(p.Entries) || r.Run < 0 || r.Run >= p.Spec.Runs {
			return nil, inputErrorf("result for cell (entry %d, run %d) is outside the plan (%d entries × %d runs)",
				r.Entry, r.Run, len(p.Entries), p.Spec.Runs)
		}
		if len(r.Pseudo) != len(p.Checkpoints) || len(r.Realised) != len(p.Checkpoints) || len(r.Pulls) != p.Setting.K {
			return nil, inputErrorf("result for %s run %d has %d/%d checkpoints and %d arms, want %d and %d",
				p.Entries[r.Entry].Name, r.Run, len(r.Pseudo), len(r.Realised), len(r.Pulls), len(p.Checkpoints), p.Setting.K)
		}
		c := r.Entry*p.Spec.Runs + r.Run
		if have[c] {
			return nil, inputErrorf("cell %s run %d occurs more than once", p.Entries[r.Entry].Name, r.Run)
		}
		have[c], out[c] = true, r
	}
	for c, ok := range have {
		if !ok {
			missing = append(missing, fmt.Sprintf("%s run %d", p.Entries[c/p.Spec.Runs].Name, c%p.Spec.Runs))
		}
	}
	if nm := len(missing); nm > 0 {
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return nil, inputErrorf("%d of %d cells are missing: %s%s", nm, n, strings.Join(missing, ", "), more)
	}
	return out, nil
}

func newBand(n int) Band {
	return Band{Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
}

func (b Band) set(j int, xs []float64, tq float64) {
	m, se := meanStderr(xs)
	b.Mean[j], b.Lo[j], b.Hi[j] = m, m-tq*se, m+tq*se
}

// meanStderr returns the mean and the standard error of the mean (sample
// s.d. over √n; 0 when n = 1), summing in slice order.
// Quantile returns the q-quantile (0 ≤ q ≤ 1) of xs by linear interpolation
// between order statistics (Hyndman–Fan type 7, R's and NumPy's default):
// with the sorted values x_(0) ≤ … ≤ x_(n−1) and h = (n−1)q, it is
// x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋)). The median of an even count is
// the mean of the middle two. xs is not modified; NaN when it is empty.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantileSorted(s, q)
}

// quantileSorted is Quantile of sorted, non-empty s.
func quantileSorted(s []float64, q float64) float64 {
	h := float64(len(s)-1) * q
	i := int(h)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

func meanStderr(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}
