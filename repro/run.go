package repro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/sim"
)

// Output files of a reproduction directory.
const (
	ChecksFile = "checks.json"
	ReadmeFile = "README.md"
	SweepsDir  = "sweeps"
)

// Options say how a reproduction is run.
type Options struct {
	Out     string // output directory (created)
	Runs    int    // > 0 overrides the size's runs
	Horizon int    // > 0 replaces the size's horizons by this one
	Quick   bool   // run the Quick size instead of Full
	Workers int    // cells run in parallel per sweep (≤ 0: GOMAXPROCS); results do not depend on it
	// Log receives one line per sweep and per phase (nil: discarded).
	Log io.Writer
	// Command is the command line to record in the README (optional).
	Command string
	// Shard, when it splits (n > 1), runs only shard i of n of every
	// sweep's cells and writes partial results for [Merge] instead of the
	// figures and checks (see [RunShard]).
	Shard sim.Shard
	// NoResume discards the finished cells that a killed run with the same
	// options left in Out/.cells (by default they are reused; see
	// sim.CellCache).
	NoResume bool
	// Progress, if non-nil, receives each sweep's progress (sim.Options).
	Progress func(sim.Progress)
	// Now is the clock of the runtimes in README.md (nil: time.Now); tests
	// fix it to compare directories byte for byte.
	Now func() time.Time

	// merge maps a sweep key to the shard directories holding its
	// partial results (sweeps/KEY of each shard), set by Merge.
	merge map[string][]string
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Metric is the regret a reproduction reads from the simulator.
type Metric int

// Regret metrics.
const (
	// Pseudo is the pseudo-regret Σ_{s≤t} (μ* − μ_{a_s}).
	Pseudo Metric = iota
	// Realised is the realised regret μ*·t − Σ_{s≤t} r_s ([OU] Eq. 3).
	Realised
	// Value is for reproductions on logged data (replay, off-policy
	// evaluation): they report policy values (CTR, expected reward), not
	// regret.
	Value
)

func (m Metric) String() string {
	switch m {
	case Realised:
		return "realised regret μ*·t − Σ r_s"
	case Value:
		return "policy value (mean reward per round), no regret"
	}
	return "pseudo-regret Σ (μ* − μ_{a_t})"
}

// Sweep is one simulation of a reproduction: a sim.Spec run with
// sim.NewPlan and Plan.Run. Labels, when set, name the policies in figures
// and checks (one per spec policy, in order); otherwise sim's entry names are
// used. Policy specs must not expand (no equal-budget mode), so entries and
// policies correspond one to one.
type Sweep struct {
	Key    string // unique within the reproduction; also its directory under sweeps/
	Spec   sim.Spec
	Labels []string
}

// Context is what stages, figures and targets see: the size being run and
// the results of the sweeps so far.
type Context struct {
	R     *Reproduction
	Size  Size
	Quick bool
	opts  Options
	res   map[string]*sweepResult
	keys  []string
	// incomplete is set when a sharded run's stage asked for a sweep this
	// shard holds only part of.
	incomplete bool
	// deferred is the first stage a sharded run left to the merge (0: none).
	deferred int
	start    time.Time
	// merged are the sweep keys taken from the shards (Merge).
	merged map[string]bool
}

type sweepResult struct {
	sweep   Sweep
	agg     *sim.Aggregate // nil for a shard's partial result
	elapsed time.Duration
}

// ErrShardIncomplete is returned by Context.Aggregate and Context.Policies
// in a sharded run for a sweep of which this shard holds only its part: a
// stage that reads earlier results runs in the merge (see [RunShard]).
var ErrShardIncomplete = errors.New("the sweep's results are split over the shards; this step runs in the merge")

// Horizon returns the first (usually the only) horizon of the size.
func (c *Context) Horizon() int { return c.Size.Horizons[0] }

// Runs returns the runs per policy of the size.
func (c *Context) Runs() int { return c.Size.Runs }

// Aggregate returns the aggregate of a sweep.
func (c *Context) Aggregate(key string) (*sim.Aggregate, error) {
	r, ok := c.res[key]
	if !ok {
		return nil, fmt.Errorf("repro %s: no sweep %q (have %s)", c.R.Name, key, strings.Join(c.keys, ", "))
	}
	if r.agg == nil {
		c.incomplete = true
		return nil, fmt.Errorf("repro %s, sweep %s: %w", c.R.Name, key, ErrShardIncomplete)
	}
	return r.agg, nil
}

// Has reports whether a sweep with that key was run.
func (c *Context) Has(key string) bool { _, ok := c.res[key]; return ok }

// Policies returns every policy of a sweep, in order, read in the
// reproduction's metric.
func (c *Context) Policies(key string) ([]PolicyResult, error) {
	r, ok := c.res[key]
	if !ok {
		return nil, fmt.Errorf("repro %s: no sweep %q (have %s)", c.R.Name, key, strings.Join(c.keys, ", "))
	}
	if r.agg == nil {
		c.incomplete = true
		return nil, fmt.Errorf("repro %s, sweep %s: %w", c.R.Name, key, ErrShardIncomplete)
	}
	a := r.agg
	R := a.Plan.Spec.Runs
	last := len(a.Plan.Checkpoints) - 1
	out := make([]PolicyResult, len(a.Plan.Entries))
	for i, en := range a.Plan.Entries {
		label := en.Name
		if i < len(r.sweep.Labels) && r.sweep.Labels[i] != "" {
			label = r.sweep.Labels[i]
		}
		p := PolicyResult{Label: label, Entry: en, Summary: a.Summary.Policies[i], Curve: a.Curves[i], Metric: c.R.Metric,
			Final: make([]float64, R), T: a.Plan.Spec.Horizon}
		for k, run := range a.Runs[i*R : (i+1)*R] {
			curve := run.Pseudo
			if c.R.Metric == Realised {
				curve = run.Realised
			}
			p.Final[k] = curve[last]
			p.Runs = append(p.Runs, curve)
		}
		out[i] = p
	}
	return out, nil
}

// Policy returns the policy of a sweep with the given label (or entry name).
func (c *Context) Policy(key, label string) (PolicyResult, error) {
	ps, err := c.Policies(key)
	if err != nil {
		return PolicyResult{}, err
	}
	for _, p := range ps {
		if p.Label == label || p.Entry.Name == label {
			return p, nil
		}
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Label
	}
	return PolicyResult{}, fmt.Errorf("repro %s: sweep %q has no policy %q (have %s)", c.R.Name, key, label, strings.Join(names, "; "))
}

// PolicyResult is one policy of a sweep.
type PolicyResult struct {
	Label   string
	Entry   sim.Entry
	Summary sim.PolicySummary
	Curve   sim.Curve
	Metric  Metric
	T       int         // horizon
	Final   []float64   // final regret of each run, in Metric, in run order
	Runs    [][]float64 // each run's regret in Metric at the checkpoints Curve.T
}

// RunAt returns run k's regret at round t, linearly interpolated between
// checkpoints (0 at t = 0).
func (p PolicyResult) RunAt(k int, t float64) float64 { return interp(p.Curve.T, p.Runs[k], t) }

// Band returns the mean and 95% band of the regret curve in the metric.
func (p PolicyResult) Band() sim.Band {
	if p.Metric == Realised {
		return p.Curve.Realised
	}
	return p.Curve.Pseudo
}

// Mean is the mean final regret over runs.
func (p PolicyResult) Mean() float64 { m, _ := meanSE(p.Final); return m }

// SE is the standard error of the mean final regret.
func (p PolicyResult) SE() float64 { _, s := meanSE(p.Final); return s }

// At returns the mean regret curve at round t, linearly interpolated between
// checkpoints (0 at t = 0).
func (p PolicyResult) At(t float64) float64 { return interp(p.Curve.T, p.Band().Mean, t) }

func interp(ts []int, ys []float64, t float64) float64 {
	if t <= 0 {
		return 0
	}
	prevT, prevY := 0.0, 0.0
	for j, cp := range ts {
		x := float64(cp)
		if t <= x {
			return prevY + (ys[j]-prevY)*(t-prevT)/(x-prevT)
		}
		prevT, prevY = x, ys[j]
	}
	return ys[len(ys)-1]
}

// Diff returns the mean and standard error of the paired differences
// p − q of the final regret (run r of both saw the same rewards when they
// come from sweeps with the same environment and seed).
func Diff(p, q PolicyResult) (mean, se float64) {
	n := min(len(p.Final), len(q.Final))
	d := make([]float64, n)
	for i := range d {
		d[i] = p.Final[i] - q.Final[i]
	}
	return meanSE(d)
}

func meanSE(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// Check is one entry of checks.json.
type Check struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Target         string `json:"target"`
	Measured       string `json:"measured"`
	Tolerance      string `json:"tolerance"`
	Pass           bool   `json:"pass"`
	ExpectedToFail bool   `json:"expected_to_fail"`
	// Reason is why the check is expected to fail (the docs/reproduction-decisions.md §2 item and
	// the diagnosis); empty for the other checks.
	Reason string `json:"reason,omitempty"`
	Source string `json:"source"`
}

// Outcome is the result of running a reproduction. Its JSON form is
// checks.json, which is a pure function of the code and the size run (no
// runtime, timestamp or path), so that the full-size files can be committed
// (docs/repro/NAME/checks.json) and compared byte for byte.
type Outcome struct {
	Reproduction string        `json:"reproduction"`
	Paper        string        `json:"paper"`
	Experiments  string        `json:"experiments"`
	Section      string        `json:"section"`
	Description  string        `json:"description"`
	Quick        bool          `json:"quick"`
	Size         Size          `json:"size"`
	Seed         uint64        `json:"seed"`
	Env          string        `json:"env,omitempty"`
	Metric       string        `json:"metric,omitempty"`
	Elapsed      time.Duration `json:"-"` // in README.md and the log only
	Checks       []Check       `json:"checks"`
	Figures      []string      `json:"figures"`
	Totals       Totals        `json:"totals"`
}

// Totals counts the checks by outcome.
type Totals struct {
	Checks            int `json:"checks"`
	Passed            int `json:"passed"`
	Failed            int `json:"failed"`               // not expected to fail, did not pass
	ExpectedFailures  int `json:"expected_failures"`    // expected to fail, did not pass
	UnexpectedPasses  int `json:"unexpected_passes"`    // expected to fail, passed
	PassedAsExpected  int `json:"passed_as_expected"`   // not expected to fail, passed
	ExpectedToFailAll int `json:"expected_to_fail"`     // checks labelled expected_to_fail
	NotExpectedToFail int `json:"not_expected_to_fail"` // checks not so labelled
}

// Failed returns the checks that are not expected to fail and did not pass.
func (o *Outcome) Failed() []Check {
	var out []Check
	for _, c := range o.Checks {
		if !c.Pass && !c.ExpectedToFail {
			out = append(out, c)
		}
	}
	return out
}

func (o *Outcome) count() {
	t := Totals{Checks: len(o.Checks)}
	for _, c := range o.Checks {
		if c.Pass {
			t.Passed++
		}
		switch {
		case c.ExpectedToFail && c.Pass:
			t.UnexpectedPasses++
		case c.ExpectedToFail:
			t.ExpectedFailures++
		case c.Pass:
			t.PassedAsExpected++
		default:
			t.Failed++
		}
		if c.ExpectedToFail {
			t.ExpectedToFailAll++
		} else {
			t.NotExpectedToFail++
		}
	}
	o.Totals = t
}

// EffectiveSize returns the size a run with o would use.
func (r *Reproduction) EffectiveSize(o Options) Size {
	s := r.Full
	if o.Quick {
		s = r.Quick
	}
	s.Horizons = slices.Clone(s.Horizons)
	if r.ClosedForm() {
		return s
	}
	if o.Runs > 0 {
		s.Runs = o.Runs
	}
	if o.Horizon > 0 {
		s.Horizons = []int{o.Horizon}
	}
	return s
}

// Run runs the reproduction and writes its directory (see the package
// documentation). It returns an error only when the reproduction could not
// run (bad options, a sweep or figure failed, the directory is not
// writable); failing checks are reported in the Outcome, and the files are
// written in any case.
func Run(ctx context.Context, r *Reproduction, o Options) (*Outcome, error) {
	if o.Shard.Sharded() {
		return nil, errors.New("repro: a sharded run writes partial results: use RunShard")
	}
	c, logw, err := start(ctx, r, o)
	if err != nil {
		return nil, err
	}
	out, err := c.finish(logw)
	if err != nil {
		return nil, err
	}
	// The outputs are written: the finished cells kept for a resume go.
	return out, os.RemoveAll(filepath.Join(o.Out, sim.CellsDir))
}

// start checks the options and runs the stages: all of them, or, in a
// sharded run, up to the first that reads a sweep split over the shards.
func start(ctx context.Context, r *Reproduction, o Options) (*Context, io.Writer, error) {
	if o.Out == "" {
		return nil, nil, errors.New("repro: no output directory")
	}
	if o.Runs < 0 || o.Horizon < 0 {
		return nil, nil, fmt.Errorf("repro: runs %d and horizon %d must be ≥ 0 (0: the size's value)", o.Runs, o.Horizon)
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	c := &Context{R: r, Size: r.EffectiveSize(o), Quick: o.Quick, opts: o, res: map[string]*sweepResult{}, merged: map[string]bool{}}
	c.start = o.now()
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, nil, err
	}
	if o.NoResume {
		if err := os.RemoveAll(filepath.Join(o.Out, sim.CellsDir)); err != nil {
			return nil, nil, err
		}
	}
	fmt.Fprintf(logw, "%s (%s %s): %s\n", r.Name, r.Paper, r.Experiments, c.Size)
	for si, stage := range r.Stages {
		sweeps, err := stage(c)
		if err != nil {
			if o.Shard.Sharded() && c.incomplete {
				c.deferred = si + 1
				fmt.Fprintf(logw, "  stage %d reads sweeps split over the shards: it runs in the merge\n", si+1)
				return c, logw, nil
			}
			return nil, nil, fmt.Errorf("repro %s, stage %d: %w", r.Name, si+1, err)
		}
		for _, sw := range sweeps {
			if err := c.runSweep(ctx, sw, logw); err != nil {
				return nil, nil, err
			}
		}
	}
	for key := range o.merge {
		if !c.merged[key] {
			return nil, nil, fmt.Errorf("repro %s: the shards hold sweep %q, which this run did not produce (another dpbandit version?)", r.Name, key)
		}
	}
	return c, logw, nil
}

// finish builds the figures and checks and writes checks.json and README.md.
func (c *Context) finish(logw io.Writer) (*Outcome, error) {
	r, o := c.R, c.opts
	out := &Outcome{Reproduction: r.Name, Paper: r.Paper, Experiments: r.Experiments, Section: r.Section, Description: r.Description,
		Quick: o.Quick, Size: c.Size, Seed: r.Seed, Env: r.Env}
	if !r.ClosedForm() {
		out.Metric = r.Metric.String()
	}
	for _, f := range r.Figures {
		fig, err := f.Build(c)
		if err != nil {
			return nil, fmt.Errorf("repro %s, figure %s: %w", r.Name, f.File, err)
		}
		if err := fig.Save(filepath.Join(o.Out, f.File)); err != nil {
			return nil, fmt.Errorf("repro %s, figure %s: %w", r.Name, f.File, err)
		}
		out.Figures = append(out.Figures, f.File+".svg", f.File+".png")
	}
	for _, t := range r.Targets {
		ch := Check{ID: t.ID, Name: t.Name, Target: t.Target, Tolerance: t.Tolerance, ExpectedToFail: t.ExpectedToFail, Reason: t.Reason, Source: t.Source}
		m, pass, err := t.Measure(c)
		if err != nil {
			m, pass = "error: "+err.Error(), false
		}
		ch.Measured, ch.Pass = m, pass
		out.Checks = append(out.Checks, ch)
	}
	out.count()
	out.Elapsed = o.now().Sub(c.start)
	if err := writeJSONFile(filepath.Join(o.Out, ChecksFile), out); err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := c.readme(&md, out); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, ReadmeFile), md.Bytes(), 0o644); err != nil {
		return nil, err
	}
	t := out.Totals
	fmt.Fprintf(logw, "%s: %d checks: %d passed, %d failed, %d expected failures, %d unexpected passes (%.1fs); see %s\n",
		r.Name, t.Checks, t.PassedAsExpected, t.Failed, t.ExpectedFailures, t.UnexpectedPasses, out.Elapsed.Seconds(),
		filepath.Join(o.Out, ReadmeFile))
	return out, nil
}

func (c *Context) runSweep(ctx context.Context, sw Sweep, logw io.Writer) error {
	r := c.R
	if sw.Key == "" || strings.ContainsAny(sw.Key, `/\`) || c.Has(sw.Key) {
		return fmt.Errorf("repro %s: sweep key %q is empty, has a slash or is used twice", r.Name, sw.Key)
	}
	if sw.Spec.Budget != nil {
		return fmt.Errorf("repro %s, sweep %s: equal-budget mode is not used by reproductions (entries must match policies)", r.Name, sw.Key)
	}
	st := c.opts.now()
	plan, err := sim.NewPlan(sw.Spec, sim.Default)
	if err != nil {
		return fmt.Errorf("repro %s, sweep %s: %w", r.Name, sw.Key, err)
	}
	if len(plan.Entries) != len(sw.Spec.Policies) {
		return fmt.Errorf("repro %s, sweep %s: %d policies resolved to %d entries", r.Name, sw.Key, len(sw.Spec.Policies), len(plan.Entries))
	}
	dir := filepath.Join(c.opts.Out, SweepsDir, sw.Key)
	var res *sim.Result
	if shards, ok := c.opts.merge[sw.Key]; ok {
		// Merging: the shards ran this sweep; sim.Merge checks that they
		// hold every cell exactly once, of this very spec.
		if res, err = sim.Merge(shards, sim.Default); err != nil {
			return fmt.Errorf("repro %s, sweep %s: %w", r.Name, sw.Key, err)
		}
		if res.Plan.Hash() != plan.Hash() {
			return fmt.Errorf("repro %s, sweep %s: the shards ran spec %s, this run resolves it to %s (another dpbandit version or size?)",
				r.Name, sw.Key, sim.HashString(res.Plan.Hash()), sim.HashString(plan.Hash()))
		}
		c.merged[sw.Key] = true
	} else {
		cache, err := sim.OpenCellCache(c.opts.Out, plan)
		if err != nil {
			return err
		}
		res, err = plan.Run(ctx, sim.Options{Workers: c.opts.Workers, Shard: c.opts.Shard, Cache: cache, Progress: c.opts.Progress})
		if cache.Corrupt > 0 {
			fmt.Fprintf(logw, "  sweep %s: %d corrupt cell file(s) recomputed\n", sw.Key, cache.Corrupt)
		}
		if err != nil {
			return fmt.Errorf("repro %s, sweep %s: %w", r.Name, sw.Key, err)
		}
		if res.Resumed > 0 {
			fmt.Fprintf(logw, "  sweep %s: resumed %d of %d cells from %s\n", sw.Key, res.Resumed, len(res.Runs), cache.Dir())
		}
	}
	if c.opts.Shard.Sharded() {
		if err := res.WritePartial(dir); err != nil {
			return err
		}
		m := sim.NewManifest(plan, c.opts.Shard, c.opts.Workers, []string{sim.PartialFile, sim.ManifestFile})
		if err := m.WriteManifest(dir); err != nil {
			return err
		}
		c.res[sw.Key] = &sweepResult{sweep: sw, elapsed: c.opts.now().Sub(st)}
		c.keys = append(c.keys, sw.Key)
		fmt.Fprintf(logw, "  sweep %-28s shard %s: %d of %d cells\n", sw.Key, c.opts.Shard, len(res.Runs), plan.Cells())
		return nil
	}
	agg, err := res.Aggregate()
	if err != nil {
		return fmt.Errorf("repro %s, sweep %s: %w", r.Name, sw.Key, err)
	}
	if err := agg.WriteFiles(dir, sim.WriteOptions{NoPlots: true}); err != nil {
		return err
	}
	m := sim.NewManifest(plan, sim.Shard{}, c.opts.Workers, []string{sim.SummaryFile, sim.CurvesFile, sim.RunsFile, sim.ManifestFile})
	if err := m.WriteManifest(dir); err != nil {
		return err
	}
	el := c.opts.now().Sub(st)
	c.res[sw.Key] = &sweepResult{sweep: sw, agg: agg, elapsed: el}
	c.keys = append(c.keys, sw.Key)
	fmt.Fprintf(logw, "  sweep %-28s %3d policies × %3d runs, T=%-8s %6.1fs\n", sw.Key, len(plan.Entries), plan.Spec.Runs,
		fmtInt(plan.Spec.Horizon), el.Seconds())
	return nil
}

func writeJSONFile(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// spec builds a policy spec by hand.
func spec(name string, kv ...any) bandit.Spec {
	if len(kv)%2 != 0 {
		panic("repro: spec needs key, value pairs")
	}
	s := bandit.Spec{Name: name, Params: bandit.Params{}}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		var v float64
		switch x := kv[i+1].(type) {
		case int:
			v = float64(x)
		case float64:
			v = x
		default:
			panic(fmt.Sprintf("repro: spec %s: value of %s has type %T", name, k, x))
		}
		s.Params[k] = v
		s.Set = append(s.Set, k)
	}
	slices.Sort(s.Set)
	return s
}
