package repro

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

// [ADA] §6.3 (E14, DP-SVD): the private feature pipeline end to end. The
// item features come from linear.DPSVD on the training users at
// (ε_f, δ_f = 1e-5) with Δ₂ = √2/n_train (docs/reproduction-decisions.md
// A16); the bandits then run at ε_r = 1 on the test users. Compared with
// the same pipeline without noise (public features): the degradation of
// AdaPrivate-TS and the TS − UCB gap, as the paper's §6.3 reports them.
//
// Data: Jester dataset 1, file 1 of 3, not MovieLens. linear.DPSVD
// eigendecomposes the dense n_items × n_items covariance (O(m³)); at
// MovieLens-100k's 1,682 items that alone takes about two minutes on this
// 2-core machine, and with its 754 training users the noise
// (σ_f ≈ 9e-3 per entry at ε_f = 1, operator norm ≈ 2σ_f√m ≈ 0.75) is
// larger than every eigenvalue of C but the first. Jester's 100 jokes and
// ~20,000 training users make the mechanism meaningful at these ε_f.

const (
	adaDPSVDBase = "jester:d=50,k=5,train=0.8,seed=1,threshold=0"
	adaDPSVDEpsR = 1.0
)

// adaDPSVDFeatEps are the ε_f: the paper's tested {1, 5, 10} and the 2 it
// quotes (A18).
var adaDPSVDFeatEps = []float64{1, 2, 5, 10}

func adaDPSVDEnv(epsF float64) string {
	if epsF == 0 {
		return adaDPSVDBase + ",features=cov"
	}
	return fmt.Sprintf("%s,features=dp-svd,feps=%s,fdelta=1e-05", adaDPSVDBase, fmtG(epsF))
}

func adaDPSVDKey(epsF float64) string {
	if epsF == 0 {
		return "public"
	}
	return "feps" + fmtG(epsF)
}

func adaDPSVDStage(c *Context) ([]Sweep, error) {
	for _, ef := range append([]float64{0}, adaDPSVDFeatEps...) {
		envSpec := adaDPSVDEnv(ef)
		e, err := loadRatingsEnv(envSpec)
		if err != nil {
			return nil, err
		}
		if ef == 0 {
			adaRealEnvs.Store(c, e)
			if err := writeSplit(c, e); err != nil {
				return nil, err
			}
		}
		sw := Sweep{Key: adaDPSVDKey(ef), Spec: sim.Spec{Env: envSpec, Horizon: c.Horizon(), Runs: c.Runs(), Seed: adaRealSeed},
			Labels: []string{"LinUCB", "AdaPrivate-TS", "AdaPrivate-UCB"}}
		sw.Spec.Policies = []bandit.Spec{spec("linucb"), adaTS(adaDPSVDEpsR), adaUCB(adaDPSVDEpsR)}
		if err := c.runSweepReg(context.Background(), sw, sim.Default); err != nil {
			return nil, err
		}
	}
	return nil, c.writeOut(ResultsFile, adaDPSVDTable(c))
}

// adaDPSVDRow is one feature set's measurements.
type adaDPSVDRow struct {
	label          string
	ts, ucb        stat // % of this feature set's LinUCB
	tsCTR, linCTR  stat
	gap            stat // TS − UCB, pp of LinUCB, paired
	muF            float64
	epsF, epsFCert float64
}

func adaDPSVDRows(c *Context) ([]adaDPSVDRow, error) {
	var rows []adaDPSVDRow
	for _, ef := range append([]float64{0}, adaDPSVDFeatEps...) {
		a, err := adaLoad(c, adaDPSVDKey(ef))
		if err != nil {
			return nil, err
		}
		ts, err := a.pct("AdaPrivate-TS", "LinUCB")
		if err != nil {
			return nil, err
		}
		ucb, err := a.pct("AdaPrivate-UCB", "LinUCB")
		if err != nil {
			return nil, err
		}
		r := adaDPSVDRow{label: "public features (no noise)", ts: statOf(ts), ucb: statOf(ucb), gap: statOf(diff(ts, ucb)), epsF: ef}
		if r.tsCTR, err = a.ctr("AdaPrivate-TS"); err != nil {
			return nil, err
		}
		if r.linCTR, err = a.ctr("LinUCB"); err != nil {
			return nil, err
		}
		if ef > 0 {
			r.label = "DP-SVD ε_f = " + fmtG(ef)
			e, err := loadRatingsEnv(adaDPSVDEnv(ef))
			if err != nil {
				return nil, err
			}
			rep := e.Info().Privacy
			if rep == nil || rep.Certified.Notion != privacy.NotionGDP {
				return nil, fmt.Errorf("DP-SVD features at ε_f = %v carry no GDP report", ef)
			}
			r.muF = rep.Certified.Value
			if r.epsFCert, err = privacy.GDPEpsilon(r.muF, adaDelta); err != nil {
				return nil, err
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// adaDPSVDComposition returns the bandit's certified μ_r and, per ε_f, the
// composed guarantee (GDP: μ = sqrt(μ_f² + μ_r²), Dong, Roth & Su 2022,
// Cor. 3.3; and the paper basis ρ_f + ρ_r, Bun & Steinke 2016, Lemma 2.3).
func adaDPSVDComposition(rows []adaDPSVDRow) (string, bool, error) {
	d, err := bandit.Lookup(bandit.ContextualKind, "adaprivate-ts")
	if err != nil {
		return "", false, err
	}
	s := bandit.Setting{K: 5, Dim: 50, Horizon: 30000}
	p, err := d.CompleteFor(s, bandit.Params{"epsilon": adaDPSVDEpsR, "delta": adaDelta})
	if err != nil {
		return "", false, err
	}
	rep, err := d.Report(s, p)
	if err != nil {
		return "", false, err
	}
	if rep.Certified.Notion != privacy.NotionGDP {
		return "", false, fmt.Errorf("adaprivate-ts certifies %s, not GDP", rep.Certified.Notion)
	}
	muR := rep.Certified.Value
	epsR, err := privacy.GDPEpsilon(muR, adaDelta)
	if err != nil {
		return "", false, err
	}
	rhoR, err := privacy.ZCDPRhoBS(adaDPSVDEpsR, adaDelta)
	if err != nil {
		return "", false, err
	}
	parts := []string{fmt.Sprintf("bandit (event level, test users): μ_r = %.4f (ε = %.3f at δ = 1e-5; paper basis ρ_r = %.5f)", muR, epsR, rhoR)}
	ok := true
	for _, r := range rows {
		if r.epsF == 0 {
			continue
		}
		mu, err := privacy.GDPCompose(r.muF, muR)
		if err != nil {
			return "", false, err
		}
		eps, err := privacy.GDPEpsilon(mu, adaDelta)
		if err != nil {
			return "", false, err
		}
		rhoF, err := privacy.ZCDPRhoBS(r.epsF, adaDelta)
		if err != nil {
			return "", false, err
		}
		rho, err := privacy.ZCDPCompose(rhoF, rhoR)
		if err != nil {
			return "", false, err
		}
		epsBS, err := privacy.ZCDPEpsilonBS(rho, adaDelta)
		if err != nil {
			return "", false, err
		}
		// Oracles: GDP composition is μ = sqrt(Σμ²); the composed ε lies
		// between the larger part's and the sum of the parts'.
		want := math.Sqrt(r.muF*r.muF + muR*muR)
		ok = ok && math.Abs(mu-want) <= 1e-9*want && eps >= max(r.epsFCert, epsR)-1e-9 && eps <= r.epsFCert+epsR+1e-9 &&
			epsBS <= r.epsF+adaDPSVDEpsR+1e-9 && epsBS >= max(r.epsF, adaDPSVDEpsR)-1e-9
		parts = append(parts, fmt.Sprintf("ε_f = %s: features μ_f = %.4f (ε = %.3f) ∘ bandit → μ = %.4f, ε = %.3f at δ = 1e-5 (certified); paper basis ρ_f + ρ_r = %.5f → ε = %.3f",
			fmtG(r.epsF), r.muF, r.epsFCert, mu, eps, rho, epsBS))
	}
	return strings.Join(parts, "; ") + ". With this split the training and test users are different people, so each person has only one of the two guarantees (the feature one, user level, or the bandit one, event level); the composed value is what a person in both sets would have (A16).", ok, nil
}

func adaDPSVDTable(c *Context) string {
	var b strings.Builder
	b.WriteString("# ada-dpsvd results\n\n")
	rows, err := adaDPSVDRows(c)
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "### DP-SVD features (E14, [ADA] §6.3) — %s\n\n", adaJestName)
	fmt.Fprintf(&b, "Bandits at ε_r = %s (δ = 1e-5); features from the training users at ε_f (δ_f = 1e-5, paper basis, Δ₂ = √2/n_train). %% of each feature set's own LinUCB (mean ± s.e. over %d runs); gap = AdaPrivate-TS − AdaPrivate-UCB in pp, paired. Paper (MovieLens): degradation ≤ 3.2%%; gap −2.5 (public) → +4.3 (ε_f = 5) → +11.1 (ε_f = 2).\n\n",
		fmtG(adaDPSVDEpsR), c.Runs())
	tb := report.Table{Header: []string{"features", "certified ε_f", "AdaPrivate-TS CTR", "AdaPrivate-TS % LinUCB", "AdaPrivate-UCB % LinUCB", "TS − UCB (pp)", "TS degradation vs public (%)"},
		Align: []report.Align{report.Left, report.Right, report.Right, report.Right, report.Right, report.Right, report.Right}}
	pub := rows[0].tsCTR.mean
	for _, r := range rows {
		ce := "—"
		if r.epsF > 0 {
			ce = fmt.Sprintf("%.3f", r.epsFCert)
		}
		tb.AddRow(r.label, ce, fmt.Sprintf("%.4f", r.tsCTR.mean), fmt.Sprintf("%.1f ± %.1f", r.ts.mean, r.ts.se), fmt.Sprintf("%.1f ± %.1f", r.ucb.mean, r.ucb.se),
			fmt.Sprintf("%+.2f ± %.2f", r.gap.mean, r.gap.se), fmt.Sprintf("%.2f", 100*(pub-r.tsCTR.mean)/pub))
	}
	_ = tb.Markdown(&b)
	if comp, _, err := adaDPSVDComposition(rows); err == nil {
		b.WriteString("\nPrivacy: " + comp + "\n")
	}
	return b.String()
}

func adaDPSVD() *Reproduction {
	r := &Reproduction{
		Name: "ada-dpsvd", Paper: adaPaper, Experiments: "E14", Section: "§6.3 (DP-SVD feature privatization; MovieLens in the paper, Jester here)",
		Description: "the DP-SVD private feature pipeline end to end on Jester: AdaPrivate-TS/UCB at ε_r = 1 with features from linear.DPSVD at ε_f ∈ {1, 2, 5, 10}, degradation, TS − UCB gap and composed privacy",
		Full:        Size{Horizons: []int{30000}, Runs: 6},
		Quick:       Size{Horizons: []int{1500}, Runs: 2},
		Seed:        adaRealSeed, Env: adaDPSVDBase + ",features=cov|dp-svd", Metric: Pseudo,
		Setup: []string{
			"Data: " + adaJestName + ", the ada-jester environment (users split 80/20 with seed 1, 5 candidates a user rated, reward 1 iff rating > 0), d = 50.",
			"Features: [ADA] §6.3's pipeline (linear.DPSVD): the training users' rows clipped to unit norm, C = R̃ᵀR̃/n_train, symmetric Gaussian noise with σ_f = Δ₂/sqrt(2ρ_BS(ε_f, 1e-5)) and Δ₂ = √2/n_train (A16), PSD projection, top-50 eigenvectors; item j's feature (sqrt(λ_k)·v_k[j])_k divided by the largest item norm. Public features: the same pipeline without noise (features=cov). ε_f ∈ {1, 2, 5, 10} (the paper tests {1, 5, 10} and quotes 2, A18); the DP-SVD noise is seeded by the split seed.",
			"Bandits: LinUCB (non-private reference of each feature set), AdaPrivate-TS and AdaPrivate-UCB at ε_r = 1, δ = 1e-5 (λ = 1, v = α = 1, B = 300), cold start.",
			"Privacy: the features' certified μ_f-GDP (linear.DPSVD's report) and the bandit's certified μ_r-GDP compose to sqrt(μ_f² + μ_r²) (privacy.GDPCompose), converted at δ = 1e-5 (privacy.GDPEpsilon); the paper basis adds ρ_f + ρ_r (privacy.ZCDPCompose) and converts with BS16.",
		},
		Stages:  []Stage{adaDPSVDStage},
		Figures: []FigureDef{{File: "dpsvd_jester", Caption: "AdaPrivate-TS and AdaPrivate-UCB at ε_r = 1 against the feature budget ε_f (right end: public features), " + adaJestName, Build: adaDPSVDFigure}},
		Notes: []string{
			"Data: Jester, not the paper's MovieLens: linear.DPSVD's dense O(m³) eigendecomposition of MovieLens-100k's 1,682-item covariance takes about two minutes here, and with 754 training users its noise exceeds all but the leading eigenvalue at every tested ε_f.",
			"TS − UCB gap: [ADA] §6.3 reports it growing from −2.5% (public) to +4.3% (ε_f = 5) and +11.1% (ε_f = 2); here it stays within about ±1 pp of zero at every ε_f (E14.dpsvd-gap-levels fails): on Jester the DP-SVD noise barely moves the features (degradation ≤ 1.3%), so there is little feature noise for Thompson sampling to absorb.",
			"The features' and the bandit's privacy protect different people in this split (training vs test users); [ADA] §6.3 argues the budgets then do not compose. A16: that holds only for disjoint people, not disjoint data over the same people; the composed guarantee is reported for a person who would be in both.",
		},
	}
	r.Targets = []Target{
		{ID: "E14.dpsvd-degradation", Name: "DP-SVD degradation", Source: "[ADA] §6.3 (\"overall degradation is ≤ 3.2% vs public features\"); E14 soft target",
			Target: "AdaPrivate-TS's CTR with DP-SVD features at ε_f = 1, 5, 10 at most 3.2% below public features", Tolerance: "+5 pp (≤ 8.2%)",
			Measure: func(c *Context) (string, bool, error) {
				rows, err := adaDPSVDRows(c)
				if err != nil {
					return "", false, err
				}
				pub := rows[0].tsCTR
				ok := true
				var parts []string
				for _, r := range rows[1:] {
					deg := 100 * (pub.mean - r.tsCTR.mean) / pub.mean
					se := 100 * math.Sqrt(pub.se*pub.se+r.tsCTR.se*r.tsCTR.se) / pub.mean
					mark := ""
					if r.epsF != 2 && deg > 3.2+5 {
						ok, mark = false, " ✗"
					}
					parts = append(parts, fmt.Sprintf("ε_f = %s: %.2f ± %.2f%%%s", fmtG(r.epsF), deg, se, mark))
				}
				return fmt.Sprintf("public CTR %.4f; degradation %s", pub.mean, strings.Join(parts, "; ")), ok, nil
			}},
		{ID: "E14.dpsvd-gap-grows", Name: "TS − UCB gap grows under DP-SVD", Source: "[ADA] §6.3 (\"TS's advantage over UCB grows under private features\")",
			Target: "the TS − UCB gap with DP-SVD features at ε_f = 2 above the gap with public features", Tolerance: "difference of means > 0",
			Measure: func(c *Context) (string, bool, error) {
				rows, err := adaDPSVDRows(c)
				if err != nil {
					return "", false, err
				}
				var parts []string
				var g2 stat
				for _, r := range rows {
					parts = append(parts, fmt.Sprintf("%s: %+.2f ± %.2f", r.label, r.gap.mean, r.gap.se))
					if r.epsF == 2 {
						g2 = r.gap
					}
				}
				d, se := g2.mean-rows[0].gap.mean, math.Hypot(g2.se, rows[0].gap.se)
				sig := "not significant"
				if d > 2*se {
					sig = "significant"
				}
				return strings.Join(parts, "; ") + fmt.Sprintf(" (pp of LinUCB, paired s.e.); ε_f = 2 − public: %+.2f ± %.2f (%s)", d, se, sig), d > 0, nil
			}},
		{ID: "E14.dpsvd-gap-levels", Name: "TS − UCB gap levels", Source: "[ADA] §6.3 (−2.5 public, +4.3 at ε_f = 5, +11.1 at ε_f = 2); E14 soft target",
			Target: "gap −2.5 (public), +4.3 (ε_f = 5), +11.1 (ε_f = 2) pp", Tolerance: "±5 pp",
			Measure: func(c *Context) (string, bool, error) {
				rows, err := adaDPSVDRows(c)
				if err != nil {
					return "", false, err
				}
				want := map[float64]float64{0: -2.5, 5: 4.3, 2: 11.1}
				ok := true
				var parts []string
				for _, r := range rows {
					w, has := want[r.epsF]
					if !has {
						continue
					}
					mark := ""
					if !within(r.gap.mean, w, 5) {
						ok, mark = false, " ✗"
					}
					parts = append(parts, fmt.Sprintf("%s: %+.2f [paper %+.1f]%s", r.label, r.gap.mean, w, mark))
				}
				return strings.Join(parts, "; "), ok, nil
			}},
		{ID: "E14.dpsvd-privacy", Name: "feature and bandit privacy composed", Source: "[ADA] §6.3; docs/reproduction-decisions.md A16; docs/accountant.md (GDP and zCDP composition)",
			Target: "report μ_f, μ_r and the composed guarantee; μ = sqrt(μ_f² + μ_r²) exactly, and the composed ε between the larger part and the sum of the parts", Tolerance: "1e-9 relative",
			Measure: func(c *Context) (string, bool, error) {
				rows, err := adaDPSVDRows(c)
				if err != nil {
					return "", false, err
				}
				return adaDPSVDComposition(rows)
			}},
	}
	return r
}

func adaDPSVDFigure(c *Context) (report.Figure, error) {
	rows, err := adaDPSVDRows(c)
	if err != nil {
		return report.Figure{}, err
	}
	p := report.Panel{Title: "DP-SVD features, ε_r = 1 — " + adaJestName, XLabel: "feature budget ε_f (public features at 100)", YLabel: "% of LinUCB", LogX: true}
	for i, name := range []string{"AdaPrivate-TS", "AdaPrivate-UCB"} {
		s := report.Series{Label: name, Color: report.Palette[i]}
		pts := append(rows[1:], rows[0])
		for _, r := range pts {
			x := r.epsF
			if x == 0 {
				x = 100
			}
			st := r.ts
			if i == 1 {
				st = r.ucb
			}
			s.X = append(s.X, x)
			s.Y = append(s.Y, st.mean)
			s.Lo = append(s.Lo, st.mean-1.96*st.se)
			s.Hi = append(s.Hi, st.mean+1.96*st.se)
		}
		p.Series = append(p.Series, s)
	}
	return report.Figure{Panels: []report.Panel{p}}, nil
}
