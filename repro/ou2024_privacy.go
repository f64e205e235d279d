package repro

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/mab"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
)

// E3 ([OU] Figs 1 and 4, closed form) and E4 ([OU] App D).

// ouFigT is the horizon of [OU] Figs 1 and 4.
const ouFigT = 1000

// ouFig1Products are the values of c(b+1) of docs/reproductions.md §3.0's Fig 1 table;
// Fig 1 varies b with c = 1 (top) and c with b = 0 (bottom).
var ouFig1Products = []int{1, 2, 11, 101}

// policyReport returns a registered policy's privacy report for K arms and
// horizon T.
func policyReport(name string, K, T int, p bandit.Params) (privacy.Report, error) {
	d, err := mab.Lookup(name)
	if err != nil {
		return privacy.Report{}, err
	}
	full, err := d.Complete(p)
	if err != nil {
		return privacy.Report{}, err
	}
	return d.Report(bandit.Setting{K: K, Horizon: T}, full)
}

// paperMu returns the paper's GDP value of a policy's report.
func paperMu(name string, K, T int, p bandit.Params) (float64, error) {
	r, err := policyReport(name, K, T, p)
	if err != nil {
		return 0, err
	}
	if r.Paper == nil || r.Paper.Notion != privacy.NotionGDP {
		return 0, fmt.Errorf("%s: report has no paper GDP value", name)
	}
	return r.Paper.Value, nil
}

// certifiedMu returns the certified GDP value of a policy's report.
func certifiedMu(name string, K, T int, p bandit.Params) (float64, error) {
	r, err := policyReport(name, K, T, p)
	if err != nil {
		return 0, err
	}
	if r.Certified.Notion != privacy.NotionGDP {
		return 0, fmt.Errorf("%s: certified guarantee is %s, not GDP", name, r.Certified.Notion)
	}
	return r.Certified.Value, nil
}

// ouRDPEpsilon is [OU] Thm 8 optimised over the order α > 1:
// min_α αT/4 + ln(1/δ)/(α−1) = T/4 + sqrt(T·ln(1/δ)).
func ouRDPEpsilon(T int, delta float64) float64 {
	t := float64(T)
	return t/4 + math.Sqrt(t*math.Log(1/delta))
}

// ouCor1Epsilon is [OU] Corollary 1 (advanced composition of Thm 7) for N
// arms and T rounds at total δ_TS, minimised over the per-round δ ∈ (0,
// δ_TS/T) (the paper does not say how it split δ). docs/reproduction-decisions.md A5: Thm 7, hence
// this curve, is invalid (it under-reports); it is drawn only with that
// label.
func ouCor1Epsilon(T, N int, deltaTS float64) float64 {
	t := float64(T)
	bestEps := math.Inf(1)
	for i := range 4000 {
		// u = Tδ/δ_TS ∈ (0, 1), log-spaced from e^−40 to 1 − 1e−9.
		u := math.Exp(-40 * (1 - float64(i)/3999))
		u = math.Min(u, 1-1e-9)
		d := u * deltaTS / t
		e := math.Sqrt(math.Log(float64(N-1)/(2*d))) / (2 * math.Sqrt2)
		v := e*math.Sqrt(2*t*math.Log(1/(deltaTS-t*d))) + t*e*math.Expm1(e)
		bestEps = math.Min(bestEps, v)
	}
	return bestEps
}

const invalidLabel = "Standard DP, Cor. 1 — INVALID (docs/reproduction-decisions.md A5: Thm 7 under-reports)"

func ouPrivacyCurves() *Reproduction {
	deltas := logGrid(1e-10, 0.1, 120)
	r := &Reproduction{
		Name: "ou2024-privacy-curves", Paper: ouPaper, Experiments: "E3 (with §3.0's conversions and A5)",
		Section:     "§4.1 Fig 1; App C.3 Fig 4",
		Description: "closed-form ε(δ) curves of M-TS (Fig 1) and of TS by GDP, RDP and the invalid Cor. 1 (Fig 4), T = 1000",
		Full:        Size{Horizons: []int{ouFigT}}, Quick: Size{Horizons: []int{ouFigT}},
		Setup: []string{
			"Fig 1: ε(δ) of M-TS-Gaussian at T = 1000 from the paper's GDP value sqrt(T/(c(b+1))) ([OU] Thm 4, read from mab's mts-gaussian report) through the exact GDP→(ε, δ) conversion (privacy.GDPEpsilon); top b ∈ {0, 1, 10, 100} with c = 1, bottom c ∈ {1, 2, 11, 101} with b = 0.",
			"Fig 4: TS-Gaussian at T = 1000: GDP (Thm 3, η = sqrt(T/2), mab's ts-gaussian paper value), RDP (Thm 8 optimised over α: T/4 + sqrt(T ln(1/δ))) and Standard DP (Cor. 1, minimised over the per-round δ), for N = 2 and N = 10.",
			"Closed form: --runs and --horizon do not apply.",
		},
		Notes: []string{
			"The Standard DP curve of Fig 4 ([OU] Thm 7 / Cor. 1) rests on Lemma 12, which is wrong (docs/reproduction-decisions.md A5): it is drawn only with an INVALID label, and the checks E3.A5-* show why. The paper's statement that GDP and RDP are tighter than it compares against an under-reporting bound.",
			"The paper does not say how Cor. 1 splits δ_TS between the T rounds and the composition; the curve takes the most favourable split, which is still far above GDP and RDP.",
			"The Fig 1 c-values of the bottom panel are not stated in the paper; c ∈ {1, 2, 11, 101} gives the same c(b+1) as the top panel, which is all that matters (caption of Fig 1).",
		},
	}
	r.Figures = []FigureDef{
		{File: "fig1_mts_privacy", Caption: "[OU] Fig 1: ε as a function of δ for M-TS-Gaussian at T = 1000, varying b (c = 1, left) and c (b = 0, right); paper's GDP value, exact conversion.",
			Build: func(c *Context) (report.Figure, error) {
				top := report.Panel{Title: "varying b (c = 1), T = 1000", XLabel: "log₁₀ δ", YLabel: "ε", LogY: true, LegendRight: true}
				bot := report.Panel{Title: "varying c (b = 0), T = 1000", XLabel: "log₁₀ δ", YLabel: "ε", LogY: true, LegendRight: true}
				for _, prod := range ouFig1Products {
					for i, pn := range []*report.Panel{&top, &bot} {
						p := bandit.Params{"b": float64(prod - 1), "c": 1}
						label := fmt.Sprintf("b = %d", prod-1)
						if i == 1 {
							p = bandit.Params{"b": 0, "c": float64(prod)}
							label = fmt.Sprintf("c = %d", prod)
						}
						mu, err := paperMu("mts-gaussian", 5, ouFigT, p)
						if err != nil {
							return report.Figure{}, err
						}
						s, err := epsCurve(label, mu, deltas)
						if err != nil {
							return report.Figure{}, err
						}
						pn.Series = append(pn.Series, s)
					}
				}
				return wide(2, top, bot), nil
			}},
		{File: "fig4_ts_privacy", Caption: "[OU] Fig 4: ε as a function of δ for TS-Gaussian at T = 1000 by GDP (Thm 3), RDP (Thm 8) and Standard DP (Cor. 1, INVALID per docs/reproduction-decisions.md A5, dashed grey); N = 2 (left) and N = 10 (right).",
			Build: func(c *Context) (report.Figure, error) {
				mu, err := paperMu("ts-gaussian", 2, ouFigT, nil)
				if err != nil {
					return report.Figure{}, err
				}
				var panels []report.Panel
				for _, N := range []int{2, 10} {
					p := report.Panel{Title: fmt.Sprintf("N = %d, T = %d", N, ouFigT), XLabel: "log₁₀ δ", YLabel: "ε", LogY: true, LegendRight: true}
					g, err := epsCurve("GDP (Thm 3)", mu, deltas)
					if err != nil {
						return report.Figure{}, err
					}
					rdp := report.Series{Label: "RDP (Thm 8)", X: log10s(deltas)}
					std := report.Series{Label: invalidLabel, X: log10s(deltas), Dashed: true, Color: grey}
					for _, d := range deltas {
						rdp.Y = append(rdp.Y, ouRDPEpsilon(ouFigT, d))
						std.Y = append(std.Y, ouCor1Epsilon(ouFigT, N, d))
					}
					p.Series = []report.Series{g, rdp, std}
					panels = append(panels, p)
				}
				return wide(2, panels...), nil
			}},
	}
	r.Targets = []Target{
		{ID: "E3.gdp-eps-table", Name: "GDP → ε table", Source: "docs/reproductions.md §3.0 (GDP → ε)",
			Target:    "ε at δ = 1e-6 / 1e-5 for η = 1: 4.8866 / 4.3772; η = 2: 10.9972 / 9.9973; η = 5: 35.5663 / 33.1037; η = 10: 96.7173 / 91.8173",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				etas := []float64{1, 2, 5, 10}
				want := [][2]float64{{4.8866, 4.3772}, {10.9972, 9.9973}, {35.5663, 33.1037}, {96.7173, 91.8173}}
				var labels []string
				var got, w []float64
				var dec []int
				for i, eta := range etas {
					for j, d := range []float64{1e-6, 1e-5} {
						e, err := privacy.GDPEpsilon(eta, d)
						if err != nil {
							return "", false, err
						}
						labels = append(labels, fmt.Sprintf("η=%g,δ=%g", eta, d))
						got, w, dec = append(got, e), append(w, want[i][j]), append(dec, 4)
					}
				}
				m, ok := tableCheck(labels, got, w, dec)
				return m, ok, nil
			}},
		{ID: "E3.fig1-eta", Name: "Fig 1 GDP parameters", Source: "docs/reproductions.md §3.0 (Fig 1 table); [OU] Thm 4",
			Target:    "η = sqrt(T/(c(b+1))) at T = 1000 for c(b+1) = 1, 2, 11, 101: 31.62, 22.36, 9.535, 3.147, the same whether b or c varies",
			Tolerance: "printed digits or relative 1e-3; b- and c-variation equal to relative 1e-12",
			Measure: func(c *Context) (string, bool, error) {
				want := []float64{31.62, 22.36, 9.535, 3.147}
				dec := []int{2, 2, 3, 3}
				var labels []string
				var got []float64
				sym := true
				for _, prod := range ouFig1Products {
					mb, err := paperMu("mts-gaussian", 5, ouFigT, bandit.Params{"b": float64(prod - 1), "c": 1})
					if err != nil {
						return "", false, err
					}
					mc, err := paperMu("mts-gaussian", 5, ouFigT, bandit.Params{"b": 0, "c": float64(prod)})
					if err != nil {
						return "", false, err
					}
					sym = sym && relClose(mb, mc, 1e-12)
					labels = append(labels, fmt.Sprintf("c(b+1)=%d", prod))
					got = append(got, mb)
				}
				m, ok := tableCheck(labels, got, want, dec)
				return m + fmt.Sprintf("; b/c symmetric: %v", sym), ok && sym, nil
			}},
		{ID: "E3.fig1-eps", Name: "Fig 1 ε checkpoints", Source: "docs/reproductions.md §3.0 (Fig 1 table)",
			Target:    "ε at δ = 1e-2, 1e-4, 1e-6: c(b+1)=1: 572.6, 616.7, 649.4; 2: 301.1, 332.2, 355.4; 11: 66.74, 80.07, 89.97; 101: 11.53, 16.00, 19.30",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				want := [][3]float64{{572.6, 616.7, 649.4}, {301.1, 332.2, 355.4}, {66.74, 80.07, 89.97}, {11.53, 16.00, 19.30}}
				decs := [][3]int{{1, 1, 1}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}}
				var labels []string
				var got, w []float64
				var dec []int
				for i, prod := range ouFig1Products {
					mu, err := paperMu("mts-gaussian", 5, ouFigT, bandit.Params{"b": float64(prod - 1), "c": 1})
					if err != nil {
						return "", false, err
					}
					for j, d := range []float64{1e-2, 1e-4, 1e-6} {
						e, err := privacy.GDPEpsilon(mu, d)
						if err != nil {
							return "", false, err
						}
						labels = append(labels, fmt.Sprintf("%d,δ=%g", prod, d))
						got, w, dec = append(got, e), append(w, want[i][j]), append(dec, decs[i][j])
					}
				}
				m, ok := tableCheck(labels, got, w, dec)
				return m, ok, nil
			}},
		{ID: "E3.fig4-gdp", Name: "Fig 4 GDP checkpoints", Source: "docs/reproductions.md §3.0 (Fig 4 table); [OU] Thm 3",
			Target:    "TS at T = 1000, η = sqrt(500): ε = 301.07 at δ = 1e-2 and 355.38 at δ = 1e-6",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				mu, err := paperMu("ts-gaussian", 2, ouFigT, nil)
				if err != nil {
					return "", false, err
				}
				e2, err1 := privacy.GDPEpsilon(mu, 1e-2)
				e6, err2 := privacy.GDPEpsilon(mu, 1e-6)
				if err := firstErr(err1, err2); err != nil {
					return "", false, err
				}
				m, ok := tableCheck([]string{"δ=1e-2", "δ=1e-6"}, []float64{e2, e6}, []float64{301.07, 355.38}, []int{2, 2})
				return fmt.Sprintf("η = %.4f; %s", mu, m), ok, nil
			}},
		{ID: "E3.fig4-rdp", Name: "Fig 4 RDP checkpoints", Source: "docs/reproductions.md §3.0 (Fig 4 table); [OU] Thm 8",
			Target:    "T/4 + sqrt(T ln(1/δ)) at T = 1000: 317.86 at δ = 1e-2 and 367.54 at δ = 1e-6",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				m, ok := tableCheck([]string{"δ=1e-2", "δ=1e-6"}, []float64{ouRDPEpsilon(ouFigT, 1e-2), ouRDPEpsilon(ouFigT, 1e-6)},
					[]float64{317.86, 367.54}, []int{2, 2})
				return m, ok, nil
			}},
		{ID: "E3.gdp-le-rdp", Name: "GDP never worse than RDP", Source: "docs/reproductions.md §3.0 (\"GDP ≤ RDP, as the paper claims\"); [OU] App C.3",
			Target:    "ε_GDP(δ) ≤ ε_RDP(δ) at T = 1000 for every δ of the figure grid [1e-10, 0.1] (120 points)",
			Tolerance: "exact inequality",
			Measure: func(c *Context) (string, bool, error) {
				mu, err := paperMu("ts-gaussian", 2, ouFigT, nil)
				if err != nil {
					return "", false, err
				}
				minGap, at := math.Inf(1), 0.0
				for _, d := range deltas {
					g, err := privacy.GDPEpsilon(mu, d)
					if err != nil {
						return "", false, err
					}
					if gap := ouRDPEpsilon(ouFigT, d) - g; gap < minGap {
						minGap, at = gap, d
					}
				}
				return fmt.Sprintf("min over δ of ε_RDP − ε_GDP = %.3f (at δ = %.2g)", minGap, at), minGap >= 0, nil
			}},
		{ID: "E3.stddp-label", Name: "Cor. 1 curve labelled invalid", Source: "docs/reproductions.md E3; A5",
			Target:    "the Standard DP (Cor. 1) curve of Fig 4 is drawn only with an \"invalid\" label",
			Tolerance: "label contains INVALID",
			Measure: func(c *Context) (string, bool, error) {
				return fmt.Sprintf("label %q", invalidLabel), strings.Contains(invalidLabel, "INVALID"), nil
			}},
		{ID: "E3.stddp-looser", Name: "GDP, RDP below Cor. 1", Source: "[OU] App C.3 (Fig 4 discussion)",
			Target:    "the paper's claim: GDP and RDP are significantly tighter than Standard DP (Cor. 1) for N = 2 and N = 10; checked as ε_Cor1 ≥ 2·max(ε_GDP, ε_RDP) on the δ grid. Cor. 1 itself is invalid (A5)",
			Tolerance: "ratio ≥ 2 everywhere",
			Measure: func(c *Context) (string, bool, error) {
				mu, err := paperMu("ts-gaussian", 2, ouFigT, nil)
				if err != nil {
					return "", false, err
				}
				minRatio := math.Inf(1)
				for _, N := range []int{2, 10} {
					for _, d := range deltas {
						g, err := privacy.GDPEpsilon(mu, d)
						if err != nil {
							return "", false, err
						}
						minRatio = math.Min(minRatio, ouCor1Epsilon(ouFigT, N, d)/math.Max(g, ouRDPEpsilon(ouFigT, d)))
					}
				}
				return fmt.Sprintf("min ε_Cor1/max(ε_GDP, ε_RDP) = %.2f", minRatio), minRatio >= 2, nil
			}},
		{ID: "E3.A5-thm7", Name: "Thm 7 per-round (ε, δ)", Source: "docs/reproduction-decisions.md A5; [OU] Thm 7",
			Target:         "the paper's claim: one TS round (N = 2, n ≥ 1, i.e. a 1/√2-GDP Gaussian shift) is (ε, δ)-DP with ε = sqrt(ln((N−1)/(2δ)))/(2√2) = 1.2807 at δ = 1e-6",
			Tolerance:      "true δ at that ε ≤ 1e-6",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A5: Thm 7 (via Lemma 12) under-reports δ; the exact δ of a Gaussian shift is the GDP curve, so the stated ε carries a far larger δ.",
			Measure: func(c *Context) (string, bool, error) {
				e := math.Sqrt(math.Log(1/(2e-6))) / (2 * math.Sqrt2)
				d, err := privacy.GDPDelta(1/math.Sqrt2, e)
				if err != nil {
					return "", false, err
				}
				return fmt.Sprintf("ε = %.4f carries true δ = %.4f (docs/findings.md A5: 0.0177)", e, d), d <= 1e-6, nil
			}},
		{ID: "E3.A5-lemma12", Name: "Lemma 12 Gaussian shift", Source: "docs/reproduction-decisions.md A5; [OU] Lemma 12",
			Target:         "the paper's claim: a Gaussian shift a ≤ 2ε/sqrt(ln(1/(2δ))) (unit variance) is (ε, δ)-DP; at ε = 1, δ = 1e-6 (a = 0.552) and ε = 0.5, δ = 1e-5",
			Tolerance:      "true δ ≤ stated δ",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A5: Lemma 12 (attributed to Nissim et al.) allows shifts whose exact δ (the GDP curve) exceeds the stated δ by four orders of magnitude.",
			Measure: func(c *Context) (string, bool, error) {
				ok := true
				var parts []string
				for _, ed := range [][2]float64{{1, 1e-6}, {0.5, 1e-5}} {
					a := 2 * ed[0] / math.Sqrt(math.Log(1/(2*ed[1])))
					d, err := privacy.GDPDelta(a, ed[0])
					if err != nil {
						return "", false, err
					}
					ok = ok && d <= ed[1]
					parts = append(parts, fmt.Sprintf("ε=%g, δ=%g: a = %.3f, true δ = %.4f", ed[0], ed[1], a, d))
				}
				return strings.Join(parts, "; ") + " (docs/findings.md A5: 0.0123, 0.0081)", ok, nil
			}},
		{ID: "E3.A5-valid", Name: "valid single-round ε", Source: "docs/reproduction-decisions.md A5",
			Target:    "the valid single-round ε of TS (1/√2-GDP) at δ = 1e-6 is 3.308",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				e, err := privacy.GDPEpsilon(1/math.Sqrt2, 1e-6)
				if err != nil {
					return "", false, err
				}
				m, ok := tableCheck([]string{"ε"}, []float64{e}, []float64{3.308}, []int{3})
				return m, ok, nil
			}},
	}
	return r
}

// log10s returns log₁₀ of each x (the figures plot δ on a log₁₀ axis
// drawn as a linear axis of exponents).
func log10s(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log10(x)
	}
	return out
}

// epsCurve is ε(δ) of μ-GDP over deltas, against log₁₀ δ.
func epsCurve(label string, mu float64, deltas []float64) (report.Series, error) {
	s := report.Series{Label: label, X: log10s(deltas)}
	for _, d := range deltas {
		e, err := privacy.GDPEpsilon(mu, d)
		if err != nil {
			return s, err
		}
		s.Y = append(s.Y, e)
	}
	return s, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// E4: [OU] App D, M-TS against DP-SE and Anytime-Lazy-UCB.

var ouAppDEtas = []float64{1, 5, 10}

// ouAppDEpsilon is the pure ε handed to the pure-DP baselines for η-GDP:
// ε of η-GDP at δ = 1e-6, rounded up to 3 decimals (docs/reproduction-decisions.md A6).
func ouAppDEpsilon(eta float64) (float64, error) {
	e, err := privacy.GDPEpsilon(eta, 1e-6)
	if err != nil {
		return 0, err
	}
	return math.Ceil(e*1000) / 1000, nil
}

func ouVsPureDP() *Reproduction {
	key := func(i int) string { return etaKey(ouAppDEtas[i]) }
	r := &Reproduction{
		Name: "ou2024-vs-pure-dp", Paper: ouPaper, Experiments: "E4 (with A6)", Section: "App D, Fig 5",
		Description: "M-TS-Gaussian (grid-searched (b, c)) against DP-SE and Anytime-Lazy-UCB (its widths read with log₂, and with ln as a sensitivity row) at ε ∈ {4.887, 35.567, 96.718} (Fig 5)",
		Full:        Size{Horizons: []int{100000}, Runs: 10},
		Quick:       Size{Horizons: []int{100000}, Runs: 3},
		Seed:        ouSeed, Env: ouBernoulli, Metric: Realised,
		Setup: []string{
			"E1's arms; T = 1e5 and 10 runs (assumed: App D does not say; docs/reproductions.md E4).",
			"M-TS-Gaussian over mab.MTSGrid at η ∈ {1, 5, 10} (c(b+1) = T/η², c ≥ 1, 5b < T), the best (b, c) chosen on the same runs, as the paper's grid search did.",
			"DP-SE and Anytime-Lazy-UCB at pure ε = ε of η-GDP at δ = 1e-6 rounded up: 4.887, 35.567, 96.718 (docs/reproduction-decisions.md A6; the paper printed 4.88, 35.57, 96.71).",
			"Anytime-Lazy-UCB's widths sqrt(c1·log t/O) + c2·log t/(ε·O), c1 = 2, c2 = 3, in two readings (docs/reproduction-decisions.md A26): log with base 2 (the judged one; in natural-log units c1 = 2/ln 2 ≈ 2.885, c2 = 3/ln 2 ≈ 4.328) and natural log (c1 = 2, c2 = 3; the sensitivity row E4.large-eps-ln). Both are passed explicitly, in the units of mab's index (probed by E4.alu-default).",
		},
		Notes: []string{
			"Handing the (ε, δ) of η-GDP to pure ε-DP algorithms is conservative for them (they are ε-DP with δ = 0), not a like-for-like comparison (docs/reproduction-decisions.md A6).",
			"The best M-TS configuration is selected on the evaluation runs (as in the paper), which slightly favours M-TS.",
			"docs/reproduction-decisions.md A26 (an assumption): no available source states Anytime-Lazy-UCB's index (arXiv 2102.07929 survives only as its first page); the sibling paper by the same first author (Hu & Hegde, UAI 2022, A22) writes log for log₂, so its widths are read with log₂. E4.small-eps and E4.large-eps compare M-TS with DP-SE and Anytime-Lazy-UCB in that reading; E4.large-eps-ln repeats E4.large-eps in the natural-log reading.",
		},
	}
	r.Stages = []Stage{func(c *Context) ([]Sweep, error) {
		log2, ln, err := aluReadings()
		if err != nil {
			return nil, err
		}
		eps := make([]float64, len(ouAppDEtas))
		for i, eta := range ouAppDEtas {
			e, err := ouAppDEpsilon(eta)
			if err != nil {
				return nil, err
			}
			eps[i] = e
		}
		return mtsGridSweeps(c, ouBernoulli, ouAppDEtas, key, func(i int) ([]bandit.Spec, []string) {
			e := eps[i]
			return []bandit.Spec{spec("dp-se", "epsilon", e), log2.spec(e), ln.spec(e)},
				[]string{fmt.Sprintf("DP-SE (ε=%g)", e), log2.label(e), ln.label(e)}
		})
	}}
	r.Figures = []FigureDef{{File: "fig5_vs_pure_dp", Caption: "[OU] Fig 5: realised regret of the best M-TS-Gaussian (b, c) at η-GDP against DP-SE and Anytime-Lazy-UCB (widths read with log₂, and with ln: docs/reproduction-decisions.md A26) at the pure ε of η-GDP at δ = 1e-6; mean and 95% band.",
		Build: func(c *Context) (report.Figure, error) {
			var panels []report.Panel
			for i, eta := range ouAppDEtas {
				ps, err := c.Policies(key(i))
				if err != nil {
					return report.Figure{}, err
				}
				b := best(mtsOnly(ps))
				b.Label = "M-TS best: " + b.Label
				sel := []PolicyResult{b}
				for _, p := range ps {
					if p.Entry.Spec.Name != "mts-gaussian" {
						sel = append(sel, p)
					}
				}
				e, _ := ouAppDEpsilon(eta)
				panels = append(panels, regretPanel(fmt.Sprintf("ε = %g (η = %g-GDP at δ = 1e-6)", e, eta), sel, false))
			}
			return wide(3, panels...), nil
		}}}
	r.Targets = []Target{
		{ID: "E4.eps-values", Name: "ε of 1-, 5-, 10-GDP", Source: "docs/reproduction-decisions.md A6; docs/reproductions.md §3.0",
			Target:    "ε of η-GDP at δ = 1e-6, rounded up to 3 decimals: 4.887, 35.567, 96.718",
			Tolerance: "exact after rounding up",
			Measure: func(c *Context) (string, bool, error) {
				want := []float64{4.887, 35.567, 96.718}
				ok := true
				var parts []string
				for i, eta := range ouAppDEtas {
					e, err := ouAppDEpsilon(eta)
					if err != nil {
						return "", false, err
					}
					ok = ok && e == want[i]
					parts = append(parts, fmt.Sprintf("η=%g: %g", eta, e))
				}
				return strings.Join(parts, "; "), ok, nil
			}},
		{ID: "E4.A6-printed", Name: "paper's printed ε valid", Source: "docs/reproduction-decisions.md A6; [OU] App D",
			Target:         "the paper's claim: the printed ε = 4.88, 35.57, 96.71 are (ε, 1e-6) guarantees of 1-, 5-, 10-GDP",
			Tolerance:      "δ_η(ε) ≤ 1e-6 for all three",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A6: the printed 4.88 and 96.71 are truncations of 4.8866 and 96.7173, so they carry δ slightly above 1e-6; the runs use 4.887, 35.567, 96.718.",
			Measure: func(c *Context) (string, bool, error) {
				ok := true
				var parts []string
				for i, e := range []float64{4.88, 35.57, 96.71} {
					d, err := privacy.GDPDelta(ouAppDEtas[i], e)
					if err != nil {
						return "", false, err
					}
					ok = ok && d <= 1e-6
					parts = append(parts, fmt.Sprintf("η=%g, ε=%g: δ = %.4g", ouAppDEtas[i], e, d))
				}
				return strings.Join(parts, "; ") + " (docs/findings.md A6: 1.032e-6 and 1.004e-6 for 4.88 and 96.71)", ok, nil
			}},
		{ID: "E4.calibration", Name: "privacy of the compared policies", Source: "docs/reproductions.md E4",
			Target:    "every M-TS configuration has the paper's GDP value η; DP-SE and Anytime-Lazy-UCB (both readings) state pure ε equal to the panel's ε",
			Tolerance: "relative 1e-9",
			Measure: func(c *Context) (string, bool, error) {
				m, ok, err := ouCalibration(c, ouAppDEtas, etaKey)
				if err != nil {
					return "", false, err
				}
				for i, eta := range ouAppDEtas {
					ps, err := c.Policies(key(i))
					if err != nil {
						return "", false, err
					}
					e, _ := ouAppDEpsilon(eta)
					for _, p := range ps {
						if p.Entry.Spec.Name == "mts-gaussian" {
							continue
						}
						pp := p.Entry.Report.Paper
						if pp == nil || pp.Notion != privacy.NotionPure || !relClose(pp.Value, e, 1e-9) {
							ok = false
							m += fmt.Sprintf("; %s: paper guarantee %+v", p.Label, pp)
						}
					}
				}
				return m + "; pure-DP policies at the panel's ε", ok, nil
			}},
		{ID: "E4.alu-default", Name: "Anytime-Lazy-UCB's reading in mab", Source: "docs/reproduction-decisions.md A26",
			Target:    "mab's anytime-lazy-ucb defaults are the log₂ reading of its widths (c1 = 2, c2 = 3 with log₂ t; 2/ln 2 and 3/ln 2 in natural-log units), the reading E9 runs, and its only parameters besides ε (and the serving switch grid) are c1 and c2, which E4 sets for both readings",
			Tolerance: "relative 1e-9",
			Measure:   aluDefaultCheck},
		{ID: "E4.small-eps", Name: "TS not best at ε = 4.887", Source: "docs/reproduction-decisions.md §3 E4, A26; [OU] App D",
			Target:    "at ε = 4.887 (η = 1) the best M-TS configuration does not have the lowest mean final regret (baselines: DP-SE and Anytime-Lazy-UCB read with log₂)",
			Tolerance: "comparison of means",
			Measure: func(c *Context) (string, bool, error) {
				log2, ln, err := aluReadings()
				if err != nil {
					return "", false, err
				}
				ts, other, err := ouAppDBest(c, key(0), ln)
				if err != nil {
					return "", false, err
				}
				_, otherLn, err := ouAppDBest(c, key(0), log2)
				if err != nil {
					return "", false, err
				}
				return fmt.Sprintf("best M-TS (%s) %s vs %s %s (natural-log reading: %s %s)", ts.Label, pm(ts.Mean(), ts.SE()),
					other.Label, pm(other.Mean(), other.SE()), otherLn.Label, pm(otherLn.Mean(), otherLn.SE())), ts.Mean() > other.Mean(), nil
			}},
		{ID: "E4.large-eps", Name: "TS clearly best at larger ε", Source: "docs/reproduction-decisions.md §3 E4, A26; [OU] App D",
			Target:         "at ε = 35.567 and 96.718 the best M-TS configuration has the lowest mean final regret, lower than the best pure-DP baseline (DP-SE, Anytime-Lazy-UCB read with log₂) by more than 2 s.e. of the paired difference",
			Tolerance:      "2 s.e. (paired over runs)",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A26: judged under the log₂ reading with the published DP-TS and Lazy-DP-TS offsets (A22), it still fails, so it is expected to fail with the numbers shown: at ε = 35.567 the best M-TS and Anytime-Lazy-UCB (log₂) are within 2 s.e. of each other (the measured column; at ε = 96.718 M-TS is clearly best). The margin at ε = 35.567 is within the run-to-run spread: another stream of seeds gave M-TS 1099 vs 1191 (passing), this one 1099 vs 1116.",
			Measure: func(c *Context) (string, bool, error) {
				_, ln, err := aluReadings()
				if err != nil {
					return "", false, err
				}
				return ouLargeEps(c, key, ln)
			}},
		{ID: "E4.large-eps-ln", Name: "TS clearly best at larger ε (ln reading)", Source: "docs/reproduction-decisions.md A26 (sensitivity row)",
			Target:         "E4.large-eps with Anytime-Lazy-UCB's widths read with the natural log (c1 = 2, c2 = 3 in ln units) instead of log₂",
			Tolerance:      "2 s.e. (paired over runs)",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A26: a sensitivity row, not a target. E4.large-eps is judged under the log₂ reading; in the natural-log reading Anytime-Lazy-UCB's widths are smaller by a factor ln 2 (privacy width) and √(ln 2) (sampling width), and it beats the best M-TS at ε = 35.567 (issue 3; the numbers are in the measured column).",
			Measure: func(c *Context) (string, bool, error) {
				log2, _, err := aluReadings()
				if err != nil {
					return "", false, err
				}
				return ouLargeEps(c, key, log2)
			}},
	}
	return r
}

// ouLargeEps is E4.large-eps's criterion with the pure-DP baselines of an
// App D sweep except the Anytime-Lazy-UCB reading skip.
func ouLargeEps(c *Context, key func(int) string, skip aluReading) (string, bool, error) {
	ok := true
	var parts []string
	for i := 1; i < len(ouAppDEtas); i++ {
		ts, other, err := ouAppDBest(c, key(i), skip)
		if err != nil {
			return "", false, err
		}
		d, se := Diff(other, ts)
		ok = ok && d > 2*se
		parts = append(parts, fmt.Sprintf("η=%g: M-TS (%s) %s vs %s %s (difference %s)", ouAppDEtas[i], ts.Label,
			num(ts.Mean(), 4), other.Label, num(other.Mean(), 4), pm(d, se)))
	}
	return strings.Join(parts, "; "), ok, nil
}

// ouAppDBest returns the best M-TS configuration and the best pure-DP
// baseline of an App D sweep, leaving out Anytime-Lazy-UCB in the reading
// skip.
func ouAppDBest(c *Context, key string, skip aluReading) (ts, other PolicyResult, err error) {
	ps, err := c.Policies(key)
	if err != nil {
		return ts, other, err
	}
	var others []PolicyResult
	for _, p := range ps {
		if p.Entry.Spec.Name != "mts-gaussian" && !skip.is(p) {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return ts, other, fmt.Errorf("%s: no pure-DP baseline", key)
	}
	return best(mtsOnly(ps)), best(others), nil
}
