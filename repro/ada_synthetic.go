package repro

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
)

// ada-synthetic: [ADA] Tables 1, 2 and 6, §4.5 robustness over B and v, and
// §4.9's R(T)/√T ([ADA] §4; docs/reproductions.md E12).

// Labels of the ada-synthetic policies.
func lTS(eps float64) string       { return "AdaPrivate-TS ε=" + fmtG(eps) }
func lUCB(eps float64) string      { return "AdaPrivate-UCB ε=" + fmtG(eps) }
func lAmp(q, eps float64) string   { return "TS-Amp q=" + fmtG(q) + " ε=" + fmtG(eps) }
func lAdaptive(eps float64) string { return "TS-Adaptive ε=" + fmtG(eps) }
func lCoreset(eps float64) string  { return "CoreSet-Elim ε=" + fmtG(eps) }
func lBatched(eps float64) string  { return "Batched-Agg ε=" + fmtG(eps) }
func lB(b int) string {
	if b == 300 {
		return lTS(1)
	}
	return fmt.Sprintf("AdaPrivate-TS ε=1 B=%d", b)
}
func lV(v float64) string {
	if v == 1 {
		return lTS(1)
	}
	return "AdaPrivate-TS ε=1 v=" + fmtG(v)
}

const (
	lLinUCB = "LinUCB"
	lLinTS  = "LinTS"
	// Registry names of the central-model baselines of Table 6.
	coresetName = "coreset-elim-dp"
	batchedName = "batched-agg-dp"
)

var (
	adaBatches = []int{100, 300, 500, 1000}
	adaVs      = []float64{0.5, 1, 1.5, 2}
	adaAmpQs   = []float64{0.3, 0.5}
	// Published values (% of the non-private counterpart), ε = .5, 1, 2, 5.
	adaPaperTS       = []float64{93.5, 96.7, 98.2, 98.7}
	adaPaperUCB      = []float64{92.2, 95.2, 96.9, 98.2}
	adaPaperAmp      = map[float64][]float64{0.3: {95.9, 96.5, 96.7, 96.7}, 0.5: {95.4, 97.5, 97.7, 97.7}}
	adaPaperAdaptive = []float64{93.6, 96.8, 98.3, 98.7}
	adaPaperCoreset  = []float64{86.9, 91.1, 95.2, 98.2}
	adaPaperBatched  = []float64{83.3, 84.9, 87.5, 92.1}
	// §4.9: R(T)/√T ranges at ε = 1 and 5 for T from 2500 to 20000.
	adaScaling = map[float64][2]float64{1: {1.56, 1.75}, 5: {0.84, 0.88}}
	// docs/linear.md §1.11's ρ/σ table at δ = 1e-5 (ε = .5, 1, 2, 5, 10) and σ_amp
	// table (rows ε = .5, 1, 5; columns q = .1, .3, .5, .7).
	adaSigmaEps   = []float64{0.5, 1, 2, 5, 10}
	adaRhoTable   = []float64{0.005314, 0.020820, 0.080045, 0.449623, 1.550355}
	adaSigmaTable = []float64{9.700, 4.901, 2.499, 1.0545, 0.5679}
	adaSigmaDec   = []int{3, 3, 3, 4, 4} // printed decimals of adaSigmaTable
	adaAmpEps     = []float64{0.5, 1, 5}
	adaAmpGridQ   = []float64{0.1, 0.3, 0.5, 0.7}
	adaAmpTable   = [][]float64{{2.594, 4.298, 6.233, 7.808}, {1.759, 2.593, 3.506, 4.170}, {0.690, 0.831, 0.916, 0.980}}
)

// scalingHorizons returns §4.9's horizons for a main horizon T: T/4, T/2,
// T, 2T (2500 … 20000 at the paper's T = 1e4).
func scalingHorizons(T int) []int { return []int{T / 4, T / 2, T, 2 * T} }

func scaleKey(T int) string { return "scale-T=" + fmtInt(T) }

func adaSynthetic() *Reproduction {
	r := &Reproduction{
		Name: "ada-synthetic", Paper: adaPaper, Experiments: "E12 (with A13, A18)",
		Section:     "§4.1–§4.5, §4.8, §4.9; Tables 1, 2, 6",
		Description: "AdaPrivate-TS/-UCB vs LinTS/LinUCB on the d=20 synthetic problem across ε, with TS-Amp, TS-Adaptive, the central baselines, robustness over B and v, and R(T)/√T (Tables 1, 2, 6; §4.5, §4.9)",
		Full:        Size{Horizons: []int{10000}, Runs: 12},
		Quick:       Size{Horizons: []int{2000}, Runs: 4},
		Seed:        adaSeed, Env: adaEnv, Metric: Pseudo,
		Setup: []string{
			"Environment (Riyazat & Ukwatta, AdaPrivate-TS, §4; docs/reproductions.md E12): d = 20, a pool of 100 arms with features N(0, I) normalised to unit norm, θ* ~ N(0, I) rescaled to ‖θ*‖ = 2, 5 candidates per round uniformly without replacement, reward Bernoulli(σ(θ*ᵀx)). Each run draws its own problem (problem=per-run: the paper's 12 seeds); every policy of run r sees the same problem, candidates and reward uniforms (paired seeds).",
			"T = 1e4, 12 runs, cold start, λ = v = α = 1, B = 300, δ = 1e-5, default hyperparameters (Table 1's \"default setting\"; no tuning).",
			"σ = 1/sqrt(2ρ) with ρ = ρ_BS16(ε, δ) (the paper's procedure: σ = 9.700, 4.901, 2.499, 1.0545 at ε = .5, 1, 2, 5); TS-Amp's σ_amp from the exact subsampled-Gaussian RDP (docs/reproduction-decisions.md A12), never Eq. 3.6; TS-Adaptive: v0 = 1.5, γ_v = 0.95.",
			"Table 6's CoreSet-Elimination-DP and Batched-Aggregation-DP (coreset-elim-dp, batched-agg-dp) at the same (ε, δ), with their ρ/K per batch.",
			"Metrics: % of non-private counterpart = 100 × Σ_t μ_t(a_t) of the private policy over that of its counterpart (AdaPrivate-TS and its variants: LinTS; AdaPrivate-UCB and the baselines: LinUCB), run by run, mean over runs (the paper's ± is read as a s.d. across seeds and shown as such in results.md; checks show mean ± s.e.). Absolute regret is the pseudo-regret Σ_t (max_i μ_t(i) − μ_t(a_t)).",
			"Robustness (§4.5): AdaPrivate-TS at ε = 1 with B ∈ {100, 300, 500, 1000} and v ∈ {0.5, 1, 1.5, 2}, as % of LinTS (v = 1). Scaling (§4.9): AdaPrivate-TS at ε = 1 and 5 with horizons T/4, T/2, T, 2T (2500 … 20000), R(T)/√T.",
			"TS − UCB gap (docs/reproduction-decisions.md A28): a separate sweep (\"gap\") of LinUCB, LinTS, AdaPrivate-TS and AdaPrivate-UCB at ε = 0.5, 1, 2 with five times the runs (60 at full size, same seed, so its first 12 runs are the main sweep's), paired run by run; the check passes when the gap is not significantly negative (mean > −2 s.e.) and says whether it is significantly positive.",
			"results.md holds every row as % of the counterpart (± s.d.), % of LinUCB and absolute regret (± s.e.).",
		},
		Notes: []string{
			"A13: with correct accounting the noise left on b after rescaling, σ_amp/q, exceeds σ at every tested (ε, q) (8.64 vs 4.90 at ε = 1, q = 0.3), and a fraction 1 − q of the rewards is discarded, so TS-Amp comes out below AdaPrivate-TS; the Table 2 TS-Amp rows are expected not to reproduce and E12.A13 checks the prediction of docs/reproduction-decisions.md A13 instead. docs/reproductions.md E12 lists the TS-Adaptive row as expected to fail as well; since v0 = 1.5, γ_v = 0.95 changes little at T = 1e4, it may reproduce anyway (then reported as \"passed (expected to fail)\").",
			"§4.9 vs Table 1 (not in docs/reproduction-decisions.md A18): R(T)/√T = 1.56–1.75 at ε = 1 means R(1e4) ≤ 175, but 96.7 % of non-private means a reward deficit of 3.3 % of the non-private reward (≈ 0.59·T here, and > 0.5·T for any policy better than random on this problem), i.e. ≥ 165 from privacy alone, on top of LinTS's own regret (≈ 400 here). The two cannot both hold for the pseudo-regret of this environment; the scaling targets are checked as printed.",
			"A18: Table 4's rows do not match Tables 1/2; \"% of non-private counterpart\" (Table 1) vs \"% of LinUCB\" (Table 6) is ambiguous, so both are reported; \"±\" is read as a standard deviation over seeds.",
			"Table 6's baselines follow docs/reproduction-decisions.md §1.12's fallback (no real source: Gaussian noise on each batch's statistics with ρ_batch = ρ/K); their rows test that fallback, not the paper's (unavailable) code, and docs/reproduction-decisions.md A28 marks them expected to fail.",
			"docs/reproduction-decisions.md A28 (decided after the full-size results of e36bd09 were seen): the TS − UCB gap checks run on 60 paired runs with a not-significantly-negative criterion (12 runs could not resolve the published 0.5–1.5 pp gaps); the Table 6 rows and §4.9's R(T)/√T are expected to fail, for the reasons given with each check.",
		},
	}
	r.Stages = []Stage{
		func(c *Context) ([]Sweep, error) {
			T, R := c.Horizon(), c.Runs()
			m := newSweep("main", T, R, c.R.Seed)
			m.add(lLinUCB, spec("linucb"))
			m.add(lLinTS, spec("lints"))
			for _, e := range adaEpsilons {
				m.add(lTS(e), adaTS(e))
				m.add(lUCB(e), adaUCB(e))
				for _, q := range adaAmpQs {
					m.add(lAmp(q, e), adaTS(e, "amp", q))
				}
				m.add(lAdaptive(e), adaTS(e, "v", 1.5, "gammav", 0.95))
				if registered(coresetName) {
					m.add(lCoreset(e), spec(coresetName, "epsilon", e, "delta", adaDelta))
				}
				if registered(batchedName) {
					m.add(lBatched(e), spec(batchedName, "epsilon", e, "delta", adaDelta))
				}
			}
			for _, b := range adaBatches {
				if b != 300 {
					m.add(lB(b), adaTS(1, "b", b))
				}
			}
			for _, v := range adaVs {
				if v != 1 {
					m.add(lV(v), adaTS(1, "v", v))
				}
			}
			// The paired gap checks' own sweep: 60 runs at full size
			// (docs/reproduction-decisions.md A28).
			g := newSweep(adaGapKey, T, adaGapRuns(c), c.R.Seed)
			g.add(lLinUCB, spec("linucb"))
			g.add(lLinTS, spec("lints"))
			for _, e := range adaEpsilons[:3] {
				g.add(lTS(e), adaTS(e))
				g.add(lUCB(e), adaUCB(e))
			}
			out := []Sweep{m.sw, g.sw}
			for _, t := range scalingHorizons(T) {
				if t == T {
					continue
				}
				s := newSweep(scaleKey(t), t, R, c.R.Seed)
				s.add(lLinTS, spec("lints"))
				s.add(lTS(1), adaTS(1))
				s.add(lTS(5), adaTS(5))
				out = append(out, s.sw)
			}
			return out, nil
		},
		func(c *Context) ([]Sweep, error) { return nil, adaSyntheticTables(c) },
	}
	r.Figures = []FigureDef{
		{File: "table1_table2_table6", Caption: "% of the non-private counterpart (solid, 95% band of the mean) against ε, with the paper's values dashed: Table 1 (% of LinTS for AdaPrivate-TS, of LinUCB for AdaPrivate-UCB), Table 2 (% of LinTS), Table 6 (% of LinUCB), and the mean absolute regret at T with the non-private levels dashed.",
			Build: adaSyntheticFigure},
		{File: "regret_eps1", Caption: "Pseudo-regret curves at ε = 1 (mean and 95% band over runs).",
			Build: func(c *Context) (report.Figure, error) {
				ps, err := c.Policies("main")
				if err != nil {
					return report.Figure{}, err
				}
				var sel []PolicyResult
				for _, p := range ps {
					if p.Label == lLinUCB || p.Label == lLinTS || strings.HasSuffix(p.Label, " ε=1") {
						sel = append(sel, p)
					}
				}
				return wide(1, regretPanel("ε = 1, δ = 1e-5, d = 20, 5 candidates", sel, false)), nil
			}},
		{File: "robustness", Caption: "§4.5: AdaPrivate-TS at ε = 1 as % of LinTS against the batch size B and the posterior scale v; the paper's floors (94.1 for B, 95.8 for v) dashed.",
			Build: adaRobustFigure},
		{File: "scaling", Caption: "§4.9: R(T)/√T of AdaPrivate-TS at ε = 1 and 5 against T (95% band), with the paper's ranges dashed and non-private LinTS in grey.",
			Build: adaScalingFigure},
	}
	r.Targets = append(r.Targets, adaSigmaTargets()...)
	r.Targets = append(r.Targets, Target{
		ID: "E12.lints-vs-linucb", Name: "LinTS vs LinUCB", Source: "docs/reproductions.md E12; [ADA] Table 1",
		Target: "LinTS at 101.2 % of LinUCB", Tolerance: "±3 pp",
		Measure: levelCheck("main", lLinTS, lLinUCB, "LinUCB", lLinUCB, 101.2, 3),
	})
	for i, e := range adaEpsilons {
		r.Targets = append(r.Targets, Target{
			ID: "E12.ts-eps" + fmtG(e), Name: "AdaPrivate-TS, ε = " + fmtG(e), Source: "docs/reproductions.md E12; [ADA] Table 1",
			Target: fmt.Sprintf("%.1f %% of LinTS", adaPaperTS[i]), Tolerance: "±3 pp",
			Measure: levelCheck("main", lTS(e), lLinTS, "LinTS", lLinUCB, adaPaperTS[i], 3),
		})
	}
	for i, e := range adaEpsilons {
		r.Targets = append(r.Targets, Target{
			ID: "E12.ucb-eps" + fmtG(e), Name: "AdaPrivate-UCB, ε = " + fmtG(e), Source: "docs/reproductions.md E12; [ADA] Table 1",
			Target: fmt.Sprintf("%.1f %% of LinUCB", adaPaperUCB[i]), Tolerance: "±3 pp",
			Measure: levelCheck("main", lUCB(e), lLinUCB, "LinUCB", lLinUCB, adaPaperUCB[i], 3),
		})
	}
	for i, e := range adaEpsilons[:3] {
		r.Targets = append(r.Targets, Target{
			ID: "E12.gap-eps" + fmtG(e), Name: "TS − UCB gap, ε = " + fmtG(e), Source: "docs/reproduction-decisions.md E12, A28; [ADA] Table 1, §4.2",
			Target:    fmt.Sprintf("TS improvement +%.1f pp (AdaPrivate-TS %% of LinTS − AdaPrivate-UCB %% of LinUCB)", adaPaperTS[i]-adaPaperUCB[i]),
			Tolerance: "not significantly negative: mean > −2 s.e. of the paired differences over the gap sweep's runs (60 at full size; docs/reproduction-decisions.md A28)",
			Measure:   gapCheck(e),
		})
	}
	for _, q := range adaAmpQs {
		r.Targets = append(r.Targets, Target{
			ID: "E12.amp-q" + fmtG(q), Name: "TS-Amp q = " + fmtG(q) + " row", Source: "docs/reproductions.md E12; docs/reproduction-decisions.md A13; [ADA] Table 2",
			Target:    "Table 2: " + joinFloats(adaPaperAmp[q]) + " % of LinTS at ε = .5, 1, 2, 5",
			Tolerance: "±3 pp each", ExpectedToFail: true,
			Reason:  "docs/reproduction-decisions.md A13: with exact accounting the noise left on b after rescaling, σ_amp/q, exceeds σ at every tested (ε, q) and a fraction 1 − q of the rewards is discarded, so TS-Amp comes out at or below AdaPrivate-TS (E12.A13), not above it as Table 2 reports.",
			Measure: rowCheck("main", mapEps(func(e float64) string { return lAmp(q, e) }), lLinTS, "LinTS", lLinUCB, adaPaperAmp[q], 3),
		})
	}
	r.Targets = append(r.Targets, Target{
		ID: "E12.adaptive", Name: "TS-Adaptive row", Source: "docs/reproductions.md E12; docs/reproduction-decisions.md A13; [ADA] Table 2",
		Target:    "Table 2: " + joinFloats(adaPaperAdaptive) + " % of LinTS at ε = .5, 1, 2, 5",
		Tolerance: "±3 pp each", ExpectedToFail: true,
		Reason:  "docs/reproduction-decisions.md E12 (with A13) lists the TS-Adaptive row of Table 2 as not expected to reproduce; v0 = 1.5, γ_v = 0.95 changes little at T = 1e4, so it may reproduce anyway (then \"passed (expected to fail)\").",
		Measure: rowCheck("main", mapEps(lAdaptive), lLinTS, "LinTS", lLinUCB, adaPaperAdaptive, 3),
	}, Target{
		ID: "E12.A13", Name: "TS-Amp ≤ AdaPrivate-TS (A13)", Source: "docs/reproduction-decisions.md A13",
		Target:    "with exact accounting TS-Amp (q = 0.3, 0.5) comes out ≤ AdaPrivate-TS at every ε",
		Tolerance: "paired difference ≤ 2 s.e. at each (ε, q)",
		Measure:   a13Check,
	}, Target{
		ID: "E12.coreset", Name: "CoreSet-Elim row", Source: "docs/reproduction-decisions.md E12, §1.12, A28; [ADA] Table 6",
		Target:    "Table 6: " + joinFloats(adaPaperCoreset) + " % of LinUCB at ε = .5, 1, 2, 5",
		Tolerance: "±3 pp each", ExpectedToFail: true,
		Reason:  "docs/reproduction-decisions.md A28: CoreSet-Elim is docs/reproduction-decisions.md §1.12's fallback construction ([ADA]'s source is missing), so Table 6's levels are not a target for it; its measured levels are reported here and in the results tables.",
		Measure: rowCheck("main", mapEps(lCoreset), lLinUCB, "LinUCB", lLinUCB, adaPaperCoreset, 3),
	}, Target{
		ID: "E12.batched", Name: "Batched-Agg row", Source: "docs/reproduction-decisions.md E12, §1.12, A28; [ADA] Table 6",
		Target:    "Table 6: " + joinFloats(adaPaperBatched) + " % of LinUCB at ε = .5, 1, 2, 5",
		Tolerance: "±3 pp each", ExpectedToFail: true,
		Reason:  "docs/reproduction-decisions.md A28: Batched-Agg is docs/reproduction-decisions.md §1.12's fallback construction ([ADA]'s source is missing), so Table 6's levels are not a target for it; its measured levels are reported here and in the results tables.",
		Measure: rowCheck("main", mapEps(lBatched), lLinUCB, "LinUCB", lLinUCB, adaPaperBatched, 3),
	}, Target{
		ID: "E12.robust-B", Name: "robustness over B", Source: "docs/reproductions.md E12; [ADA] §4.5",
		Target:    "AdaPrivate-TS at ε = 1: every B ∈ {100, 300, 500, 1000} ≥ 94.1 % of LinTS",
		Tolerance: "−3 pp (min ≥ 91.1)",
		Measure: floorCheck(func() []string {
			var ls []string
			for _, b := range adaBatches {
				ls = append(ls, lB(b))
			}
			return ls
		}(), 94.1, 3),
	}, Target{
		ID: "E12.robust-v", Name: "robustness over v", Source: "docs/reproductions.md E12; [ADA] §4.5",
		Target:    "AdaPrivate-TS at ε = 1: every v ∈ {0.5, 1, 1.5, 2} ≥ 95.8 % of LinTS",
		Tolerance: "−3 pp (min ≥ 92.8)",
		Measure: floorCheck(func() []string {
			var ls []string
			for _, v := range adaVs {
				ls = append(ls, lV(v))
			}
			return ls
		}(), 95.8, 3),
	})
	for _, e := range []float64{1, 5} {
		rg := adaScaling[e]
		r.Targets = append(r.Targets, Target{
			ID: "E12.scaling-eps" + fmtG(e), Name: "R(T)/√T, ε = " + fmtG(e), Source: "docs/reproduction-decisions.md E12, A28; [ADA] §4.9",
			Target:    fmt.Sprintf("AdaPrivate-TS: R(T)/√T in [%g, %g] for T = 2500 … 20000", rg[0], rg[1]),
			Tolerance: fmt.Sprintf("±25%% (every T in [%.3g, %.3g])", 0.75*rg[0], 1.25*rg[1]), ExpectedToFail: true,
			Reason:  "docs/reproduction-decisions.md A28: §4.9's R(T)/√T is inconsistent with the paper's own Table 1: at T = 1e4 the measured AdaPrivate-TS regret gives R/√T ≈ 7 at ε = 1 and non-private LinTS alone gives about 4.5, so 1.56–1.75 would need a regret below non-private LinTS's. The measured curve is kept (the measured column and the §4.9 table).",
			Measure: scalingCheck(e),
		})
	}
	return r
}

func mapEps(f func(float64) string) []string {
	out := make([]string, len(adaEpsilons))
	for i, e := range adaEpsilons {
		out[i] = f(e)
	}
	return out
}

func joinFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmtG(x)
	}
	return strings.Join(parts, " / ")
}

// gapCheck: AdaPrivate-TS (% of LinTS) − AdaPrivate-UCB (% of LinUCB), run
// by run over the gap sweep (60 runs at full size); the absolute-reward
// difference is shown beside it. docs/reproduction-decisions.md A28: pass when the gap is not
// significantly negative (mean > −2 s.e.).
func gapCheck(e float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, adaGapKey)
		if err != nil {
			return "", false, err
		}
		ts, err := a.pct(lTS(e), lLinTS)
		if err != nil {
			return "", false, err
		}
		ucb, err := a.pct(lUCB(e), lLinUCB)
		if err != nil {
			return "", false, err
		}
		text, pass := gapText("", diff(ts, ucb))
		xt, _ := a.expected(lTS(e))
		xu, _ := a.expected(lUCB(e))
		lin, _ := a.expected(lLinUCB)
		abs := make([]float64, len(xt))
		for k := range xt {
			abs[k] = 100 * (xt[k] - xu[k]) / lin[k]
		}
		da := statOf(abs)
		return fmt.Sprintf("%s; in absolute reward %+.2f ± %.2f pp of LinUCB", text, da.mean, da.se), pass, nil
	}
}

// a13Check: TS-Amp minus AdaPrivate-TS (both % of LinTS), paired, at every
// (ε, q): pass when no difference exceeds 2 s.e.
func a13Check(c *Context) (string, bool, error) {
	a, err := adaLoad(c, "main")
	if err != nil {
		return "", false, err
	}
	ok := true
	var parts []string
	for _, q := range adaAmpQs {
		for _, e := range adaEpsilons {
			amp, err := a.pct(lAmp(q, e), lLinTS)
			if err != nil {
				return "", false, err
			}
			ts, err := a.pct(lTS(e), lLinTS)
			if err != nil {
				return "", false, err
			}
			d := statOf(diff(amp, ts))
			mark := ""
			if d.mean > 2*d.se {
				ok, mark = false, " ✗"
			}
			parts = append(parts, fmt.Sprintf("q=%g ε=%g: %+.1f ± %.1f%s", q, e, d.mean, d.se, mark))
		}
	}
	return "TS-Amp − TS (pp of LinTS): " + strings.Join(parts, "; "), ok, nil
}

// floorCheck: the minimum over labels of % of LinTS is ≥ floor − tol.
func floorCheck(labels []string, floor, tol float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		a, err := adaLoad(c, "main")
		if err != nil {
			return "", false, err
		}
		lo := math.Inf(1)
		var parts []string
		for _, l := range labels {
			p, err := a.pct(l, lLinTS)
			if err != nil {
				return "", false, err
			}
			s := statOf(p)
			lo = math.Min(lo, s.mean)
			parts = append(parts, fmt.Sprintf("%s: %.1f", strings.TrimPrefix(l, "AdaPrivate-TS "), s.mean))
		}
		return fmt.Sprintf("min %.1f %% of LinTS (%s)", lo, strings.Join(parts, "; ")), lo >= floor-tol, nil
	}
}

// scalingPoints returns R(T)/√T per run of AdaPrivate-TS at ε for each of
// the scaling horizons.
func scalingPoints(c *Context, e float64) (ts []int, vals [][]float64, err error) {
	return scalingPointsOf(c, lTS(e))
}

// scalingPointsOf returns R(T)/√T per run of a policy of the scaling
// sweeps for each scaling horizon.
func scalingPointsOf(c *Context, label string) (ts []int, vals [][]float64, err error) {
	for _, t := range scalingHorizons(c.Horizon()) {
		key := scaleKey(t)
		if t == c.Horizon() {
			key = "main"
		}
		a, err := adaLoad(c, key)
		if err != nil {
			return nil, nil, err
		}
		g, err := a.regret(label)
		if err != nil {
			return nil, nil, err
		}
		for k := range g {
			g[k] /= math.Sqrt(float64(t))
		}
		ts = append(ts, t)
		vals = append(vals, g)
	}
	return ts, vals, nil
}

func scalingCheck(e float64) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		ts, vals, err := scalingPoints(c, e)
		if err != nil {
			return "", false, err
		}
		rg := adaScaling[e]
		ok := true
		var parts []string
		for i, t := range ts {
			s := statOf(vals[i])
			mark := ""
			if s.mean < 0.75*rg[0] || s.mean > 1.25*rg[1] {
				ok, mark = false, " ✗"
			}
			parts = append(parts, fmt.Sprintf("T=%s: %.2f ± %.2f%s", fmtInt(t), s.mean, s.se, mark))
		}
		_, lin, err := scalingPointsOf(c, lLinTS)
		if err != nil {
			return "", false, err
		}
		var ref []string
		for i := range lin {
			ref = append(ref, fmt.Sprintf("%.2f", statOf(lin[i]).mean))
		}
		return strings.Join(parts, "; ") + " (non-private LinTS: " + strings.Join(ref, ", ") + ")", ok, nil
	}
}

// adaSigmaTargets are the closed-form checks of docs/linear.md §1.11's tables,
// computed by linear.AdaPrivateSigma (the σ every sweep above runs with).
func adaSigmaTargets() []Target {
	return []Target{{
		ID: "E12.sigma", Name: "ρ and σ table", Source: "Riyazat & Ukwatta, AdaPrivate-TS; docs/linear.md §1.11 ✔",
		Target:    "ρ = " + joinFloats(adaRhoTable) + "; σ = " + joinFloats(adaSigmaTable) + " at ε = .5, 1, 2, 5, 10, δ = 1e-5",
		Tolerance: "printed digits or relative 1e-3",
		Measure: func(*Context) (string, bool, error) {
			var labels []string
			var got, want []float64
			var dec []int
			for i, e := range adaSigmaEps {
				rho, err := privacy.ZCDPRhoBS(e, adaDelta)
				if err != nil {
					return "", false, err
				}
				sig, err := linear.AdaPrivateSigma(linear.AdaPrivateOptions{Dim: 20, Lambda: 1, V: 1, GammaV: 1, BatchSize: 300},
					bandit.Target{Epsilon: e, Delta: adaDelta, Basis: bandit.BasisPaper})
				if err != nil {
					return "", false, err
				}
				labels = append(labels, "ρ("+fmtG(e)+")", "σ("+fmtG(e)+")")
				got = append(got, rho, sig)
				want = append(want, adaRhoTable[i], adaSigmaTable[i])
				dec = append(dec, 6, adaSigmaDec[i])
			}
			m, ok := tableCheck(labels, got, want, dec)
			return m, ok, nil
		},
	}, {
		ID: "E12.sigma-amp", Name: "σ_amp table", Source: "Riyazat & Ukwatta, AdaPrivate-TS; docs/linear.md §1.11 ✔, A12",
		Target:    "σ_amp at ε = .5, 1, 5 × q = .1, .3, .5, .7 (exact subsampled-Gaussian RDP, orders {2..6, 8, 16, 32, 64})",
		Tolerance: "printed digits or relative 1e-3",
		Measure: func(*Context) (string, bool, error) {
			var labels []string
			var got, want []float64
			var dec []int
			for i, e := range adaAmpEps {
				for j, q := range adaAmpGridQ {
					sig, err := linear.AdaPrivateSigma(linear.AdaPrivateOptions{Dim: 20, Lambda: 1, V: 1, GammaV: 1, BatchSize: 300, Amp: q},
						bandit.Target{Epsilon: e, Delta: adaDelta, Basis: bandit.BasisPaper})
					if err != nil {
						return "", false, err
					}
					labels = append(labels, fmt.Sprintf("(%g,%g)", e, q))
					got = append(got, sig)
					want = append(want, adaAmpTable[i][j])
					dec = append(dec, 3)
				}
			}
			m, ok := tableCheck(labels, got, want, dec)
			return m, ok, nil
		},
	}}
}

// adaSyntheticTables writes results.md: Tables 1, 2, 6 and §4.5 with both
// percentages and absolute regret, and §4.9's R(T)/√T.
func adaSyntheticTables(c *Context) error {
	a, err := adaLoad(c, "main")
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# ada-synthetic: results\n\nT = %s, %d runs, δ = 1e-5; %% of the non-private counterpart is 100 × Σ μ_t(a_t) over the counterpart's, per run (paired), mean ± s.d. over runs; regret is the pseudo-regret, mean ± s.e.\n\n",
		fmtInt(c.Horizon()), c.Runs())
	var rows []row
	var bases []string
	add := func(label, base string) error {
		if !a.has(label) {
			return nil
		}
		r, err := a.rowOf(label, base, lLinUCB)
		if err != nil {
			return err
		}
		rows, bases = append(rows, r), append(bases, base)
		return nil
	}
	if err := add(lLinUCB, lLinUCB); err != nil {
		return err
	}
	if err := add(lLinTS, lLinUCB); err != nil {
		return err
	}
	b.WriteString(resultsTable("Non-private", rows, bases))
	for _, e := range adaEpsilons {
		rows, bases = nil, nil
		for _, l := range []struct{ label, base string }{
			{lUCB(e), lLinUCB}, {lTS(e), lLinTS}, {lAmp(0.3, e), lLinTS}, {lAmp(0.5, e), lLinTS},
			{lAdaptive(e), lLinTS}, {lCoreset(e), lLinUCB}, {lBatched(e), lLinUCB},
		} {
			if err := add(l.label, l.base); err != nil {
				return err
			}
		}
		b.WriteString(resultsTable("ε = "+fmtG(e)+" (Tables 1, 2, 6)", rows, bases))
	}
	rows, bases = nil, nil
	for _, bb := range adaBatches {
		if err := add(lB(bb), lLinTS); err != nil {
			return err
		}
	}
	for _, v := range adaVs {
		if v != 1 {
			if err := add(lV(v), lLinTS); err != nil {
				return err
			}
		}
	}
	b.WriteString(resultsTable("§4.5 robustness at ε = 1 (B, v)", rows, bases))
	b.WriteString("### §4.9 R(T)/√T of AdaPrivate-TS (mean ± s.e.)\n\n")
	tb := report.Table{Header: []string{"T", "ε = 1", "R(T), ε = 1", "ε = 5", "R(T), ε = 5", "LinTS", "R(T), LinTS"}}
	ts, v1, err := scalingPoints(c, 1)
	if err != nil {
		return err
	}
	_, v5, err := scalingPoints(c, 5)
	if err != nil {
		return err
	}
	_, vl, err := scalingPointsOf(c, lLinTS)
	if err != nil {
		return err
	}
	for i, t := range ts {
		s1, s5, sl := statOf(v1[i]), statOf(v5[i]), statOf(vl[i])
		rt := math.Sqrt(float64(t))
		tb.AddRow(fmtInt(t), fmt.Sprintf("%.2f ± %.2f", s1.mean, s1.se), num(s1.mean*rt, 4),
			fmt.Sprintf("%.2f ± %.2f", s5.mean, s5.se), num(s5.mean*rt, 4),
			fmt.Sprintf("%.2f ± %.2f", sl.mean, sl.se), num(sl.mean*rt, 4))
	}
	if err := tb.Markdown(&b); err != nil {
		return err
	}
	return c.writeOut("results.md", b.String())
}

func adaSyntheticFigure(c *Context) (report.Figure, error) {
	a, err := adaLoad(c, "main")
	if err != nil {
		return report.Figure{}, err
	}
	xs := adaEpsilons
	p1 := report.Panel{Title: "Table 1: % of non-private counterpart", XLabel: "ε", YLabel: "% of LinTS (TS) / LinUCB (UCB)"}
	p2 := report.Panel{Title: "Table 2: amplification and adaptive decay", XLabel: "ε", YLabel: "% of LinTS"}
	p3 := report.Panel{Title: "Table 6: central-model baselines", XLabel: "ε", YLabel: "% of LinUCB"}
	p4 := report.Panel{Title: "Absolute regret at T", XLabel: "ε", YLabel: "pseudo-regret", LegendRight: true}
	type method struct {
		name   string
		label  func(float64) string
		base   string
		paper  []float64
		colour int
		panel  *report.Panel
	}
	ms := []method{
		{"AdaPrivate-TS", lTS, lLinTS, adaPaperTS, 0, &p1},
		{"AdaPrivate-UCB", lUCB, lLinUCB, adaPaperUCB, 1, &p1},
		{"AdaPrivate-TS", lTS, lLinTS, adaPaperTS, 0, &p2},
		{"TS-Amp q=0.3", func(e float64) string { return lAmp(0.3, e) }, lLinTS, adaPaperAmp[0.3], 2, &p2},
		{"TS-Amp q=0.5", func(e float64) string { return lAmp(0.5, e) }, lLinTS, adaPaperAmp[0.5], 3, &p2},
		{"TS-Adaptive", lAdaptive, lLinTS, adaPaperAdaptive, 4, &p2},
		{"AdaPrivate-TS", lTS, lLinUCB, adaPaperTS, 0, &p3},
		{"CoreSet-Elim", lCoreset, lLinUCB, adaPaperCoreset, 5, &p3},
		{"Batched-Agg", lBatched, lLinUCB, adaPaperBatched, 6, &p3},
	}
	inRegret := map[string]bool{}
	for _, m := range ms {
		s, err := pctSeries(a, m.name, xs, mapEps(m.label), m.base, m.colour)
		if err != nil {
			return report.Figure{}, err
		}
		addSeries(m.panel, s, paperSeries(m.name, xs, m.paper, m.colour))
		if inRegret[m.name] {
			continue
		}
		inRegret[m.name] = true
		g, err := regretSeries(a, m.name, xs, mapEps(m.label), m.colour)
		if err != nil {
			return report.Figure{}, err
		}
		g.Lo, g.Hi = nil, nil // the bands overlap too much to read; see results.md for the s.e.
		addSeries(&p4, g)
	}
	for i, l := range []string{lLinUCB, lLinTS} {
		g, err := a.regret(l)
		if err != nil {
			return report.Figure{}, err
		}
		m := statOf(g).mean
		addSeries(&p4, report.Series{Label: l + " (not private)", X: xs, Y: []float64{m, m, m, m}, Dashed: true,
			Color: report.Palette[(7+i)%len(report.Palette)]})
	}
	addHeadroom(&p1, 0.5)
	addHeadroom(&p2, 0.6)
	addHeadroom(&p3, 0.5)
	addHeadroom(&p4, 0.5)
	return wide(2, p1, p2, p3, p4), nil
}

func adaRobustFigure(c *Context) (report.Figure, error) {
	a, err := adaLoad(c, "main")
	if err != nil {
		return report.Figure{}, err
	}
	var bx []float64
	var bl []string
	for _, b := range adaBatches {
		bx = append(bx, float64(b))
		bl = append(bl, lB(b))
	}
	var vl []string
	for _, v := range adaVs {
		vl = append(vl, lV(v))
	}
	pb := report.Panel{Title: "AdaPrivate-TS, ε = 1: batch size", XLabel: "B", YLabel: "% of LinTS"}
	pv := report.Panel{Title: "AdaPrivate-TS, ε = 1: posterior scale", XLabel: "v", YLabel: "% of LinTS"}
	s, err := pctSeries(a, "measured", bx, bl, lLinTS, 0)
	if err != nil {
		return report.Figure{}, err
	}
	addSeries(&pb, s, report.Series{Label: "paper: all ≥ 94.1", X: []float64{100, 1000}, Y: []float64{94.1, 94.1}, Dashed: true, Color: grey})
	s, err = pctSeries(a, "measured", adaVs, vl, lLinTS, 0)
	if err != nil {
		return report.Figure{}, err
	}
	addSeries(&pv, s, report.Series{Label: "paper: all ≥ 95.8", X: []float64{0.5, 2}, Y: []float64{95.8, 95.8}, Dashed: true, Color: grey})
	addHeadroom(&pb, 0.3)
	addHeadroom(&pv, 0.3)
	return wide(2, pb, pv), nil
}

func adaScalingFigure(c *Context) (report.Figure, error) {
	p := report.Panel{Title: "§4.9: R(T)/√T of AdaPrivate-TS", XLabel: "T", YLabel: "R(T)/√T", LegendRight: true}
	for i, e := range []float64{1, 5} {
		ts, vals, err := scalingPoints(c, e)
		if err != nil {
			return report.Figure{}, err
		}
		s := report.Series{Label: "ε = " + fmtG(e), Color: report.Palette[i]}
		for j, t := range ts {
			st := statOf(vals[j])
			s.X = append(s.X, float64(t))
			s.Y = append(s.Y, st.mean)
			s.Lo = append(s.Lo, st.mean-1.96*st.se)
			s.Hi = append(s.Hi, st.mean+1.96*st.se)
		}
		rg := adaScaling[e]
		x := []float64{float64(ts[0]), float64(ts[len(ts)-1])}
		addSeries(&p, s,
			report.Series{Label: fmt.Sprintf("paper, ε = %g: %g–%g", e, rg[0], rg[1]), X: x, Y: []float64{rg[0], rg[0]}, Dashed: true, Color: report.Palette[i]},
			report.Series{X: x, Y: []float64{rg[1], rg[1]}, Dashed: true, Color: report.Palette[i]})
	}
	ts, vl, err := scalingPointsOf(c, lLinTS)
	if err != nil {
		return report.Figure{}, err
	}
	s := report.Series{Label: "LinTS (not private)", Color: grey}
	for j, t := range ts {
		s.X, s.Y = append(s.X, float64(t)), append(s.Y, statOf(vl[j]).mean)
	}
	addSeries(&p, s)
	addHeadroom(&p, 0.3)
	return wide(1, p), nil
}
