package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/repro"
)

type reproduceCmd struct {
	Name    string `arg:"" optional:"" help:"Reproduction to run (see --list), or 'all' to run every one into DIR/NAME."`
	List    bool   `help:"List the reproductions with one-line descriptions and exit."`
	Out     string `help:"Output directory (created)." type:"path" placeholder:"DIR"`
	Quick   bool   `help:"Run the reduced size (under a minute on 2 cores) instead of the paper's."`
	Runs    *count `help:"Runs per policy, overriding the size's." placeholder:"R"`
	Horizon *count `help:"Horizon T (1e5 style accepted), replacing the size's horizons." placeholder:"T"`
	Workers int    `help:"Cells run in parallel (default GOMAXPROCS); results do not depend on it." placeholder:"N"`
}

func (reproduceCmd) Help() string {
	return `Runs one of the papers' experiments through the simulator: the K-armed ones
(SPEC.md §3, E1–E10) and the AdaPrivate-TS ones (E12, E14), and writes to --out: the paper's figures (SVG and PNG), checks.json (one
entry per target of SPEC.md §3: name, target, measured, tolerance, pass,
expected_to_fail), README.md (size, runtime, the checks as a table, notes on what does
not reproduce and why) and sweeps/KEY/ (the raw results with their seeds).

Targets that SPEC.md shows to be wrong in the paper are checks labelled
expected_to_fail; they stay in the file. The exit code is 1 when a check that is not
expected to fail does not pass at the size run (everything is still written), 2 on a
usage error.

Examples:

  dpbandit reproduce --list
  dpbandit reproduce ou2024-bernoulli --out out/e1
  dpbandit reproduce hu2025-same-privacy --out out/e8 --quick
  dpbandit reproduce all --out out/repro --workers 2
`
}

func (c *reproduceCmd) Run(g *Globals) error {
	if c.List {
		tb := report.Table{Header: []string{"name", "SPEC.md", "description"}}
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
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
		if err != nil {
			// `all` goes on without a reproduction whose public dataset is
			// absent (README: Datasets), and says so; asked by name, it fails.
			if c.Name == "all" && (errors.Is(err, repro.ErrNoOBD) || errors.Is(err, ctxenv.ErrNoData)) {
				fmt.Fprintf(g.Stderr, "%s skipped: its data is absent (%v)\n", r.Name, err)
				continue
			}
			return err
		}
		tb := report.Table{Header: []string{"check", "result", "measured"}}
		for _, ch := range out.Checks {
			tb.AddRow(ch.ID, strings.Trim(ch.Verdict(), "*"), ch.Measured)
		}
		if err := tb.Text(g.Stderr); err != nil {
			return err
		}
		for _, ch := range out.Failed() {
			failed = append(failed, ch.ID)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d check(s) not expected to fail did not pass: %s (see README.md and checks.json in %s)",
			len(failed), strings.Join(failed, ", "), c.Out)
	}
	return nil
}

// command renders the command line that reproduces one reproduction's run.
func (c *reproduceCmd) command(name, out string) string {
	s := "dpbandit reproduce " + name + " --out " + out
	if c.Quick {
		s += " --quick"
	}
	if c.Runs != nil {
		s += " --runs " + strconv.Itoa(int(*c.Runs))
	}
	if c.Horizon != nil {
		s += " --horizon " + strconv.Itoa(int(*c.Horizon))
	}
	return s
}
