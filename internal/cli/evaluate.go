package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/eval"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
)

type evaluateCmd struct {
	Log          string   `help:"Logged bandit feedback: a CSV with a header, or JSONL (one object per line); with --format obd, an Open Bandit Dataset directory; with --format service, a decision log from 'dpbandit export'; with --format r6, a Yahoo! R6 file (plain or .gz) or a directory of day files." required:"" type:"path" placeholder:"FILE|DIR"`
	Format       string   `help:"Log format: csv, jsonl, obd, service or r6 (default: by extension; .jsonl/.ndjson/.json are JSONL)." enum:"csv,jsonl,obd,service,r6," default:"" placeholder:"csv|jsonl|obd|service|r6"`
	Campaign     string   `help:"With --format obd: the campaign (men, women or all)." enum:"men,women,all," default:"" placeholder:"men|women"`
	Target       []string `help:"A policy to evaluate (repeat the flag for several): columns (the log's pi_e_<a> columns), uniform (1/A per action), probs:FILE (a CSV item_id,pos0,pos1,... of context-free probabilities, one row per action), or policy:SPEC (a registered policy, e.g. policy:ucb1; see 'dpbandit policies')." default:"columns" sep:"none" placeholder:"columns|uniform|probs:FILE|policy:SPEC"`
	Estimators   string   `help:"Estimators, comma-separated: ips (alias ipw), snips (snipw), dm, dr, switch-dr, or all. Learning policies on a uniform log get replay instead." default:"all" placeholder:"LIST"`
	SwitchTau    float64  `help:"Switch-DR threshold: rounds whose importance weight exceeds it keep only their DM term." default:"10" placeholder:"TAU"`
	Bootstrap    int      `help:"Bootstrap replicates for the percentile interval (0: none)." default:"1000" placeholder:"R"`
	Seed         uint64   `help:"Seed of the bootstrap, the cross-fitting folds and the policy of --target policy:SPEC." default:"1" placeholder:"S"`
	Folds        int      `help:"Cross-fitting folds of the reward model (used when the log has no qhat_<a> columns)." default:"3" placeholder:"K"`
	Model        string   `help:"Reward model when fitted: auto (logistic for 0/1 rewards, else ridge), ridge or logistic." enum:"auto,ridge,logistic" default:"auto"`
	Delay        int      `help:"Replay (--target policy:SPEC on a uniform log): feed each matched round's reward back this many matched rounds later." default:"0" aliases:"replay-delay" placeholder:"D"`
	Draws        int      `help:"Monte Carlo draws of a randomised policy's action distribution (--target policy:SPEC without replay)." default:"10000" placeholder:"N"`
	MaxEvents    int      `help:"With --format r6: replay at most this many events (0: all)." default:"0" placeholder:"N"`
	PrivacyDelta float64  `name:"privacy-delta" help:"δ at which a private target's certified guarantee is stated as ε (a policy with its own delta parameter uses that)." default:"1e-6" placeholder:"DELTA"`
	Out          string   `help:"Also write the results to this directory: results.json (as --json), results.md (the tables) and estimates.svg/.png (each estimate with its 95% interval)." type:"path" placeholder:"DIR"`
	JSON         bool     `help:"Print the result as JSON instead of the tables."`
}

func (evaluateCmd) Help() string {
	return `Off-policy evaluation: what would the target policies have earned on this log?

The log has one row per logged round with the columns action (an index, or a name:
names are numbered in order of first appearance), reward, pscore (the logging
policy's probability of the logged action, in (0, 1]), and optionally position
(0-based slot), context_0..context_<d-1>, timestamp, pi_e_<a> (the target's
probability of action a; pi_e_<a>_<pos> per position) and qhat_<a> (a reward
model's prediction; qhat_<a>_<pos> per position). Other columns are ignored.

Estimators (as in the Open Bandit Pipeline; w = pi_e(a_i|x_i) / pscore_i):
  ips        mean of w·r                       (Horvitz-Thompson)
  snips      Σ w·r / Σ w                       (Swaminathan & Joachims 2015)
  dm         mean of Σ_a pi_e(a|x)·q̂(x,a)      (direct method)
  dr         dm + w·(r − q̂(x,a_i))             (Dudík, Langford & Li 2011)
  switch-dr  dr where w ≤ tau, dm elsewhere    (Wang, Agarwal & Dudík 2017; OBP's form)
With positions, pi_e and q̂ are taken at the logged position.

q̂ comes from the qhat columns, or else from a reward model cross-fitted over
--folds folds (per action and position, on the context).

Each row of a table: the estimate, a 95% normal interval (± 1.96 standard
errors of the per-round terms; SNIPS by the delta method), a 95% percentile
bootstrap interval (Poisson bootstrap, --bootstrap replicates, seeded, shared
by every estimator and target), and the effective sample size (Σw)²/Σw² of the
importance weights. Repeat --target to compare several policies on one log.

--target policy:SPEC evaluates a registered policy (K-armed; contextual ones
in replay only). Every registered policy learns, so when the log's logger is
uniform (every pscore within 5% of 1/A) the command runs replay (Li, Chu,
Langford & Wang, WSDM 2011): the policy is asked at every logged round, a round
is kept when its choice equals the logged action (whatever the position), and
the reward is fed back --delay matched rounds later; the replay row is
clicks/matches with a 95% normal interval over the matched rounds. A
contextual policy sees, per round, one candidate per action: the item features
(item_context.csv) with --format obd, the round's context itself for a policy
with one model per action (disjoint=1, Li et al. 2010), else e_a ⊗ x (the
context in action a's block). On a log whose logger is not uniform, the policy
is frozen as first built and its action distribution (exact for deterministic
rules, else --draws Monte Carlo draws, standard error ≤ 0.5/√draws) is the
target of the estimators. A private target's certified guarantee is printed
with it.

Formats:
  obd      the Open Bandit Dataset as shipped (Saito et al., NeurIPS 2021;
           st-tech/zr-obp): --log is a behaviour policy's directory (random/ or
           bts/) or a campaign directory; action = item_id, position =
           position − 1, pscore = propensity_score, reward = click; the context
           is a one-hot block per hashed user_feature_0..3, then the user-item
           affinities.
  service  the decision service's log ('dpbandit export --experiment ID'):
           action = arm_index, pscore = the released propensity, context = the
           chosen candidate's features; decisions without a reward or without a
           released propensity are counted and left out.
  r6       Yahoo! Front Page Today Module (Webscope R6A, licensed: see 'dpbandit
           data list'), [MT]'s data: replay only (--target policy:SPEC with a
           contextual policy), streamed; each event's candidates are its article
           pool, article a's vector u∘a (user and article features, d = 6).

Examples:

  dpbandit evaluate --log logged.csv
  dpbandit evaluate --log logged.csv --target uniform --target probs:bts_probs.csv --out ope
  dpbandit evaluate --log logged.jsonl --target uniform --estimators ips,snips --json
  dpbandit evaluate --format obd --log open-bandit-dataset-sample/random --campaign men --target uniform
  dpbandit evaluate --format obd --log open-bandit-dataset-sample/random --campaign women --target policy:beta-ts --delay 100
  dpbandit evaluate --format service --log decisions.jsonl --target uniform --target policy:ucb1
  dpbandit evaluate --format r6 --log R6/ --target policy:mt-linucb:epsilon0=0.1 --delay 100
`
}

// evalTarget is one target's evaluation: a distribution evaluated by the
// estimators, or a replay.
type evalTarget struct {
	arg     string // as given on the command line
	desc    string
	dist    *eval.ActionDist
	replay  *eval.ReplayResult
	cands   string // replay: the candidates a contextual policy saw
	results []eval.Result
	privacy *privacy.Statement
	privErr string
}

func (c *evaluateCmd) validate() ([]eval.Estimator, error) {
	ests, err := eval.ParseEstimators(c.Estimators)
	if err != nil {
		return nil, badInput("--estimators: %v", err)
	}
	switch {
	case c.Bootstrap < 0 || c.Bootstrap > 100000:
		return nil, badInput("--bootstrap must be in [0, 100000], got %d", c.Bootstrap)
	case c.SwitchTau < 0 || math.IsNaN(c.SwitchTau):
		return nil, badInput("--switch-tau must be ≥ 0, got %v", c.SwitchTau)
	case c.Folds < 1:
		return nil, badInput("--folds must be ≥ 1, got %d", c.Folds)
	case c.Delay < 0:
		return nil, badInput("--delay (--replay-delay) must be ≥ 0, got %d", c.Delay)
	case c.Draws < 1:
		return nil, badInput("--draws must be ≥ 1, got %d", c.Draws)
	case c.MaxEvents < 0:
		return nil, badInput("--max-events must be ≥ 0, got %d", c.MaxEvents)
	case c.MaxEvents > 0 && c.Format != "r6":
		return nil, badInput("--max-events applies to --format r6 only")
	case !(c.PrivacyDelta > 0 && c.PrivacyDelta < 1):
		return nil, badInput("--privacy-delta must be in (0, 1), got %v", c.PrivacyDelta)
	case c.Campaign != "" && c.Format != "obd":
		return nil, badInput("--campaign applies to --format obd only")
	case c.Format == "obd" && c.Campaign == "":
		return nil, badInput("--format obd needs --campaign men, women or all")
	case len(c.Target) == 0:
		return nil, badInput("--target: give at least one")
	}
	return ests, nil
}

func (c *evaluateCmd) Run(g *Globals) error {
	ests, err := c.validate()
	if err != nil {
		return err
	}
	start := time.Now()
	if c.Format == "r6" {
		return c.runR6(g, start)
	}
	// The log is most of the heap and lives for the whole run, so the
	// garbage collector's default (collect when the heap has doubled)
	// lets the process reach about twice the live data. Collecting at
	// half that growth keeps the peak near 1.5× (measured on a 1M-row,
	// 271 MB log: 413 → 391 MB, no more CPU), unless GOGC is set.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(50))
	}
	var l *eval.Log
	var counts *eval.ServiceCounts
	switch c.Format {
	case "obd":
		l, err = eval.ReadOBD(c.Log, c.Campaign)
	case "service":
		var sc eval.ServiceCounts
		l, sc, err = eval.ReadServiceFile(c.Log)
		counts = &sc
	default:
		l, err = eval.ReadFile(c.Log, c.Format)
	}
	if err != nil {
		return err
	}
	// The reader's block buffers are garbage now; collecting them before
	// the estimators allocate lets those reuse the memory instead of
	// adding to the peak (one collection of a pointer-free heap: a few ms).
	runtime.GC()
	loaded := time.Since(start)
	targets := make([]*evalTarget, len(c.Target))
	for i, t := range c.Target {
		if targets[i], err = c.buildTarget(l, t); err != nil {
			return err
		}
	}
	// One Evaluate per distribution target; they share the seed, so the
	// bootstrap replicates are the same rounds for every target.
	var model string
	for _, t := range targets {
		if t.dist == nil {
			continue
		}
		rep, err := eval.Evaluate(l, t.dist, eval.Options{
			Estimators: ests, SwitchTau: c.SwitchTau, Bootstrap: c.Bootstrap, Seed: c.Seed,
			Model: eval.ModelOptions{Kind: c.Model, Folds: c.Folds, Seed: c.Seed},
		})
		if err != nil {
			return fmt.Errorf("--target %s: %w", t.arg, err)
		}
		t.results = rep.Results
		if rep.Model != "" {
			model = rep.Model
		}
	}
	out := c.jsonOut(l, targets, model, counts)
	if c.Out != "" {
		if err := c.writeOut(out, func(w io.Writer) error { return c.tables(w, l, targets, model, counts, loaded, start) }); err != nil {
			return err
		}
	}
	if c.JSON {
		return writeJSON(g.Stdout, out)
	}
	if err := c.tables(g.Stdout, l, targets, model, counts, loaded, start); err != nil {
		return err
	}
	if c.Out != "" {
		fmt.Fprintf(g.Stdout, "\nwrote results.json, results.md and estimates.svg/.png to %s\n", c.Out)
	}
	return nil
}

// buildTarget resolves one --target on the log.
func (c *evaluateCmd) buildTarget(l *eval.Log, t string) (*evalTarget, error) {
	et := &evalTarget{arg: t}
	var err error
	switch {
	case t == "columns":
		if l.PiE == nil {
			return nil, badInput("--target columns: %s has no pi_e_<a> columns (use --target uniform or probs:FILE)", c.Log)
		}
		et.dist, et.desc = l.PiE, "the log's pi_e columns"
	case t == "uniform":
		et.dist, et.desc = eval.Uniform(l.A), fmt.Sprintf("uniform over %d actions", l.A)
	case strings.HasPrefix(t, "probs:"):
		path := strings.TrimPrefix(t, "probs:")
		if et.dist, err = eval.ReadProbsFile(path, l.A, l.ActionNames); err != nil {
			return nil, err
		}
		et.desc = "context-free probabilities from " + path
	case strings.HasPrefix(t, "policy:"):
		spec := strings.TrimPrefix(t, "policy:")
		learns, err := eval.Learns(spec)
		if err != nil {
			return nil, badInput("--target %s: %v", t, err)
		}
		c.privacyOf(et, spec, bandit.Setting{K: l.A, Horizon: max(l.N, 1), Dim: l.D})
		if uniform, _, _ := eval.UniformLogger(l, 0.05); uniform && learns {
			return et, c.replayTarget(et, l, spec)
		}
		d, info, err := eval.PolicyTarget(l, spec, c.Draws, c.Seed)
		if err != nil {
			return nil, badInput("--target %s: %v", t, err)
		}
		et.dist = d
		et.desc = fmt.Sprintf("%s frozen as first built (not replayed: the log's logger is not uniform), ", info.Policy)
		if info.Draws == 0 {
			et.desc += "exact probabilities"
		} else {
			et.desc += fmt.Sprintf("%d Monte Carlo draws, standard error ≤ %.2g", info.Draws, info.SE)
		}
	default:
		return nil, badInput("--target %q: want columns, uniform, probs:FILE or policy:SPEC", t)
	}
	return et, nil
}

// privacyOf states the policy's certified guarantee (at its own delta
// parameter, else --privacy-delta) when it is private, as 'dpbandit privacy
// policy' does.
func (c *evaluateCmd) privacyOf(et *evalTarget, spec string, s bandit.Setting) {
	if sp, err := bandit.ParseSpec(spec); err == nil {
		if d, err := bandit.Lookup(bandit.AnyKind, sp.Name); err == nil && d.NewContextual == nil {
			s.Dim = 0
		} else if s.Dim == 0 {
			s.Dim = 1
		}
	}
	st, err := policyStatement(spec, s, c.PrivacyDelta)
	if err == nil {
		if v, ok := st.Params["delta"]; ok && v > 0 && v < 1 && v != c.PrivacyDelta {
			st, err = policyStatement(spec, s, v)
		}
	}
	switch {
	case err != nil:
		et.privErr = err.Error()
	case st.Certified.Notion != privacy.NotionNone:
		et.privacy = &st
	}
}

// replayTarget replays a learning policy through a uniform logger's log.
func (c *evaluateCmd) replayTarget(et *evalTarget, l *eval.Log, spec string) error {
	o := eval.ReplayOptions{Delay: c.Delay, Seed: c.Seed}
	if sp, err := bandit.ParseSpec(spec); err == nil {
		if d, err := bandit.Lookup(bandit.AnyKind, sp.Name); err == nil && d.NewContextual != nil {
			switch {
			case c.Format == "obd":
				items, err := eval.ReadOBDItems(c.Log, c.Campaign)
				if err != nil {
					return err
				}
				if len(items) < l.A {
					return fmt.Errorf("item_context.csv has %d items, the log %d", len(items), l.A)
				}
				o.Candidates, o.Dim = eval.ItemCandidates(items), len(items[0])
				et.cands = fmt.Sprintf("item features from item_context.csv (%d dimensions)", o.Dim)
			case sp.Params["disjoint"] == 1:
				et.cands = fmt.Sprintf("the context (%d dimensions), one model per action", l.D)
			default:
				et.cands = fmt.Sprintf("e_a ⊗ context (%d dimensions)", l.A*l.D)
			}
		}
	}
	res, err := eval.Replay(l, spec, o)
	if err != nil {
		return badInput("--target policy:%s: %v", spec, err)
	}
	et.replay = res
	et.desc = fmt.Sprintf("%s, learning: evaluated by replay (Li, Chu, Langford & Wang 2011) since the logger is uniform (pscore 1/%d)", res.Policy, l.A)
	return nil
}

// runR6 replays every target through a Yahoo! R6 log (streamed, once per
// target).
func (c *evaluateCmd) runR6(g *Globals, start time.Time) error {
	var targets []*evalTarget
	for _, t := range c.Target {
		spec, ok := strings.CutPrefix(t, "policy:")
		if !ok {
			return badInput("--format r6 replays policies only: --target policy:SPEC with a contextual policy (got %q)", t)
		}
		et := &evalTarget{arg: t, cands: "each event's article pool, u∘a per article (6 dimensions)"}
		c.privacyOf(et, spec, bandit.Setting{K: 20, Horizon: eval.R6DefaultHorizon, Dim: 6})
		res, err := eval.ReplayR6File(c.Log, spec, eval.R6Options{Delay: c.Delay, Seed: c.Seed, MaxEvents: c.MaxEvents})
		if err != nil {
			return fmt.Errorf("--target %s: %w", t, err)
		}
		et.replay = res
		et.desc = res.Policy + ", learning: evaluated by replay (Li, Chu, Langford & Wang 2011); R6's displayed article is uniform over its pool"
		targets = append(targets, et)
	}
	n := targets[0].replay.Rounds
	out := evaluateJSONOut{Log: c.Log, Format: "r6", N: n, Seed: c.Seed}
	for _, t := range targets {
		out.Targets = append(out.Targets, t.json())
	}
	tables := func(w io.Writer) error {
		fmt.Fprintf(w, "%s: %d events of Yahoo! R6 (read and replayed in %s)\n", c.Log, n, time.Since(start).Round(time.Millisecond))
		for _, t := range targets {
			if err := t.table(w, c); err != nil {
				return err
			}
		}
		return nil
	}
	if c.Out != "" {
		if err := c.writeOut(out, tables); err != nil {
			return err
		}
	}
	if c.JSON {
		return writeJSON(g.Stdout, out)
	}
	return tables(g.Stdout)
}

// tables prints the header and one table per target.
func (c *evaluateCmd) tables(w io.Writer, l *eval.Log, targets []*evalTarget, model string, counts *eval.ServiceCounts, loaded time.Duration, start time.Time) error {
	fmt.Fprintf(w, "%s: %d rows used, %d actions, %d position(s), %d context features (read in %s)\n",
		c.Log, l.N, l.A, l.P, l.D, loaded.Round(time.Millisecond))
	if counts != nil {
		if s := counts.String(); s != "" {
			fmt.Fprintf(w, "decision log: %d lines, %d used; not used: %s\n", counts.Lines, l.N, s)
		}
	}
	if len(l.Ignored) > 0 {
		fmt.Fprintf(w, "ignored columns: %s\n", strings.Join(l.Ignored, ", "))
	}
	if model != "" {
		fmt.Fprintf(w, "reward model: %s\n", model)
	}
	fmt.Fprintf(w, "logging policy's mean reward: %.6g\n", meanOf(l.Reward))
	for _, t := range targets {
		if err := t.table(w, c); err != nil {
			return err
		}
	}
	if c.Bootstrap > 0 {
		fmt.Fprintf(w, "\nbootstrap: %d Poisson replicates, seed %d; total time %s\n", c.Bootstrap, c.Seed, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// table prints one target's block.
func (t *evalTarget) table(w io.Writer, c *evaluateCmd) error {
	fmt.Fprintf(w, "\ntarget: %s\n", t.desc)
	if t.privacy != nil {
		fmt.Fprintf(w, "privacy: %s\n", privacyLine(t.privacy))
	} else if t.privErr != "" {
		fmt.Fprintf(w, "privacy: not stated (%s)\n", t.privErr)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r := t.replay; r != nil {
		if t.cands != "" {
			fmt.Fprintf(w, "candidates: %s\n", t.cands)
		}
		fmt.Fprintf(w, "replay: %d matched rounds of %d, %g clicks, feedback delay %d matched rounds, seed %d\n", r.Matches, r.Rounds, r.Clicks, r.Delay, c.Seed)
		if r.Warning != "" {
			fmt.Fprintf(w, "warning: %s\n", r.Warning)
		}
		fmt.Fprintln(tw, "estimator\testimate\t95% normal\tmatches\t")
		fmt.Fprintf(tw, "replay\t%.6g\t%s\t%d\t\n", r.CTR, interval(r.Normal), r.Matches)
		return tw.Flush()
	}
	fmt.Fprintln(tw, "estimator\testimate\t95% normal\t95% bootstrap\tESS\t")
	for _, r := range t.results {
		name := string(r.Estimator)
		if r.Estimator == eval.SwitchDR {
			name = fmt.Sprintf("switch-dr (τ=%g)", c.SwitchTau)
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%s\t%s\t%s\t\n", name, r.Estimate, interval(r.Normal), interval(r.Bootstrap), ess(r.ESS))
	}
	return tw.Flush()
}

func privacyLine(s *privacy.Statement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, certified %s", s.Mechanism, s.Certified.Notion)
	if s.Epsilon != nil {
		fmt.Fprintf(&b, ": ε = %.4g at δ = %g", *s.Epsilon, s.Delta)
	}
	if s.PaperEpsilon != nil {
		fmt.Fprintf(&b, " (paper: ε = %.4g", *s.PaperEpsilon)
		if !s.PaperValid {
			b.WriteString(", not valid")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; %s neighbours", s.Neighbouring)
	return b.String()
}

func meanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func interval(iv eval.Interval) string {
	if math.IsNaN(iv.Lo) {
		return "-"
	}
	return fmt.Sprintf("[%.6g, %.6g]", iv.Lo, iv.Hi)
}

func ess(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// The --json output: {"n": ..., "targets": [{"target": ..., "estimates":
// {"ipw": {"value": v, "ci": [lo, hi]}, "snipw": ..., "dm": ..., "dr": ...,
// "switch-dr": ..., "replay": ...}, "ess": ...}]}. "ci" is the bootstrap
// interval when one was computed, else the normal one; both are also given
// by name.
type evaluateJSONOut struct {
	N          int                  `json:"n"`
	Log        string               `json:"log"`
	Format     string               `json:"format,omitempty"`
	Actions    int                  `json:"actions,omitempty"`
	Positions  int                  `json:"positions,omitempty"`
	Model      string               `json:"reward_model,omitempty"`
	SwitchTau  float64              `json:"switch_tau,omitempty"`
	Bootstrap  int                  `json:"bootstrap"`
	Seed       uint64               `json:"seed"`
	MeanReward *float64             `json:"logging_mean_reward,omitempty"`
	NotUsed    map[string]int       `json:"rows_not_used,omitempty"`
	Targets    []evaluateJSONTarget `json:"targets"`
}

type evaluateJSONTarget struct {
	Target      string                          `json:"target"`
	Description string                          `json:"description"`
	Estimates   map[string]evaluateJSONEstimate `json:"estimates"`
	ESS         *float64                        `json:"ess,omitempty"`
	Replay      *evaluateJSONReplay             `json:"replay,omitempty"`
	Privacy     *privacy.Statement              `json:"privacy,omitempty"`
}

type evaluateJSONEstimate struct {
	Value       float64     `json:"value"`
	CI          [2]float64  `json:"ci"`
	Normal95    [2]float64  `json:"normal_ci"`
	Bootstrap95 *[2]float64 `json:"bootstrap_ci,omitempty"`
}

type evaluateJSONReplay struct {
	Matches    int     `json:"matches"`
	Rounds     int     `json:"rounds"`
	Clicks     float64 `json:"clicks"`
	Delay      int     `json:"delay"`
	Uniform    bool    `json:"uniform_logger"`
	Candidates string  `json:"candidates,omitempty"`
}

// jsonKey is the and OBP's estimator name: ipw and snipw for IPS
// and SNIPS.
func jsonKey(e eval.Estimator) string {
	switch e {
	case eval.IPS:
		return "ipw"
	case eval.SNIPS:
		return "snipw"
	}
	return string(e)
}

func (t *evalTarget) json() evaluateJSONTarget {
	out := evaluateJSONTarget{Target: t.arg, Description: t.desc, Estimates: map[string]evaluateJSONEstimate{}, Privacy: t.privacy}
	if r := t.replay; r != nil {
		n := [2]float64{r.Normal.Lo, r.Normal.Hi}
		out.Estimates["replay"] = evaluateJSONEstimate{Value: r.CTR, CI: n, Normal95: n}
		out.Replay = &evaluateJSONReplay{Matches: r.Matches, Rounds: r.Rounds, Clicks: r.Clicks, Delay: r.Delay, Uniform: r.Uniform, Candidates: t.cands}
		return out
	}
	for _, r := range t.results {
		n := [2]float64{r.Normal.Lo, r.Normal.Hi}
		e := evaluateJSONEstimate{Value: r.Estimate, CI: n, Normal95: n}
		if !math.IsNaN(r.Bootstrap.Lo) {
			b := [2]float64{r.Bootstrap.Lo, r.Bootstrap.Hi}
			e.CI, e.Bootstrap95 = b, &b
		}
		out.Estimates[jsonKey(r.Estimator)] = e
		if !math.IsNaN(r.ESS) && out.ESS == nil {
			v := r.ESS
			out.ESS = &v
		}
	}
	return out
}

func (c *evaluateCmd) jsonOut(l *eval.Log, targets []*evalTarget, model string, counts *eval.ServiceCounts) evaluateJSONOut {
	m := meanOf(l.Reward)
	out := evaluateJSONOut{N: l.N, Log: c.Log, Format: c.Format, Actions: l.A, Positions: l.P, Model: model,
		SwitchTau: c.SwitchTau, Bootstrap: c.Bootstrap, Seed: c.Seed, MeanReward: &m}
	if counts != nil && len(counts.Skipped) > 0 {
		out.NotUsed = counts.Skipped
	}
	for _, t := range targets {
		out.Targets = append(out.Targets, t.json())
	}
	return out
}

// writeOut writes results.json, results.md and the estimates' plot into
// --out.
func (c *evaluateCmd) writeOut(out evaluateJSONOut, tables func(io.Writer) error) error {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var js bytes.Buffer
	if err := writeJSON(&js, out); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Out, "results.json"), js.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var md bytes.Buffer
	md.WriteString("# dpbandit evaluate\n\n```\n")
	if err := tables(&md); err != nil {
		return err
	}
	md.WriteString("```\n")
	if err := os.WriteFile(filepath.Join(c.Out, "results.md"), md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := estimatesFigure(out).Save(filepath.Join(c.Out, "estimates")); err != nil {
		return fmt.Errorf("--out: plot: %w", err)
	}
	return nil
}

// estimatesFigure draws each target's estimates with their 95% intervals,
// one series per target, the estimators along the x axis.
func estimatesFigure(out evaluateJSONOut) report.Figure {
	order := []string{"ipw", "snipw", "dm", "dr", "switch-dr", "replay"}
	var used []string
	for _, k := range order {
		for _, t := range out.Targets {
			if _, ok := t.Estimates[k]; ok {
				used = append(used, k)
				break
			}
		}
	}
	p := report.Panel{Title: fmt.Sprintf("Policy value estimates, %d logged rounds (95%% intervals)", out.N),
		XLabel: "estimator: " + strings.Join(used, ", "), YLabel: "estimated value", LegendRight: true}
	nt := len(out.Targets)
	for ti, t := range out.Targets {
		s := report.Series{Label: t.Target, Points: true}
		for xi, k := range used {
			e, ok := t.Estimates[k]
			if !ok || math.IsNaN(e.Value) || math.IsNaN(e.CI[0]) || math.IsNaN(e.CI[1]) {
				continue
			}
			s.X = append(s.X, float64(xi)+0.08*(float64(ti)-float64(nt-1)/2))
			s.Y = append(s.Y, e.Value)
			s.Lo = append(s.Lo, e.CI[0])
			s.Hi = append(s.Hi, e.CI[1])
		}
		p.Series = append(p.Series, s)
	}
	return report.Figure{Panels: []report.Panel{p}}
}
