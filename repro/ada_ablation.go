package repro

import (
	"fmt"
	"strings"

	"github.com/dpbandit/dpbandit/report"
)

// ada-ablation: [ADA] Table 4, the component ablation at ε = 1, and §6.2's
// forced exploration ([ADA] Tables 4, 5, §4.6, §6; docs/reproductions.md E14, soft targets).

// abNoiseName is the registry name of the Table 4 baseline ("UCB + A&b
// noise", linear/ucbabnoise.go): (s, Σxxᵀ) released in one Gaussian step.
// docs/linear.md §1.11 ([ADA]) gives Δ₂ = √2; under replacement it is 2, which the policy
// certifies. Should the policy be missing, the row reports "not run".
const abNoiseName = "ucb-ab-noise"

const (
	lAbBase     = "UCB + A&b noise"
	lAbBOnly    = "+ B_ONLY noise (AdaPrivate-UCB)"
	lAbTS       = "+ Thompson Sampling (AdaPrivate-TS)"
	lAbAmp      = "+ Amplification q=0.5 (TS-Amp)"
	lAbAdaptive = "+ Adaptive v0=1.5, γ=0.95"
	lForcedTS   = "AdaPrivate-TS + forced exploration γ_f=d"
	lForcedUCB  = "AdaPrivate-UCB + forced exploration γ_f=d"
)

// adaAblationRows are Table 4's rows: label, counterpart label and target.
var adaAblationRows = []struct {
	id, label, base string
	target          float64
	reason          string // why it is expected to fail ("": it is not)
}{
	{"E14.ablation-baseline", lAbBase, lLinUCB, 91.2, ""},
	{"E14.ablation-bonly", lAbBOnly, lLinUCB, 93.5, ""},
	{"E14.ablation-ts", lAbTS, lLinTS, 95.2, ""},
	{"E14.ablation-amp", lAbAmp, lLinTS, 96.8, "docs/reproduction-decisions.md A13: with exact accounting amplification adds noise (σ_amp/q = 7.01 > σ = 4.90 at ε = 1, q = 0.5) and discards half the rewards, so it does not add Table 4's +1.6 pp; within E14's soft ±5 pp it may still pass."},
	{"E14.ablation-adaptive", lAbAdaptive, lLinTS, 97.5, "docs/reproduction-decisions.md A13: this row keeps amplification (q = 0.5), whose exact accounting costs accuracy, so Table 4's further gain is not expected; within E14's soft ±5 pp it may still pass."},
}

func adaAblation() *Reproduction {
	r := &Reproduction{
		Name: "ada-ablation", Paper: adaPaper, Experiments: "E14 (Table 4, §6.2; with A13, A18)",
		Section:     "§4.5 Table 4; §6.2",
		Description: "component ablation at ε = 1 (UCB + A&b noise → B_ONLY noise → TS → amplification → adaptive exploration) and forced exploration (Table 4, §6.2)",
		Full:        Size{Horizons: []int{10000}, Runs: 12},
		Quick:       Size{Horizons: []int{2000}, Runs: 4},
		Seed:        adaSeed, Env: adaEnv, Metric: Pseudo,
		Setup: []string{
			"The environment, seeds and defaults of ada-synthetic (Riyazat & Ukwatta, AdaPrivate-TS, §4; docs/reproductions.md E12: d = 20, 100-arm pool, 5 candidates, logistic rewards, T = 1e4, 12 runs with a problem each, B = 300, λ = v = α = 1, δ = 1e-5); ε = 1 throughout. Run r of every row sees the same problem, candidates and reward uniforms as run r of ada-synthetic.",
			"Rows, each adding one component to the previous: the baseline \"UCB + A&b noise\" (registry name " + abNoiseName + ", when a policy of that name is registered: docs/linear.md §1.11 leaves it unspecified); + B_ONLY noise = AdaPrivate-UCB; + Thompson sampling = AdaPrivate-TS; + amplification = TS-Amp with q = 0.5 (σ_amp by the exact subsampled-Gaussian RDP); + adaptive exploration = TS-Amp q = 0.5 with v0 = 1.5, γ_v = 0.95.",
			"Increments (docs/reproduction-decisions.md A28): a separate sweep (\"gap\") of LinUCB, LinTS, UCB + A&b noise, AdaPrivate-UCB and AdaPrivate-TS at ε = 1 with five times the runs (60 at full size, same seed), paired run by run; each increment passes when it is not significantly negative (mean > −2 s.e.), and the check says whether it is significantly positive.",
			"Forced exploration (§6.2): AdaPrivate-TS and AdaPrivate-UCB with γ_f = d = 20 (a uniformly random candidate with probability min(1, d ln t/(t γ_f)); post-processing, no privacy cost).",
			"Table 4's \"% NP\" is read as % of the row's non-private counterpart (LinUCB for the UCB rows, LinTS for the TS rows), as in Table 1; % of LinUCB is shown beside it (docs/reproduction-decisions.md A18). Absolute regret is in every measured value and in results.md.",
		},
		Notes: []string{
			"Riyazat & Ukwatta, AdaPrivate-TS, Tables 4, 5, §4.6, §6; docs/reproductions.md E14: the protocols are under-specified; all targets are soft (±5 pp).",
			"A13: with exact accounting amplification adds noise (σ_amp/q = 7.01 > σ = 4.90 at ε = 1, q = 0.5) and discards half the rewards, so the \"+ Amplification\" and \"+ Adaptive\" rows (which keeps amplification) are expected not to reproduce Table 4's gains.",
			"A18: Table 4's rows do not match Tables 1/2 (B_ONLY-UCB 93.5 vs 95.2, +TS 95.2 vs 96.7, +Amp(q=.5) 96.8 vs 97.5), so at most one of the two tables can be matched closely; the ±5 pp soft tolerance covers both.",
			"The baseline row is " + abNoiseName + ": (s, Σxxᵀ) released in one Gaussian step with symmetric matrix noise (docs/linear.md §1.11). Its L2 sensitivity under replacement is 2, not the paper-basis √2 (x′ = −x attains 2), so it certifies 2/σ-GDP and runs with twice AdaPrivate-UCB's noise at the same ε.",
		},
	}
	r.Stages = []Stage{
		func(c *Context) ([]Sweep, error) {
			m := newSweep("ablation", c.Horizon(), c.Runs(), c.R.Seed)
			m.add(lLinUCB, spec("linucb"))
			m.add(lLinTS, spec("lints"))
			if registered(abNoiseName) {
				m.add(lAbBase, spec(abNoiseName, "epsilon", 1.0, "delta", adaDelta))
			}
			m.add(lAbBOnly, adaUCB(1))
			m.add(lAbTS, adaTS(1))
			m.add(lAbAmp, adaTS(1, "amp", 0.5))
			m.add(lAbAdaptive, adaTS(1, "amp", 0.5, "v", 1.5, "gammav", 0.95))
			m.add(lForcedTS, adaTS(1, "forced", 20))
			m.add(lForcedUCB, adaUCB(1, "forced", 20))
			// The increments' own sweep: 60 paired runs at full size
			// (docs/reproduction-decisions.md A28).
			g := newSweep(adaGapKey, c.Horizon(), adaGapRuns(c), c.R.Seed)
			g.add(lLinUCB, spec("linucb"))
			g.add(lLinTS, spec("lints"))
			if registered(abNoiseName) {
				g.add(lAbBase, spec(abNoiseName, "epsilon", 1.0, "delta", adaDelta))
			}
			g.add(lAbBOnly, adaUCB(1))
			g.add(lAbTS, adaTS(1))
			return []Sweep{m.sw, g.sw}, nil
		},
		func(c *Context) ([]Sweep, error) { return nil, adaAblationTables(c) },
	}
	r.Figures = []FigureDef{{
		File: "table4_ablation", Caption: "Table 4 at ε = 1: each configuration as % of its non-private counterpart (mean with a 95% band of the mean) against the paper's values, and its absolute regret.",
		Build: adaAblationFigure,
	}}
	for _, row := range adaAblationRows {
		base := "LinUCB"
		if row.base == lLinTS {
			base = "LinTS"
		}
		r.Targets = append(r.Targets, Target{
			ID: row.id, Name: "Table 4: " + row.label, Source: "docs/reproductions.md E14; [ADA] Table 4",
			Target: fmt.Sprintf("%.1f %% of %s at ε = 1", row.target, base), Tolerance: "soft ±5 pp", ExpectedToFail: row.reason != "", Reason: row.reason,
			Measure: levelCheck("ablation", row.label, row.base, base, lLinUCB, row.target, 5),
		})
	}
	r.Targets = append(r.Targets, Target{
		ID: "E14.ablation-increments", Name: "B_ONLY and TS each add", Source: "docs/reproduction-decisions.md E14, A28; [ADA] §4.5 (\"each component contributes incrementally\")",
		Target:    "UCB + A&b < + B_ONLY (+2.3 pp) < + TS (+1.7 pp), paired",
		Tolerance: "each increment not significantly negative: mean > −2 s.e. of the paired differences over the gap sweep's runs (60 at full size; docs/reproduction-decisions.md A28)",
		Measure:   ablationIncrements,
	}, Target{
		ID: "E14.forced", Name: "forced exploration", Source: "docs/reproductions.md E14; [ADA] §6.2",
		Target: "AdaPrivate with forced exploration at 94–96 % of non-private", Tolerance: "soft ±5 pp (in [89, 101])",
		Measure: func(c *Context) (string, bool, error) {
			a, err := adaLoad(c, "ablation")
			if err != nil {
				return "", false, err
			}
			ts, err := a.rowOf(lForcedTS, lLinTS, lLinUCB)
			if err != nil {
				return "", false, err
			}
			ucb, err := a.rowOf(lForcedUCB, lLinUCB, lLinUCB)
			if err != nil {
				return "", false, err
			}
			in := func(x float64) bool { return x >= 94-5 && x <= 96+5 }
			return "TS: " + ts.text("LinTS") + "; UCB: " + ucb.text("LinUCB"), in(ts.pct.mean) && in(ucb.pct.mean), nil
		},
	})
	return r
}

// ablationIncrements checks the increments of the rows that
// docs/reproduction-decisions.md does not expect to fail: A&b → B_ONLY (when the baseline is registered) and
// B_ONLY → TS, each as % of its counterpart, paired by run over the gap
// sweep (60 runs at full size). docs/reproduction-decisions.md A28: each passes when it is not
// significantly negative.
func ablationIncrements(c *Context) (string, bool, error) {
	a, err := adaLoad(c, adaGapKey)
	if err != nil {
		return "", false, err
	}
	pct := func(l, base string) ([]float64, error) { return a.pct(l, base) }
	bonly, err := pct(lAbBOnly, lLinUCB)
	if err != nil {
		return "", false, err
	}
	ts, err := pct(lAbTS, lLinTS)
	if err != nil {
		return "", false, err
	}
	ok := true
	var parts []string
	if a.has(lAbBase) {
		base, err := pct(lAbBase, lLinUCB)
		if err != nil {
			return "", false, err
		}
		t, pass := gapText("B_ONLY − A&b: ", diff(bonly, base))
		ok = ok && pass
		parts = append(parts, t)
	} else {
		ok = false
		parts = append(parts, "B_ONLY − A&b: not run (no "+abNoiseName+" policy)")
	}
	t, pass := gapText("TS − B_ONLY: ", diff(ts, bonly))
	ok = ok && pass
	parts = append(parts, t)
	return strings.Join(parts, "; "), ok, nil
}

func adaAblationTables(c *Context) error {
	a, err := adaLoad(c, "ablation")
	if err != nil {
		return err
	}
	var rows []row
	var bases []string
	for _, l := range []struct{ label, base string }{
		{lLinUCB, lLinUCB}, {lLinTS, lLinUCB},
		{lAbBase, lLinUCB}, {lAbBOnly, lLinUCB}, {lAbTS, lLinTS}, {lAbAmp, lLinTS}, {lAbAdaptive, lLinTS},
		{lForcedTS, lLinTS}, {lForcedUCB, lLinUCB},
	} {
		if !a.has(l.label) {
			continue
		}
		r, err := a.rowOf(l.label, l.base, lLinUCB)
		if err != nil {
			return err
		}
		rows, bases = append(rows, r), append(bases, l.base)
	}
	text := fmt.Sprintf("# ada-ablation: results\n\nT = %s, %d runs, ε = 1, δ = 1e-5; %% of the counterpart per run (paired), mean ± s.d.; regret mean ± s.e.\n\n",
		fmtInt(c.Horizon()), c.Runs()) + resultsTable("Table 4 and §6.2", rows, bases)
	return c.writeOut("results.md", text)
}

func adaAblationFigure(c *Context) (report.Figure, error) {
	a, err := adaLoad(c, "ablation")
	if err != nil {
		return report.Figure{}, err
	}
	p1 := report.Panel{Title: "Table 4 (ε = 1): % of non-private counterpart", XLabel: "row (1 = UCB + A&b … 5 = + Adaptive)", YLabel: "% of counterpart"}
	p2 := report.Panel{Title: "Table 4 (ε = 1): absolute regret", XLabel: "row", YLabel: "pseudo-regret at T", NoLegend: true}
	meas := report.Series{Label: "measured", Color: report.Palette[0]}
	reg := report.Series{Label: "measured", Color: report.Palette[0]}
	paper := report.Series{Label: "paper", Dashed: true, Color: report.Palette[1]}
	for i, row := range adaAblationRows {
		x := float64(i + 1)
		paper.X, paper.Y = append(paper.X, x), append(paper.Y, row.target)
		if !a.has(row.label) {
			continue
		}
		r, err := a.rowOf(row.label, row.base, lLinUCB)
		if err != nil {
			return report.Figure{}, err
		}
		meas.X, meas.Y = append(meas.X, x), append(meas.Y, r.pct.mean)
		meas.Lo, meas.Hi = append(meas.Lo, r.pct.mean-1.96*r.pct.se), append(meas.Hi, r.pct.mean+1.96*r.pct.se)
		reg.X, reg.Y = append(reg.X, x), append(reg.Y, r.regret.mean)
		reg.Lo, reg.Hi = append(reg.Lo, r.regret.mean-1.96*r.regret.se), append(reg.Hi, r.regret.mean+1.96*r.regret.se)
	}
	addSeries(&p1, meas, paper)
	addSeries(&p2, reg)
	addHeadroom(&p1, 0.4)
	return wide(2, p1, p2), nil
}
