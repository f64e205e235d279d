package cli

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/eval"
)

type evaluateCmd struct {
	Log         string  `help:"Logged bandit feedback: a CSV with a header, or JSONL (one object per line); with --format obd, an Open Bandit Dataset directory." required:"" type:"path" placeholder:"FILE|DIR"`
	Format      string  `help:"Log format: csv, jsonl or obd (default: by extension; .jsonl/.ndjson/.json are JSONL)." enum:"csv,jsonl,obd," default:"" placeholder:"csv|jsonl|obd"`
	Campaign    string  `help:"With --format obd: the campaign (men, women or all)." enum:"men,women,all," default:"" placeholder:"men|women"`
	Target      string  `help:"The policy to evaluate: columns (the log's pi_e_<a> columns), uniform (1/A per action), probs:FILE (a CSV item_id,pos0,pos1,... of context-free probabilities, one row per action), or policy:SPEC (a registered policy, e.g. policy:ucb1; see 'dpbandit policies')." default:"columns" placeholder:"columns|uniform|probs:FILE|policy:SPEC"`
	Estimators  string  `help:"Estimators, comma-separated: ips, snips, dm, dr, switch-dr, or all." default:"all" placeholder:"LIST"`
	SwitchTau   float64 `help:"Switch-DR threshold: rounds whose importance weight exceeds it keep only their DM term." default:"10" placeholder:"TAU"`
	Bootstrap   int     `help:"Bootstrap replicates for the percentile interval (0: none)." default:"1000" placeholder:"R"`
	Seed        uint64  `help:"Seed of the bootstrap, the cross-fitting folds and the policy of --target policy:SPEC." default:"1" placeholder:"S"`
	Folds       int     `help:"Cross-fitting folds of the reward model (used when the log has no qhat_<a> columns)." default:"3" placeholder:"K"`
	Model       string  `help:"Reward model when fitted: auto (logistic for 0/1 rewards, else ridge), ridge or logistic." enum:"auto,ridge,logistic" default:"auto"`
	ReplayDelay int     `help:"Replay (--target policy:SPEC on a uniform log): feed each matched round's reward back this many matched rounds later." default:"0" placeholder:"D"`
	Draws       int     `help:"Monte Carlo draws of a randomised policy's action distribution (--target policy:SPEC without replay)." default:"10000" placeholder:"N"`
	JSON        bool    `help:"Print the result as JSON instead of the table."`
}

func (evaluateCmd) Help() string {
	return `Off-policy evaluation: what would the target policy have earned on this log?

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

Each row of the table: the estimate, a 95% normal interval (± 1.96 standard
errors of the per-round terms; SNIPS by the delta method), a 95% percentile
bootstrap interval (Poisson bootstrap, --bootstrap replicates, seeded), and the
effective sample size (Σw)²/Σw² of the importance weights.

--target policy:SPEC evaluates a registered policy (K-armed; contextual ones
in replay only). Every registered policy learns, so when the log's logger is
uniform (every pscore within 5% of 1/A) the command runs replay (Li, Chu,
Langford & Wang, WSDM 2011): the policy is asked at every logged round, a round
is kept when its choice equals the logged action (whatever the position), and
the reward is fed back --replay-delay matched rounds later; the table's replay
row is clicks/matches with a 95% normal interval over the matched rounds. A
contextual policy sees, per round, one candidate per action: the item features
(item_context.csv) with --format obd, else e_a ⊗ x (the round's context in
action a's block: a flat log has no per-action features). On a log whose
logger is not uniform, the policy is frozen as first built and its action
distribution (exact for deterministic rules, else --draws Monte Carlo draws,
standard error ≤ 0.5/√draws) is the target of the estimators.

--format obd reads the Open Bandit Dataset as shipped (Saito et al., NeurIPS
2021; st-tech/zr-obp): --log is a behaviour policy's directory (random/ or
bts/, holding <campaign>/<campaign>.csv) or a campaign directory. A round's
action is item_id, its position is position − 1, its pscore is
propensity_score, its reward is click; the context is a one-hot block per
hashed user_feature_0..3 followed by the user-item affinities.

Examples:

  dpbandit evaluate --log logged.csv
  dpbandit evaluate --log logged.jsonl --target uniform --estimators ips,snips --json
  dpbandit evaluate --log obd.csv --target probs:bts_probs.csv --switch-tau 5
  dpbandit evaluate --format obd --log open-bandit-dataset-sample/random --campaign men --target uniform
  dpbandit evaluate --format obd --log open-bandit-dataset-sample/random --campaign women --target policy:beta-ts --replay-delay 100
`
}

func (c *evaluateCmd) Run(g *Globals) error {
	ests, err := eval.ParseEstimators(c.Estimators)
	if err != nil {
		return badInput("--estimators: %v", err)
	}
	if c.Bootstrap < 0 {
		return badInput("--bootstrap must be ≥ 0")
	}
	if c.SwitchTau < 0 || math.IsNaN(c.SwitchTau) {
		return badInput("--switch-tau must be ≥ 0")
	}
	if c.Folds < 1 {
		return badInput("--folds must be ≥ 1")
	}
	if c.ReplayDelay < 0 {
		return badInput("--replay-delay must be ≥ 0")
	}
	if c.Draws < 1 {
		return badInput("--draws must be ≥ 1")
	}
	start := time.Now()
	var l *eval.Log

	if c.Format == "obd" {
		if c.Campaign == "" {
			return badInput("--format obd needs --campaign men, women or all")
		}
		l, err = eval.ReadOBD(c.Log, c.Campaign)
	} else {
		if c.Campaign != "" {
			return badInput("--campaign applies to --format obd only")
		}
		l, err = eval.ReadFile(c.Log, c.Format)
	}
	if err != nil {
		return err
	}
	loaded := time.Since(start)
	var target *eval.ActionDist
	var targetDesc string
	switch t := c.Target; {
	case t == "columns":
		if l.PiE == nil {
			return badInput("--target columns: %s has no pi_e_<a> columns (use --target uniform or probs:FILE)", c.Log)
		}
		target, targetDesc = l.PiE, "the log's pi_e columns"
	case t == "uniform":
		target, targetDesc = eval.Uniform(l.A), fmt.Sprintf("uniform over %d actions", l.A)
	case strings.HasPrefix(t, "probs:"):
		path := strings.TrimPrefix(t, "probs:")
		target, err = eval.ReadProbsFile(path, l.A, l.ActionNames)
		if err != nil {
			return err
		}
		targetDesc = "context-free probabilities from " + path
	case strings.HasPrefix(t, "policy:"):
		spec := strings.TrimPrefix(t, "policy:")
		learns, err := eval.Learns(spec)
		if err != nil {
			return badInput("--target %s: %v", t, err)
		}
		if uniform, _, _ := eval.UniformLogger(l, 0.05); uniform && learns {
			return c.runReplay(g, l, spec, loaded)
		}
		d, info, err := eval.PolicyTarget(l, spec, c.Draws, c.Seed)
		if err != nil {
			return badInput("--target %s: %v", t, err)
		}
		target = d
		targetDesc = fmt.Sprintf("%s frozen as first built (not replayed: the log's logger is not uniform), ", info.Policy)
		if info.Draws == 0 {
			targetDesc += "exact probabilities"
		} else {
			targetDesc += fmt.Sprintf("%d Monte Carlo draws, standard error ≤ %.2g", info.Draws, info.SE)
		}
	default:
		return badInput("--target %q: want columns, uniform, probs:FILE or policy:SPEC", t)
	}
	rep, err := eval.Evaluate(l, target, eval.Options{
		Estimators: ests, SwitchTau: c.SwitchTau, Bootstrap: c.Bootstrap, Seed: c.Seed,
		Model: eval.ModelOptions{Kind: c.Model, Folds: c.Folds, Seed: c.Seed},
	})
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(g.Stdout, evaluateJSON(c, rep, targetDesc))
	}
	w := g.Stdout
	fmt.Fprintf(w, "%s: %d rows used, %d actions, %d position(s), %d context features (read in %s)\n",
		c.Log, rep.N, rep.A, rep.P, l.D, loaded.Round(time.Millisecond))
	if len(l.Ignored) > 0 {
		fmt.Fprintf(w, "ignored columns: %s\n", strings.Join(l.Ignored, ", "))
	}
	fmt.Fprintf(w, "target: %s\n", targetDesc)
	if rep.Model != "" {
		fmt.Fprintf(w, "reward model: %s\n", rep.Model)
	}
	fmt.Fprintf(w, "logging policy's mean reward: %.6g\n\n", rep.MeanReward)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "estimator\testimate\t95% normal\t95% bootstrap\tESS\t")
	for _, r := range rep.Results {
		name := string(r.Estimator)
		if r.Estimator == eval.SwitchDR {
			name = fmt.Sprintf("switch-dr (τ=%g)", c.SwitchTau)
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%s\t%s\t%s\t\n", name, r.Estimate, interval(r.Normal), interval(r.Bootstrap), ess(r.ESS))
	}
	tw.Flush()
	if c.Bootstrap > 0 {
		fmt.Fprintf(w, "\nbootstrap: %d Poisson replicates, seed %d; total time %s\n", c.Bootstrap, c.Seed, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// runReplay replays a learning policy through a uniform logger's log and
// prints the replay row.
func (c *evaluateCmd) runReplay(g *Globals, l *eval.Log, spec string, loaded time.Duration) error {
	o := eval.ReplayOptions{Delay: c.ReplayDelay, Seed: c.Seed}
	candDesc := ""
	if sp, err := bandit.ParseSpec(spec); err == nil {
		if d, err := bandit.Lookup(bandit.AnyKind, sp.Name); err == nil && d.NewContextual != nil {
			if c.Format == "obd" {
				items, err := eval.ReadOBDItems(c.Log, c.Campaign)
				if err != nil {
					return err
				}
				if len(items) < l.A {
					return fmt.Errorf("item_context.csv has %d items, the log %d", len(items), l.A)
				}
				o.Candidates, o.Dim = eval.ItemCandidates(items), len(items[0])
				candDesc = fmt.Sprintf("item features from item_context.csv (%d dimensions)", o.Dim)
			} else {
				candDesc = fmt.Sprintf("e_a ⊗ context (%d dimensions)", l.A*l.D)
			}
		}
	}
	res, err := eval.Replay(l, spec, o)
	if err != nil {
		return badInput("--target policy:%s: %v", spec, err)
	}
	if c.JSON {
		out := evaluateJSONOut{Log: c.Log, Rows: l.N, Actions: l.A, Positions: l.P,
			Target: "replay of " + res.Policy, Bootstrap: 0, Seed: c.Seed, MeanReward: meanOf(l.Reward),
			Replay:  &evaluateJSONReplay{Matches: res.Matches, Clicks: res.Clicks, Delay: res.Delay, Uniform: res.Uniform, Candidates: candDesc},
			Results: []evaluateJSONResult{{Estimator: "replay", Estimate: res.CTR, Normal95: [2]float64{res.Normal.Lo, res.Normal.Hi}}}}
		return writeJSON(g.Stdout, out)
	}
	w := g.Stdout
	fmt.Fprintf(w, "%s: %d rows used, %d actions, %d position(s), %d context features (read in %s)\n",
		c.Log, l.N, l.A, l.P, l.D, loaded.Round(time.Millisecond))
	fmt.Fprintf(w, "target: %s, learning: evaluated by replay (Li, Chu, Langford & Wang 2011) since the logger is uniform (pscore 1/%d)\n", res.Policy, l.A)
	if candDesc != "" {
		fmt.Fprintf(w, "candidates: %s\n", candDesc)
	}
	fmt.Fprintf(w, "replay: %d matched rounds of %d, %g clicks, feedback delay %d matched rounds, seed %d\n", res.Matches, res.Rounds, res.Clicks, res.Delay, c.Seed)
	if res.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", res.Warning)
	}
	fmt.Fprintf(w, "logging policy's mean reward: %.6g\n\n", meanOf(l.Reward))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "estimator\testimate\t95% normal\tmatches\t")
	fmt.Fprintf(tw, "replay\t%.6g\t%s\t%d\t\n", res.CTR, interval(res.Normal), res.Matches)
	return tw.Flush()
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

type evaluateJSONResult struct {
	Estimator   string      `json:"estimator"`
	Estimate    float64     `json:"estimate"`
	Normal95    [2]float64  `json:"normal_95"`
	Bootstrap95 *[2]float64 `json:"bootstrap_95,omitempty"`
	ESS         *float64    `json:"ess,omitempty"`
}

type evaluateJSONOut struct {
	Log        string               `json:"log"`
	Rows       int                  `json:"rows"`
	Actions    int                  `json:"actions"`
	Positions  int                  `json:"positions"`
	Target     string               `json:"target"`
	Model      string               `json:"reward_model,omitempty"`
	SwitchTau  float64              `json:"switch_tau"`
	Bootstrap  int                  `json:"bootstrap"`
	Seed       uint64               `json:"seed"`
	MeanReward float64              `json:"logging_mean_reward"`
	Replay     *evaluateJSONReplay  `json:"replay,omitempty"`
	Results    []evaluateJSONResult `json:"results"`
}

type evaluateJSONReplay struct {
	Matches    int     `json:"matches"`
	Clicks     float64 `json:"clicks"`
	Delay      int     `json:"delay"`
	Uniform    bool    `json:"uniform_logger"`
	Candidates string  `json:"candidates,omitempty"`
}

func evaluateJSON(c *evaluateCmd, rep *eval.Report, target string) evaluateJSONOut {
	out := evaluateJSONOut{Log: c.Log, Rows: rep.N, Actions: rep.A, Positions: rep.P, Target: target, Model: rep.Model,
		SwitchTau: c.SwitchTau, Bootstrap: c.Bootstrap, Seed: c.Seed, MeanReward: rep.MeanReward}
	for _, r := range rep.Results {
		j := evaluateJSONResult{Estimator: string(r.Estimator), Estimate: r.Estimate, Normal95: [2]float64{r.Normal.Lo, r.Normal.Hi}}
		if !math.IsNaN(r.Bootstrap.Lo) {
			j.Bootstrap95 = &[2]float64{r.Bootstrap.Lo, r.Bootstrap.Hi}
		}
		if !math.IsNaN(r.ESS) {
			e := r.ESS
			j.ESS = &e
		}
		out.Results = append(out.Results, j)
	}
	return out
}
