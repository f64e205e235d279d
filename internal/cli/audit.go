package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"time"

	"github.com/dpbandit/dpbandit/audit"
	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

// auditCmd is `dpbandit audit`: an empirical lower bound on a policy's
// privacy loss, against the value it certifies.
type auditCmd struct {
	Policy     string        `help:"Policy spec name[:key=value,...], or gaussian-release[:n=N,noise=S] (one Thompson round)." required:"" placeholder:"SPEC"`
	Arms       int           `help:"Number of arms K (contextual policies: candidates per round)." placeholder:"K"`
	Dim        int           `help:"Feature dimension d (contextual policies only)." placeholder:"D"`
	Horizon    count         `help:"Horizon T ≥ 2 (1e3 style accepted)." placeholder:"T"`
	Budget     string        `help:"Calibrate the policy to a budget first: epsilon=E,delta=D[,basis=paper|certified] or gdp=MU." placeholder:"TARGET"`
	Delta      *float64      `help:"δ at which ε is bounded and certified (default: the budget's δ, else 1e-6)." placeholder:"D"`
	Runs       count         `help:"Runs per input in each phase (selection, split over the neighbour pairs; evaluation). Total 4×." default:"20000" placeholder:"N"`
	Confidence float64       `help:"Confidence of the lower bound, in (0, 1)." default:"0.95" placeholder:"C"`
	Seed       uint64        `help:"Base seed of the runs (and of the contextual features)." default:"1" placeholder:"S"`
	Workers    int           `help:"Parallel workers (default GOMAXPROCS); results do not depend on it." placeholder:"N"`
	MaxTime    time.Duration `name:"max-time" help:"Wall-clock limit; the audit stops cleanly and reports on the runs made (half for selection, half for evaluation)." default:"5m" placeholder:"D"`
	Plot       string        `help:"Write the trade-off plot (SVG) to this file." type:"path" placeholder:"FILE"`
	JSON       bool          `help:"Print the result as JSON."`
}

func (auditCmd) Help() string {
	return `Checks a privacy claim from the outside. The policy is run many times on pairs of
neighbouring reward streams (one round's reward vector replaced: round τ early (1),
middle (⌈T/2⌉) or late (T−1); all rewards 0 with round τ's set to 1, or all 1 with
round τ's set to 0), with independent seeds. A distinguishing event on the arm
sequence (a_τ replayed at τ+1..τ+3, the number of pulls of a_τ in windows after τ, or
the sequence a_{τ+1..τ+L} in a set ranked by likelihood ratio; for contextual policies
the inner products of the chosen features with x_τ) is chosen
on a selection half of the runs and counted on a fresh evaluation half; Clopper–Pearson
bounds on the two counts give, at the stated confidence, a lower bound on ε at δ
(Jagielski, Ullman & Oprea, NeurIPS 2020) and, for Gaussian-DP policies, on μ through
the Gaussian trade-off curve (Dong, Roth & Su, JRSSB 2022; Nasr et al., USENIX
Security 2023). A lower bound above the certified value refutes the certificate.
Pure-DP policies are bounded at δ = 0. docs/audit.md explains the output.

gaussian-release[:n=N,noise=S] is the one-step Gaussian release of a Thompson round on
an arm pulled N times (certified μ = 1/sqrt(N+1)); noise=0.5 halves its noise but keeps
the certificate, a planted bug the audit must catch.

Examples:

  dpbandit audit --policy ts-gaussian --arms 2 --horizon 8 --runs 20000
  dpbandit audit --policy lazy-dp-ts:c=0 --arms 2 --horizon 8 --budget epsilon=4,delta=1e-6,basis=certified
  dpbandit audit --policy adaprivate-ts:b=2 --arms 3 --dim 2 --horizon 10 --budget epsilon=4,delta=1e-6
  dpbandit audit --policy gaussian-release:noise=0.5 --plot audit.svg`
}

func (c *auditCmd) Run(g *Globals) error {
	sp, err := bandit.ParseSpec(c.Policy)
	if err != nil {
		return badInput("--policy: %v", err)
	}
	if c.Runs < 1 || c.Runs > 1<<40 {
		return badInput("--runs %d is outside its valid range [1, 2^40]", c.Runs)
	}
	if !(c.Confidence > 0 && c.Confidence < 1) {
		return badInput("--confidence %v is outside its valid range (0, 1)", c.Confidence)
	}
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞) (0: GOMAXPROCS)", c.Workers)
	}
	if c.MaxTime <= 0 {
		return badInput("--max-time %v is outside its valid range (0, ∞)", c.MaxTime)
	}
	var budget *bandit.Target
	delta := 1e-6
	if c.Budget != "" {
		t, err := sim.ParseBudget(c.Budget)
		if err != nil {
			return badInput("--budget: %v", err)
		}
		budget = &t
		if t.Delta > 0 {
			delta = t.Delta
		}
	}
	if c.Delta != nil {
		delta = *c.Delta
	}
	if !(delta > 0 && delta < 1) {
		return badInput("--delta %v is outside its valid range (0, 1)", delta)
	}
	s := bandit.Setting{K: c.Arms, Horizon: int(c.Horizon), Dim: c.Dim}
	if sp.Name != audit.GaussianReleaseName {
		if c.Arms < 1 {
			return badInput("--arms %d is outside its valid range [1, ∞)", c.Arms)
		}
		if c.Horizon < 2 {
			return badInput("--horizon %d is outside its valid range [2, ∞)", c.Horizon)
		}
		if c.Dim < 0 {
			return badInput("--dim %d is outside its valid range [1, ∞)", c.Dim)
		}
	}
	tg, err := audit.Resolve(sp, s, budget, c.Seed)
	if err != nil {
		return badInput("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(g.Stderr, "audit: %s, %d neighbour pairs, %d runs per input and phase, at most %v\n",
		tg.Name, len(tg.Candidates), c.Runs, c.MaxTime)
	cfg := audit.Config{Mechanism: tg.Name, Candidates: tg.Candidates, Report: tg.Report, Delta: delta,
		Runs: int(c.Runs), Confidence: c.Confidence, Seed: c.Seed, Workers: c.Workers, MaxTime: c.MaxTime,
		Progress: func(p audit.Progress) {
			fmt.Fprintf(g.Stderr, "audit: %s %d/%d runs (%s)\n", p.Phase, p.Done, p.Total, p.Elapsed.Round(100*time.Millisecond))
		}}
	res, err := audit.Run(ctx, cfg)
	if err != nil {
		if errors.Is(err, audit.ErrNoRuns) {
			return badInput("%v", err)
		}
		return err
	}
	if c.Plot != "" {
		var buf bytes.Buffer
		if err := audit.Figure(res).WriteSVG(&buf); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		if err := os.WriteFile(c.Plot, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if c.JSON {
		return writeJSON(g.Stdout, res)
	}
	return printAudit(g, res, c.Plot)
}

func printAudit(g *Globals, r *audit.Result, plot string) error {
	w := g.Stdout
	sym := "ε"
	if r.Param == "mu" {
		sym = "μ"
	}
	fmt.Fprintf(w, "Privacy audit of %s (%s certificate), %g%% confidence\n\n", r.Mechanism, r.Notion, 100*r.Confidence)
	verdict := "consistent with the certificate"
	if r.Violated {
		verdict = "CERTIFICATE REFUTED: the lower bound exceeds the certified value"
	}
	rows := [][]string{
		{"lower bound " + sym, report.Num(r.LowerBound, 5)},
		{"certified " + sym, report.Num(r.Certified, 5)},
		{"ratio", report.Num(r.Ratio, 3)},
	}
	if r.Param == "mu" {
		rows = append(rows, []string{fmt.Sprintf("ε at δ = %g: lower / certified", r.Delta),
			report.Num(r.EpsilonLower, 5) + " / " + report.Num(r.EpsilonCertified, 5)})
	} else {
		rows = append(rows, []string{"δ", report.Num(r.Delta, 3)})
	}
	rows = append(rows,
		[]string{"event", r.Event.String()},
		[]string{"evaluation counts", fmt.Sprintf("world A %d/%d (p ≥ %s), world B %d/%d (p ≤ %s)",
			r.KA, r.NA, report.Num(r.PALo, 5), r.KB, r.NB, report.Num(r.PBHi, 5))},
		[]string{"runs", fmt.Sprintf("%d in all: %d per input per pair in selection (%d pairs), %d per input in evaluation",
			r.TotalRuns, r.SelectionRuns, len(r.Candidates), r.EvalRuns)},
		[]string{"wall time", fmt.Sprintf("%.2fs on %d workers", r.Elapsed, r.Workers)},
		[]string{"verdict", verdict})
	for _, row := range rows {
		fmt.Fprintf(w, "  %-34s %s\n", row[0], row[1])
	}
	if r.Stopped {
		fmt.Fprintln(w, "\n  stopped by --max-time (or interrupt): the bound holds for the runs made.")
	}
	if plot != "" {
		fmt.Fprintf(w, "\n  plot: %s\n", plot)
	}
	if math.IsNaN(r.LowerBound) {
		return errors.New("audit: lower bound is NaN (a bug)")
	}
	return nil
}
