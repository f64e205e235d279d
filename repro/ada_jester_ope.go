package repro

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/dpbandit/dpbandit/eval"
	"github.com/dpbandit/dpbandit/report"
)

// [ADA] §4.7, Jester OPE (E14): "On Jester (T = 15,000, 5 seeds), all three
// OPE estimators (IPS, DR, SNIPS) produce consistent rankings: AdaPrivate-TS
// improves monotonically from ε = 1 to ε = 10 (DR: 0.168 → 0.178,
// ESS ≈ 730). DR and SNIPS are more stable than raw IPS (CV < 8% vs.
// < 12%)". The protocol is ada-ope's (ada_ope.go) on the ada-jester
// environment:
//
//   - target: the FINAL learned AdaPrivate-TS policy, frozen after T
//     online rounds. The per-round policies of a learning run are not a
//     fixed policy that a log can evaluate (each depends on its own
//     feedback, which a log does not contain; that would be replay), and the
//     frozen policy is the one a deployment keeps; its action distribution
//     at a logged round is the frequency over 32 posterior draws
//     (SelectProbs, post-processing of the released b and the public A, so
//     it costs no privacy);
//   - log: a uniform logger (pscore 1/5) on T fresh rounds of the Jester
//     environment, which also knows every candidate's reward: the truth is
//     Σ_i Σ_a π(a | round i) r_i(a) / T exactly;
//   - estimates: IPS, SNIPS and DR (eval.Evaluate), DR with a 3-fold
//     cross-fitted ridge reward model on the candidate features.

var adaJesterOPEEpsilons = []float64{1, 2, 5, 10}

func adaJesterOPEPolicies() []adaOPEPolicy {
	var out []adaOPEPolicy
	for _, eps := range adaJesterOPEEpsilons {
		out = append(out, adaOPEPolicy{label: fmt.Sprintf("AdaPrivate-TS (ε = %s)", fmtG(eps)), spec: adaTS(eps)})
	}
	return out
}

var adaJesterOPEStore sync.Map // *Context → *adaOPEResults

func adaJesterOPEOf(c *Context) (*adaOPEResults, error) {
	v, ok := adaJesterOPEStore.Load(c)
	if !ok {
		return nil, errors.New("the off-policy evaluations did not run")
	}
	return v.(*adaOPEResults), nil
}

func adaJesterOPEStage(c *Context) ([]Sweep, error) {
	base, err := loadRatingsEnv(adaJestEnv)
	if err != nil {
		return nil, err
	}
	adaRealEnvs.Store(c, base)
	if err := writeSplit(c, base); err != nil {
		return nil, err
	}
	T := c.Horizon()
	res := &adaOPEResults{pols: adaJesterOPEPolicies(), nLog: T}
	res.cells = make([][]adaOPECell, len(res.pols))
	for i := range res.cells {
		res.cells[i] = make([]adaOPECell, c.Runs())
	}
	logs := make([]*adaOPELog, c.Runs())
	for run := range c.Runs() {
		if logs[run], err = newAdaOPELog(base, run, T); err != nil {
			return nil, fmt.Errorf("run %d: log: %w", run, err)
		}
	}
	np := len(res.pols)
	err = c.parallel(c.Runs()*np, func(i int) error {
		run, pol := i/np, i%np
		cell, err := adaOPERun(base, logs[run], res.pols[pol], run, T)
		if err != nil {
			return fmt.Errorf("run %d, %s: %w", run, res.pols[pol].label, err)
		}
		res.cells[pol][run] = cell
		return nil
	})
	if err != nil {
		return nil, err
	}
	adaJesterOPEStore.Store(c, res)
	return nil, c.writeOut(ResultsFile, adaJesterOPETable(res))
}

// cv is the coefficient of variation (s.d./mean, %) of an estimator over runs.
func adaCV(cells []adaOPECell, e eval.Estimator) float64 {
	s := adaOPEStat(cells, func(cl adaOPECell) float64 { return cl.est[e].Estimate })
	return 100 * s.sd / math.Abs(s.mean)
}

func adaJesterOPETable(res *adaOPEResults) string {
	var b strings.Builder
	b.WriteString("# ada-jester-ope results\n\n")
	fmt.Fprintf(&b, "### Jester OPE (E14, [ADA] §4.7) — %s\n\n", adaJestName)
	fmt.Fprintf(&b, "AdaPrivate-TS learns for T = %d rounds, then is frozen; a uniform log of %d fresh rounds. Mean over %d runs (± s.e.); CV = s.d./mean of the estimate over runs. Paper: DR 0.168 → 0.178 from ε = 1 to 10, ESS ≈ 730, CV < 8%% (DR, SNIPS) and < 12%% (IPS).\n\n",
		res.nLog, res.nLog, len(res.cells[0]))
	tb := report.Table{Header: []string{"policy", "true value", "IPS", "SNIPS", "DR", "DR ESS", "CV IPS / SNIPS / DR (%)"},
		Align: []report.Align{report.Left, report.Right, report.Right, report.Right, report.Right, report.Right, report.Right}}
	for i, pol := range res.pols {
		cells := res.cells[i]
		f := func(e eval.Estimator) string {
			s := adaOPEStat(cells, func(cl adaOPECell) float64 { return cl.est[e].Estimate })
			return fmt.Sprintf("%.4f ± %.4f", s.mean, s.se)
		}
		tv := adaOPEStat(cells, func(cl adaOPECell) float64 { return cl.truth })
		ess := adaOPEStat(cells, func(cl adaOPECell) float64 { return cl.est[eval.DR].ESS })
		tb.AddRow(pol.label, fmt.Sprintf("%.4f ± %.4f", tv.mean, tv.se), f(eval.IPS), f(eval.SNIPS), f(eval.DR), fmt.Sprintf("%.0f", ess.mean),
			fmt.Sprintf("%.2f / %.2f / %.2f", adaCV(cells, eval.IPS), adaCV(cells, eval.SNIPS), adaCV(cells, eval.DR)))
	}
	_ = tb.Markdown(&b)
	b.WriteString("\n")
	return b.String()
}

func adaJesterOPE() *Reproduction {
	r := &Reproduction{
		Name: "ada-jester-ope", Paper: adaPaper, Experiments: "E14", Section: "§4.7 (Jester OPE)",
		Description: "off-policy evaluation (IPS, SNIPS, DR, ESS, CV over seeds) of the final AdaPrivate-TS policy at ε ∈ {1, 2, 5, 10} from uniform logs in the Jester environment",
		Full:        Size{Horizons: []int{15000}, Runs: 5},
		Quick:       Size{Horizons: []int{800}, Runs: 2},
		Seed:        adaOPESeed, Env: adaJestEnv, Metric: Value,
		Setup: []string{
			"Data: " + adaJestName + ", the ada-jester environment (" + adaJestEnv + ").",
			"Target: the final learned AdaPrivate-TS policy (ε ∈ {1, 2, 5, 10}, δ = 1e-5, package defaults), frozen after T online rounds; its action distribution at a logged round is the frequency over 32 posterior draws (SelectProbs; post-processing of released values). Why not the per-round policies: their value is the online average, which a log cannot estimate without replaying the learner on its own feedback; the frozen policy is a fixed π that IPS/SNIPS/DR estimate.",
			"Log: a uniform logger (pscore = 1/5) on T fresh rounds (its own stream). The simulator knows every candidate's reward, so the true value Σ_i Σ_a π(a | round i) r_i(a) / T is exact.",
			"Estimates: IPS, SNIPS, DR (eval.Evaluate, 95% normal intervals), DR's reward model a 3-fold cross-fitted ridge regression (λ = 1) on the logged candidate's features and an intercept; ESS = (Σw)²/Σw²; CV over the 5 runs (seeds), each run its own training, log and draws.",
		},
		Stages:  []Stage{adaJesterOPEStage},
		Figures: []FigureDef{{File: "jester_ope", Caption: "True value and IPS/SNIPS/DR estimates of the frozen AdaPrivate-TS against ε, " + adaJestName, Build: adaJesterOPEFigure}},
		Notes: []string{
			"Levels: a random candidate pays 0.59 in this Jester environment, so the paper's DR values (0.168 → 0.178) cannot come from this protocol; the level check is an expected failure (docs/reproductions.md E13 (data decision): stand-in levels are not targets).",
			"The paper's ESS ≈ 730 is not comparable without its log size and target concentration; this run's ESS is reported.",
		},
	}
	truthAndDR := func(c *Context) (*adaOPEResults, error) { return adaJesterOPEOf(c) }
	r.Targets = []Target{
		{ID: "E14.jope-dr-rising", Name: "DR rises from ε = 1 to 10", Source: "[ADA] §4.7 (DR 0.168 → 0.178, monotone)",
			Target: "DR's mean estimate at ε = 10 above ε = 1", Tolerance: "difference of means > 0",
			Measure: func(c *Context) (string, bool, error) {
				res, err := truthAndDR(c)
				if err != nil {
					return "", false, err
				}
				var parts []string
				var first, last float64
				for i, pol := range res.pols {
					dr := adaOPEStat(res.cells[i], func(cl adaOPECell) float64 { return cl.est[eval.DR].Estimate })
					tv := adaOPEStat(res.cells[i], func(cl adaOPECell) float64 { return cl.truth })
					parts = append(parts, fmt.Sprintf("%s: DR %.4f ± %.4f (truth %.4f)", pol.label, dr.mean, dr.se, tv.mean))
					if i == 0 {
						first = dr.mean
					}
					last = dr.mean
				}
				return strings.Join(parts, "; "), last > first, nil
			}},
		{ID: "E14.jope-cv", Name: "CV over seeds", Source: "[ADA] §4.7 (CV < 8% for DR and SNIPS, < 12% for IPS)",
			Target: "at every ε, CV of DR and SNIPS < 8%, of IPS < 12% (5 runs)", Tolerance: "as stated",
			Measure: func(c *Context) (string, bool, error) {
				res, err := truthAndDR(c)
				if err != nil {
					return "", false, err
				}
				ok := true
				var parts []string
				for i, pol := range res.pols {
					ci, cs, cd := adaCV(res.cells[i], eval.IPS), adaCV(res.cells[i], eval.SNIPS), adaCV(res.cells[i], eval.DR)
					ok = ok && ci < 12 && cs < 8 && cd < 8
					parts = append(parts, fmt.Sprintf("%s: IPS %.2f, SNIPS %.2f, DR %.2f", pol.label, ci, cs, cd))
				}
				return strings.Join(parts, "; ") + " (CV, %)", ok, nil
			}},
		{ID: "E14.jope-coverage", Name: "OPE intervals cover the truth", Source: "this reproduction's own check of the estimators (eval)",
			Target: "IPS, SNIPS and DR 95% normal intervals cover the true value in at least 80% of the (ε, run) cells; DR's ESS reported", Tolerance: "80% (nominal 95%; few cells)",
			Measure: func(c *Context) (string, bool, error) {
				res, err := truthAndDR(c)
				if err != nil {
					return "", false, err
				}
				ok := true
				var parts []string
				for _, e := range []eval.Estimator{eval.IPS, eval.SNIPS, eval.DR} {
					cov, tot := adaOPECoverage(res, e)
					ok = ok && float64(cov) >= 0.8*float64(tot)
					parts = append(parts, fmt.Sprintf("%s %d/%d", e, cov, tot))
				}
				ess := adaOPEStat(res.cells[0], func(cl adaOPECell) float64 { return cl.est[eval.DR].ESS })
				return strings.Join(parts, "; ") + fmt.Sprintf("; DR ESS at ε = 1: %.0f of %d rounds [paper ≈ 730]", ess.mean, res.nLog), ok, nil
			}},
		{ID: "E14.jope-levels", Name: "DR levels", Source: "[ADA] §4.7 (DR 0.168 at ε = 1, 0.178 at ε = 10)",
			Target: "DR 0.168 (ε = 1) and 0.178 (ε = 10)", Tolerance: "±5 pp (E14 soft target)", ExpectedToFail: true,
			Reason: "docs/reproductions.md E13 (data decision): on the stand-in the paper's levels are not targets; in this Jester environment a random candidate already pays 0.59, far above the paper's DR values.",
			Measure: func(c *Context) (string, bool, error) {
				res, err := truthAndDR(c)
				if err != nil {
					return "", false, err
				}
				a := adaOPEStat(res.cells[0], func(cl adaOPECell) float64 { return cl.est[eval.DR].Estimate }).mean
				z := adaOPEStat(res.cells[len(res.cells)-1], func(cl adaOPECell) float64 { return cl.est[eval.DR].Estimate }).mean
				return fmt.Sprintf("DR %.4f at ε = 1 [0.168], %.4f at ε = 10 [0.178]", a, z), within(a, 0.168, 0.05) && within(z, 0.178, 0.05), nil
			}},
	}
	return r
}

func adaJesterOPEFigure(c *Context) (report.Figure, error) {
	res, err := adaJesterOPEOf(c)
	if err != nil {
		return report.Figure{}, err
	}
	p := report.Panel{Title: "Jester OPE: frozen AdaPrivate-TS — " + adaJestName, XLabel: "ε", YLabel: "policy value", LogX: true, LegendRight: true}
	kinds := []struct {
		label string
		f     func(adaOPECell) float64
	}{
		{"true value", func(cl adaOPECell) float64 { return cl.truth }},
		{"IPS", func(cl adaOPECell) float64 { return cl.est[eval.IPS].Estimate }},
		{"SNIPS", func(cl adaOPECell) float64 { return cl.est[eval.SNIPS].Estimate }},
		{"DR", func(cl adaOPECell) float64 { return cl.est[eval.DR].Estimate }},
	}
	for ki, k := range kinds {
		s := report.Series{Label: k.label, Color: report.Palette[ki%len(report.Palette)], Dashed: ki == 0}
		for i := range res.pols {
			st := adaOPEStat(res.cells[i], k.f)
			s.X = append(s.X, adaJesterOPEEpsilons[i]*(1+0.02*float64(ki-1)))
			s.Y = append(s.Y, st.mean)
			s.Lo = append(s.Lo, st.mean-1.96*st.se)
			s.Hi = append(s.Hi, st.mean+1.96*st.se)
		}
		p.Series = append(p.Series, s)
	}
	return report.Figure{Panels: []report.Panel{p}}, nil
}
