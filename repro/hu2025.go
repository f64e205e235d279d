package repro

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/mab"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

// [HU] Hu, Huang, Zhang, Lécuyer & Hegde, "Connecting Thompson Sampling and
// UCB: Towards More Efficient Trade-offs Between Privacy and Regret", ICML
// 2025: §5.1 (E5, E6), §5.2 (E7), §5.3 / App E.1 (E8), App E.2 (E9).

const (
	huPaper     = "[HU] Hu, Huang, Zhang, Lécuyer & Hegde, ICML 2025"
	huBernoulli = "bernoulli:0.95,0.75,0.55,0.35,0.15"
	huSeed      = 20250713
	huT         = 1000000
)

var (
	huAlphas = []float64{0, 0.25, 0.5, 0.75, 1}
	// huE1B is [HU] App E.1's grid of M-TS pre-pulls.
	huE1B = []int{0, 1, 500, 1000, 2000, 5000, 100000}
	// huPaperB is the b [HU] §5.3 found best: 1 at α = 0, 2000 at α = 1.
	huPaperB = map[float64]int{0: 1, 1: 2000}
)

func alphaKey(a float64) string { return "alpha=" + strconv.FormatFloat(a, 'g', -1, 64) }
func horizonKey(T int) string   { return "T=" + fmtInt(T) }
func alphaLabel(a float64) string {
	return "α=" + strconv.FormatFloat(a, 'g', -1, 64)
}

func dptsucb(alpha float64) bandit.Spec { return spec("dp-ts-ucb", "alpha", alpha) }

// dptsucbMu returns DP-TS-UCB's paper (Thm 4.4) and certified (A7) GDP values
// for K = 5 arms at horizon T, from mab's report.
func dptsucbMu(T int, alpha float64) (paper, cert float64, err error) {
	p := bandit.Params{"alpha": alpha}
	if paper, err = paperMu("dp-ts-ucb", 5, T, p); err != nil {
		return 0, 0, err
	}
	cert, err = certifiedMu("dp-ts-ucb", 5, T, p)
	return paper, cert, err
}

// ---------------------------------------------------------------------------
// E5, E6: DP-TS-UCB across α and T.

// huE6 is docs/reproductions.md E6's table: paper value [tight value], rows α, columns
// T = 1e4, 1e5, 1e6.
var (
	huE6T     = []int{10000, 100000, 1000000}
	huE6Paper = [][3]float64{{152.00, 319.54, 651.49}, {56.37, 98.41, 167.92}, {20.90, 30.31, 43.28}, {7.752, 9.335, 11.155}, {2.875, 2.875, 2.875}}
	huE6Tight = [][3]float64{{107.48, 225.95, 460.67}, {39.85, 69.59, 118.73}, {14.78, 21.43, 30.60}, {5.467, 6.597, 7.880}, {2.031, 2.020, 2.031}}
	huE6Dec   = [][3]int{{2, 2, 2}, {2, 2, 2}, {2, 2, 2}, {3, 3, 3}, {3, 3, 3}}
	huE6Phi   = []float64{212220.6, 27179.5, 3480.9, 445.8, 57.10}
)

func huAlpha() *Reproduction {
	r := &Reproduction{
		Name: "hu2025-alpha", Paper: huPaper, Experiments: "E5, E6", Section: "§5.1, Fig 3; Thm 4.4",
		Description: "DP-TS-UCB's regret and GDP parameter η across α ∈ {0, .25, .5, .75, 1} and T ∈ {1e4, 1e5, 1e6} (Fig 3, η table)",
		Full:        Size{Horizons: []int{10000, 100000, 1000000}, Runs: 20},
		Quick:       Size{Horizons: []int{10000, 100000, 1000000}, Runs: 3},
		Seed:        huSeed, Env: huBernoulli, Metric: Pseudo,
		Setup: []string{
			"DP-TS-UCB ([HU] Alg 1) with c0 = sqrt(2πe), α ∈ {0, 0.25, 0.5, 0.75, 1}, on Bernoulli arms [0.95, 0.75, 0.55, 0.35, 0.15]; 20 runs ([HU] §5).",
			"T is not stated in [HU]; docs/reproductions.md E5 suggests {1e4, 1e5, 1e6}. The regret plotted is the pseudo-regret (the paper does not say which).",
			"η (paper, Thm 4.4) and the tight value sqrt(⌊φ⌋/(ln T)^α) (docs/reproduction-decisions.md A7) are read from mab's dp-ts-ucb report.",
		},
		Notes: []string{
			"[HU]'s Thm 4.4 value sqrt(2φ/(ln T)^α) is valid but conservative (×√2 and the real φ); the project certifies sqrt(⌊φ⌋/(ln T)^α) (docs/reproduction-decisions.md A7). Thm 4.6 omits the division by (ln T)^α and is not used.",
			"At α = 1 the paper's η = sqrt(2c0) = 2.875 for every T; the tight value varies slightly with T through ⌊φ⌋ (2.031, 2.020, 2.031).",
			"docs/reproduction-decisions.md A23: E5's α-order is checked in two parts, T ≥ 1e5 (E5.alpha-order, must pass) and T = 1e4 (E5.alpha-order-T1e4, expected to fail: the doubling epochs are too short there; see its reason).",
		},
	}
	r.Stages = []Stage{func(c *Context) ([]Sweep, error) {
		var out []Sweep
		for _, T := range c.Size.Horizons {
			sw := Sweep{Key: horizonKey(T), Spec: sim.Spec{Env: huBernoulli, Horizon: T, Runs: c.Runs(), Seed: c.R.Seed}}
			for _, a := range huAlphas {
				sw.Spec.Policies = append(sw.Spec.Policies, dptsucb(a))
				sw.Labels = append(sw.Labels, alphaLabel(a))
			}
			out = append(out, sw)
		}
		return out, nil
	}}
	r.Figures = []FigureDef{
		{File: "fig3_alpha", Caption: "[HU] Fig 3: (a) DP-TS-UCB's final pseudo-regret against α, one line per T (mean, 95% band); (b) its GDP parameter η against α, paper's Thm 4.4 (solid) and tight sqrt(⌊φ⌋/(ln T)^α) (dashed).",
			Build: func(c *Context) (report.Figure, error) {
				a := report.Panel{Title: "(a) regret at T", XLabel: "α", YLabel: "pseudo-regret at T", LogY: true}
				b := report.Panel{Title: "(b) GDP parameter η", XLabel: "α", YLabel: "η", LogY: true, LegendRight: true}
				for i, T := range c.Size.Horizons {
					ps, err := c.Policies(horizonKey(T))
					if err != nil {
						return report.Figure{}, err
					}
					a.Series = append(a.Series, finalSeries("T = "+fmtInt(T), huAlphas, ps))
					sp := report.Series{Label: "Thm 4.4, T = " + fmtInt(T), X: huAlphas, Color: report.Palette[i%len(report.Palette)]}
					st := report.Series{Label: "tight, T = " + fmtInt(T), X: huAlphas, Dashed: true, Color: report.Palette[i%len(report.Palette)]}
					for _, al := range huAlphas {
						p, t, err := dptsucbMu(T, al)
						if err != nil {
							return report.Figure{}, err
						}
						sp.Y, st.Y = append(sp.Y, p), append(st.Y, t)
					}
					b.Series = append(b.Series, sp, st)
				}
				return wide(2, a, b), nil
			}},
		{File: "fig3_curves", Caption: "DP-TS-UCB's pseudo-regret curves, one panel per T, one line per α (mean, 95% band).",
			Build: func(c *Context) (report.Figure, error) {
				var panels []report.Panel
				for _, T := range c.Size.Horizons {
					ps, err := c.Policies(horizonKey(T))
					if err != nil {
						return report.Figure{}, err
					}
					panels = append(panels, regretPanel("T = "+fmtInt(T), ps, true))
				}
				return wide(len(panels), panels...), nil
			}},
	}
	r.Targets = []Target{
		{ID: "E5.alpha-order", Name: "regret increases with α (T ≥ 1e5)", Source: "docs/reproduction-decisions.md §3 E5, A23; [HU] §5.1",
			Target:    "at every T ≥ 1e5 of the run, mean final regret increases with α: each step α→α' has mean(α') ≥ mean(α) − 2 s.e., and mean(α=1) > mean(α=0) + 2 s.e. (s.e. of the paired difference over runs)",
			Tolerance: "2 s.e. (paired)",
			Measure: func(c *Context) (string, bool, error) {
				return huAlphaOrder(c, func(T int) bool { return T >= huShortT })
			}},
		{ID: "E5.alpha-order-T1e4", Name: "regret increases with α (T = 1e4)", Source: "docs/reproduction-decisions.md §3 E5, A23; [HU] §5.1",
			Target:         "at every T < 1e5 of the run (T = 1e4 at full size), mean final regret increases with α, with the same criterion as E5.alpha-order",
			Tolerance:      "2 s.e. (paired)",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A23: two independent implementations of [HU] Alg 1 (the project's and a separate Python one, 60–200 runs) put the regret peak at α = 0.5 at T = 1e4. The cause is the doubling epochs at a horizon too short for them: the estimate uses only the last completed epoch's 2^r observations, and at α = 0.5 the second arm (Δ = 0.2) is pulled well past the 1023 pulls that close its n = 512 epoch (1457 on average in issue 3's investigation, against 1071 at α = 0.75 and 1124 at α = 1). At T ≥ 1e5 the order must hold (E5.alpha-order).",
			Measure: func(c *Context) (string, bool, error) {
				return huAlphaOrder(c, func(T int) bool { return T < huShortT })
			}},
		{ID: "E5.eta", Name: "runs' η match E6", Source: "docs/reproductions.md E5 (\"η matches the E6 table exactly\")",
			Target:    "the η (paper) and tight value that the runs report (summary.json privacy) equal docs/reproductions.md E6's table at every run horizon in the table; η decreases in α at every T and is constant in T at α = 1",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				ok := true
				var parts []string
				var alpha1 []float64
				for _, T := range c.Size.Horizons {
					ps, err := c.Policies(horizonKey(T))
					if err != nil {
						return "", false, err
					}
					j := slices.Index(huE6T, T)
					prev := math.Inf(1)
					for i, p := range ps {
						rp := p.Entry.Report
						if rp.Paper == nil {
							return "", false, fmt.Errorf("%s: no paper value", p.Label)
						}
						pv, cv := rp.Paper.Value, rp.Certified.Value
						if !(pv < prev) {
							ok = false
						}
						prev = pv
						if i == len(ps)-1 {
							alpha1 = append(alpha1, pv)
						}
						if j >= 0 {
							d := huE6Dec[i][j]
							if !(digitsClose(pv, huE6Paper[i][j], d) || relClose(pv, huE6Paper[i][j], 1e-3)) ||
								!(digitsClose(cv, huE6Tight[i][j], d) || relClose(cv, huE6Tight[i][j], 1e-3)) {
								ok = false
							}
						}
					}
					tag := "not in the E6 table"
					if j >= 0 {
						tag = "as E6"
					}
					parts = append(parts, fmt.Sprintf("T=%s: η = %s … %s (%s)", fmtInt(T), num(ps[0].Entry.Report.Paper.Value, 5),
						num(ps[len(ps)-1].Entry.Report.Paper.Value, 4), tag))
				}
				for _, v := range alpha1 {
					if !relClose(v, alpha1[0], 1e-12) {
						ok = false
					}
				}
				return strings.Join(parts, "; ") + fmt.Sprintf("; α=1 constant: %s", num(alpha1[0], 6)), ok, nil
			}},
		{ID: "E6.paper", Name: "η table, Thm 4.4", Source: "docs/reproductions.md E6 (paper column)",
			Target:    "Thm 4.4's η = sqrt(2c0·T^((1−α)/2)·(ln T)^(1.5(1−α))) for α × T: " + e6Text(huE6Paper),
			Tolerance: "printed digits or relative 1e-3",
			Measure:   func(c *Context) (string, bool, error) { return huE6Check(false) }},
		{ID: "E6.tight", Name: "η table, tight", Source: "docs/reproductions.md E6 (tight column); A7",
			Target:    "tight sqrt(⌊φ⌋/(ln T)^α) for α × T: " + e6Text(huE6Tight),
			Tolerance: "printed digits or relative 1e-3",
			Measure:   func(c *Context) (string, bool, error) { return huE6Check(true) }},
		{ID: "E6.phi", Name: "φ at T = 1e6", Source: "docs/reproductions.md E6",
			Target:    "φ = c0·T^((1−α)/2)·(ln T)^((3−α)/2) at T = 1e6 for α = 0…1: 212220.6, 27179.5, 3480.9, 445.8, 57.10; checked as ⌊φ⌋ = cert²·(ln T)^α from the certified report",
			Tolerance: "⌊φ⌋ exact",
			Measure: func(c *Context) (string, bool, error) {
				ok := true
				var parts []string
				lt := math.Log(huT)
				for i, a := range huAlphas {
					_, cert, err := dptsucbMu(huT, a)
					if err != nil {
						return "", false, err
					}
					fl := math.Round(cert * cert * math.Pow(lt, a))
					ok = ok && fl == math.Floor(huE6Phi[i])
					parts = append(parts, fmt.Sprintf("α=%g: ⌊φ⌋ = %.0f", a, fl))
				}
				return strings.Join(parts, "; "), ok, nil
			}},
		{ID: "E6.eps-alpha1", Name: "ε at α = 1", Source: "docs/reproductions.md E6",
			Target:    "α = 1 (η = 2.875, Thm 4.4) gives ε = 15.78 at δ = 1e-5 and 17.21 at δ = 1e-6",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				rp, err := policyReport("dp-ts-ucb", 5, huT, bandit.Params{"alpha": 1})
				if err != nil {
					return "", false, err
				}
				var got []float64
				for _, d := range []float64{1e-5, 1e-6} {
					st, err := rp.At(d)
					if err != nil {
						return "", false, err
					}
					if st.PaperEpsilon == nil {
						return "", false, fmt.Errorf("no paper ε")
					}
					got = append(got, *st.PaperEpsilon)
				}
				m, ok := tableCheck([]string{"δ=1e-5", "δ=1e-6"}, got, []float64{15.78, 17.21}, []int{2, 2})
				return m, ok, nil
			}},
	}
	return r
}

// huShortT is the horizon below which docs/reproduction-decisions.md A23 expects E5's α-order
// not to hold (the doubling epochs are too short at T = 1e4).
const huShortT = 100000

// huAlphaOrder is E5's α-order criterion over the run's horizons T with
// keep(T): at each T, every step α→α' has mean(α') ≥ mean(α) − 2 s.e. and
// mean(α=1) > mean(α=0) + 2 s.e. (paired s.e.).
func huAlphaOrder(c *Context, keep func(T int) bool) (string, bool, error) {
	ok := true
	var parts []string
	for _, T := range c.Size.Horizons {
		if !keep(T) {
			continue
		}
		ps, err := c.Policies(horizonKey(T))
		if err != nil {
			return "", false, err
		}
		var ms []string
		for i, p := range ps {
			ms = append(ms, num(p.Mean(), 4))
			if i > 0 {
				d, se := Diff(p, ps[i-1])
				if d < -2*se {
					ok = false
					ms[i] += "✗"
				}
			}
		}
		d, se := Diff(ps[len(ps)-1], ps[0])
		if !(d > 2*se) {
			ok = false
		}
		parts = append(parts, fmt.Sprintf("T=%s: %s (α=1 − α=0: %s)", fmtInt(T), strings.Join(ms, " < "), pm(d, se)))
	}
	if len(parts) == 0 {
		return "no horizon of this part was run (size overridden)", false, nil
	}
	return strings.Join(parts, "; "), ok, nil
}

func e6Text(tab [][3]float64) string {
	var rows []string
	for i, a := range huAlphas {
		rows = append(rows, fmt.Sprintf("α=%g: %g, %g, %g", a, tab[i][0], tab[i][1], tab[i][2]))
	}
	return strings.Join(rows, "; ") + " (T = 1e4, 1e5, 1e6)"
}

func huE6Check(tight bool) (string, bool, error) {
	var labels []string
	var got, want []float64
	var dec []int
	for i, a := range huAlphas {
		for j, T := range huE6T {
			p, t, err := dptsucbMu(T, a)
			if err != nil {
				return "", false, err
			}
			labels = append(labels, fmt.Sprintf("α=%g,T=%s", a, fmtInt(T)))
			if tight {
				got, want = append(got, t), append(want, huE6Tight[i][j])
			} else {
				got, want = append(got, p), append(want, huE6Paper[i][j])
			}
			dec = append(dec, huE6Dec[i][j])
		}
	}
	m, ok := tableCheck(labels, got, want, dec)
	return m, ok, nil
}

// ---------------------------------------------------------------------------
// E7: DP-TS-UCB(α) against M-TS with b = 0, c = 5(ln T)^α.

var huE7MTSEta = []float64{447.2, 322.1, 232.0, 167.1, 120.3}

func huE7C(T int, alpha float64) float64 { return 5 * math.Pow(math.Log(float64(T)), alpha) }

func huSameBound() *Reproduction {
	r := &Reproduction{
		Name: "hu2025-same-bound", Paper: huPaper, Experiments: "E7 (with A9)", Section: "§5.2, Fig 4",
		Description: "DP-TS-UCB(α) against M-TS-Gaussian (b = 0, c = 5(ln T)^α), which share a regret bound: regret and η (Fig 4)",
		Full:        Size{Horizons: []int{huT}, Runs: 20},
		Quick:       Size{Horizons: []int{huT}, Runs: 2},
		Seed:        huSeed, Env: huBernoulli, Metric: Pseudo,
		Setup: []string{
			"For each α ∈ {0, 0.25, 0.5, 0.75, 1}: DP-TS-UCB(α) and M-TS-Gaussian with b = 0, c = 5(ln T)^α, T = 1e6, 20 runs, [HU]'s arms.",
			"η: paper values (Thm 4.4 for DP-TS-UCB, [OU] Lemma 4 for M-TS) and the project's certified values, from mab's reports.",
		},
		Notes: []string{
			"docs/reproduction-decisions.md A9: [HU]'s claim that DP-TS-UCB \"achieves better privacy\" fails at α = 0 (651.5 vs 447.2 by the papers' formulas; 460.7 vs 316.2 tight); it holds for α ≥ 0.25. The check E7.privacy-alpha0 is expected to fail.",
			"docs/reproduction-decisions.md A9: DP-TS-UCB at α = 0 beats vanilla TS-Gaussian's sqrt(T/2) only for T > 6.57e5 (paper bound) or T > 1.06e5 (tight); the Õ(T^{1/4}) gain is asymptotic.",
		},
	}
	r.Stages = []Stage{func(c *Context) ([]Sweep, error) {
		T := c.Horizon()
		sw := Sweep{Key: "same-bound", Spec: sim.Spec{Env: huBernoulli, Horizon: T, Runs: c.Runs(), Seed: c.R.Seed}}
		for _, a := range huAlphas {
			cc := huE7C(T, a)
			sw.Spec.Policies = append(sw.Spec.Policies, dptsucb(a), spec("mts-gaussian", "b", 0, "c", cc))
			sw.Labels = append(sw.Labels, "DP-TS-UCB "+alphaLabel(a), fmt.Sprintf("M-TS b=0, c=%s (%s)", num(cc, 4), alphaLabel(a)))
		}
		return []Sweep{sw}, nil
	}}
	pair := func(c *Context) (dp, mts []PolicyResult, err error) {
		ps, err := c.Policies("same-bound")
		if err != nil {
			return nil, nil, err
		}
		for i := 0; i+1 < len(ps); i += 2 {
			dp, mts = append(dp, ps[i]), append(mts, ps[i+1])
		}
		return dp, mts, nil
	}
	r.Figures = []FigureDef{{File: "fig4_same_bound", Caption: "[HU] Fig 4: (a) final pseudo-regret of DP-TS-UCB(α) and M-TS-Gaussian (b = 0, c = 5(ln T)^α) against α (mean, 95% band); (b) their GDP parameters η against α, paper formulas (solid) and certified (dashed).",
		Build: func(c *Context) (report.Figure, error) {
			dp, mts, err := pair(c)
			if err != nil {
				return report.Figure{}, err
			}
			a := report.Panel{Title: fmt.Sprintf("(a) regret at T = %s", fmtInt(c.Horizon())), XLabel: "α", YLabel: "pseudo-regret at T", LogY: true}
			a.Series = []report.Series{finalSeries("DP-TS-UCB", huAlphas, dp), finalSeries("M-TS-Gaussian", huAlphas, mts)}
			b := report.Panel{Title: fmt.Sprintf("(b) GDP parameter η, T = %s", fmtInt(c.Horizon())), XLabel: "α", YLabel: "η", LogY: true, LegendRight: true}
			names := []string{"DP-TS-UCB", "M-TS-Gaussian"}
			for i, ps := range [][]PolicyResult{dp, mts} {
				sp := report.Series{Label: names[i] + " (paper)", X: huAlphas, Color: report.Palette[i]}
				sc := report.Series{Label: names[i] + " (certified)", X: huAlphas, Dashed: true, Color: report.Palette[i]}
				for _, p := range ps {
					sp.Y = append(sp.Y, p.Entry.Report.Paper.Value)
					sc.Y = append(sc.Y, p.Entry.Report.Certified.Value)
				}
				b.Series = append(b.Series, sp, sc)
			}
			return wide(2, a, b), nil
		}}}
	// huE7Eta returns the η's (paper, certified) at T = 1e6 of both policies.
	huE7Eta := func(a float64) (dpP, dpC, mP, mC float64, err error) {
		if dpP, dpC, err = dptsucbMu(huT, a); err != nil {
			return
		}
		p := bandit.Params{"b": 0, "c": huE7C(huT, a)}
		if mP, err = paperMu("mts-gaussian", 5, huT, p); err != nil {
			return
		}
		mC, err = certifiedMu("mts-gaussian", 5, huT, p)
		return
	}
	r.Targets = []Target{
		{ID: "E7.regret", Name: "DP-TS-UCB lower regret", Source: "docs/reproductions.md E7; [HU] Fig 4(a)",
			Target:    "DP-TS-UCB has lower mean final regret than M-TS (b = 0, c = 5(ln T)^α) at every α",
			Tolerance: "comparison of means (paired s.e. shown)",
			Measure: func(c *Context) (string, bool, error) {
				dp, mts, err := pair(c)
				if err != nil {
					return "", false, err
				}
				ok := true
				var parts []string
				for i, a := range huAlphas {
					d, se := Diff(mts[i], dp[i])
					ok = ok && dp[i].Mean() < mts[i].Mean()
					parts = append(parts, fmt.Sprintf("α=%g: %s vs %s (M-TS − DP-TS-UCB %s)", a, num(dp[i].Mean(), 4), num(mts[i].Mean(), 4), pm(d, se)))
				}
				return strings.Join(parts, "; "), ok, nil
			}},
		{ID: "E7.mts-eta", Name: "M-TS η list", Source: "docs/reproductions.md E7",
			Target:    "M-TS (b = 0, c = 5(ln T)^α) at T = 1e6, paper formula sqrt(T/(c(b+1))): 447.2, 322.1, 232.0, 167.1, 120.3",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				var labels []string
				var got []float64
				dec := []int{1, 1, 1, 1, 1}
				for _, a := range huAlphas {
					_, _, mp, _, err := huE7Eta(a)
					if err != nil {
						return "", false, err
					}
					labels, got = append(labels, alphaLabel(a)), append(got, mp)
				}
				m, ok := tableCheck(labels, got, huE7MTSEta, dec)
				return m, ok, nil
			}},
		{ID: "E7.privacy-alpha0", Name: "better privacy at α = 0", Source: "docs/reproduction-decisions.md A9; [HU] §5.2, Fig 4(b)",
			Target:         "the paper's claim at α = 0: DP-TS-UCB has a smaller η than M-TS (b = 0, c = 5), by the paper formulas and by the certified values",
			Tolerance:      "η_DP-TS-UCB < η_M-TS on both bases",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A9: at α = 0 and T = 1e6 DP-TS-UCB is 651.5-GDP (460.7 tight) against M-TS (b = 0, c = 5) at 447.2 (316.2), so \"better privacy\" fails at α = 0; it holds for α ≥ 0.25.",
			Measure: func(c *Context) (string, bool, error) {
				dpP, dpC, mP, mC, err := huE7Eta(0)
				if err != nil {
					return "", false, err
				}
				return fmt.Sprintf("paper %.1f vs %.1f; certified %.1f vs %.1f (docs/findings.md A9: 651.5 vs 447.2; 460.7 vs 316.2)", dpP, mP, dpC, mC),
					dpP < mP && dpC < mC, nil
			}},
		{ID: "E7.privacy-alpha-pos", Name: "better privacy at α ≥ 0.25", Source: "docs/reproduction-decisions.md A9; [HU] §5.2, Fig 4(b)",
			Target:    "at α ∈ {0.25, 0.5, 0.75, 1}, DP-TS-UCB has a smaller η than M-TS, by the paper formulas and by the certified values (docs/findings.md A9: 167.9 vs 322.1 at α = 0.25)",
			Tolerance: "η_DP-TS-UCB < η_M-TS on both bases",
			Measure: func(c *Context) (string, bool, error) {
				ok := true
				var parts []string
				for _, a := range huAlphas[1:] {
					dpP, dpC, mP, mC, err := huE7Eta(a)
					if err != nil {
						return "", false, err
					}
					ok = ok && dpP < mP && dpC < mC
					parts = append(parts, fmt.Sprintf("α=%g: paper %.1f vs %.1f, certified %.1f vs %.1f", a, dpP, mP, dpC, mC))
				}
				return strings.Join(parts, "; "), ok, nil
			}},
		{ID: "E7.A9-crossover", Name: "α = 0 vs vanilla TS", Source: "docs/reproduction-decisions.md A9",
			Target:    "DP-TS-UCB(α = 0) has a smaller η than TS-Gaussian's sqrt(T/2) only for T > 6.57e5 (paper bound) and T > 1.06e5 (tight)",
			Tolerance: "printed digits (3 significant)",
			Measure: func(c *Context) (string, bool, error) {
				var got []float64
				for _, tight := range []bool{false, true} {
					T, err := huCrossover(tight)
					if err != nil {
						return "", false, err
					}
					got = append(got, float64(T))
				}
				ok := math.Abs(got[0]-6.57e5) <= 0.005e5 && math.Abs(got[1]-1.06e5) <= 0.005e5
				return fmt.Sprintf("first T with η < sqrt(T/2): paper %s, tight %s", num(got[0], 6), num(got[1], 6)), ok, nil
			}},
	}
	return r
}

// huCrossover returns the smallest T ≥ 100 at which DP-TS-UCB(α = 0)'s η
// (paper, or tight) is below sqrt(T/2), by bisection (the difference changes
// sign once on [100, 1e8]).
func huCrossover(tight bool) (int, error) {
	below := func(T int) (bool, error) {
		p, t, err := dptsucbMu(T, 0)
		if err != nil {
			return false, err
		}
		v := p
		if tight {
			v = t
		}
		return v < math.Sqrt(float64(T)/2), nil
	}
	lo, hi := 100, 100000000
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		b, err := below(mid)
		if err != nil {
			return 0, err
		}
		if b {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// ---------------------------------------------------------------------------
// E8: equal privacy, M-TS with c from [HU] App E.1.

// huE1CTable is docs/reproductions.md §3.0's list of App E.1 c values at T = 1e6.
var huE1CTable = map[float64][]float64{
	0: {2.3560, 1.1780},
	1: {120985, 60493, 241.49, 120.86, 60.462, 24.192, 1.2098},
}

func huE8Sweep(c *Context, a float64) Sweep {
	T := c.Horizon()
	sw := Sweep{Key: alphaKey(a), Spec: sim.Spec{Env: huBernoulli, Horizon: T, Runs: c.Runs(), Seed: c.R.Seed}}
	for _, b := range huE1B {
		if 5*b >= T {
			continue
		}
		cc := mab.HuE1C(T, a, b, mab.DefaultC0)
		sw.Spec.Policies = append(sw.Spec.Policies, spec("mts-gaussian", "b", b, "c", cc))
		sw.Labels = append(sw.Labels, "M-TS "+mtsLabel(b, cc))
	}
	sw.Spec.Policies = append(sw.Spec.Policies, dptsucb(a))
	sw.Labels = append(sw.Labels, "DP-TS-UCB "+alphaLabel(a))
	return sw
}

func huSamePrivacy() *Reproduction {
	alphas := []float64{0, 1}
	r := &Reproduction{
		Name: "hu2025-same-privacy", Paper: huPaper, Experiments: "E8 (with A8)", Section: "§5.3, Fig 5; App E.1, Fig 6",
		Description: "DP-TS-UCB against M-TS-Gaussian at the same GDP (c from App E.1, b over a grid), α ∈ {0, 1} (Figs 5, 6)",
		Full:        Size{Horizons: []int{huT}, Runs: 20},
		Quick:       Size{Horizons: []int{huT}, Runs: 2},
		Seed:        huSeed, Env: huBernoulli, Metric: Pseudo,
		Setup: []string{
			"For α ∈ {0, 1}: DP-TS-UCB(α) and M-TS-Gaussian with b ∈ {0, 1, 500, 1000, 2000, 5000, 100000} (5b < T) and c = T^((1+α)/2)(ln T)^(−1.5(1−α))/(2c0(b+1)) ([HU] App E.1, mab.HuE1C), which equates the two papers' GDP formulas.",
			"T = 1e6, 20 runs, [HU]'s arms.",
		},
		Notes: []string{
			"docs/reproduction-decisions.md A8: [HU] §5.3's main text prints the square root of App E.1's c; only App E.1's formula equates the GDPs and reproduces c = 1.1780 and 60.462 (check E8.A8-sqrt is expected to fail).",
			"docs/reproduction-decisions.md A8: at α = 0 every b ≥ 2 gives c < 1 (b = 500: c = 0.0047), outside M-TS's c ≥ 1 regret regime; the privacy formula still holds, and the paper's grid includes them, so they are run.",
			"b = 100000 spends half of T = 1e6 on pre-pulls (docs/reproduction-decisions.md A4).",
			"docs/reproduction-decisions.md A24: at α = 0 the paper's \"M-TS slightly ahead, small gap\" does not reproduce (DP-TS-UCB has about 3× M-TS's regret, confirmed by an independent implementation); E8.alpha0-gap is expected to fail and shows the measured gap.",
			"The equal-privacy comparison is on the papers' formulas, as in [HU]; the certified values of the two policies are smaller by different factors (see sweeps/*/summary.json), so on the certified basis the privacy is not exactly equal.",
		},
	}
	r.Stages = []Stage{func(c *Context) ([]Sweep, error) {
		var out []Sweep
		for _, a := range alphas {
			out = append(out, huE8Sweep(c, a))
		}
		return out, nil
	}}
	split := func(c *Context, a float64) (mts []PolicyResult, dp PolicyResult, err error) {
		ps, err := c.Policies(alphaKey(a))
		if err != nil {
			return nil, dp, err
		}
		return mtsOnly(ps), ps[len(ps)-1], nil
	}
	paperB := func(mts []PolicyResult, a float64) (PolicyResult, error) {
		i := slices.IndexFunc(mts, func(p PolicyResult) bool { return bOf(p) == huPaperB[a] })
		if i < 0 {
			return PolicyResult{}, fmt.Errorf("α=%g: no M-TS with b = %d", a, huPaperB[a])
		}
		return mts[i], nil
	}
	r.Figures = []FigureDef{
		{File: "fig6_mts_grid", Caption: "[HU] Fig 6: pseudo-regret of M-TS-Gaussian for each b of App E.1's grid at the GDP of DP-TS-UCB(α), α = 0 (left) and 1 (right), log scale; mean and 95% band.",
			Build: func(c *Context) (report.Figure, error) {
				var panels []report.Panel
				for _, a := range alphas {
					mts, _, err := split(c, a)
					if err != nil {
						return report.Figure{}, err
					}
					p := regretPanel(fmt.Sprintf("M-TS at the GDP of DP-TS-UCB(α=%g)", a), mts, false)
					p.LogY = true // b = 100000's pre-pulls dwarf the rest
					panels = append(panels, p)
				}
				return wide(2, panels...), nil
			}},
		{File: "fig5_same_privacy", Caption: "[HU] Fig 5: DP-TS-UCB(α) against M-TS-Gaussian with the paper's best b (1 at α = 0, 2000 at α = 1) at the same GDP; mean pseudo-regret and 95% band.",
			Build: func(c *Context) (report.Figure, error) {
				var panels []report.Panel
				for _, a := range alphas {
					mts, dp, err := split(c, a)
					if err != nil {
						return report.Figure{}, err
					}
					pb, err := paperB(mts, a)
					if err != nil {
						return report.Figure{}, err
					}
					panels = append(panels, regretPanel(fmt.Sprintf("α = %g (η = %s)", a, num(dp.Entry.Report.Paper.Value, 4)), []PolicyResult{dp, pb}, false))
				}
				return wide(2, panels...), nil
			}},
	}
	argmin := func(a float64) func(c *Context) (string, bool, error) {
		return func(c *Context) (string, bool, error) {
			mts, _, err := split(c, a)
			if err != nil {
				return "", false, err
			}
			bst := best(mts)
			pb, err := paperB(mts, a)
			if err != nil {
				return "", false, err
			}
			gap := pb.Mean() - bst.Mean()
			se := math.Hypot(pb.SE(), bst.SE())
			var ms []string
			for _, p := range mts {
				ms = append(ms, fmt.Sprintf("b=%d: %s", bOf(p), num(p.Mean(), 4)))
			}
			return fmt.Sprintf("argmin b = %d (%s); b = %d: %s; gap %s vs 1 s.e. %s [%s]", bOf(bst), pm(bst.Mean(), bst.SE()),
				bOf(pb), pm(pb.Mean(), pb.SE()), num(gap, 3), num(se, 3), strings.Join(ms, ", ")), gap <= se, nil
		}
	}
	r.Targets = []Target{
		{ID: "E8.c-values", Name: "App E.1 c values", Source: "docs/reproductions.md §3.0 (M-TS c for equal privacy), A8",
			Target:    "c at T = 1e6: α = 0, b = {0, 1}: {2.3560, 1.1780}; α = 1, b = {0, 1, 500, 1000, 2000, 5000, 1e5}: {120985, 60493, 241.49, 120.86, 60.462, 24.192, 1.2098}",
			Tolerance: "printed digits or relative 1e-3",
			Measure: func(c *Context) (string, bool, error) {
				var labels []string
				var got, want []float64
				var dec []int
				for _, a := range alphas {
					for i, w := range huE1CTable[a] {
						b := huE1B[i]
						labels = append(labels, fmt.Sprintf("α=%g,b=%d", a, b))
						got, want = append(got, mab.HuE1C(huT, a, b, mab.DefaultC0)), append(want, w)
						dec = append(dec, decimalsOf(w))
					}
				}
				m, ok := tableCheck(labels, got, want, dec)
				return m, ok, nil
			}},
		{ID: "E8.A8-sqrt", Name: "§5.3 main-text c formula", Source: "docs/reproduction-decisions.md A8; [HU] §5.3",
			Target:         "the paper's main-text formula c = sqrt(T^((1+α)/2)(ln T)^(−1.5(1−α))/(2c0(b+1))) gives the reported c = 1.18 (α = 0, b = 1) and 60.46 (α = 1, b = 2000)",
			Tolerance:      "printed digits",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A8: [HU] §5.3's main text prints the square root of App E.1's c; only App E.1's formula (used by the runs) gives c = 1.1780 and 60.462.",
			Measure: func(c *Context) (string, bool, error) {
				c0 := math.Sqrt(mab.HuE1C(huT, 0, 1, mab.DefaultC0))
				c1 := math.Sqrt(mab.HuE1C(huT, 1, 2000, mab.DefaultC0))
				return fmt.Sprintf("c = %.4f and %.4f (docs/findings.md A8: 1.085 and 7.776)", c0, c1),
					digitsClose(c0, 1.18, 2) && digitsClose(c1, 60.46, 2), nil
			}},
		{ID: "E8.equal-privacy", Name: "equal GDP", Source: "docs/reproductions.md E8; [HU] App E.1",
			Target:    "every M-TS configuration's paper GDP value equals DP-TS-UCB(α)'s (Thm 4.4) at the run's horizon",
			Tolerance: "relative 1e-9",
			Measure: func(c *Context) (string, bool, error) {
				ok := true
				var parts []string
				for _, a := range alphas {
					mts, dp, err := split(c, a)
					if err != nil {
						return "", false, err
					}
					target := dp.Entry.Report.Paper.Value
					worst := 0.0
					for _, p := range mts {
						worst = math.Max(worst, math.Abs(p.Entry.Report.Paper.Value-target)/target)
					}
					ok = ok && worst <= 1e-9
					parts = append(parts, fmt.Sprintf("α=%g: η = %s, %d M-TS configurations, worst relative deviation %.1e", a, num(target, 6), len(mts), worst))
				}
				return strings.Join(parts, "; "), ok, nil
			}},
		{ID: "E8.argmin-alpha0", Name: "best b at α = 0", Source: "docs/reproductions.md E8; [HU] App E.1",
			Target:    "the paper's best b = 1 (c = 1.18) at α = 0: its mean final regret is within 1 s.e. of the best mean over the grid",
			Tolerance: "mean(b=1) − min mean ≤ sqrt(s.e.(b=1)² + s.e.(best)²)",
			Measure:   argmin(0)},
		{ID: "E8.argmin-alpha1", Name: "best b at α = 1", Source: "docs/reproductions.md E8; [HU] App E.1",
			Target:    "the paper's best b = 2000 (c = 60.46) at α = 1: its mean final regret is within 1 s.e. of the best mean over the grid",
			Tolerance: "mean(b=2000) − min mean ≤ sqrt(s.e.(b=2000)² + s.e.(best)²)",
			Measure:   argmin(1)},
		{ID: "E8.alpha0-gap", Name: "α = 0: M-TS slightly ahead", Source: "docs/reproduction-decisions.md §3 E8, A24; [HU] §5.3, Fig 5(a)",
			Target:         "at α = 0, M-TS (b = 1) has mean final regret ≤ DP-TS-UCB's, with a small gap: (DP-TS-UCB − M-TS)/DP-TS-UCB ≤ 0.25",
			Tolerance:      "as stated",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A24: DP-TS-UCB(α = 0), implemented line by line (last-epoch data only, one max over ⌊φ⌋ = 212k fresh samples reused), has about 3× M-TS's regret at T = 1e6, and an independent Python implementation agrees; [HU]'s \"M-TS slightly ahead, small gap\" at α = 0 does not reproduce. The measured gap is in the measured column.",
			Measure: func(c *Context) (string, bool, error) {
				mts, dp, err := split(c, 0)
				if err != nil {
					return "", false, err
				}
				pb, err := paperB(mts, 0)
				if err != nil {
					return "", false, err
				}
				rel := (dp.Mean() - pb.Mean()) / dp.Mean()
				d, se := Diff(dp, pb)
				return fmt.Sprintf("DP-TS-UCB %s, %s %s; difference %s, relative %.3f", pm(dp.Mean(), dp.SE()), pb.Label,
					pm(pb.Mean(), pb.SE()), pm(d, se), rel), rel >= 0 && rel <= 0.25, nil
			}},
		{ID: "E8.alpha1-dptsucb", Name: "α = 1: DP-TS-UCB clearly ahead", Source: "docs/reproductions.md E8; [HU] §5.3, Fig 5(b)",
			Target:    "at α = 1, DP-TS-UCB's mean final regret is below M-TS (b = 2000)'s by more than 2 s.e. of the paired difference and by at least 20%",
			Tolerance: "2 s.e. (paired) and ratio ≤ 0.8",
			Measure: func(c *Context) (string, bool, error) {
				mts, dp, err := split(c, 1)
				if err != nil {
					return "", false, err
				}
				pb, err := paperB(mts, 1)
				if err != nil {
					return "", false, err
				}
				d, se := Diff(pb, dp)
				ratio := dp.Mean() / pb.Mean()
				return fmt.Sprintf("DP-TS-UCB %s, %s %s; difference %s, ratio %.3f", pm(dp.Mean(), dp.SE()), pb.Label,
					pm(pb.Mean(), pb.SE()), pm(d, se), ratio), d > 2*se && ratio <= 0.8, nil
			}},
	}
	return r
}

// decimalsOf returns the number of decimals of a printed value (as
// formatted by strconv's shortest form).
func decimalsOf(x float64) int {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// E9: against pure-DP algorithms at ε = 0.5.

const huPureEps = 0.5

func huPureDP() *Reproduction {
	pure := []string{"dp-se", "anytime-lazy-ucb", "lazy-dp-ts"}
	pureName := map[string]string{"dp-se": "DP-SE", "anytime-lazy-ucb": "Anytime-Lazy-UCB", "lazy-dp-ts": "Lazy-DP-TS"}
	r := &Reproduction{
		Name: "hu2025-pure-dp", Paper: huPaper, Experiments: "E9", Section: "App E.2, Fig 7",
		Description: "DP-TS-UCB and M-TS-Gaussian (α ∈ {0, 1}) against DP-SE, Anytime-Lazy-UCB and Lazy-DP-TS at pure ε = 0.5 (Fig 7)",
		Full:        Size{Horizons: []int{huT}, Runs: 20},
		Quick:       Size{Horizons: []int{huT}, Runs: 2},
		Seed:        huSeed, Env: huBernoulli, Metric: Pseudo,
		Setup: []string{
			"DP-TS-UCB(α) and M-TS-Gaussian with the paper's best (b, c) at the same GDP (α = 0: b = 1, c = 1.178; α = 1: b = 2000, c = 60.46; [HU] App E.1) for α ∈ {0, 1}.",
			"DP-SE, Anytime-Lazy-UCB and Lazy-DP-TS at pure ε = 0.5, with their default constants.",
			"T = 1e6 (assumed; docs/reproductions.md E9), 20 runs, [HU]'s arms.",
		},
		Notes: []string{
			"docs/reproductions.md lists no target for E9 (the figure is lost); the checks are the three sentences of [HU] App E.2's text.",
			"The comparison is not at equal privacy: DP-TS-UCB at α = 1 is 2.875-GDP by Thm 4.4, i.e. ε = 17.2 at δ = 1e-6, and at α = 0 651-GDP, while the pure-DP algorithms are 0.5-DP with δ = 0.",
			"Lazy-DP-TS and Anytime-Lazy-UCB run with mab's defaults: Lazy-DP-TS in its published form (offset 3·log₂ t/(ε·O), docs/reproduction-decisions.md A22) and Anytime-Lazy-UCB with its widths read with log₂ (docs/reproduction-decisions.md A26, an assumption; E4 shows both readings). Their regret depends on these forms.",
		},
	}
	r.Stages = []Stage{func(c *Context) ([]Sweep, error) {
		T := c.Horizon()
		sw := Sweep{Key: "pure-dp", Spec: sim.Spec{Env: huBernoulli, Horizon: T, Runs: c.Runs(), Seed: c.R.Seed}}
		for _, a := range []float64{0, 1} {
			b := huPaperB[a]
			cc := mab.HuE1C(T, a, b, mab.DefaultC0)
			sw.Spec.Policies = append(sw.Spec.Policies, dptsucb(a), spec("mts-gaussian", "b", b, "c", cc))
			sw.Labels = append(sw.Labels, "DP-TS-UCB "+alphaLabel(a), fmt.Sprintf("M-TS %s (%s)", mtsLabel(b, cc), alphaLabel(a)))
		}
		for _, n := range pure {
			sw.Spec.Policies = append(sw.Spec.Policies, spec(n, "epsilon", huPureEps))
			sw.Labels = append(sw.Labels, fmt.Sprintf("%s (ε=%g)", pureName[n], huPureEps))
		}
		return []Sweep{sw}, nil
	}}
	parts := func(c *Context) (dp, mts map[float64]PolicyResult, pp []PolicyResult, err error) {
		ps, err := c.Policies("pure-dp")
		if err != nil {
			return nil, nil, nil, err
		}
		dp = map[float64]PolicyResult{0: ps[0], 1: ps[2]}
		mts = map[float64]PolicyResult{0: ps[1], 1: ps[3]}
		return dp, mts, ps[4:], nil
	}
	r.Figures = []FigureDef{{File: "fig7_pure_dp", Caption: "[HU] Fig 7: DP-TS-UCB and M-TS-Gaussian at the same GDP (α = 0 left, α = 1 right) against three ε = 0.5 pure-DP algorithms; mean pseudo-regret and 95% band.",
		Build: func(c *Context) (report.Figure, error) {
			dp, mts, pp, err := parts(c)
			if err != nil {
				return report.Figure{}, err
			}
			var panels []report.Panel
			for _, a := range []float64{0, 1} {
				panels = append(panels, regretPanel(fmt.Sprintf("α = %g", a), append([]PolicyResult{dp[a], mts[a]}, pp...), false))
			}
			return wide(2, panels...), nil
		}}}
	listPure := func(pp []PolicyResult) string {
		var s []string
		for _, p := range pp {
			s = append(s, fmt.Sprintf("%s %s", p.Label, num(p.Mean(), 4)))
		}
		return strings.Join(s, ", ")
	}
	maxMin := func(pp []PolicyResult) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, p := range pp {
			lo, hi = math.Min(lo, p.Mean()), math.Max(hi, p.Mean())
		}
		return
	}
	r.Targets = []Target{
		{ID: "E9.alpha0", Name: "α = 0: both beat pure DP", Source: "[HU] App E.2 text (docs/reproductions.md E9 lists no target)",
			Target:    "at α = 0 both DP-TS-UCB and M-TS have lower mean final regret than every ε = 0.5 pure-DP algorithm",
			Tolerance: "comparison of means",
			Measure: func(c *Context) (string, bool, error) {
				dp, mts, pp, err := parts(c)
				if err != nil {
					return "", false, err
				}
				lo, _ := maxMin(pp)
				return fmt.Sprintf("DP-TS-UCB %s, M-TS %s; pure DP: %s", num(dp[0].Mean(), 4), num(mts[0].Mean(), 4), listPure(pp)),
					dp[0].Mean() < lo && mts[0].Mean() < lo, nil
			}},
		{ID: "E9.alpha1-mts", Name: "α = 1: M-TS behind pure DP", Source: "[HU] App E.2 text",
			Target:    "at α = 1 M-TS (b = 2000, c = 60.46) has higher mean final regret than every ε = 0.5 pure-DP algorithm",
			Tolerance: "comparison of means",
			Measure: func(c *Context) (string, bool, error) {
				_, mts, pp, err := parts(c)
				if err != nil {
					return "", false, err
				}
				_, hi := maxMin(pp)
				return fmt.Sprintf("M-TS %s; pure DP: %s", num(mts[1].Mean(), 4), listPure(pp)), mts[1].Mean() > hi, nil
			}},
		{ID: "E9.alpha1-dptsucb", Name: "α = 1: DP-TS-UCB beats Lazy-UCB", Source: "[HU] App E.2 text",
			Target:    "at α = 1 DP-TS-UCB has lower mean final regret than Anytime-Lazy-UCB (ε = 0.5)",
			Tolerance: "comparison of means (paired s.e. shown)",
			Measure: func(c *Context) (string, bool, error) {
				dp, _, pp, err := parts(c)
				if err != nil {
					return "", false, err
				}
				lazy := pp[1]
				d, se := Diff(lazy, dp[1])
				return fmt.Sprintf("DP-TS-UCB %s vs %s %s (difference %s)", num(dp[1].Mean(), 4), lazy.Label, num(lazy.Mean(), 4), pm(d, se)),
					dp[1].Mean() < lazy.Mean(), nil
			}},
	}
	return r
}
