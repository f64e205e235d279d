package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/recommend"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

type recommendCmd struct {
	Arms    count         `help:"Number of arms, K in [2, 1000]." required:"" placeholder:"K"`
	Horizon count         `help:"Decisions the experiment will make, T in [1, 1e7] (1e5 style accepted)." required:"" placeholder:"T"`
	Budget  string        `help:"Privacy budget: epsilon=E,delta=D (certified basis)." required:"" placeholder:"epsilon=E,delta=D"`
	Means   []float64     `help:"Your guess of the arms' reward rates, one per arm in [0, 1] (default: the panel above)." sep:"," placeholder:"M1,M2"`
	Runs    *count        `help:"Runs per policy and instance (default: 10 on your means, 5 per panel instance)." placeholder:"R"`
	Seed    uint64        `help:"Seed (default 1); the same seed gives the same table." default:"1" placeholder:"S"`
	Policy  []string      `help:"Compare only this served policy (repeat the flag for several); UCB1 is always the reference." sep:"none" placeholder:"NAME"`
	MaxTime time.Duration `help:"Bound the wall time (e.g. 30s): fewer runs, then a shorter horizon, said in the notes (0: no bound)." default:"0s" placeholder:"D"`
	JSON    bool          `help:"Print the result as JSON instead of the table."`
}

func (recommendCmd) Help() string {
	var b strings.Builder
	fmt.Fprintf(&b, `Which private policy learns at your arms, horizon and budget? recommend simulates every
K-armed private policy the decision service runs (now: %s), each built as the service
builds it (secure noise, calibrated to your budget on the certified basis for your horizon,
charged by a privacy filter that freezes it when the budget is spent), next to non-private
UCB1, and ranks them.

On your --means, or without them on a panel of Bernoulli instances with one best arm and
K−1 equal arms: gaps 0.3, 0.1 and 0.02 around 0.5 (0.65/0.35, 0.55/0.45, 0.51/0.49) and
click rates near 0.005 like the Open Bandit Dataset's (0.006/0.004). Every policy sees the
same rewards in run r (paired comparison).

The table shows each policy's calibrated parameters, its certified guarantee, its final
pseudo-regret (median and mean over runs, averaged over the instances), that median as a
multiple of UCB1's (the ranking criterion, averaged over the instances), and the share of
the last 20%% of rounds that played the best arm; then a one-line recommendation. Policies
that cannot be calibrated to the budget, or whose budget pays for fewer than K + %d
decisions, are listed as skipped with the reason.

Time: a few seconds at K ≤ 20 and T ≤ 1e5 with the default runs (on 2 cores: about 0.2 s
at K = 3, T = 1e4 and 4 s at K = 20, T = 1e5); it grows with K·T·runs. --max-time bounds
it. A progress bar is drawn on a terminal. The same seed gives the same table.

Examples:

  dpbandit recommend --arms 3 --horizon 1e4 --budget epsilon=1,delta=1e-6

  dpbandit recommend --arms 4 --horizon 1e5 --budget epsilon=0.5,delta=1e-6 \
      --means 0.05,0.04,0.04,0.03 --runs 20 --json
`, strings.Join(servedPrivate(), ", "), recommend.MinSteps)
	return b.String()
}

// servedPrivate lists the default candidates without the reference.
func servedPrivate() []string {
	c := recommend.Candidates()
	return c[:len(c)-1]
}

func (c *recommendCmd) options() (recommend.Options, error) {
	t, err := sim.ParseBudget(c.Budget)
	if err != nil {
		return recommend.Options{}, simErr(fmt.Errorf("--%w", err))
	}
	if t.Mu != 0 {
		return recommend.Options{}, badInput("--budget %q: give epsilon=E,delta=D (the pure-DP policies the service runs need an (ε, δ) budget)", c.Budget)
	}
	if t.Basis != bandit.BasisCertified && strings.Contains(strings.ToLower(c.Budget), "basis") {
		return recommend.Options{}, badInput("--budget %q: recommend calibrates on the certified basis, as the service does; drop basis=%s", c.Budget, t.Basis)
	}
	t.Basis = bandit.BasisCertified
	o := recommend.Options{Arms: int(c.Arms), Horizon: int(c.Horizon), Budget: t, Means: c.Means,
		Seed: c.Seed, MaxTime: c.MaxTime}
	if c.Runs != nil {
		if *c.Runs < 1 {
			return o, badInput("--runs %d is outside its valid range [1, %d]", *c.Runs, recommend.MaxRuns)
		}
		o.Runs = int(*c.Runs)
	}
	if c.MaxTime < 0 {
		return o, badInput("--max-time %v is outside its valid range [0, ∞) (0: no bound)", c.MaxTime)
	}
	if len(c.Policy) > 0 {
		o.Candidates = slices.Clone(c.Policy)
	}
	return o, nil
}

func (c *recommendCmd) Run(g *Globals) error {
	o, err := c.options()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newCellBar(g.Stderr)
	o.Progress = bar.update
	res, err := recommend.Run(ctx, o)
	bar.finish()
	if err != nil {
		if errors.Is(err, recommend.ErrOptions) {
			return usageError{fmt.Errorf("recommend: %w", err)}
		}
		return err
	}
	if c.JSON {
		return writeJSON(g.Stdout, res)
	}
	return writeRecommendation(g.Stdout, res)
}

// writeRecommendation prints the ranked table, the skipped policies, the
// notes and the recommendation.
func writeRecommendation(w io.Writer, res *recommend.Result) error {
	where := "your means " + floats(res.Instances[0].Means)
	if res.Panel {
		names := make([]string, len(res.Instances))
		for i, in := range res.Instances {
			names[i] = in.Name
		}
		where = fmt.Sprintf("%d panel instances (best arm last, the other %d equal): %s", len(res.Instances), res.Arms-1, strings.Join(names, "; "))
	}
	runs := fmt.Sprintf("%d runs", res.Runs)
	if res.Runs == 1 {
		runs = "1 run"
	}
	fmt.Fprintf(w, "Equal-budget comparison at ε = %g, δ = %g (certified), K = %d, T = %d, %s, seed %d, in %s\non %s.\n\n",
		res.Budget.Epsilon, res.Budget.Delta, res.Arms, res.Horizon, runs, res.Seed, res.Elapsed.Round(time.Millisecond), where)
	tb := report.Table{
		Header: []string{"rank", "policy", "calibrated", "certified guarantee", "median regret", "mean regret", "× UCB1", "best arm, last 20%"},
		Align:  []report.Align{report.Right, report.Left, report.Left, report.Left, report.Right, report.Right, report.Right, report.Right},
	}
	var notes []string
	for _, r := range res.Rows {
		params := "—"
		if len(r.Calibrated) > 0 {
			parts := make([]string, len(r.Calibrated))
			for i, k := range r.Calibrated {
				parts[i] = k + "=" + report.Num(r.Params[k], 4)
			}
			params = strings.Join(parts, ",")
		}
		name := r.Policy
		if r.Note != "" {
			notes = append(notes, r.Policy+": "+r.Note)
			name += " *"
		}
		tb.AddRow(fmt.Sprint(r.Rank), name, params, r.Guarantee, report.Num(r.MedianRegret, 4), report.Num(r.MeanRegret, 4),
			fmt.Sprintf("%.2f", r.Ratio), fmt.Sprintf("%.0f%%", 100*r.BestShare))
	}
	if err := tb.Text(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if res.Panel {
		fmt.Fprintln(w, "Regret (final pseudo-regret: median and mean over runs), × UCB1 (the median over UCB1's) and the best-arm share")
		fmt.Fprintln(w, "are taken on each instance, then averaged over the instances; the rows are ranked by × UCB1.")
	} else {
		fmt.Fprintln(w, "Regret is the final pseudo-regret (median and mean over runs); × UCB1 is the median over UCB1's; ranked by × UCB1.")
	}
	for _, n := range notes {
		fmt.Fprintln(w, "* "+n)
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Skipped:")
		for _, s := range res.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", s.Policy, s.Reason)
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "Note: "+n)
	}
	rec := res.Recommendation
	if rec.Policy == "" {
		_, err := fmt.Fprintf(w, "\nRecommendation: none: %s\n", rec.Reason)
		return err
	}
	_, err := fmt.Fprintf(w, "\nRecommendation: %s (%s): %s.\n", rec.Policy, paramList(rec.Params), rec.Reason)
	return err
}

func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = report.Num(x, 6)
	}
	return strings.Join(parts, ",")
}

func paramList(p bandit.Params) string {
	keys := slices.Sorted(maps.Keys(p))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + report.Num(p[k], 6)
	}
	return strings.Join(parts, ",")
}

// cellBar is a progress bar over the cells of a comparison, drawn only when
// stderr is a terminal (a nil *cellBar does nothing).
type cellBar struct {
	w  *os.File
	pb *progressbar.ProgressBar
}

func newCellBar(w io.Writer) *cellBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &cellBar{w: f}
}

func (b *cellBar) update(done, total int) {
	if b == nil {
		return
	}
	if b.pb == nil {
		b.pb = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription("simulating"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = b.pb.Set(done)
}

func (b *cellBar) finish() {
	if b == nil || b.pb == nil {
		return
	}
	_ = b.pb.Finish()
}
