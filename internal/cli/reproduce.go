package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/repro"
	"github.com/dpbandit/dpbandit/sim"
)

type reproduceCmd struct {
	Name    string `arg:"" optional:"" help:"Reproduction to run (see --list), or 'all' to run every one into DIR/NAME."`
	List    bool   `help:"List the reproductions with one-line descriptions and exit."`
	Out     string `help:"Output directory (created)." type:"path" placeholder:"DIR"`
	Quick   bool   `help:"Run the reduced size (under a minute on 2 cores) instead of the paper's."`
	Runs    *count `help:"Runs per policy, overriding the size's." placeholder:"R"`
	Horizon *count `help:"Horizon T (1e5 style accepted), replacing the size's horizons." placeholder:"T"`
	Workers int    `help:"Cells run in parallel (default GOMAXPROCS); results do not depend on it." placeholder:"N"`
	Shard   string `help:"Run only shard i of n of every sweep's cells (0 ≤ i < n, e.g. $$JOB_COMPLETION_INDEX/8) into --out; combine the shards with 'dpbandit merge'." placeholder:"i/n"`
	// NoResume: see simulate's flag of the same name.
	NoResume bool `name:"no-resume" help:"Recompute every cell, discarding the finished cells a killed run with the same arguments left in DIR/.cells."`
}

func (reproduceCmd) Help() string {
	return `Runs one of the papers' experiments through the simulator: the K-armed ones
(docs/reproductions.md E1–E10) and the AdaPrivate-TS ones (E12, E14), and writes to --out: the paper's figures (SVG and PNG), checks.json (one
entry per target of docs/reproductions.md: name, target, measured, tolerance, pass,
expected_to_fail), README.md (size, runtime, the checks as a table, notes on what does
not reproduce and why) and sweeps/KEY/ (the raw results with their seeds).

Shards and resume: --shard i/n runs cell c of every sweep when c mod n = i and writes
partial results (sweeps/KEY/partial.json, repro-shard.json) instead of figures and checks;
'dpbandit merge DIR... --out DIR' then writes the directory of the unsharded run, byte for
byte (README.md's runtimes aside). A stage that reads earlier sweeps' results (tuning,
tables) runs in the merge. A killed run resumes from the cells it finished (DIR/.cells,
removed once the outputs are written; see 'dpbandit simulate --help'); --no-resume
recomputes them.

Targets that docs/reproduction-decisions.md shows to be wrong in the paper are checks labelled
expected_to_fail; they stay in the file. The exit code is 1 when a check that is not
expected to fail does not pass at the size run (everything is still written), 2 on a
usage error.

Examples:

  dpbandit reproduce --list
  dpbandit reproduce ou2024-bernoulli --out out/e1
  dpbandit reproduce hu2025-same-privacy --out out/e8 --quick
  dpbandit reproduce all --out out/repro --workers 2
  for i in 0 1 2 3; do dpbandit reproduce ada-ablation --quick --shard $i/4 --out part$i; done
  dpbandit merge part0 part1 part2 part3 --out out/e14
`
}

func (c *reproduceCmd) Run(g *Globals) error {
	if c.List {
		tb := report.Table{Header: []string{"name", "label", "description"}}
		for _, r := range repro.All() {
			e, _, _ := strings.Cut(r.Experiments, " (")
			tb.AddRow(r.Name, e, r.Description)
		}
		return tb.Text(g.Stdout)
	}
	if c.Name == "" {
		return badInput("give a reproduction name (one of %s, or all) or --list", strings.Join(repro.Names(), ", "))
	}
	if c.Out == "" {
		return badInput("--out DIR is required")
	}
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞) (0: GOMAXPROCS)", c.Workers)
	}
	o := repro.Options{Out: c.Out, Quick: c.Quick, Workers: c.Workers, Log: g.Stderr}
	if c.Runs != nil {
		if *c.Runs < 1 {
			return badInput("--runs %d is outside its valid range [1, ∞)", *c.Runs)
		}
		o.Runs = int(*c.Runs)
	}
	if c.Horizon != nil {
		if *c.Horizon < 1 {
			return badInput("--horizon %d is outside its valid range [1, ∞)", *c.Horizon)
		}
		o.Horizon = int(*c.Horizon)
	}
	if c.Shard != "" {
		sh, err := sim.ParseShard(c.Shard)
		if err != nil {
			return simErr(fmt.Errorf("--shard: %w", err))
		}
		if c.Name == "all" && sh.Sharded() {
			return badInput("--shard runs one reproduction: name it (not all), one shard set per reproduction")
		}
		o.Shard = sh
	}
	o.NoResume = c.NoResume
	o.Now = reproNow
	var rs []*repro.Reproduction
	if c.Name == "all" {
		rs = repro.All()
	} else {
		r, err := repro.Lookup(c.Name)
		if err != nil {
			return badInput("%v", err)
		}
		rs = []*repro.Reproduction{r}
	}
	ctx, stop := runContext()
	defer stop()
	o.Progress = progressFunc(ctx, nil)
	if o.Shard.Sharded() {
		_, err := repro.RunShard(ctx, rs[0], o)
		return err
	}
	var failed []string
	for _, r := range rs {
		ro := o
		if c.Name == "all" {
			ro.Out = filepath.Join(c.Out, r.Name)
		}
		ro.Command = c.command(r.Name, ro.Out)
		if r.ClosedForm() && (o.Runs > 0 || o.Horizon > 0) {
			fmt.Fprintf(g.Stderr, "%s is closed form: --runs and --horizon do not apply\n", r.Name)
		}
		out, err := repro.Run(ctx, r, ro)
		if err != nil && ctx.Err() != nil {
			fmt.Fprintf(g.Stderr, "interrupted: the finished cells are in %s; rerun the same command to resume\n",
				filepath.Join(ro.Out, sim.CellsDir))
		}
		if err != nil {
			// `all` goes on without a reproduction whose public dataset is
			// absent (README: Datasets), and says so; asked by name, it fails.
			if c.Name == "all" && (errors.Is(err, repro.ErrNoOBD) || errors.Is(err, ctxenv.ErrNoData)) {
				fmt.Fprintf(g.Stderr, "%s skipped: its data is absent (%v)\n", r.Name, err)
				continue
			}
			return err
		}
		f, err := printChecks(g, out)
		if err != nil {
			return err
		}
		failed = append(failed, f...)
	}
	return checksFailed(failed, c.Out)
}

// printChecks prints a reproduction's checks on stderr and returns the IDs
// of those not expected to fail that did not pass.
func printChecks(g *Globals, out *repro.Outcome) ([]string, error) {
	tb := report.Table{Header: []string{"check", "result", "measured"}}
	for _, ch := range out.Checks {
		tb.AddRow(ch.ID, strings.Trim(ch.Verdict(), "*"), ch.Measured)
	}
	if err := tb.Text(g.Stderr); err != nil {
		return nil, err
	}
	var failed []string
	for _, ch := range out.Failed() {
		failed = append(failed, ch.ID)
	}
	return failed, nil
}

// checksFailed is the error (exit code 1) of a run with failed checks.
func checksFailed(failed []string, out string) error {
	if len(failed) > 0 {
		return fmt.Errorf("%d check(s) not expected to fail did not pass: %s (see README.md and checks.json in %s)",
			len(failed), strings.Join(failed, ", "), out)
	}
	return nil
}

// reproNow is the clock of reproduce's README runtimes (nil: time.Now);
// tests fix it to compare output directories byte for byte.
var reproNow func() time.Time

// command renders the command line that reproduces one reproduction's run.
func (c *reproduceCmd) command(name, out string) string {
	runs, horizon := 0, 0
	if c.Runs != nil {
		runs = int(*c.Runs)
	}
	if c.Horizon != nil {
		horizon = int(*c.Horizon)
	}
	return reproduceCommand(name, out, c.Quick, runs, horizon)
}

// reproduceCommand renders the unsharded command line of a reproduction
// (runs, horizon: 0 when not overridden); a merge of shards records the
// same line, so its README.md equals the unsharded run's.
func reproduceCommand(name, out string, quick bool, runs, horizon int) string {
	s := "dpbandit reproduce " + name + " --out " + out
	if quick {
		s += " --quick"
	}
	if runs > 0 {
		s += " --runs " + strconv.Itoa(runs)
	}
	if horizon > 0 {
		s += " --horizon " + strconv.Itoa(horizon)
	}
	return s
}
