package repro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

// [ADA] Riyazat & Ukwatta, AdaPrivate-TS, §4.1 and §4.4, Table 3 (E13):
// AdaPrivate-TS and the event-level zCDP baselines on real rating data.
// The paper's MovieLens-25M is not available: MovieLens-100k (943 users,
// 1,682 movies) stands in, and Jester dataset 1, file 1 of 3 (24,983 users,
// 100 jokes) stands in for the paper's Jester data. Both are the
// semi-synthetic bandits of package ctxenv (kinds movielens and jester):
// d = 50 item factors from a truncated SVD of a disjoint training split of
// users, each round a test user and 5 items they rated, reward the
// binarised rating (≥ 4 stars; > 0 for Jester).

const (
	adaRealSeed = 20250420
	adaMLEnv    = "movielens:set=100k,d=50,k=5,train=0.8,seed=1,threshold=4,features=svd"
	adaJestEnv  = "jester:d=50,k=5,train=0.8,seed=1,threshold=0,features=svd"
	adaMLName   = "MovieLens-100k (stand-in for MovieLens-25M)"
	adaML1MEnv  = "movielens:set=1m-partial,d=50,k=5,train=0.8,seed=1,threshold=4,features=svd"
	adaML1MName = "MovieLens-1M users 1-2999 (partial; not MovieLens-1M)"
	adaJestName = "Jester dataset 1, file 1 of 3 (stand-in for [ADA]'s Jester data)"
)

// adaRealEpsilons are Table 3's ε.
var adaRealEpsilons = []float64{1, 2, 5, 10}

// adaRealBaseline is one Table 3 row: label, registry name, the paper's
// % of LinUCB on MovieLens and on Jester.
type adaRealBaseline struct {
	label, name string
	ml, jester  []float64
}

// adaRealRows are the event-level rows of Table 3 that are registered
// here (RarelySwitching-zCDP is not implemented; JDP-LinUCB is left out,
// see the notes).
var adaRealRows = []adaRealBaseline{
	{"AdaPrivate-TS", "adaprivate-ts", []float64{71.7, 75.2, 84.4, 90.6}, []float64{73.7, 78.5, 81.3, 83.3}},
	{"AdaPrivate-UCB", "adaprivate-ucb", []float64{71.7, 74.8, 80.7, 84.6}, []float64{70.1, 70.7, 76.3, 82.8}},
	{"zCDP-Episodic", "zcdp-episodic", []float64{71.9, 74.2, 80.8, 84.2}, []float64{70.8, 71.5, 73.3, 75.7}},
	{"AdaC-OFUL-zCDP", "adac-oful", []float64{72.3, 74.4, 79.8, 84.1}, []float64{72.3, 73.1, 74.5, 76.3}},
	{"DGS-LinUCB", "dgs-linucb", []float64{70.9, 71.0, 71.1, 71.2}, []float64{70.1, 70.1, 70.5, 70.0}},
}

func adaRealLabel(row string, eps float64) string { return fmt.Sprintf("%s ε=%s", row, fmtG(eps)) }

// Warm start. The prior θ0 of the MovieLens environment (a ridge fit on the
// training users, ctxenv.Ratings.Prior) enters AdaPrivate-TS/UCB as their
// prior mean (b starts at λθ0, [ADA] Alg 1's θ0). LinTS and LinUCB have no
// prior in package linear, so their warm versions are AdaPrivate-TS/UCB with
// a batch of one round and σ = 1e-150: A = λI + Σxxᵀ and b = λθ0 + Σ r x
// every round, i.e. exactly linear TS and LinUCB with the prior, the noise
// being 1e-150 (far below float64 resolution of b). θ0 comes from the
// training users only, who are disjoint from the test users whose rewards
// the policies protect (docs/reproduction-decisions.md A14 condition 6).

const warmPrefix = "warm-"

// warmPolicy hides the stand-in noise of the warm non-private references:
// their report is "not private".
type warmPolicy struct{ *linear.AdaPrivate }

func (warmPolicy) Privacy() privacy.Report {
	return privacy.NotPrivate("warm-started LinTS/LinUCB", "non-private reference (σ = 1e-150 stands for no noise)")
}

// warmRegistry is sim.Default plus warm-adaprivate-ts, warm-adaprivate-ucb,
// warm-lints and warm-linucb with prior theta0.
func warmRegistry(theta0 []float64) sim.Registry {
	reg := sim.Default
	base := reg.LookupContextual
	reg.LookupContextual = func(name string) (bandit.Descriptor, error) {
		inner, ok := strings.CutPrefix(name, warmPrefix)
		if !ok {
			return base(name)
		}
		d, err := base(inner)
		if err != nil {
			return d, err
		}
		ucb := inner == "adaprivate-ucb" || inner == "linucb"
		private := strings.HasPrefix(inner, "adaprivate-")
		if !private && inner != "lints" && inner != "linucb" {
			return bandit.Descriptor{}, fmt.Errorf("no warm-start variant of %s", inner)
		}
		d.Name = name
		d.Calibrate = nil
		d.Summary = d.Summary + " (warm start θ0)"
		d.NewContextual = func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			o := linear.AdaPrivateOptions{Dim: s.Dim, UCB: ucb, Lambda: p["lambda"], V: p["v"], Alpha: p["alpha"], GammaV: 1,
				BatchSize: 1, Sigma: 1e-150, Theta0: theta0}
			if private {
				o.GammaV, o.BatchSize, o.Sigma = p["gammav"], int(p["b"]), p["sigma"]
				if o.Sigma == 0 {
					sg, err := linear.AdaPrivateSigma(o, bandit.Target{Epsilon: p["epsilon"], Delta: p["delta"], Basis: bandit.BasisPaper})
					if err != nil {
						return nil, err
					}
					o.Sigma = sg
				}
				return linear.NewAdaPrivate(o, r)
			}
			pol, err := linear.NewAdaPrivate(o, r)
			if err != nil {
				return nil, err
			}
			return warmPolicy{pol}, nil
		}
		return d, nil
	}
	return reg
}

// runSweepReg is Context.runSweep with another registry (the warm-start
// policies); its results are read like any sweep's.
func (c *Context) runSweepReg(ctx context.Context, sw Sweep, reg sim.Registry) error {
	logw := c.opts.Log
	if logw == nil {
		logw = io.Discard
	}
	if sw.Key == "" || strings.ContainsAny(sw.Key, `/\`) || c.Has(sw.Key) {
		return fmt.Errorf("repro %s: sweep key %q is empty, has a slash or is used twice", c.R.Name, sw.Key)
	}
	st := time.Now()
	plan, err := sim.NewPlan(sw.Spec, reg)
	if err != nil {
		return fmt.Errorf("repro %s, sweep %s: %w", c.R.Name, sw.Key, err)
	}
	if len(plan.Entries) != len(sw.Spec.Policies) {
		return fmt.Errorf("repro %s, sweep %s: %d policies resolved to %d entries", c.R.Name, sw.Key, len(sw.Spec.Policies), len(plan.Entries))
	}
	res, err := plan.Run(ctx, sim.Options{Workers: c.opts.Workers})
	if err != nil {
		return fmt.Errorf("repro %s, sweep %s: %w", c.R.Name, sw.Key, err)
	}
	agg, err := res.Aggregate()
	if err != nil {
		return fmt.Errorf("repro %s, sweep %s: %w", c.R.Name, sw.Key, err)
	}
	dir := filepath.Join(c.opts.Out, SweepsDir, sw.Key)
	if err := agg.WriteFiles(dir, sim.WriteOptions{NoPlots: true}); err != nil {
		return err
	}
	m := sim.NewManifest(plan, sim.Shard{}, c.opts.Workers, []string{sim.SummaryFile, sim.CurvesFile, sim.RunsFile, sim.ManifestFile})
	if err := m.WriteManifest(dir); err != nil {
		return err
	}
	el := time.Since(st)
	c.res[sw.Key] = &sweepResult{sweep: sw, agg: agg, elapsed: el}
	c.keys = append(c.keys, sw.Key)
	fmt.Fprintf(logw, "  sweep %-28s %3d policies × %3d runs, T=%-8s %6.1fs\n", sw.Key, len(plan.Entries), plan.Spec.Runs,
		fmtInt(plan.Spec.Horizon), el.Seconds())
	return nil
}

// adaRealEnvs keeps each Context's environment (for the split and the
// prior), set by the stage.
var adaRealEnvs sync.Map // *Context → *ctxenv.Ratings

func adaRealEnvOf(c *Context) (*ctxenv.Ratings, error) {
	v, ok := adaRealEnvs.Load(c)
	if !ok {
		return nil, errors.New("the environment was not built")
	}
	return v.(*ctxenv.Ratings), nil
}

// loadRatingsEnv parses a rating environment; a missing dataset wraps
// ctxenv.ErrNoData (the reproduction is then skipped by `reproduce all`).
func loadRatingsEnv(spec string) (*ctxenv.Ratings, error) {
	e, err := ctxenv.Parse(spec)
	if err != nil {
		return nil, err
	}
	r, ok := e.(*ctxenv.Ratings)
	if !ok {
		return nil, fmt.Errorf("%s is not a rating environment", spec)
	}
	return r, nil
}

// writeSplit records the user split (file ids) in split.csv.
func writeSplit(c *Context, e *ctxenv.Ratings) error {
	train, test := e.Split()
	var b strings.Builder
	b.WriteString("user_id,set\n")
	for _, u := range train {
		fmt.Fprintf(&b, "%d,train\n", u)
	}
	for _, u := range test {
		fmt.Fprintf(&b, "%d,test\n", u)
	}
	return c.writeOut("split.csv", b.String())
}

// adaRealStage runs Table 3's sweep (cold start) and, with warm, the
// warm-start sweep.
func adaRealStage(envSpec string, warm bool) Stage {
	return func(c *Context) ([]Sweep, error) {
		e, err := loadRatingsEnv(envSpec)
		if err != nil {
			return nil, err
		}
		adaRealEnvs.Store(c, e)
		if err := writeSplit(c, e); err != nil {
			return nil, err
		}
		T, R := c.Horizon(), c.Runs()
		cold := Sweep{Key: "table3", Spec: sim.Spec{Env: envSpec, Horizon: T, Runs: R, Seed: adaRealSeed}}
		add := func(sw *Sweep, label string, sp bandit.Spec) {
			sw.Spec.Policies = append(sw.Spec.Policies, sp)
			sw.Labels = append(sw.Labels, label)
		}
		add(&cold, "LinUCB", spec("linucb"))
		add(&cold, "LinTS", spec("lints"))
		for _, eps := range adaRealEpsilons {
			for _, row := range adaRealRows {
				add(&cold, adaRealLabel(row.label, eps), spec(row.name, "epsilon", eps, "delta", adaDelta))
			}
		}
		if err := c.runSweepReg(context.Background(), cold, sim.Default); err != nil {
			return nil, err
		}
		if warm {
			ws := Sweep{Key: "warm", Spec: sim.Spec{Env: envSpec, Horizon: T, Runs: R, Seed: adaRealSeed}}
			add(&ws, "LinUCB (warm)", spec(warmPrefix+"linucb"))
			add(&ws, "LinTS (warm)", spec(warmPrefix+"lints"))
			for _, eps := range adaRealEpsilons {
				add(&ws, adaRealLabel("AdaPrivate-TS (warm)", eps), spec(warmPrefix+"adaprivate-ts", "epsilon", eps, "delta", adaDelta))
				add(&ws, adaRealLabel("AdaPrivate-UCB (warm)", eps), spec(warmPrefix+"adaprivate-ucb", "epsilon", eps, "delta", adaDelta))
			}
			if err := c.runSweepReg(context.Background(), ws, warmRegistry(e.Prior())); err != nil {
				return nil, err
			}
			// The labelled partial check on MovieLens-1M users 1–2999.
			if _, err := loadRatingsEnv(adaML1MEnv); err != nil {
				return nil, err
			}
			ps := Sweep{Key: "ml1m-partial", Spec: sim.Spec{Env: adaML1MEnv, Horizon: T, Runs: R, Seed: adaRealSeed}}
			add(&ps, "LinUCB", spec("linucb"))
			for _, eps := range []float64{1, 10} {
				add(&ps, adaRealLabel("AdaPrivate-TS", eps), spec("adaprivate-ts", "epsilon", eps, "delta", adaDelta))
				add(&ps, adaRealLabel("AdaPrivate-UCB", eps), spec("adaprivate-ucb", "epsilon", eps, "delta", adaDelta))
			}
			if err := c.runSweepReg(context.Background(), ps, sim.Default); err != nil {
				return nil, err
			}
		}
		return nil, c.writeOut(ResultsFile, adaRealTable(c, e, warm))
	}
}

// ctr returns a policy's mean CTR (expected reward per round) over runs.
func (a *adaRes) ctr(label string) (stat, error) {
	x, err := a.expected(label)
	if err != nil {
		return stat{}, err
	}
	T := float64(a.agg.Plan.Spec.Horizon)
	for i := range x {
		x[i] /= T
	}
	return statOf(x), nil
}

// adaRealTable is results.md: Table 3 as measured, with the paper's values.
func adaRealTable(c *Context, e *ctxenv.Ratings, warm bool) string {
	info := e.Info()
	name := adaMLName
	if !warm {
		name = adaJestName
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s results\n\n", c.R.Name)
	fmt.Fprintf(&b, "Data: %s. %d users (%d training, %d test; split seed %d, recorded in split.csv), %d items (%d without a training rating are never candidates), %d test ratings, %.1f%% of them pay 1. Features: %s.\n\n",
		info.Dataset, info.Users, info.TrainUsers, info.TestUsers, info.SplitSeed, info.Items, info.DroppedItems, info.TestRatings, 100*info.PositiveRate, info.Features)
	write := func(key, title, base string, rows []string, paper map[string][]float64) {
		a, err := adaLoad(c, key)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n\n", key, err)
			return
		}
		fmt.Fprintf(&b, "### %s — %s\n\n", title, name)
		bc, _ := a.ctr(base)
		fmt.Fprintf(&b, "Entries: %% of %s's expected reward (mean ± s.d. over %d runs, paired), paper's value in brackets. %s CTR %.4f ± %.4f.\n\n",
			base, a.agg.Plan.Spec.Runs, base, bc.mean, bc.se)
		tb := report.Table{Header: []string{"policy", "ε = 1", "ε = 2", "ε = 5", "ε = 10"},
			Align: []report.Align{report.Left, report.Right, report.Right, report.Right, report.Right}}
		for _, row := range rows {
			cells := []string{row}
			for i, eps := range adaRealEpsilons {
				p, err := a.pct(adaRealLabel(row, eps), base)
				if err != nil {
					cells = append(cells, "—")
					continue
				}
				s := statOf(p)
				cell := fmt.Sprintf("%.1f ± %.1f", s.mean, s.sd)
				if pv, ok := paper[row]; ok {
					cell += fmt.Sprintf(" [%.1f]", pv[i])
				}
				cells = append(cells, cell)
			}
			tb.AddRow(cells...)
		}
		_ = tb.Markdown(&b)
		b.WriteString("\n")
	}
	paper := map[string][]float64{}
	var rows []string
	for _, r := range adaRealRows {
		rows = append(rows, r.label)
		if warm {
			paper[r.label] = r.ml
		} else {
			paper[r.label] = r.jester
		}
	}
	write("table3", "Table 3 (cold start, every policy)", "LinUCB", rows, paper)
	if warm {
		write("warm", "Warm start (prior θ0 from the training users)", "LinUCB (warm)", []string{"AdaPrivate-TS (warm)", "AdaPrivate-UCB (warm)"},
			map[string][]float64{"AdaPrivate-TS (warm)": adaRealRows[0].ml, "AdaPrivate-UCB (warm)": adaRealRows[1].ml})
		if a, err := adaLoad(c, "ml1m-partial"); err == nil {
			fmt.Fprintf(&b, "### Partial check — %s\n\n", adaML1MName)
			tb := report.Table{Header: []string{"policy", "ε = 1", "ε = 10"}, Align: []report.Align{report.Left, report.Right, report.Right}}
			for _, row := range []string{"AdaPrivate-TS", "AdaPrivate-UCB"} {
				cells := []string{row}
				for _, eps := range []float64{1, 10} {
					p, err := a.pct(adaRealLabel(row, eps), "LinUCB")
					if err != nil {
						cells = append(cells, "—")
						continue
					}
					st := statOf(p)
					cells = append(cells, fmt.Sprintf("%.1f ± %.1f", st.mean, st.sd))
				}
				tb.AddRow(cells...)
			}
			lc, _ := a.ctr("LinUCB")
			fmt.Fprintf(&b, "%% of LinUCB (mean ± s.d. over runs), cold start; LinUCB CTR %.4f.\n\n", lc.mean)
			_ = tb.Markdown(&b)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// adaRealPct returns a row's per-run % of base at each ε.
func adaRealPct(a *adaRes, row, base string) ([][]float64, error) {
	out := make([][]float64, len(adaRealEpsilons))
	for i, eps := range adaRealEpsilons {
		p, err := a.pct(adaRealLabel(row, eps), base)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// risingCheck: the row's % of base rises from ε = 1 to ε = 10 by more than
// 2 paired s.e., and no step between consecutive ε falls by more than 2
// paired s.e.
func risingCheck(key, row, base string) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, key)
		if err != nil {
			return "", false, err
		}
		p, err := adaRealPct(a, row, base)
		if err != nil {
			return "", false, err
		}
		var parts []string
		for i, eps := range adaRealEpsilons {
			s := statOf(p[i])
			parts = append(parts, fmt.Sprintf("ε=%s: %.2f ± %.2f", fmtG(eps), s.mean, s.se))
		}
		ok := true
		for i := 1; i < len(p); i++ {
			d := statOf(diff(p[i], p[i-1]))
			if d.mean < -2*d.se {
				ok = false
				parts = append(parts, fmt.Sprintf("✗ falls %+.2f ± %.2f from ε=%s to ε=%s", d.mean, d.se, fmtG(adaRealEpsilons[i-1]), fmtG(adaRealEpsilons[i])))
			}
		}
		d := statOf(diff(p[len(p)-1], p[0]))
		if !(d.mean > 2*d.se) {
			ok = false
		}
		return fmt.Sprintf("%s (%% of %s, mean ± s.e.); ε=10 − ε=1: %+.2f ± %.2f (paired s.e.)", strings.Join(parts, "; "), base, d.mean, d.se), ok, nil
	}
}

// rankCheck: at each ε in epss, AdaPrivate-TS is not significantly below
// any other event-level row (paired difference > −2 s.e.); it reports
// AdaPrivate-TS's rank by mean.
func rankCheck(key string, epss []float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, key)
		if err != nil {
			return "", false, err
		}
		ok := true
		var parts []string
		for _, eps := range epss {
			ts, err := a.pct(adaRealLabel("AdaPrivate-TS", eps), "LinUCB")
			if err != nil {
				return "", false, err
			}
			rank, worst, worstLabel := 1, math.Inf(1), ""
			tsMean := statOf(ts).mean
			for _, row := range adaRealRows[1:] {
				p, err := a.pct(adaRealLabel(row.label, eps), "LinUCB")
				if err != nil {
					return "", false, err
				}
				if statOf(p).mean > tsMean {
					rank++
				}
				d := statOf(diff(ts, p))
				if t := d.mean / math.Max(d.se, 1e-12); t < worst {
					worst, worstLabel = t, fmt.Sprintf("%s %+.2f ± %.2f", row.label, d.mean, d.se)
				}
				if d.mean < -2*d.se {
					ok = false
				}
			}
			parts = append(parts, fmt.Sprintf("ε=%s: rank %d of %d, closest: TS − %s", fmtG(eps), rank, len(adaRealRows), worstLabel))
		}
		return strings.Join(parts, "; ") + " (pp of LinUCB, paired s.e.)", ok, nil
	}
}

// levelsCheck compares a row with the paper's values (± tol pp).
func levelsCheck(key, row, base string, paper []float64, tol float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, key)
		if err != nil {
			return "", false, err
		}
		p, err := adaRealPct(a, row, base)
		if err != nil {
			return "", false, err
		}
		ok := true
		var parts []string
		for i, eps := range adaRealEpsilons {
			s := statOf(p[i])
			mark := ""
			if !within(s.mean, paper[i], tol) {
				ok, mark = false, " ✗"
			}
			parts = append(parts, fmt.Sprintf("ε=%s: %.1f [paper %.1f]%s", fmtG(eps), s.mean, paper[i], mark))
		}
		return strings.Join(parts, "; ") + " (% of " + base + ")", ok, nil
	}
}

// npCTRCheck compares a non-private policy's CTR with the paper's.
func npCTRCheck(key, label string, paper, tol float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, key)
		if err != nil {
			return "", false, err
		}
		s, err := a.ctr(label)
		if err != nil {
			return "", false, err
		}
		return fmt.Sprintf("%s CTR %.4f ± %.4f (s.e.) [paper %.3f]", label, s.mean, s.se, paper), within(s.mean, paper, tol), nil
	}
}

// splitCheck: the split is disjoint, its sizes are round(train·users), and
// the seed is recorded.
func splitCheck(c *Context) (string, bool, error) {
	e, err := adaRealEnvOf(c)
	if err != nil {
		return "", false, err
	}
	info := e.Info()
	train, test := e.Split()
	in := map[int32]bool{}
	for _, u := range train {
		in[u] = true
	}
	disjoint := true
	for _, u := range test {
		disjoint = disjoint && !in[u]
	}
	want := int(math.Round(e.Options().Train * float64(info.Users)))
	ok := disjoint && len(train) == want && len(test)+info.DroppedUsers == info.Users-want
	return fmt.Sprintf("%s: %d training users, %d test users (%d dropped for fewer than %d eligible items), disjoint = %v, split seed %d (split.csv); %d items without a training rating left out",
		info.Dataset, len(train), len(test), info.DroppedUsers, e.K(), disjoint, info.SplitSeed, info.DroppedItems), ok, nil
}

// sigmaCheck: AdaPrivate-TS's σ at d = 50 equals the table of
// docs/linear.md §1.11 (4.901, 2.499, —, 0.5679 at ε = 1, 2, 10; 1.0545 at 5).
func sigmaCheck(c *Context) (string, bool, error) {
	want := []float64{4.901, 2.499, 1.0545, 0.5679}
	ok := true
	var parts []string
	for i, eps := range adaRealEpsilons {
		s, err := linear.AdaPrivateSigma(linear.AdaPrivateOptions{Dim: 50, Lambda: 1, V: 1, GammaV: 1, BatchSize: 300},
			bandit.Target{Epsilon: eps, Delta: adaDelta, Basis: bandit.BasisPaper})
		if err != nil {
			return "", false, err
		}
		if math.Abs(s-want[i]) > 1e-3*want[i] {
			ok = false
		}
		parts = append(parts, fmt.Sprintf("ε=%s: σ = %.4f [%.4g]", fmtG(eps), s, want[i]))
	}
	return strings.Join(parts, "; "), ok, nil
}

// adaRealFigure draws % of LinUCB against ε for every row, with the
// paper's values dashed.
func adaRealFigure(name string, warm bool) func(c *Context) (report.Figure, error) {
	return func(c *Context) (report.Figure, error) {
		a, err := adaLoad(c, "table3")
		if err != nil {
			return report.Figure{}, err
		}
		p := report.Panel{Title: "Table 3, cold start — " + name, XLabel: "ε", YLabel: "% of LinUCB", LogX: true, LegendRight: true}
		for i, row := range adaRealRows {
			var labels []string
			for _, eps := range adaRealEpsilons {
				labels = append(labels, adaRealLabel(row.label, eps))
			}
			s, err := pctSeries(a, row.label, adaRealEpsilons, labels, "LinUCB", i)
			if err != nil {
				return report.Figure{}, err
			}
			pv := row.jester
			if warm {
				pv = row.ml
			}
			addSeries(&p, s, paperSeries(row.label, adaRealEpsilons, pv, i))
		}
		panels := []report.Panel{p}
		if warm {
			w, err := adaLoad(c, "warm")
			if err != nil {
				return report.Figure{}, err
			}
			q := report.Panel{Title: "Warm start — " + name, XLabel: "ε", YLabel: "% of LinUCB (warm)", LogX: true, LegendRight: true}
			for i, row := range []string{"AdaPrivate-TS (warm)", "AdaPrivate-UCB (warm)"} {
				var labels []string
				for _, eps := range adaRealEpsilons {
					labels = append(labels, adaRealLabel(row, eps))
				}
				s, err := pctSeries(w, row, adaRealEpsilons, labels, "LinUCB (warm)", i)
				if err != nil {
					return report.Figure{}, err
				}
				addSeries(&q, s, paperSeries(row, adaRealEpsilons, adaRealRows[i].ml, i))
			}
			panels = append(panels, q)
			return wide(2, panels...), nil
		}
		return report.Figure{Panels: panels}, nil
	}
}

// adaRealCommonSetup describes the environment and policies.
func adaRealCommonSetup(envSpec, name string, warm bool) []string {
	s := []string{
		"Data: " + name + ". Environment " + envSpec + " (package ctxenv): users split at random (seed 1) into 80% training and 20% test users, recorded in split.csv; d = 50 item features from the rank-50 truncated SVD of the training users' ratings, centred by their mean with missing ratings counted as the mean (randomized subspace iteration, Halko, Martinsson & Tropp 2011, for MovieLens' 1,682 items; an exact eigendecomposition for Jester's 100), x_j = S·V_j divided by the largest item norm so that every candidate has norm ≤ 1; items without a training rating are never candidates.",
		"Each round: a test user uniformly at random and 5 distinct items that user rated; reward = the binarised rating (MovieLens ≥ 4 stars, Jester > 0), so the reward table of a round is known and pseudo-regret equals realised regret. All policies of a run see the same users, candidates and rewards (paired comparisons).",
		"Policies (Table 3's event-level rows that are registered): AdaPrivate-TS and AdaPrivate-UCB (λ = 1, v = α = 1, B = 300), zCDP-Episodic, AdaC-OFUL-zCDP and DGS-LinUCB (package defaults), each at ε ∈ {1, 2, 5, 10}, δ = 1e-5 (paper basis: ρ = ρ_BS(ε, δ)); references LinUCB (α = 1) and LinTS (v = 1), non-private. Entries are % of LinUCB's expected reward, per run (paired) then averaged, as Table 3.",
	}
	if warm {
		s = append(s, "Warm start ([ADA] §4.1 uses a warm-start prior on MovieLens, unspecified): θ0 = the ridge fit (λ_w = 1) of the binarised training ratings on the item features, from the training users only (independent of the protected test rewards, A14 condition 6). It is given to AdaPrivate-TS/UCB as their prior mean θ0, and to LinTS/LinUCB by running them as AdaPrivate-TS/UCB with B = 1 and σ = 1e-150 (exactly the non-private algorithms with prior θ0). The baselines have no prior in package linear, so Table 3's main block is cold for every policy (a like-for-like ranking) and the warm block reports AdaPrivate-TS/UCB against warm LinUCB.")
	}
	return s
}

func adaRealNotes(T, paperT int) []string {
	return []string{
		fmt.Sprintf("Size: T = %s rounds per run against the paper's %s, so that the whole reproduction (≈ %d policy configurations × runs) runs in about a minute on 2 cores; the private policies' %% of LinUCB rises with T (the batch noise is amortised over more batches), so the shape, not the level, is compared.", fmtInt(T), fmtInt(paperT), 2+len(adaRealRows)*len(adaRealEpsilons)),
		"Stand-in: docs/reproductions.md E13 (data decision) makes the paper's numbers targets for the shape (AdaPrivate-TS rising with ε, its rank among the baselines), not for the level; the level checks are kept as expected failures and show the measured values next to the paper's.",
		"[ADA] A18: §4.2's MovieLens CTR of about 0.72 at ε = 1 contradicts Table 3's 71.7% of 0.700 (≈ 0.50): the Table 3 entries read like CTR×100 rather than % of LinUCB. Here they are reported as % of LinUCB, with the CTRs in results.md.",
		"Left out: RarelySwitching-zCDP (no source, not implemented) and JDP-LinUCB (joint DP, a different privacy model; at d = 50 its d(d+1)/2 tree-noised Gram entries cost about 0.7 ms a round here, 50× the others, which alone would exceed the time budget at this size).",
	}
}

func adaMovieLens() *Reproduction {
	r := &Reproduction{
		Name: "ada-movielens", Paper: adaPaper, Experiments: "E13", Section: "§4.1, §4.4, Table 3 (MovieLens-25M; here MovieLens-100k)",
		Description: "AdaPrivate-TS and the Table 3 event-level baselines at ε ∈ {1, 2, 5, 10} on MovieLens-100k (stand-in for MovieLens-25M), cold and warm start",
		Full:        Size{Horizons: []int{20000}, Runs: 8},
		Quick:       Size{Horizons: []int{1500}, Runs: 2},
		Seed:        adaRealSeed, Env: adaMLEnv, Metric: Pseudo,
		Setup: append(adaRealCommonSetup(adaMLEnv, adaMLName, true),
			"Partial check: the same protocol on "+adaML1MName+" ("+adaML1MEnv+"), LinUCB and AdaPrivate-TS/UCB at ε ∈ {1, 10}, cold start; labelled partial everywhere, never MovieLens-1M."),
		Stages: []Stage{adaRealStage(adaMLEnv, true)},
		Figures: []FigureDef{{File: "table3_movielens", Caption: "% of LinUCB against ε, " + adaMLName + ", cold start (left) and warm start (right); paper's Table 3 dashed",
			Build: adaRealFigure(adaMLName, true)}},
		Notes: append(adaRealNotes(20000, 60000),
			"Rank: [ADA] §4.4 puts AdaPrivate-TS first at ε ≥ 2 on MovieLens, but its own §6.3 reports TS's advantage over UCB with public features on MovieLens as −2.5%; on MovieLens-100k AdaPrivate-UCB measures about 1 pp above AdaPrivate-TS (E13.ml-ts-rank shows the paired differences), in line with §6.3 rather than §4.4.",
			"Warm start: with the prior's weight λ = 1 the data outweigh θ0 within a few hundred rounds, so the warm and cold blocks differ little at this T."),
	}
	levelReason := "docs/reproductions.md E13 (data decision): on the stand-in (MovieLens-100k, 943 users, not MovieLens-25M) the paper's levels are not targets, only the shape; A18: Table 3's entries read like CTR×100."
	r.Targets = []Target{
		{ID: "E13.ml-split", Name: "disjoint user split recorded", Source: "[ADA] §4.1; docs/reproduction-decisions.md A14, A16 (features from a disjoint training split)",
			Target: "training and test users disjoint, 80% / 20% of the users, seed recorded", Tolerance: "exact", Measure: splitCheck},
		{ID: "E13.ml-sigma", Name: "AdaPrivate σ at ε = 1, 2, 5, 10", Source: "[ADA] Eq. 2.8; docs/linear.md §1.11",
			Target: "σ = 1/sqrt(2ρ_BS(ε, 1e-5)) = 4.901, 2.499, 1.0545, 0.5679", Tolerance: "1e-3 relative", Measure: sigmaCheck},
		{ID: "E13.ml-ts-rising", Name: "AdaPrivate-TS rises with ε (cold)", Source: "[ADA] Table 3; E13 (shape)",
			Target: "% of LinUCB at ε = 10 above ε = 1, and no fall between consecutive ε", Tolerance: "2 paired s.e.",
			Measure: risingCheck("table3", "AdaPrivate-TS", "LinUCB")},
		{ID: "E13.ml-ts-rising-warm", Name: "AdaPrivate-TS rises with ε (warm)", Source: "[ADA] Table 3 (warm start); E13 (shape)",
			Target: "% of warm LinUCB at ε = 10 above ε = 1, and no fall between consecutive ε", Tolerance: "2 paired s.e.",
			Measure: risingCheck("warm", "AdaPrivate-TS (warm)", "LinUCB (warm)")},
		{ID: "E13.ml-ts-rank", Name: "AdaPrivate-TS best at ε ≥ 2", Source: "[ADA] §4.4 (\"the highest performance at ε ≥ 2 on MovieLens\"); Table 3",
			Target: "at ε = 2, 5, 10, AdaPrivate-TS not below any event-level baseline", Tolerance: "paired difference > −2 s.e.",
			Measure: rankCheck("table3", []float64{2, 5, 10})},
		{ID: "E13.ml1m-partial", Name: "partial check on MovieLens-1M users 1-2999", Source: "docs/reproductions.md E13 (MovieLens-1M partial file as a second, labelled check)",
			Target: "on " + adaML1MName + ", AdaPrivate-TS's % of LinUCB higher at ε = 10 than at ε = 1", Tolerance: "2 paired s.e.",
			Measure: func(c *Context) (string, bool, error) {
				a, err := adaLoad(c, "ml1m-partial")
				if err != nil {
					return "", false, err
				}
				lo, err := a.pct(adaRealLabel("AdaPrivate-TS", 1), "LinUCB")
				if err != nil {
					return "", false, err
				}
				hi, err := a.pct(adaRealLabel("AdaPrivate-TS", 10), "LinUCB")
				if err != nil {
					return "", false, err
				}
				d := statOf(diff(hi, lo))
				return fmt.Sprintf("%s: ε=1 %.2f, ε=10 %.2f (%% of LinUCB); difference %+.2f ± %.2f (paired s.e.)", adaML1MName, statOf(lo).mean, statOf(hi).mean, d.mean, d.se),
					d.mean > 2*d.se, nil
			}},
		{ID: "E13.ml-np-ctr", Name: "non-private CTR (warm LinUCB)", Source: "[ADA] Table 3 (NP: CTR = .700 ± .012)",
			Target: "warm LinUCB's CTR 0.700", Tolerance: "±0.06 (E13's ±6 pp)", Measure: npCTRCheck("warm", "LinUCB (warm)", 0.700, 0.06)},
		{ID: "E13.ml-levels", Name: "AdaPrivate-TS levels (warm)", Source: "[ADA] Table 3",
			Target: "AdaPrivate-TS (warm) at 71.7 / 75.2 / 84.4 / 90.6 % of LinUCB", Tolerance: "±6 pp",
			ExpectedToFail: true, Reason: levelReason,
			Measure: levelsCheck("warm", "AdaPrivate-TS (warm)", "LinUCB (warm)", adaRealRows[0].ml, 6)},
	}
	return r
}

func adaJester() *Reproduction {
	r := &Reproduction{
		Name: "ada-jester", Paper: adaPaper, Experiments: "E13", Section: "§4.4, Table 3 (Jester; here Jester dataset 1, file 1 of 3)",
		Description: "AdaPrivate-TS and the Table 3 event-level baselines at ε ∈ {1, 2, 5, 10} on Jester dataset 1 file 1 of 3 (stand-in for the paper's Jester data)",
		Full:        Size{Horizons: []int{30000}, Runs: 6},
		Quick:       Size{Horizons: []int{1500}, Runs: 2},
		Seed:        adaRealSeed, Env: adaJestEnv, Metric: Pseudo,
		Setup:  adaRealCommonSetup(adaJestEnv, adaJestName, false),
		Stages: []Stage{adaRealStage(adaJestEnv, false)},
		Figures: []FigureDef{{File: "table3_jester", Caption: "% of LinUCB against ε, " + adaJestName + "; paper's Table 3 dashed",
			Build: adaRealFigure(adaJestName, false)}},
		Notes: append(adaRealNotes(30000, 30000),
			"Rank: [ADA] §4.4 has AdaPrivate-TS dominate every baseline at every ε on Jester; here AdaPrivate-UCB is level with it at ε ≤ 5 (paired differences within 2 s.e.) and ahead at ε = 10 (E13.jester-ts-rank), consistent with [ADA] §6.3's own −2.5% TS − UCB gap with public features. Both AdaPrivate variants are far above zCDP-Episodic, AdaC-OFUL-zCDP and DGS-LinUCB, as in Table 3.",
			"Jester: a random candidate already pays 0.59 here (59.5% of dataset 1's ratings are > 0), so the paper's non-private CTR of 0.363 cannot come from this protocol; its Jester protocol (threshold, candidate sets, file) is not stated."),
	}
	levelReason := "docs/reproductions.md E13 (data decision): on the stand-in (Jester dataset 1, file 1 of 3) the paper's levels are not targets, only the shape; the paper's NP CTR of 0.363 is below this protocol's random-candidate CTR (0.59), so its protocol differs."
	r.Targets = []Target{
		{ID: "E13.jester-split", Name: "disjoint user split recorded", Source: "[ADA] §4.4; docs/reproduction-decisions.md A14, A16",
			Target: "training and test users disjoint, 80% / 20% of the users, seed recorded", Tolerance: "exact", Measure: splitCheck},
		{ID: "E13.jester-ts-rising", Name: "AdaPrivate-TS rises with ε", Source: "[ADA] Table 3; E13 (shape)",
			Target: "% of LinUCB at ε = 10 above ε = 1, and no fall between consecutive ε", Tolerance: "2 paired s.e.",
			Measure: risingCheck("table3", "AdaPrivate-TS", "LinUCB")},
		{ID: "E13.jester-ts-rank", Name: "AdaPrivate-TS best at every ε", Source: "[ADA] §4.4 (\"dominates all baselines at every ε\" on Jester); Table 3",
			Target: "at every ε, AdaPrivate-TS not below any event-level baseline", Tolerance: "paired difference > −2 s.e.",
			Measure: rankCheck("table3", adaRealEpsilons)},
		{ID: "E13.jester-np-ctr", Name: "non-private CTR (LinUCB)", Source: "[ADA] Table 3 (NP: CTR = .363 ± .014)",
			Target: "LinUCB's CTR 0.363", Tolerance: "±0.06", ExpectedToFail: true, Reason: levelReason,
			Measure: npCTRCheck("table3", "LinUCB", 0.363, 0.06)},
		{ID: "E13.jester-levels", Name: "AdaPrivate-TS levels", Source: "[ADA] Table 3",
			Target: "AdaPrivate-TS at 73.7 / 78.5 / 81.3 / 83.3 % of LinUCB", Tolerance: "±6 pp", ExpectedToFail: true, Reason: levelReason,
			Measure: levelsCheck("table3", "AdaPrivate-TS", "LinUCB", adaRealRows[0].jester, 6)},
	}
	return r
}
