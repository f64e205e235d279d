package repro

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

// [ADA] Riyazat & Ukwatta, "AdaPrivate-TS: Private Thompson Sampling for
// Contextual Bandits with Privacy Amplification": the synthetic experiments
// of §4 (docs/reproductions.md E12, E14). Shared by ada_synthetic.go, ada_ablation.go
// and ada_user.go.
//
// Every sweep of the three reproductions runs the same environment with the
// same seed, so run r of any policy in any of them faces the same problem
// (pool and θ*), the same candidate sets and the same reward uniforms: all
// comparisons, within and across the reproductions, are paired.

const (
	adaPaper = "[ADA] Riyazat & Ukwatta, AdaPrivate-TS"
	// adaEnv is docs/reproductions.md E12's environment. problem=per-run: run r draws its
	// own pool and θ* (the paper's "12 seeds" redraw the problem; with
	// problem=fixed every run would face one θ*).
	adaEnv   = "synthetic-linear:d=20,pool=100,k=5,theta=2,link=logistic,seed=1,problem=per-run"
	adaSeed  = 20250412
	adaDelta = 1e-5
)

// adaEpsilons are the ε of Tables 1, 2 and 6.
var adaEpsilons = []float64{0.5, 1, 2, 5}

// adaGapKey is the sweep of the paired gap checks (E12.gap-eps*,
// E14.ablation-increments): docs/reproduction-decisions.md A28 runs them with 60 paired runs, five
// times the size's runs (12 at full size), because with 12 the paired s.e.
// (≈ 1.4 pp) is as large as the published gaps (0.5–1.5 pp).
const adaGapKey = "gap"

// adaGapRuns is the number of runs of the gap sweep: 60 at full size.
func adaGapRuns(c *Context) int { return 5 * c.Runs() }

// gapText renders a paired difference (percentage points) for the gap
// checks, and whether it is significantly positive; pass is docs/reproduction-decisions.md A28's
// criterion, not significantly negative (mean > −2 s.e.).
func gapText(name string, d []float64) (text string, pass bool) {
	s := statOf(d)
	pos := 0
	for _, x := range d {
		if x > 0 {
			pos++
		}
	}
	sig := "not significantly positive"
	if s.mean > 2*s.se {
		sig = "significantly positive"
	}
	return fmt.Sprintf("%s%+.2f ± %.2f pp (paired s.e., %d runs; t = %.1f; %d of %d runs > 0; %s)",
		name, s.mean, s.se, len(d), s.mean/s.se, pos, len(d), sig), s.mean > -2*s.se
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// adaTS returns adaprivate-ts at (ε, δ = 1e-5) with extra parameters.
func adaTS(eps float64, kv ...any) bandit.Spec {
	return spec("adaprivate-ts", append([]any{"epsilon", eps, "delta", adaDelta}, kv...)...)
}

// adaUCB returns adaprivate-ucb at (ε, δ = 1e-5) with extra parameters.
func adaUCB(eps float64, kv ...any) bandit.Spec {
	return spec("adaprivate-ucb", append([]any{"epsilon", eps, "delta", adaDelta}, kv...)...)
}

// registered reports whether a contextual policy is in the registry (the
// baselines of Table 6 are optional: their rows report "not run" without
// them).
func registered(name string) bool {
	_, err := bandit.Lookup(bandit.ContextualKind, name)
	return err == nil
}

// sweepBuilder collects the policies of a sweep with their labels.
type sweepBuilder struct{ sw Sweep }

func newSweep(key string, horizon, runs int, seed uint64) *sweepBuilder {
	return &sweepBuilder{sw: Sweep{Key: key, Spec: sim.Spec{Env: adaEnv, Horizon: horizon, Runs: runs, Seed: seed}}}
}

func (b *sweepBuilder) add(label string, sp bandit.Spec) {
	b.sw.Spec.Policies = append(b.sw.Spec.Policies, sp)
	b.sw.Labels = append(b.sw.Labels, label)
}

// adaRes is one contextual sweep's results by policy label.
type adaRes struct {
	agg    *sim.Aggregate
	idx    map[string]int
	labels []string
}

func adaLoad(c *Context, key string) (*adaRes, error) {
	agg, err := c.Aggregate(key)
	if err != nil {
		return nil, err
	}
	ps, err := c.Policies(key)
	if err != nil {
		return nil, err
	}
	r := &adaRes{agg: agg, idx: map[string]int{}}
	for i, p := range ps {
		r.idx[p.Label] = i
		r.labels = append(r.labels, p.Label)
	}
	return r, nil
}

func (a *adaRes) has(label string) bool { _, ok := a.idx[label]; return ok }

func (a *adaRes) index(label string) (int, error) {
	i, ok := a.idx[label]
	if !ok {
		return 0, fmt.Errorf("no policy %q in sweep %s (have %s)", label, a.agg.Plan.Spec.Env, strings.Join(a.labels, "; "))
	}
	return i, nil
}

// per returns a per-run statistic of a policy: f(run result, last checkpoint).
func (a *adaRes) per(label string, f func(r sim.RunResult, last int) float64) ([]float64, error) {
	i, err := a.index(label)
	if err != nil {
		return nil, err
	}
	R := a.agg.Plan.Spec.Runs
	last := len(a.agg.Plan.Checkpoints) - 1
	out := make([]float64, R)
	for k := range R {
		out[k] = f(a.agg.Runs[i*R+k], last)
	}
	return out, nil
}

// expected returns each run's expected reward Σ_t μ_t(a_t).
func (a *adaRes) expected(label string) ([]float64, error) {
	return a.per(label, func(r sim.RunResult, last int) float64 { return r.Oracle - r.Pseudo[last] })
}

// regret returns each run's final pseudo-regret Σ_t (μ*_t − μ_t(a_t)).
func (a *adaRes) regret(label string) ([]float64, error) {
	return a.per(label, func(r sim.RunResult, last int) float64 { return r.Pseudo[last] })
}

// pct returns, per run, 100 × the expected reward of label over that of
// base (paired: run r of both saw the same problem, candidates and reward
// uniforms).
func (a *adaRes) pct(label, base string) ([]float64, error) {
	x, err := a.expected(label)
	if err != nil {
		return nil, err
	}
	y, err := a.expected(base)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(x))
	for k := range x {
		out[k] = 100 * x[k] / y[k]
	}
	return out, nil
}

// stat is a mean over runs with its standard error and standard deviation.
type stat struct{ mean, se, sd float64 }

func statOf(xs []float64) stat {
	m, se := meanSE(xs)
	return stat{m, se, se * math.Sqrt(float64(len(xs)))}
}

// pctText renders a percentage: "96.16 ± 0.93 (s.e.; s.d. 3.2)".
func (s stat) pctText() string {
	return fmt.Sprintf("%.2f ± %.2f (s.e.; s.d. %.1f)", s.mean, s.se, s.sd)
}

// regText renders an absolute regret: "624 ± 48".
func (s stat) regText() string { return fmt.Sprintf("%s ± %s", num(s.mean, 4), num(s.se, 2)) }

// diff returns the paired differences x − y.
func diff(x, y []float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] - y[i]
	}
	return out
}

// row is one policy's % of a reference and its absolute regret.
type row struct {
	label        string
	pct, pctLin  stat // % of the counterpart; % of LinUCB
	regret       stat
	pctRun, regs []float64
}

// rowOf computes a policy's row: % of base (its non-private counterpart)
// and of linucb, and its regret.
func (a *adaRes) rowOf(label, base, linucb string) (row, error) {
	p, err := a.pct(label, base)
	if err != nil {
		return row{}, err
	}
	q, err := a.pct(label, linucb)
	if err != nil {
		return row{}, err
	}
	g, err := a.regret(label)
	if err != nil {
		return row{}, err
	}
	return row{label: label, pct: statOf(p), pctLin: statOf(q), regret: statOf(g), pctRun: p, regs: g}, nil
}

// text renders a row for a check: "% of BASE …; % of LinUCB …; regret …".
func (r row) text(base string) string {
	s := fmt.Sprintf("%s %% of %s", r.pct.pctText(), base)
	if base != "LinUCB" {
		s += fmt.Sprintf("; %.2f %% of LinUCB", r.pctLin.mean)
	}
	return s + "; regret " + r.regret.regText()
}

// within reports whether |got − want| ≤ tol.
func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol+1e-12 }

// levelCheck is the measure of a "% of non-private" target with an absolute
// tolerance in percentage points.
func levelCheck(key, label, base, baseLabel, linucb string, target, tol float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, key)
		if err != nil {
			return "", false, err
		}
		if !a.has(label) {
			return "not run: " + label + " (policy not registered)", false, nil
		}
		r, err := a.rowOf(label, base, linucb)
		if err != nil {
			return "", false, err
		}
		return r.text(baseLabel), within(r.pct.mean, target, tol), nil
	}
}

// rowCheck is the measure of a table row (one target per ε): every value
// within tol of its target.
func rowCheck(key string, labels []string, base, baseLabel, linucb string, targets []float64, tol float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, key)
		if err != nil {
			return "", false, err
		}
		var parts []string
		ok := true
		for i, l := range labels {
			if !a.has(l) {
				return "not run: " + l + " (policy not registered)", false, nil
			}
			r, err := a.rowOf(l, base, linucb)
			if err != nil {
				return "", false, err
			}
			mark := ""
			if !within(r.pct.mean, targets[i], tol) {
				ok, mark = false, " ✗"
			}
			parts = append(parts, fmt.Sprintf("%s: %.1f ± %.1f%s (regret %s)", l, r.pct.mean, r.pct.se, mark, num(r.regret.mean, 4)))
		}
		return strings.Join(parts, "; ") + " (% of " + baseLabel + ", mean ± s.e.)", ok, nil
	}
}

// pctSeries is one line of % against x for the labels, with a 95% band of
// the mean (± 1.96 s.e.).
func pctSeries(a *adaRes, name string, xs []float64, labels []string, base string, color int) (report.Series, error) {
	s := report.Series{Label: name, X: xs, Color: report.Palette[color%len(report.Palette)]}
	for _, l := range labels {
		if !a.has(l) {
			return report.Series{}, nil
		}
		p, err := a.pct(l, base)
		if err != nil {
			return s, err
		}
		st := statOf(p)
		s.Y = append(s.Y, st.mean)
		s.Lo = append(s.Lo, st.mean-1.96*st.se)
		s.Hi = append(s.Hi, st.mean+1.96*st.se)
	}
	return s, nil
}

// regretSeries is one line of final regret against x with a 95% band.
func regretSeries(a *adaRes, name string, xs []float64, labels []string, color int) (report.Series, error) {
	s := report.Series{Label: name, X: xs, Color: report.Palette[color%len(report.Palette)]}
	for _, l := range labels {
		if !a.has(l) {
			return report.Series{}, nil
		}
		g, err := a.regret(l)
		if err != nil {
			return s, err
		}
		st := statOf(g)
		s.Y = append(s.Y, st.mean)
		s.Lo = append(s.Lo, st.mean-1.96*st.se)
		s.Hi = append(s.Hi, st.mean+1.96*st.se)
	}
	return s, nil
}

// paperSeries is a paper's values as a dashed line in a method's colour.
func paperSeries(name string, xs, ys []float64, color int) report.Series {
	return report.Series{Label: name + " (paper)", X: xs, Y: ys, Dashed: true, Color: report.Palette[color%len(report.Palette)]}
}

// addSeries appends the non-empty series.
func addSeries(p *report.Panel, ss ...report.Series) {
	for _, s := range ss {
		if len(s.X) > 0 && len(s.Y) == len(s.X) {
			p.Series = append(p.Series, s)
		}
	}
}

// addHeadroom extends a panel's y axis above its data by frac of the data's
// range (an unlabelled one-point series, which draws nothing), so that the
// legend in the top corner does not cover the lines.
func addHeadroom(p *report.Panel, frac float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	x0 := math.NaN()
	for _, s := range p.Series {
		for j, y := range s.Y {
			if math.IsNaN(x0) {
				x0 = s.X[j]
			}
			lo, hi = math.Min(lo, y), math.Max(hi, y)
			if s.Hi != nil {
				lo, hi = math.Min(lo, s.Lo[j]), math.Max(hi, s.Hi[j])
			}
		}
	}
	if math.IsInf(lo, 0) || math.IsNaN(x0) {
		return
	}
	p.Series = append(p.Series, report.Series{X: []float64{x0}, Y: []float64{hi + frac*(hi-lo)}})
}

// writeOut writes a file into the output directory.
func (c *Context) writeOut(name, text string) error {
	return os.WriteFile(filepath.Join(c.opts.Out, name), []byte(text), 0o644)
}

// resultsTable renders rows as markdown: % of the counterpart (mean ± s.d.
// over runs, as the paper's ±), % of LinUCB, absolute regret (mean ± s.e.).
func resultsTable(title string, rows []row, baseLabels []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", title)
	tb := report.Table{Header: []string{"policy", "% of non-private counterpart (± s.d.)", "counterpart", "% of LinUCB", "regret (± s.e.)"},
		Align: []report.Align{report.Left, report.Right, report.Left, report.Right, report.Right}}
	for i, r := range rows {
		tb.AddRow(r.label, fmt.Sprintf("%.1f ± %.1f", r.pct.mean, r.pct.sd), baseLabels[i], fmt.Sprintf("%.1f", r.pctLin.mean), r.regret.regText())
	}
	_ = tb.Markdown(&b)
	b.WriteString("\n")
	return b.String()
}
