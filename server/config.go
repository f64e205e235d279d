package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dpbandit/dpbandit/api"
	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Accounting says how an experiment's budget is enforced.
const (
	// AccountFilter: the policy is bandit.Metered; a privacy filter in the
	// policy's notion is charged NextCost before every Select.
	AccountFilter = "filter"
	// AccountNone: a non-private policy ("budget": null); nothing is enforced.
	AccountNone = "none"
)

// On-exhausted rules.
const (
	Freeze = "freeze"
	Stop   = "stop"
)

// createRequest is the body of POST /v1/experiments.
type createRequest struct {
	Name        string      `json:"name"`
	Arms        []string    `json:"arms"`
	Policy      string      `json:"policy"`
	Horizon     int         `json:"horizon"`
	Budget      *Budget     `json:"budget"`
	RewardRange *[2]float64 `json:"reward_range"`
	RewardWait  string      `json:"reward_wait"`
	// RewardRetention is how long a reward's value is kept after the policy
	// state that includes it is durable (then it is deleted; the event
	// keeps its reward). Default 24h; "0s" deletes it at once.
	RewardRetention string        `json:"reward_retention"`
	DefaultReward   *float64      `json:"default_reward"`
	OnExhausted     string        `json:"on_exhausted"`
	Params          bandit.Params `json:"params"`
	// DurableDecisions makes each decision wait until it is logged durably
	// (one group commit, a few ms) before it is returned.
	DurableDecisions *bool `json:"durable_decisions"`
	// Dim and FeatureNorm are for contextual policies: the feature
	// dimension, and the norm bound features are scaled by.
	Dim         *int     `json:"dim"`
	FeatureNorm *float64 `json:"feature_norm"`
}

// Budget is an experiment's privacy budget: (Epsilon, Delta), or Mu-GDP with
// Delta for reporting.
type Budget = api.Budget

// Config is an experiment's immutable configuration, stored as JSON.
type Config struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Arms        []string      `json:"arms"`
	Policy      string        `json:"policy"`
	Params      bandit.Params `json:"params"`               // complete: defaults, the user's and calibrated values
	UserParams  bandit.Params `json:"user_params"`          // as given
	Calibrated  []string      `json:"calibrated,omitempty"` // names set by calibration
	Horizon     int           `json:"horizon"`
	Budget      *Budget       `json:"budget"`
	RewardRange [2]float64    `json:"reward_range"`
	RewardWait  string        `json:"reward_wait"`
	// RewardRetention: see createRequest. Absent in configurations stored
	// before it existed, which get the default.
	RewardRetention string            `json:"reward_retention"`
	DefaultReward   *float64          `json:"default_reward"`
	OnExhausted     string            `json:"on_exhausted"`
	Private         bool              `json:"private"`
	Accounting      string            `json:"accounting"`
	Notion          privacy.Notion    `json:"notion"`        // the filter's notion
	FilterBudget    float64           `json:"filter_budget"` // μ, ρ or ε
	Report          privacy.Statement `json:"report"`        // the policy's privacy at the budget's δ, for the horizon
	Note            string            `json:"note"`
	// Warning, when set, says in words what will disappoint the user (a
	// budget that pays for only a few decisions).
	Warning string `json:"warning,omitempty"`
	// Chosen, when the request said "policy": "auto", says which policy
	// the service chose and why.
	Chosen    string    `json:"chosen,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// DurableDecisions: decisions are returned only once logged durably.
	DurableDecisions bool `json:"durable_decisions"`
	// Contextual policies choose among the arms' candidate feature vectors
	// (dimension Dim); a candidate x is used as x/max(FeatureNorm, ‖x‖₂),
	// so every vector the policy sees lies in the unit ball.
	Contextual  bool    `json:"contextual"`
	Dim         int     `json:"dim,omitempty"`
	FeatureNorm float64 `json:"feature_norm,omitempty"`

	wait      time.Duration
	retention time.Duration
}

// Limits of experiment configurations.
const (
	maxArms       = 1000
	maxNameLen    = 200
	maxArmNameLen = 200
	// maxDim bounds a contextual experiment's feature dimension: its policy
	// state (d×d matrices and d-vectors) is serialised whole by every group
	// commit that touches the experiment, about 11·d² bytes of JSON. At
	// d = 128 that is about 180 KB and 0.5 ms per commit; at 256 it was
	// 0.7 MB and 1.9 ms (BenchmarkSnapshotDim, BENCHMARKS.md), too much to
	// write up to 200 times a second. The papers' contextual experiments
	// use d ≤ 50.
	maxDim = 128
	// Budgets: an ε (or μ) above these promises nothing a user could
	// read as privacy, and the conversions lose their meaning well before
	// float64 overflows.
	maxEpsilon = 1000.0
	maxMu      = 100.0
	// A new private experiment's budget must pay for minAffordable
	// decisions (see affordable), or creation is refused; when it pays for
	// fewer than warnAffordable (and fewer than the horizon), the response
	// carries a warning that says so.
	minAffordable  = 3
	warnAffordable = 100
	maxHorizon     = 1 << 40
	minRewardWait  = time.Second
	maxRewardWait  = 30 * 24 * time.Hour
	defRewardWait  = 10 * time.Minute
	// Reward values are deleted this long after they are in a durable
	// policy state (docs/privacy-model.md, retention: raw rewards are kept only as long as they
	// are needed); the default leaves a day for retries of the same reward.
	defRetention   = 24 * time.Hour
	maxRetention   = 365 * 24 * time.Hour
	calibrateBasis = bandit.BasisCertified
)

// inputError is a 400 with a message that says what to change.
type inputError struct{ msg string }

func (e inputError) Error() string { return e.msg }

func badf(format string, a ...any) error { return inputError{fmt.Sprintf(format, a...)} }

// newConfig validates a create request and calibrates the policy to the
// budget for the horizon. It builds the policy once to surface parameter
// errors and to learn whether it is Metered.
//
// Calibration uses the certified basis: the project's certified (tight)
// value of the policy for the horizon equals the budget. That is the honest
// choice for a live service, whose promise to users must be the value the
// project certifies, not a paper's (sometimes looser, sometimes invalid)
// formula.
func newConfig(req createRequest, id string, now time.Time) (*Config, error) {
	c := &Config{ID: id, Name: strings.TrimSpace(req.Name), Policy: req.Policy, Horizon: req.Horizon,
		Budget: req.Budget, DefaultReward: req.DefaultReward, OnExhausted: req.OnExhausted, CreatedAt: now.UTC()}
	if err := checkText("name", c.Name, maxNameLen); err != nil {
		return nil, err
	}
	if len(req.Arms) < 1 || len(req.Arms) > maxArms {
		return nil, badf("arms: give between 1 and %d arm names (got %d)", maxArms, len(req.Arms))
	}
	seen := map[string]bool{}
	for i, a := range req.Arms {
		if err := checkText(fmt.Sprintf("arms[%d]", i), a, maxArmNameLen); err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, badf("arms[%d]: arm %q is listed twice; arm names must be unique", i, a)
		}
		seen[a] = true
	}
	c.Arms = slices.Clone(req.Arms)
	if c.Horizon < 1 || c.Horizon > maxHorizon {
		return nil, badf("horizon: give the planned number of decisions T as an integer in [1, 2^40] (got %d)", c.Horizon)
	}
	c.RewardRange = [2]float64{0, 1}
	if req.RewardRange != nil {
		c.RewardRange = *req.RewardRange
	}
	lo, hi := c.RewardRange[0], c.RewardRange[1]
	if err := checkRange(lo, hi); err != nil {
		return nil, err
	}
	c.RewardWait = req.RewardWait
	if c.RewardWait == "" {
		c.RewardWait = defRewardWait.String()
	}
	w, err := time.ParseDuration(c.RewardWait)
	if err != nil || w < minRewardWait || w > maxRewardWait {
		return nil, badf("reward_wait: give a duration such as \"10m\" or \"2h\" between %v and %v (got %q)", minRewardWait, maxRewardWait, c.RewardWait)
	}
	c.wait = w
	c.RewardRetention = req.RewardRetention
	if c.retention, err = parseRetention(c.RewardRetention); err != nil {
		return nil, badf("%v", err)
	}
	if c.RewardRetention == "" {
		c.RewardRetention = defRetention.String()
	}
	if d := c.DefaultReward; d != nil && (!finite(*d) || *d < lo || *d > hi) {
		return nil, badf("default_reward: %v lies outside reward_range [%v, %v]; give a value in the range or null", *d, lo, hi)
	}
	switch c.OnExhausted {
	case "":
		c.OnExhausted = Freeze
	case Freeze, Stop:
	default:
		return nil, badf("on_exhausted: give \"freeze\" (play from the empirical distribution of past decisions) or \"stop\" (refuse decisions with 409); got %q", c.OnExhausted)
	}
	if c.Policy == "" {
		return nil, badf("policy: give a policy name (served: %s), or \"auto\" to let the service choose the private policy that learns best at the budget", servableNames())
	}
	d, err := bandit.Lookup(bandit.AnyKind, c.Policy)
	if err != nil {
		return nil, badf("policy: unknown policy %q; the service runs: %s (GET /v1/policies lists them with their parameters)", c.Policy, servableNames())
	}
	if d.Serving == nil {
		// docs/privacy-model.md rule 4: the pure-DP comparators and the private linear
		// baselines add floating-point noise from the simulation samplers to
		// values they keep (tree nodes, noisy means), which is attackable
		// (Mironov 2012); they run in simulation only.
		return nil, badf("policy: %s runs in simulation only (it adds floating-point noise to values it keeps, which is attackable: Mironov 2012); the service runs: %s", c.Policy, servableNames())
	}
	c.Contextual = d.NewContextual != nil
	if c.Contextual {
		if req.Dim == nil || *req.Dim < 1 || *req.Dim > maxDim {
			return nil, badf("dim: policy %s is contextual: give the feature dimension d of the candidates as an integer in [1, %d]", c.Policy, maxDim)
		}
		c.Dim, c.FeatureNorm = *req.Dim, 1
		if req.FeatureNorm != nil {
			c.FeatureNorm = *req.FeatureNorm
		}
		if !(c.FeatureNorm > 0) || !finite(c.FeatureNorm) {
			return nil, badf("feature_norm: give a finite bound > 0 on the candidates' Euclidean norm (got %v)", c.FeatureNorm)
		}
	} else if req.Dim != nil || req.FeatureNorm != nil {
		return nil, badf("dim and feature_norm are for contextual policies; %s is K-armed: remove them", c.Policy)
	}
	if req.DurableDecisions != nil {
		c.DurableDecisions = *req.DurableDecisions
	}
	if d.Serving.DurableSelect {
		if req.DurableDecisions != nil && !*req.DurableDecisions {
			return nil, badf("durable_decisions: policy %s keeps privacy accounting in the state its Select changes (per-estimate sample counts), which a crash must not lose; it always runs with durable decisions, so omit durable_decisions or set it to true", c.Policy)
		}
		c.DurableDecisions = true
	}
	c.UserParams = bandit.Params{}
	maps.Copy(c.UserParams, req.Params)
	for k, v := range req.Params {
		if !finite(v) {
			return nil, badf("params.%s: %v is not a finite number", k, v)
		}
	}
	for k, v := range d.Serving.Params {
		if u, set := c.UserParams[k]; set && u != v {
			return nil, badf("params.%s: the service runs %s with %s = %v (%s); remove it", k, c.Policy, k, v, d.Serving.Why)
		}
		c.UserParams[k] = v
	}
	setting := c.setting()
	c.Private = d.Private
	if !d.Private {
		if c.Budget != nil {
			return nil, badf("budget: policy %s is not private, so it cannot spend a privacy budget; set \"budget\": null (it is then marked \"not private\") or choose a private policy", c.Policy)
		}
		params, err := d.Complete(c.UserParams)
		if err != nil {
			return nil, badf("params: %v", err)
		}
		c.Params = params
		if _, err := build(d, setting, params, bandit.NewRand(1, 2)); err != nil {
			return nil, badf("%v", err)
		}
		c.Accounting, c.Notion = AccountNone, privacy.NotionNone
		c.Report, _ = privacy.NotPrivate(c.Policy, "the policy states no privacy guarantee").At(0.5)
		c.Note = "not private: decisions depend on raw rewards and no budget is enforced"
		return c, nil
	}
	if c.Budget == nil {
		return nil, badf("budget: policy %s is private and needs a budget, e.g. \"budget\": {\"epsilon\": 1, \"delta\": 1e-6} (use a non-private policy such as ucb1 for \"budget\": null)", c.Policy)
	}
	b := *c.Budget
	if b.Mu != 0 && b.Epsilon != 0 {
		return nil, badf("budget: give either epsilon (with delta) or mu (GDP), not both")
	}
	if b.Mu != 0 {
		if !(b.Mu > 0 && b.Mu <= maxMu) {
			return nil, badf("budget.mu: give μ in (0, %g] (got %v)", maxMu, b.Mu)
		}
	} else if !(b.Epsilon > 0 && b.Epsilon <= maxEpsilon) {
		return nil, badf("budget.epsilon: give ε in (0, %g] (got %v); an ε above a few units already promises little", maxEpsilon, b.Epsilon)
	}
	if !(b.Delta > 0 && b.Delta < 1) {
		return nil, badf("budget.delta: give δ in (0, 1), e.g. 1e-6 (got %v)", b.Delta)
	}
	target := bandit.Target{Epsilon: b.Epsilon, Delta: b.Delta, Mu: b.Mu, Basis: calibrateBasis}
	params := maps.Clone(c.UserParams)
	if d.Calibrate != nil {
		cp, err := d.Calibrate(setting, target, maps.Clone(c.UserParams))
		if err != nil {
			return nil, badf("calibrating %s to the budget for horizon %d: %v", c.Policy, c.Horizon, err)
		}
		for _, k := range slices.Sorted(maps.Keys(cp)) {
			if old, ok := params[k]; !ok || old != cp[k] {
				c.Calibrated = append(c.Calibrated, k)
			}
			params[k] = cp[k]
		}
	}
	full, err := d.Complete(params)
	if err != nil {
		return nil, badf("params: %v", err)
	}
	c.Params = full
	pol, err := build(d, setting, full, bandit.NewRand(1, 2))
	if err != nil {
		return nil, badf("%v", err)
	}
	rep, err := d.Report(setting, full)
	if err != nil {
		return nil, badf("privacy report of %s: %v", c.Policy, err)
	}
	if c.Report, err = rep.At(b.Delta); err != nil {
		return nil, badf("privacy report of %s at δ=%g: %v", c.Policy, b.Delta, err)
	}
	ach, err := bandit.Achieved(rep, target, b.Delta)
	if err != nil {
		return nil, badf("comparing %s's privacy with the budget: %v", c.Policy, err)
	}
	_, metered := pol.(bandit.Metered)
	notion := rep.Certified.Notion
	if metered && (notion == privacy.NotionGDP || notion == privacy.NotionZCDP || notion == privacy.NotionPure) {
		c.Accounting, c.Notion = AccountFilter, notion
		if c.FilterBudget, err = filterBudget(notion, b); err != nil {
			return nil, badf("budget: %v", err)
		}
		n, worst, err := affordable(c, pol, warnAffordable)
		if err != nil {
			return nil, badf("policy %s: %v", c.Policy, err)
		}
		if n < minAffordable {
			return nil, badf("budget: it pays for only %d decision(s) of policy %s, even with every reward arriving at once: a step costs up to %s = %.4g (ε ≈ %s at δ = %g) and the budget is %s = %.4g. Raise the budget, or choose a policy that learns at it, such as mts-gaussian (calibrated to the budget for the horizon); GET /v1/policies lists them",
				n, c.Policy, paramName(c.Notion), worst, epsWords(c.Notion, worst, b.Delta), b.Delta, paramName(c.Notion), c.FilterBudget)
		}
		if n < warnAffordable && n < c.Horizon {
			then := "serves decisions from the empirical distribution of the past ones (on_exhausted \"freeze\"), learning nothing more"
			if c.OnExhausted == Stop {
				then = "refuses decisions (on_exhausted \"stop\")"
			}
			c.Warning = fmt.Sprintf("the budget pays for only %d of the %d planned decisions of policy %s, even with every reward arriving at once (fewer when rewards come late): a step costs up to %s = %.4g and the budget is %s = %.4g. After that the experiment %s. Raise the budget, or choose a policy calibrated to it such as mts-gaussian",
				n, c.Horizon, c.Policy, paramName(c.Notion), worst, paramName(c.Notion), c.FilterBudget, then)
		}
		if ach.Meets {
			c.Note = "calibrated: " + ach.String() + "; the filter charges each step's cost"
		} else {
			c.Note = fmt.Sprintf("the policy's certified guarantee for horizon %d (%s) exceeds the budget: the filter stops the policy at the first step that would exceed it", c.Horizon, ach)
		}
	} else {
		// Every served private policy is bandit.Metered in a GDP, zCDP or
		// pure notion (Descriptor.Serving); a budget is enforced only by
		// charging a filter before each step.
		return nil, badf("policy: %s states no per-step privacy cost in a notion a filter can charge, so the service cannot enforce a budget for it; the service runs: %s", c.Policy, servableNames())
	}
	if len(c.Calibrated) > 0 {
		c.Note += " (calibrated " + strings.Join(c.Calibrated, ", ") + ")"
	}
	return c, nil
}

// checkText validates a user-given name: valid UTF-8, no control
// characters (NUL included, which PostgreSQL's text type refuses), not
// empty or blank, and at most maxChars characters (runes, not bytes), so
// that every store accepts and rejects the same names.
func checkText(field, s string, maxChars int) error {
	if !utf8.ValidString(s) {
		return badf("%s: give valid UTF-8 text", field)
	}
	n := 0
	for i, r := range s {
		if unicode.IsControl(r) {
			return badf("%s: control character %U at byte %d is not allowed; give printable text of 1 to %d characters", field, r, i, maxChars)
		}
		n++
	}
	if strings.TrimSpace(s) == "" || n > maxChars {
		return badf("%s: give a non-blank name of 1 to %d characters (got %d)", field, maxChars, n)
	}
	return nil
}

// checkRange validates a reward range: finite ends lo < hi whose width
// hi − lo is finite, so that the scaling (x − lo)/(hi − lo) of a reward x
// in [lo, hi] into [0, 1] is finite and never overflows.
func checkRange(lo, hi float64) error {
	if !finite(lo) || !finite(hi) || !(lo < hi) {
		return badf("reward_range: give [lo, hi] with finite lo < hi (got [%v, %v])", lo, hi)
	}
	if w := hi - lo; !finite(w) {
		return badf("reward_range: the width hi − lo of [%v, %v] overflows a float64; give a range narrower than %.3g", lo, hi, math.MaxFloat64)
	}
	return nil
}

// affordable reports how many of a fresh policy's first steps the filter's
// budget pays for, up to n, with a reward of 1/2 arriving right after each
// decision; it also returns the costliest of those steps. Prompt rewards
// are the cheap case for the Thompson-sampling family (a step's cost falls
// as the arms' counts grow; late rewards keep it high), so when even this
// path cannot pay for n decisions, no traffic can.
func affordable(c *Config, pol any, n int) (int, float64, error) {
	met := pol.(bandit.Metered)
	f, err := newFilter(c.Notion, c.FilterBudget)
	if err != nil {
		return 0, 0, err
	}
	var cands [][]float64
	if c.Contextual {
		cands = make([][]float64, len(c.Arms))
		for i := range cands {
			cands[i] = make([]float64, c.Dim)
		}
	}
	worst := 0.0
	for i := range n {
		x := met.NextCost().Value
		worst = max(worst, x)
		if !f.CanSpend(x) {
			return i, worst, nil
		}
		if err := f.Spend(x); err != nil {
			return i, worst, nil
		}
		err := safely(func() {
			switch p := pol.(type) {
			case bandit.Contextual:
				p.Update(cands[p.Select(cands)], 0.5)
			case bandit.Policy:
				p.Update(p.Select(), 0.5)
			}
		})
		if err != nil {
			return 0, 0, err
		}
	}
	return n, worst, nil
}

// epsWords is a per-step cost as ε at δ, for messages.
func epsWords(n privacy.Notion, v, delta float64) string {
	if eps, _, err := guaranteeOf(n, v).Epsilon(delta); err == nil && finite(eps) {
		return fmt.Sprintf("%.4g", eps)
	}
	return "∞"
}

// filterBudget converts the budget to the filter's parameter.
func filterBudget(n privacy.Notion, b Budget) (float64, error) {
	switch n {
	case privacy.NotionGDP:
		if b.Mu > 0 {
			return b.Mu, nil
		}
		return privacy.GDPMu(b.Epsilon, b.Delta)
	case privacy.NotionZCDP:
		eps := b.Epsilon
		if b.Mu > 0 {
			var err error
			if eps, err = privacy.GDPEpsilon(b.Mu, b.Delta); err != nil {
				return 0, err
			}
		}
		rho, _, err := privacy.ZCDPRho(eps, b.Delta)
		return rho, err
	case privacy.NotionPure:
		if b.Mu > 0 {
			return 0, errors.New("a pure-DP policy needs an (epsilon, delta) budget, not mu")
		}
		return b.Epsilon, nil
	}
	return 0, fmt.Errorf("no filter for notion %q", n)
}

// load restores the unexported fields after decoding a stored Config.
func (c *Config) load() error {
	w, err := time.ParseDuration(c.RewardWait)
	if err != nil {
		return fmt.Errorf("experiment %s: reward_wait %q: %w", c.ID, c.RewardWait, err)
	}
	c.wait = w
	if c.retention, err = parseRetention(c.RewardRetention); err != nil {
		return fmt.Errorf("experiment %s: %w", c.ID, err)
	}
	if c.RewardRetention == "" {
		c.RewardRetention = defRetention.String()
	}
	return nil
}

// parseRetention reads reward_retention ("" is the default).
func parseRetention(s string) (time.Duration, error) {
	if s == "" {
		return defRetention, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxRetention {
		return 0, fmt.Errorf("reward_retention: give a duration such as \"24h\" or \"0s\" (delete each reward's value as soon as the policy state that includes it is durable) between 0s and %v (got %q)", maxRetention, s)
	}
	return d, nil
}

func decodeConfig(b []byte) (*Config, error) {
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, c.load()
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// normalize maps a reward in the experiment's range to [0, 1]. It reports
// false when the result is not a number in [0, 1] (a range or reward that
// validation should have refused, e.g. from a configuration stored before
// the range's width was checked); the caller must then not apply it.
func (c *Config) normalize(x float64) (float64, bool) {
	lo, hi := c.RewardRange[0], c.RewardRange[1]
	v := (x - lo) / (hi - lo)
	if math.IsNaN(v) || v < 0 || v > 1 {
		return v, false
	}
	return v, true
}

// setting is the public setting the policy is built for.
func (c *Config) setting() bandit.Setting {
	return bandit.Setting{K: len(c.Arms), Horizon: c.Horizon, Dim: c.Dim}
}

// build constructs a K-armed (bandit.Policy) or contextual
// (bandit.Contextual) policy from its descriptor.
func build(d bandit.Descriptor, s bandit.Setting, p bandit.Params, r bandit.Rand) (any, error) {
	if d.NewContextual != nil {
		return d.NewContextual(s, p, r)
	}
	return d.New(s, p, r)
}

// servableNames lists the policies the service may run (Descriptor.Serving
// set), for error messages.
func servableNames() string {
	var names []string
	for _, d := range bandit.All(bandit.AnyKind) {
		if d.Serving != nil {
			names = append(names, d.Name)
		}
	}
	return strings.Join(names, ", ")
}
