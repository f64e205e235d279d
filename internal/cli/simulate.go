package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/env"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

type simulateCmd struct {
	Spec        string   `help:"TOML sweep spec; the flags below override its values." placeholder:"FILE" type:"existingfile"`
	Env         *string  `help:"Environment, KIND:PARAMS: K-armed or contextual (see below)." placeholder:"SPEC"`
	Horizon     *count   `help:"Rounds per run, T (1e5 style accepted)." placeholder:"T"`
	Runs        *count   `help:"Independent runs per policy (default 10)." placeholder:"R"`
	Seed        *uint64  `help:"Base seed (default 1); run r of every policy sees the same rewards." placeholder:"S"`
	Policy      []string `help:"Policy spec name[:key=value,...]; repeat the flag for several." sep:"none" placeholder:"SPEC"`
	Budget      string   `help:"Equal-budget mode: epsilon=E,delta=D[,basis=paper|certified] or gdp=MU[,delta=D]." placeholder:"TARGET"`
	Delta       *float64 `help:"δ at which privacy is reported (default: the budget's δ, else 1e-6)." placeholder:"D"`
	Checkpoints *int     `help:"Log-spaced checkpoints per run (default 200)." placeholder:"N"`
	At          []int    `name:"at" help:"Extra rounds to record regret at, merged into the log-spaced grid (e.g. --at 50,1000)." sep:"," placeholder:"T1,T2"`
	Workers     int      `help:"Cells run in parallel (default GOMAXPROCS); results do not depend on it." placeholder:"N"`
	Shard       string   `help:"Run only shard i of n (0 ≤ i < n, e.g. $$JOB_COMPLETION_INDEX/8); combine with 'dpbandit merge'." placeholder:"i/n"`
	Out         string   `help:"Output directory." required:"" type:"path" placeholder:"DIR"`
	NoResume    bool     `name:"no-resume" help:"Recompute every cell, discarding the finished cells a killed run with the same arguments left in DIR/.cells."`
	JSON        bool     `help:"Also print summary.json to stdout."`
	LogX        bool     `name:"log-x" help:"Log-scale round axis in the plots."`
	NoPlots     bool     `help:"Skip regret.svg and regret.png."`
}

func (simulateCmd) Help() string {
	var b strings.Builder
	b.WriteString(`Simulates every policy on one environment for R independent runs of T rounds, in
parallel, and writes to --out: summary.json (final regret: mean, s.e., median, 0.9-quantile
and max over runs; reward, pulls, privacy per policy), curves.csv (mean and 95% band of pseudo- and realised regret at ~200
log-spaced rounds), runs.csv (one row per run), manifest.json (spec, seeds, build) and
regret.svg/regret.png. With --shard i/n it writes partial.json instead.

Resume: each cell (policy, run) is saved to DIR/.cells/KEY/ when it finishes, KEY hashing
the resolved spec and the build, so a killed run rerun with the same arguments skips the
cells it finished and writes the same bytes as an uninterrupted run; a changed spec or
binary never reuses them, and a corrupt cell file is recomputed. DIR/.cells is removed
once the outputs are written. --no-resume discards the saved cells first.

Policy specs: name[:key=value,...], e.g. ts-gaussian, mts-gaussian:b=10,c=5,
dp-ts-ucb:alpha=0.5. 'dpbandit policies' lists the names, parameters, defaults and ranges.

Equal-budget mode (--budget) calibrates every private policy's free parameters to the
same guarantee: mts-gaussian without b or c becomes one entry per b of a grid (c from
c(b+1) = T/μ² on the paper basis, keeping c ≥ 1); dp-ts-ucb gets its α; pure-DP policies
their ε. Non-private policies run unchanged, labelled "not private". The basis (default
paper) says which stated value is set equal to the target; "certified" uses the
project's certified value.

Contextual environments (the kinds below) run the contextual policies (lints, linucb,
adaprivate-ts, adaprivate-ucb, ...; see 'dpbandit policies'): each round offers K
candidate feature vectors, the pseudo-regret is Σ_t (max_i μ_t(i) − μ_t(a_t)), and
every cell of a run sees the same candidates and rewards. A private policy whose
non-private counterpart is in the sweep (` + counterpartList() + `)
is also reported as a percentage of the counterpart's expected reward Σ_t μ_t(a_t),
run by run (paired), next to its absolute regret.

`)
	b.WriteString(env.Help())
	b.WriteString("\n")
	b.WriteString(ctxenv.Help())
	b.WriteString(`
TOML spec (--spec FILE; unknown keys are rejected):

  env = "bernoulli:0.75,0.625,0.5,0.375,0.25"
  horizon = 100000
  runs = 20
  seed = 1
  policies = ["ts-gaussian", "mts-gaussian:b=10,c=5"]
  # delta = 1e-6   checkpoints = 200   extra_checkpoints = [50, 1000]
  # [budget]
  # epsilon = 35.57
  # delta = 1e-6
  # basis = "paper"

Example:

  dpbandit simulate --env bernoulli:0.75,0.625,0.5,0.375,0.25 --horizon 1e5 --runs 20 \
      --policy ts-gaussian --policy mts-gaussian:b=10,c=5 --policy dp-ts-ucb:alpha=0.5 --out out/e1

  dpbandit simulate --env bernoulli:0.75,0.625,0.5,0.375,0.25 --horizon 1e5 --runs 10 \
      --policy mts-gaussian --policy ts-gaussian --budget epsilon=35.57,delta=1e-6 --out out/eq

  dpbandit simulate --env synthetic-linear:d=20,pool=100,k=5 --horizon 1e4 --runs 12 \
      --policy lints --policy adaprivate-ts --budget epsilon=1,delta=1e-5 --out out/ada
`)
	return b.String()
}

// counterpartList renders the private → non-private counterpart mapping of
// the contextual policies, e.g. "adaprivate-ts ↔ lints, adaprivate-ucb ↔
// linucb, …", the AdaPrivate pair first.
func counterpartList() string {
	m := sim.Counterparts()
	first := []string{"adaprivate-ts", "adaprivate-ucb"}
	var parts []string
	for _, k := range first {
		if v, ok := m[k]; ok {
			parts = append(parts, k+" ↔ "+v)
			delete(m, k)
		}
	}
	rest := map[string][]string{}
	for k, v := range m {
		rest[v] = append(rest[v], k)
	}
	for _, v := range slices.Sorted(maps.Keys(rest)) {
		ks := rest[v]
		slices.Sort(ks)
		parts = append(parts, strings.Join(ks, ", ")+" ↔ "+v)
	}
	return strings.Join(parts, "; ")
}

func (c *simulateCmd) spec() (sim.Spec, error) {
	s := sim.Spec{Runs: sim.DefaultRuns, Seed: sim.DefaultSeed}
	if c.Spec != "" {
		var err error
		if s, err = sim.LoadTOML(c.Spec); err != nil {
			return s, err
		}
	}
	if c.Env != nil {
		s.Env = *c.Env
	}
	if c.Horizon != nil {
		s.Horizon = int(*c.Horizon)
	}
	if c.Runs != nil {
		s.Runs = int(*c.Runs)
	}
	if c.Seed != nil {
		s.Seed = *c.Seed
	}
	if len(c.Policy) > 0 {
		s.Policies = nil
		for _, p := range c.Policy {
			sp, err := bandit.ParseSpec(p)
			if err != nil {
				return s, badInput("--policy: %v", err)
			}
			s.Policies = append(s.Policies, sp)
		}
	}
	if c.Budget != "" {
		t, err := sim.ParseBudget(c.Budget)
		if err != nil {
			return s, err // sim's messages start with "budget"
		}
		s.Budget = &t
	}
	if c.Delta != nil {
		s.Delta = *c.Delta
	}
	if c.Checkpoints != nil {
		s.Checkpoints = *c.Checkpoints
	}
	if len(c.At) > 0 {
		s.ExtraCheckpoints = append(s.ExtraCheckpoints, c.At...)
	}
	if c.Horizon == nil && c.Spec == "" {
		return s, badInput("--horizon is required (or give --spec FILE)")
	}
	return s, nil
}

func (c *simulateCmd) Run(g *Globals) error {
	spec, err := c.spec()
	if err != nil {
		return simErr(err)
	}
	var shard sim.Shard
	if c.Shard != "" {
		if shard, err = sim.ParseShard(c.Shard); err != nil {
			return simErr(fmt.Errorf("--shard: %w", err))
		}
	}
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞) (0: GOMAXPROCS)", c.Workers)
	}
	plan, err := sim.NewPlan(spec, sim.Default)
	if err != nil {
		return simErr(err)
	}
	if err := plan.Describe(g.Stderr); err != nil {
		return err
	}
	cache, err := openCache(c.Out, plan, c.NoResume)
	if err != nil {
		return err
	}
	ctx, stop := runContext()
	defer stop()
	bar := newBar(g.Stderr)
	start := time.Now()
	res, err := plan.Run(ctx, sim.Options{Workers: c.Workers, Shard: shard, Progress: progressFunc(ctx, bar), Cache: cache})
	bar.finish()
	if cache.Corrupt > 0 {
		fmt.Fprintf(g.Stderr, "%d corrupt cell file(s) in %s were recomputed\n", cache.Corrupt, cache.Dir())
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(g.Stderr, "interrupted: the finished cells are in %s; rerun the same command to resume\n", cache.Dir())
		}
		return err
	}
	if res.Resumed > 0 {
		fmt.Fprintf(g.Stderr, "resumed: %d of %d cells taken from %s\n", res.Resumed, len(res.Runs), cache.Dir())
	}
	elapsed := time.Since(start).Round(time.Millisecond)
	if shard.Sharded() {
		if err := res.WritePartial(c.Out); err != nil {
			return err
		}
		m := sim.NewManifest(plan, shard, c.Workers, []string{sim.PartialFile, sim.ManifestFile})
		if err := m.WriteManifest(c.Out); err != nil {
			return err
		}
		fmt.Fprintf(g.Stderr, "shard %s: %d of %d cells in %s; wrote %s. Combine the shards with: dpbandit merge DIR... --out DIR\n",
			shard, len(res.Runs), plan.Cells(), elapsed, c.Out)
		return removeCells(c.Out)
	}
	agg, err := res.Aggregate()
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Stderr, "%d cells in %s\n", plan.Cells(), elapsed)
	if err := writeResults(g, agg, c.Out, sim.WriteOptions{LogX: c.LogX, NoPlots: c.NoPlots}, c.JSON,
		sim.NewManifest(plan, shard, c.Workers, nil)); err != nil {
		return err
	}
	return removeCells(c.Out)
}

// removeCells deletes out/.cells once a run's outputs are written: its own
// cells, and any left by a killed run of another configuration (never
// reusable: their key differs).
func removeCells(out string) error { return os.RemoveAll(filepath.Join(out, sim.CellsDir)) }

// interruptAfter, when set (by tests), cancels a simulate or reproduce run
// once that many cells have finished in one sweep: an injected kill.
var interruptAfter int

// cancelKey carries the cancel function of a run's context for interruptAfter.
type cancelKey struct{}

// progressFunc returns the progress callback of a run: the bar and, in
// tests, the injected interruption.
func progressFunc(ctx context.Context, b *bar) func(sim.Progress) {
	cancel, _ := ctx.Value(cancelKey{}).(context.CancelFunc)
	if interruptAfter <= 0 || cancel == nil {
		if b == nil {
			return nil
		}
		return b.update
	}
	return func(p sim.Progress) {
		b.update(p)
		if p.CellsDone-p.Resumed >= interruptAfter {
			cancel()
		}
	}
}

// runContext is the context of a long run: cancelled by SIGINT or SIGTERM
// (Kubernetes and Slurm stop a job with SIGTERM), so that the run stops at
// the next checkpoint with its finished cells saved.
func runContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ctx, stop := signal.NotifyContext(context.WithValue(ctx, cancelKey{}, cancel), os.Interrupt, syscall.SIGTERM)
	return ctx, func() { stop(); cancel() }
}

// openCache opens the cell cache of plan under out, emptied first when
// fresh is set (--no-resume).
func openCache(out string, plan *sim.Plan, fresh bool) (*sim.CellCache, error) {
	cache, err := sim.OpenCellCache(out, plan)
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := cache.Remove(); err != nil {
			return nil, err
		}
		return sim.OpenCellCache(out, plan)
	}
	return cache, nil
}

// writeResults writes the files of a complete sweep and a results table on
// stderr, and the summary on stdout with --json.
func writeResults(g *Globals, agg *sim.Aggregate, out string, o sim.WriteOptions, asJSON bool, m sim.Manifest) error {
	if err := agg.WriteFiles(out, o); err != nil {
		return err
	}
	m.Files = []string{sim.SummaryFile, sim.CurvesFile, sim.RunsFile, sim.ManifestFile}
	if !o.NoPlots {
		m.Files = append(m.Files, sim.PlotBase+".svg", sim.PlotBase+".png")
	}
	if err := m.WriteManifest(out); err != nil {
		return err
	}
	tb := report.Table{Header: []string{"policy", "regret", "± s.e.", "median", "max", "realised", "reward", "ε"},
		Align: []report.Align{report.Left, report.Right, report.Right, report.Right, report.Right, report.Right, report.Right, report.Right}}
	pct := false // a "% of the non-private counterpart" column
	for _, p := range agg.Summary.Policies {
		pct = pct || p.PctOfCounterpart != nil
	}
	if pct {
		tb.Header = append(tb.Header, "% of non-private", "± s.e.", "counterpart")
		tb.Align = append(tb.Align, report.Right, report.Right, report.Left)
	}
	for _, p := range agg.Summary.Policies {
		eps := "not private"
		if p.Privacy.Epsilon != nil {
			eps = report.Num(*p.Privacy.Epsilon, 4)
		}
		row := []string{p.Name, report.Num(p.RegretMean, 5), report.Num(p.RegretStderr, 3),
			report.Num(p.RegretMedian, 5), report.Num(p.RegretMax, 5),
			report.Num(p.RealisedRegretMean, 5), report.Num(p.RewardMean, 6), eps}
		if pct {
			if p.PctOfCounterpart != nil {
				row = append(row, fmt.Sprintf("%.2f", *p.PctOfCounterpart), fmt.Sprintf("%.2f", *p.PctOfCounterpartStderr), p.Counterpart)
			} else {
				row = append(row, "—", "", "")
			}
		}
		tb.AddRow(row...)
	}
	fmt.Fprintf(g.Stderr, "final regret at T=%d over %d runs (ε at δ=%g); files in %s\n",
		agg.Plan.Spec.Horizon, agg.Plan.Spec.Runs, agg.Summary.Delta, out)
	if err := tb.Text(g.Stderr); err != nil {
		return err
	}
	if asJSON {
		return agg.WriteSummary(g.Stdout)
	}
	return nil
}

// simErr maps the simulator's input errors to usage errors (exit code 2).
func simErr(err error) error {
	if err == nil {
		return nil
	}
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, sim.ErrSpec) {
		return usageError{err}
	}
	return err
}

// bar is an aggregate progress bar over a sweep's rounds; it is drawn only
// when stderr is a terminal (a nil *bar does nothing).
type bar struct {
	w     *os.File
	pb    *progressbar.ProgressBar
	cells int
}

func newBar(w io.Writer) *bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &bar{w: f}
}

func (b *bar) update(p sim.Progress) {
	if b == nil {
		return
	}
	if b.pb == nil {
		b.pb = progressbar.NewOptions64(p.Rounds,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription(fmt.Sprintf("cells 0/%d", p.Cells)),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
	}
	if p.CellsDone != b.cells {
		b.cells = p.CellsDone
		b.pb.Describe(fmt.Sprintf("cells %d/%d", p.CellsDone, p.Cells))
	}
	_ = b.pb.Set64(p.RoundsDone)
}

func (b *bar) finish() {
	if b == nil || b.pb == nil {
		return
	}
	_ = b.pb.Finish()
}
