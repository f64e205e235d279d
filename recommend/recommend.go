// Package recommend answers "which private policy learns at my arms,
// horizon and budget?" by an equal-budget simulation (issue 11; docs/privacy-model.md,
// "Anyone choosing a policy"). It is the engine behind `dpbandit recommend`
// and, bounded in time, the decision service's "policy": "auto".
//
// # What it runs
//
// Every candidate is a K-armed policy the decision service runs
// (bandit.Descriptor.Serving != nil), built as the service builds it: with
// the descriptor's Serving.Params forced (for example grid = 1, the secure
// discrete noise), calibrated with its Calibrate to the budget on the
// certified basis for the horizon, and charged step by step by a privacy
// filter holding the budget (NextCost before each Select, as the service
// does). When the filter refuses a step the policy is frozen as the
// service's on_exhausted "freeze" freezes it: later decisions are drawn from
// the empirical distribution of the decisions it made, and it learns
// nothing more. Non-private UCB1 runs as the reference.
//
// A candidate is skipped, and listed in [Result.Skipped] with the reason,
// when it cannot be calibrated to the budget, states no per-step cost a
// filter can charge, or when the budget pays for fewer than K + [MinSteps]
// of its decisions even with every reward arriving at once (a handful past
// one pull of each arm: Gaussian TS pays nothing for its K starting pulls
// and then cannot pay for one posterior sample at ε ≈ 1).
//
// # Instances and aggregation
//
// The instances are Bernoulli environments: the user's guessed means, or
// without them the panel of [Panel] (gaps 0.3, 0.1 and 0.02 around 0.5, and
// click rates near 0.005 like the Open Bandit Dataset's). On each instance
// and for each run r, every policy sees the same rewards (common random
// numbers: the environment stream depends on the seed, the instance and r
// only; see env.Streams), and its own policy stream depends on its name
// too, so a policy's results do not change when candidates are added.
//
// The score of a policy on an instance is its median final pseudo-regret
// over the runs; its ratio there is that median divided by UCB1's (both
// floored at [RegretFloor]). Across instances a row reports the mean of
// the per-instance medians, the mean of the per-instance means, the mean of
// the per-instance ratios (the ranking criterion) and the mean share of
// rounds that played a best arm over the last 20% of the horizon. Rows are
// ranked by ratio, then mean regret, then name; the recommendation is the
// first private row.
//
// # Determinism and time
//
// Cells (policy, instance, run) run on a bounded pool of GOMAXPROCS
// workers; each is a pure function of (seed, instance, policy, run), so the
// result is the same for every schedule. With Options.MaxTime set, Run
// times a short pilot of every candidate and reduces the runs and then the
// horizon (recalibrating for it) so that the estimate fits, stops adding
// runs at the deadline, and says so in [Result.Notes]; the reduced runs and
// horizon then depend on the machine's speed, and the result is
// deterministic for the (seed, runs, horizon) it states.
//
// The package depends on the bandit contracts, the accountant and the
// environments only: never on the simulator (package sim), so the service
// can import it.
package recommend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/env"
	"github.com/dpbandit/dpbandit/privacy"
)

// Limits and defaults of Options.
const (
	MinArms     = 2
	MaxArms     = 1000
	MaxHorizon  = 10_000_000
	MaxRuns     = 10_000
	MaxEpsilon  = 1000.0 // the decision service's largest ε
	DefaultRuns = 10     // on the user's means
	// DefaultPanelRuns are the runs per panel instance (4 instances: 20
	// runs per policy in all).
	DefaultPanelRuns = 5
	// MinSteps is the handful of decisions past K (one pull per arm) that
	// the budget must pay for, with every reward arriving at once, for a
	// candidate to be compared.
	MinSteps = 10
	// Reference is the non-private policy every ratio is taken against.
	Reference = "ucb1"
	// TailFraction is the final share of the horizon over which the best-arm
	// share is measured.
	TailFraction = 0.2
	// RegretFloor is the smallest median regret a ratio divides by (and
	// the floor of its numerator): medians below one round lost at gap 1
	// are indistinguishable, and the ratio stays finite.
	RegretFloor = 1.0
)

// Options say what to compare. The zero values of Runs, Seed, Candidates,
// MaxTime, Workers and Progress are usable defaults.
type Options struct {
	Arms    int // K, in [MinArms, MaxArms]
	Horizon int // T, in [1, MaxHorizon]
	// Budget is the (ε, δ) every private candidate is calibrated to, on the
	// certified basis (Basis may be empty or bandit.BasisCertified; Mu must
	// be 0): ε in (0, MaxEpsilon], δ in (0, 1).
	Budget bandit.Target
	// Means are the user's guesses of the arms' click (reward) rates, len
	// Arms, each in [0, 1]; nil runs the panel of Panel(Arms).
	Means []float64
	// Runs per policy and instance, in [1, MaxRuns]; 0: DefaultRuns on the
	// user's means, DefaultPanelRuns on the panel.
	Runs int
	Seed uint64 // base seed; the same seed gives the same result
	// Candidates restricts the comparison to these K-armed policies the
	// service runs (names, no parameters). Nil: every registered K-armed
	// descriptor with Serving set and Private. The reference (UCB1) is
	// always added.
	Candidates []string
	// MaxTime bounds the wall time (0: none). When the estimate exceeds it,
	// Run reduces the runs, then the horizon, and says so in Result.Notes.
	MaxTime time.Duration
	// Workers bounds the cells run at once (0: GOMAXPROCS). Results do not
	// depend on it.
	Workers int
	// Progress, if set, is called after each cell (policy, instance, run)
	// with the cells done and the total. Calls are serialised but come from
	// worker goroutines; keep it cheap.
	Progress func(done, total int)
}

// Instance is one Bernoulli environment of the comparison.
type Instance struct {
	Name  string    `json:"name"`
	Means []float64 `json:"means"`
}

// Stats are one policy's results on one instance.
type Stats struct {
	MedianRegret float64 `json:"median_regret"` // median over runs of the final pseudo-regret
	MeanRegret   float64 `json:"mean_regret"`   // mean over runs
	Ratio        float64 `json:"ratio"`         // median / UCB1's median (both floored at RegretFloor)
	BestShare    float64 `json:"best_share"`    // mean over runs of the best-arm share over the last 20%
	// FrozenRuns counts the runs in which the filter stopped the policy.
	FrozenRuns int `json:"frozen_runs,omitempty"`
}

// Row is one ranked policy.
type Row struct {
	Rank    int           `json:"rank"` // 1 = best
	Policy  string        `json:"policy"`
	Private bool          `json:"private"`
	Params  bandit.Params `json:"params"` // every parameter as run
	// Calibrated names the parameters calibration set (sorted).
	Calibrated []string `json:"calibrated,omitempty"`
	// Guarantee states the certified guarantee for the horizon against the
	// budget, e.g. "certified ε = 0.999 ≤ 1", or "not private".
	Guarantee string `json:"guarantee"`
	// Epsilon is the certified ε at the budget's δ for the horizon; nil
	// when not private.
	Epsilon      *float64 `json:"epsilon"`
	MedianRegret float64  `json:"median_regret"` // mean over instances of the per-instance median
	MeanRegret   float64  `json:"mean_regret"`   // mean over instances of the per-instance mean
	Ratio        float64  `json:"ratio"`         // mean over instances of the per-instance ratio to UCB1
	BestShare    float64  `json:"best_share"`    // mean over instances of the best-arm share, last 20%
	Instances    []Stats  `json:"instances"`     // per instance, in Result.Instances order
	Note         string   `json:"note,omitempty"`
}

// Skip is a candidate left out, with the reason.
type Skip struct {
	Policy string `json:"policy"`
	Reason string `json:"reason"`
}

// Recommendation is the policy to use (with the parameters it ran with)
// and why, in one line. Policy is empty when no private candidate could be
// compared; Reason then says why.
type Recommendation struct {
	Policy string        `json:"policy"`
	Params bandit.Params `json:"params,omitempty"`
	Reason string        `json:"reason"`
}

// Budget is the budget compared at, as JSON.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Basis   string  `json:"basis"`
}

// Result is a ranked comparison.
type Result struct {
	Arms    int    `json:"arms"`
	Horizon int    `json:"horizon"` // as run (less than asked only when MaxTime reduced it)
	Runs    int    `json:"runs"`    // as run, per policy and instance
	Seed    uint64 `json:"seed"`
	Budget  Budget `json:"budget"`
	// Panel is true when the instances are the stated panel (no means given).
	Panel     bool       `json:"panel"`
	Instances []Instance `json:"instances"`
	// Aggregation says how the rows combine runs and instances.
	Aggregation    string         `json:"aggregation"`
	Rows           []Row          `json:"rows"`
	Skipped        []Skip         `json:"skipped,omitempty"`
	Recommendation Recommendation `json:"recommendation"`
	// Notes say what a time limit changed.
	Notes          []string      `json:"notes,omitempty"`
	Elapsed        time.Duration `json:"-"`
	ElapsedSeconds float64       `json:"elapsed_seconds"`
}

// Aggregation is the text of Result.Aggregation.
const Aggregation = "per instance: median and mean over runs of the final pseudo-regret, ratio = median / UCB1's median " +
	"(both floored at 1), best-arm share over the last 20% of rounds averaged over runs; across instances: " +
	"the mean of each; ranked by ratio, then mean regret"

// Panel returns the stated instances compared when no means are given, for
// K arms: one best arm (the last, so that no policy's lowest-index
// tie-breaking favours it) and K−1 equal arms, with gaps 0.3, 0.1 and 0.02
// around 0.5 (0.65/0.35, 0.55/0.45, 0.51/0.49), and a low-rate instance
// with click rates near 0.005 like the Open Bandit Dataset's (0.006/0.004).
func Panel(k int) []Instance {
	mk := func(name string, best, rest float64) Instance {
		m := make([]float64, k)
		for i := range m {
			m[i] = rest
		}
		m[k-1] = best
		return Instance{Name: name, Means: m}
	}
	return []Instance{
		mk("gap 0.3 (0.65 vs 0.35)", 0.65, 0.35),
		mk("gap 0.1 (0.55 vs 0.45)", 0.55, 0.45),
		mk("gap 0.02 (0.51 vs 0.49)", 0.51, 0.49),
		mk("low rate (0.006 vs 0.004, OBD-like)", 0.006, 0.004),
	}
}

// Candidates returns the names compared by default: every registered
// K-armed policy the service runs that is private, sorted, then the
// reference.
func Candidates() []string {
	var out []string
	for _, d := range bandit.All(bandit.KArmed) {
		if d.Serving != nil && d.Private && d.Name != Reference {
			out = append(out, d.Name)
		}
	}
	return append(out, Reference)
}

// ErrOptions is matched (errors.Is) by every error Run returns for invalid
// Options; the message names the bad value and its valid range.
var ErrOptions = errors.New("recommend: invalid options")

type optionsError struct{ msg string }

func (e optionsError) Error() string        { return e.msg }
func (e optionsError) Is(target error) bool { return target == ErrOptions }

// optErr returns an error matching ErrOptions.
func optErr(format string, a ...any) error { return optionsError{fmt.Sprintf(format, a...)} }

// validate checks o and returns it with defaults filled in.
func (o Options) validate() (Options, error) {
	if o.Arms < MinArms || o.Arms > MaxArms {
		return o, optErr("arms: K = %d is outside its valid range [%d, %d]", o.Arms, MinArms, MaxArms)
	}
	if o.Horizon < 1 || o.Horizon > MaxHorizon {
		return o, optErr("horizon: T = %d is outside its valid range [1, %d]", o.Horizon, MaxHorizon)
	}
	b := o.Budget
	switch b.Basis {
	case "", bandit.BasisCertified:
		o.Budget.Basis = bandit.BasisCertified
	default:
		return o, optErr("budget: basis %q: recommend compares on the certified basis only (give basis=%s or none)", b.Basis, bandit.BasisCertified)
	}
	if b.Mu != 0 {
		return o, optErr("budget: give (epsilon, delta), not gdp μ = %v: the pure-DP policies the service runs need an (ε, δ) budget", b.Mu)
	}
	if !(b.Epsilon > 0 && b.Epsilon <= MaxEpsilon) {
		return o, optErr("budget: epsilon = %v is outside its valid range (0, %g]", b.Epsilon, MaxEpsilon)
	}
	if !(b.Delta > 0 && b.Delta < 1) {
		return o, optErr("budget: delta = %v is outside its valid range (0, 1)", b.Delta)
	}
	if o.Means != nil {
		if len(o.Means) != o.Arms {
			return o, optErr("means: %d values given for K = %d arms; give one mean per arm", len(o.Means), o.Arms)
		}
		for i, m := range o.Means {
			if !(m >= 0 && m <= 1) {
				return o, optErr("means: mean %v of arm %d is outside its valid range [0, 1]", m, i+1)
			}
		}
	}
	switch {
	case o.Runs == 0 && o.Means != nil:
		o.Runs = DefaultRuns
	case o.Runs == 0:
		o.Runs = DefaultPanelRuns
	case o.Runs < 1 || o.Runs > MaxRuns:
		return o, optErr("runs: %d is outside its valid range [1, %d]", o.Runs, MaxRuns)
	}
	if o.MaxTime < 0 {
		return o, optErr("max time: %v is outside its valid range [0, ∞) (0: no limit)", o.MaxTime)
	}
	if o.Workers < 0 {
		return o, optErr("workers: %d is outside its valid range [0, ∞) (0: GOMAXPROCS)", o.Workers)
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Candidates == nil {
		o.Candidates = Candidates()
	} else {
		seen := map[string]bool{}
		var cs []string
		for _, n := range o.Candidates {
			if seen[n] {
				return o, optErr("candidates: policy %s is given twice", n)
			}
			seen[n] = true
			d, err := bandit.Lookup(bandit.KArmed, n)
			if err != nil {
				return o, optErr("candidates: %v", err)
			}
			if d.Serving == nil {
				return o, optErr("candidates: %s runs in simulation only, and recommend compares the policies the service runs: %s",
					n, strings.Join(Candidates(), ", "))
			}
			if n != Reference {
				cs = append(cs, n)
			}
		}
		o.Candidates = append(cs, Reference)
	}
	if _, err := bandit.Lookup(bandit.KArmed, Reference); err != nil {
		return o, fmt.Errorf("the reference policy %s is not registered (import package mab): %w", Reference, err)
	}
	return o, nil
}

// candidate is a policy ready to run: calibrated, checked and reported.
type candidate struct {
	d          bandit.Descriptor
	params     bandit.Params
	calibrated []string
	guarantee  string
	eps        *float64
	meets      bool
	notion     privacy.Notion // the filter's notion; NotionNone: no filter
	budget     float64        // the filter's budget in its notion
	cellKey    int            // the policy stream's cell identifier
}

// filterBudget converts an (ε, δ) budget to the parameter of a filter in
// notion n, as the service does: μ = GDPMu(ε, δ), ρ = ZCDPRho(ε, δ), or ε.
func filterBudget(n privacy.Notion, t bandit.Target) (float64, error) {
	switch n {
	case privacy.NotionGDP:
		return privacy.GDPMu(t.Epsilon, t.Delta)
	case privacy.NotionZCDP:
		rho, _, err := privacy.ZCDPRho(t.Epsilon, t.Delta)
		return rho, err
	case privacy.NotionPure:
		return t.Epsilon, nil
	}
	return 0, fmt.Errorf("no privacy filter charges the %q notion", n)
}

// prepare builds a candidate for the setting as the service would run it.
// A non-nil skip says why it cannot be compared; a non-nil error is a bug.
func prepare(name string, s bandit.Setting, t bandit.Target) (candidate, *Skip, error) {
	skip := func(format string, a ...any) (candidate, *Skip, error) {
		return candidate{}, &Skip{Policy: name, Reason: fmt.Sprintf(format, a...)}, nil
	}
	d, err := bandit.Lookup(bandit.KArmed, name)
	if err != nil {
		return candidate{}, nil, err
	}
	c := candidate{d: d, cellKey: int(env.HashString(name)), notion: privacy.NotionNone}
	given := bandit.Params{}
	if d.Serving != nil {
		maps.Copy(given, d.Serving.Params)
	}
	params := maps.Clone(given)
	if d.Private && d.Calibrate != nil {
		cp, err := d.Calibrate(s, t, maps.Clone(given))
		if err != nil {
			return skip("cannot be calibrated to ε = %g, δ = %g for T = %d: %v", t.Epsilon, t.Delta, s.Horizon, err)
		}
		for _, k := range slices.Sorted(maps.Keys(cp)) {
			if old, ok := params[k]; !ok || old != cp[k] {
				c.calibrated = append(c.calibrated, k)
			}
			params[k] = cp[k]
		}
	}
	if c.params, err = d.Complete(params); err != nil {
		return skip("parameters: %v", err)
	}
	pol, err := d.New(s, c.params, bandit.NewRand(1, 2))
	if err != nil {
		return skip("cannot be built for K = %d, T = %d: %v", s.K, s.Horizon, err)
	}
	if !d.Private {
		c.guarantee, c.meets = "not private", true
		return c, nil, nil
	}
	if d.Report == nil {
		return skip("states no privacy report")
	}
	rep, err := d.Report(s, c.params)
	if err != nil {
		return skip("privacy report: %v", err)
	}
	st, err := rep.At(t.Delta)
	if err != nil {
		return skip("privacy report at δ = %g: %v", t.Delta, err)
	}
	c.eps = st.Epsilon
	ach, err := bandit.Achieved(rep, t, t.Delta)
	if err != nil {
		return skip("comparing its guarantee with the budget: %v", err)
	}
	c.guarantee, c.meets = ach.String(), ach.Meets
	met, ok := pol.(bandit.Metered)
	if !ok {
		return skip("states no per-step privacy cost, so no filter can enforce the budget for it")
	}
	c.notion = rep.Certified.Notion
	if c.budget, err = filterBudget(c.notion, t); err != nil {
		return skip("%v", err)
	}
	need := s.K + MinSteps
	n, worst, err := affordable(pol, met, c.notion, c.budget, need)
	if err != nil {
		return skip("%v", err)
	}
	if n < need && n < s.Horizon {
		return skip("the budget pays for only %d decision(s) (fewer than K + %d = %d), even with every reward arriving at once: a step costs up to %s %s = %.4g and the budget is %.4g",
			n, MinSteps, need, c.notion, privacy.ParamName(c.notion), worst, c.budget)
	}
	return c, nil, nil
}

// affordable counts the decisions (up to n) that the budget pays for with a
// reward of 1/2 arriving right after each, as the service checks a new
// experiment, and returns the costliest step's cost.
func affordable(pol bandit.Policy, met bandit.Metered, n privacy.Notion, budget float64, steps int) (int, float64, error) {
	f, err := privacy.NewFilter(n, budget)
	if err != nil {
		return 0, 0, err
	}
	worst := 0.0
	for i := range steps {
		x := met.NextCost()
		worst = max(worst, x.Value)
		if x.Value != 0 && x.Notion != n {
			return 0, 0, fmt.Errorf("the policy states a %s step cost for its %s guarantee", x.Notion, n)
		}
		if err := f.Spend(x.Value); err != nil {
			if errors.Is(err, privacy.ErrBudgetExceeded) {
				return i, worst, nil
			}
			return 0, 0, err
		}
		pol.Update(pol.Select(), 0.5)
	}
	return steps, worst, nil
}

// cellResult is one (policy, instance, run).
type cellResult struct {
	regret    float64 // final pseudo-regret Σ_a n_a·(μ* − μ_a)
	bestShare float64 // share of the tail rounds that played a best arm
	frozen    bool
	err       error
}

// play runs one cell: the first rounds (≤ T) of the candidate built for the
// setting on the instance, charged by a filter when private; stop is polled
// every 1024 rounds. The tail share is over the last 20% of T.
func play(c *candidate, s bandit.Setting, e *env.Bernoulli, er, pr *rand.Rand, rounds int, stop func() bool) (out cellResult) {
	defer func() {
		if r := recover(); r != nil {
			out = cellResult{err: fmt.Errorf("panicked: %v", r)}
		}
	}()
	pol, err := c.d.New(s, c.params, pr)
	if err != nil {
		return cellResult{err: err}
	}
	var f *privacy.Filter
	var met bandit.Metered
	if c.notion != privacy.NotionNone {
		if f, err = privacy.NewFilter(c.notion, c.budget); err != nil {
			return cellResult{err: err}
		}
		met = pol.(bandit.Metered)
	}
	means := e.Means()
	best := e.Best()
	k := len(means)
	pulls := make([]int64, k)
	released := make([]int64, k)
	isBest := make([]bool, k)
	for a, m := range means {
		isBest[a] = m == best
	}
	T := s.Horizon
	tail0 := T - int(math.Ceil(TailFraction*float64(T)))
	var tailBest int64
	frozen := false
	for t := 1; t <= rounds; t++ {
		if t&1023 == 0 && stop() {
			return cellResult{err: errStopped}
		}
		if !frozen && f != nil {
			if x := met.NextCost(); x.Value != 0 {
				if x.Notion != c.notion {
					return cellResult{err: fmt.Errorf("round %d: a %s step cost for a %s filter", t, x.Notion, c.notion)}
				}
				if err := f.Spend(x.Value); err != nil {
					if !errors.Is(err, privacy.ErrBudgetExceeded) {
						return cellResult{err: fmt.Errorf("round %d: %w", t, err)}
					}
					frozen = true
				}
			}
		}
		var a int
		if frozen {
			a = frozenArm(released, pr)
		} else {
			a = pol.Select()
			if a < 0 || a >= k {
				return cellResult{err: fmt.Errorf("round %d: selected arm %d, outside [0, %d)", t, a, k)}
			}
			released[a]++
		}
		x := e.Pull(a, er)
		if !frozen {
			pol.Update(a, x)
		}
		pulls[a]++
		if t > tail0 && isBest[a] {
			tailBest++
		}
	}
	for a, n := range pulls {
		out.regret += float64(n) * (best - means[a])
	}
	if n := T - tail0; n > 0 {
		out.bestShare = float64(tailBest) / float64(n)
	}
	out.frozen = frozen
	return out
}

// frozenArm draws from the empirical distribution of the released
// decisions (uniform when there are none), as the service's freeze does.
func frozenArm(released []int64, r *rand.Rand) int {
	var total int64
	for _, c := range released {
		total += c
	}
	if total == 0 {
		return r.IntN(len(released))
	}
	u := r.Int64N(total)
	for i, c := range released {
		if u < c {
			return i
		}
		u -= c
	}
	return len(released) - 1
}

var errStopped = errors.New("stopped")

// plan is the prepared comparison for one horizon.
type plan struct {
	setting bandit.Setting
	cands   []candidate // the reference last
	skipped []Skip
}

func newPlan(o Options, horizon int) (*plan, error) {
	p := &plan{setting: bandit.Setting{K: o.Arms, Horizon: horizon}}
	for _, n := range o.Candidates {
		c, sk, err := prepare(n, p.setting, o.Budget)
		if err != nil {
			return nil, err
		}
		if sk != nil {
			if n == Reference {
				return nil, fmt.Errorf("the reference policy %s: %s", n, sk.Reason)
			}
			p.skipped = append(p.skipped, *sk)
			continue
		}
		p.cands = append(p.cands, c)
	}
	return p, nil
}

// streamHash is the env.Streams hash of an instance: the environment
// stream of run r depends on it and r only.
func streamHash(e *env.Bernoulli, seed uint64) uint64 {
	return env.HashString("dpbandit/recommend\x00" + e.Name() + "\x00" + strconv.FormatUint(seed, 10))
}

// Run compares the candidates and ranks them. It returns an error for
// invalid options (naming the bad value and its valid range) and when ctx
// is cancelled.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	o, err := o.validate()
	if err != nil {
		return nil, err
	}
	insts := Panel(o.Arms)
	if o.Means != nil {
		insts = []Instance{{Name: "your means", Means: slices.Clone(o.Means)}}
	}
	envs := make([]*env.Bernoulli, len(insts))
	hashes := make([]uint64, len(insts))
	for i, in := range insts {
		if envs[i], err = env.NewBernoulli(in.Means); err != nil {
			return nil, err
		}
		hashes[i] = streamHash(envs[i], o.Seed)
	}
	res := &Result{Arms: o.Arms, Horizon: o.Horizon, Runs: o.Runs, Seed: o.Seed,
		Budget: Budget{Epsilon: o.Budget.Epsilon, Delta: o.Budget.Delta, Basis: o.Budget.Basis},
		Panel:  o.Means == nil, Instances: insts, Aggregation: Aggregation}
	p, err := newPlan(o, o.Horizon)
	if err != nil {
		return nil, err
	}
	var deadline time.Time
	if o.MaxTime > 0 {
		deadline = start.Add(o.MaxTime)
		if p, err = fit(ctx, o, p, envs, deadline, res); err != nil {
			return nil, err
		}
	}
	cells, runs, err := execute(ctx, o, p, envs, hashes, res.Runs, deadline)
	if err != nil {
		return nil, err
	}
	if runs < res.Runs {
		res.Notes = append(res.Notes, fmt.Sprintf("time limit %v: stopped after %d of %d runs", o.MaxTime, runs, res.Runs))
		res.Runs = runs
	}
	res.Skipped = p.skipped
	if err := rank(res, p, cells, runs, o.Budget); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	res.ElapsedSeconds = res.Elapsed.Seconds()
	return res, nil
}

// fit reduces res.Runs and then the horizon (recalibrating) so that the
// estimated time of the comparison fits before the deadline, from a pilot
// of every candidate on the first instance.
func fit(ctx context.Context, o Options, p *plan, envs []*env.Bernoulli, deadline time.Time, res *Result) (*plan, error) {
	pilot := min(p.setting.Horizon, 1000)
	var perRound float64 // seconds per round, summed over candidates
	for i := range p.cands {
		er, pr := env.Streams(0, p.cands[i].cellKey, 0)
		t0 := time.Now()
		if r := play(&p.cands[i], p.setting, envs[0], er, pr, pilot, func() bool { return ctx.Err() != nil }); r.err != nil && !errors.Is(r.err, errStopped) {
			continue // reported when the cell runs
		}
		perRound += time.Since(t0).Seconds() / float64(pilot)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	left := time.Until(deadline).Seconds() * 0.8
	est := func(runs, horizon int) float64 {
		work := perRound * float64(horizon) * float64(len(envs)*runs)
		return work / float64(min(o.Workers, len(p.cands)*len(envs)*runs))
	}
	if est(res.Runs, res.Horizon) <= left {
		return p, nil
	}
	minRuns := min(res.Runs, 3)
	runs := res.Runs
	for runs > minRuns && est(runs, res.Horizon) > left {
		runs--
	}
	if runs < res.Runs {
		res.Notes = append(res.Notes, fmt.Sprintf("time limit %v: runs reduced from %d to %d", o.MaxTime, res.Runs, runs))
		res.Runs = runs
	}
	if est(runs, res.Horizon) <= left {
		return p, nil
	}
	minH := min(res.Horizon, max(100, 10*o.Arms))
	h := minH // no time left: the shortest horizon
	if left > 0 {
		h = int(float64(res.Horizon) * left / est(runs, res.Horizon))
	}
	h = max(min(h, res.Horizon), minH)
	if h == res.Horizon {
		return p, nil
	}
	res.Notes = append(res.Notes, fmt.Sprintf("time limit %v: horizon reduced from %d to %d (every policy calibrated for %d): the ranking is for the shorter horizon",
		o.MaxTime, res.Horizon, h, h))
	res.Horizon = h
	return newPlan(o, h)
}

// execute runs the cells run-major (every policy and instance of run 0,
// then run 1, …) on the worker pool. With a deadline, cells of runs after
// the first stop when it passes; it returns the cells, indexed
// [candidate][instance][run], and the number of complete runs.
func execute(ctx context.Context, o Options, p *plan, envs []*env.Bernoulli, hashes []uint64, runs int, deadline time.Time) ([][][]cellResult, int, error) {
	nc, ni := len(p.cands), len(envs)
	cells := make([][][]cellResult, nc)
	for c := range cells {
		cells[c] = make([][]cellResult, ni)
		for i := range cells[c] {
			cells[c][i] = make([]cellResult, runs)
		}
	}
	total := nc * ni * runs
	var (
		mu   sync.Mutex
		done int
		next int
		wg   sync.WaitGroup
	)
	late := func() bool { return !deadline.IsZero() && time.Now().After(deadline) }
	for range min(o.Workers, total) {
		wg.Go(func() {
			for {
				mu.Lock()
				j := next
				next++
				mu.Unlock()
				if j >= total || ctx.Err() != nil {
					return
				}
				r, rest := j/(nc*ni), j%(nc*ni)
				i, c := rest/nc, rest%nc
				stop := func() bool { return ctx.Err() != nil || (r > 0 && late()) }
				if stop() {
					cells[c][i][r] = cellResult{err: errStopped}
					continue
				}
				er, pr := env.Streams(hashes[i], p.cands[c].cellKey, r)
				cells[c][i][r] = play(&p.cands[c], p.setting, envs[i], er, pr, p.setting.Horizon, stop)
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(done, total)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	complete := runs
	for c := range cells {
		for i := range cells[c] {
			for r, x := range cells[c][i] {
				if errors.Is(x.err, errStopped) {
					complete = min(complete, r)
				}
			}
		}
	}
	return cells, complete, nil
}

// rank aggregates the cells into rows, ranks them and recommends. A
// candidate that failed in simulation becomes a skip; the reference failing
// is an error.
func rank(res *Result, p *plan, cells [][][]cellResult, runs int, t bandit.Target) error {
	ni := len(res.Instances)
	refMedian := make([]float64, ni)
	ref := len(p.cands) - 1 // the reference is last
	for i := range ni {
		for _, x := range cells[ref][i][:runs] {
			if x.err != nil {
				return fmt.Errorf("the reference policy %s on %s: %w", Reference, res.Instances[i].Name, x.err)
			}
		}
		refMedian[i] = median(cells[ref][i][:runs])
	}
	for c := range p.cands {
		cd := &p.cands[c]
		row := Row{Policy: cd.d.Name, Private: cd.d.Private, Params: cd.params, Calibrated: cd.calibrated,
			Guarantee: cd.guarantee, Epsilon: cd.eps}
		var failed error
		frozen := 0
		for i := range ni {
			xs := cells[c][i][:runs]
			st := Stats{MedianRegret: median(xs)}
			for _, x := range xs {
				if x.err != nil && failed == nil {
					failed = x.err
				}
				st.MeanRegret += x.regret / float64(runs)
				st.BestShare += x.bestShare / float64(runs)
				if x.frozen {
					st.FrozenRuns++
				}
			}
			frozen += st.FrozenRuns
			st.Ratio = math.Max(st.MedianRegret, RegretFloor) / math.Max(refMedian[i], RegretFloor)
			row.Instances = append(row.Instances, st)
			row.MedianRegret += st.MedianRegret / float64(ni)
			row.MeanRegret += st.MeanRegret / float64(ni)
			row.Ratio += st.Ratio / float64(ni)
			row.BestShare += st.BestShare / float64(ni)
		}
		if failed != nil {
			res.Skipped = append(res.Skipped, Skip{Policy: cd.d.Name, Reason: "failed in simulation: " + failed.Error()})
			continue
		}
		if !cd.meets {
			row.Note = "its certified guarantee for the horizon exceeds the budget: the service's filter stops it when the budget is spent"
		}
		if frozen > 0 {
			row.Note = strings.TrimPrefix(row.Note+fmt.Sprintf("; the filter froze it in %d of %d runs (it then replays its past decisions)", frozen, runs*ni), "; ")
		}
		res.Rows = append(res.Rows, row)
	}
	slices.SortStableFunc(res.Rows, func(a, b Row) int {
		if a.Ratio != b.Ratio {
			return cmpFloat(a.Ratio, b.Ratio)
		}
		if a.MeanRegret != b.MeanRegret {
			return cmpFloat(a.MeanRegret, b.MeanRegret)
		}
		return strings.Compare(a.Policy, b.Policy)
	})
	for i := range res.Rows {
		res.Rows[i].Rank = i + 1
	}
	res.Recommendation = recommendation(res, t)
	return nil
}

func cmpFloat(a, b float64) int {
	if a < b {
		return -1
	}
	return 1
}

// median is the median final regret of xs (mean of the middle two for an
// even count).
func median(xs []cellResult) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = x.regret
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// recommendation picks the first private row and says why in one line.
func recommendation(res *Result, t bandit.Target) Recommendation {
	var private []Row
	for _, r := range res.Rows {
		if r.Private {
			private = append(private, r)
		}
	}
	at := fmt.Sprintf("ε = %g, δ = %g, K = %d, T = %d", t.Epsilon, t.Delta, res.Arms, res.Horizon)
	if len(private) == 0 {
		return Recommendation{Reason: fmt.Sprintf("no private policy the service runs could be compared at %s (see the skipped list); raise the budget or the horizon", at)}
	}
	best := private[0]
	where := "on your means"
	if res.Panel {
		where = fmt.Sprintf("averaged over the %d panel instances", len(res.Instances))
	}
	reason := fmt.Sprintf("the lowest regret of the %d private policies compared at %s: %.3g× UCB1's median regret %s, playing the best arm in %.0f%% of the last 20%% of rounds",
		len(private), at, best.Ratio, where, 100*best.BestShare)
	if chance := 1 / float64(res.Arms); best.BestShare < chance+0.1*(1-chance) {
		reason += fmt.Sprintf(" (uniform play: %.0f%%): it barely learns at this budget; a larger ε or horizon helps", 100*chance)
	}
	return Recommendation{Policy: best.Policy, Params: best.Params, Reason: reason}
}
