package repro

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
	"github.com/dpbandit/dpbandit/sim"
)

// [MT] Mishra & Thakurta, "(Nearly) Optimal Differentially Private
// Stochastic Multi-Arm Bandits", UAI 2015, §5 Fig 1 (E10).

const (
	mtPaper     = "[MT] Mishra & Thakurta, UAI 2015"
	mtBernoulli = "bernoulli:0.9,0.4,0.4,0.4,0.4"
	mtSeed      = 20150712
	// mtGap is Δ = 0.9 − 0.4, handed to private TS as the public Δ̂ of
	// skipGap ([MT] §5 skipped gap estimation).
	mtGap = 0.5
)

var (
	mtEpsilons = []float64{0.1, 0.5, 1, 2}
	// mtGammaEps is the tuning grid of private UCB's Γ, as Γ·ε (the tree
	// noise on a prefix sum scales as 1/ε).
	mtGammaEps = []float64{0.3, 1, 3, 10, 30, 100, 300, 1000}
	// mtRandomPulls is the tuning grid of private TS's phase-B pulls per arm.
	mtRandomPulls = []int{1, 3, 10, 30, 100, 300, 1000, 3000}
)

func epsKey(e float64) string { return fmt.Sprintf("eps=%g", e) }

func mtUCB(eps, gamma float64) bandit.Spec {
	return spec("mt-ucb", "epsilon", eps, "width", 1, "gamma", gamma)
}

func mtTS(eps float64, pulls int) bandit.Spec {
	return spec("mt-ts", "epsilon", eps, "skipGap", 1, "gap", mtGap, "randomPulls", pulls)
}

func mtMAB() *Reproduction {
	r := &Reproduction{
		Name: "mt2015-mab", Paper: mtPaper, Experiments: "E10 (with A19)", Section: "§5, Fig 1",
		Description: "private UCB (tree counters, Chapelle–Li width, tuned Γ) and private TS (skipGap, tuned random pulls) on k = 5, Δ = 0.5 across ε (Fig 1)",
		Full:        Size{Horizons: []int{100000}, Runs: 20},
		Quick:       Size{Horizons: []int{20000}, Runs: 4},
		Seed:        mtSeed, Env: mtBernoulli, Metric: Pseudo,
		Setup: []string{
			"k = 5 Bernoulli arms [0.9, 0.4, 0.4, 0.4, 0.4] (Δ = 0.5); ε ∈ {0.1, 0.5, 1, 2}, T = 1e5, 20 runs (docs/reproductions.md E10's suggestion: [MT] reports neither ε nor T).",
			"Private UCB ([MT] Alg 1, mt-ucb) with the Chapelle–Li width of [MT] §5 (width = 1) and a tuned Γ; private TS ([MT] Alg 2 with docs/reproduction-decisions.md A20's fixes, mt-ts) without gap estimation (skipGap, public Δ̂ = Δ = 0.5) and a tuned number of random pulls, as [MT] §5 describes.",
			"Tuning (the paper tuned both and reported neither): stage 1 runs Γ·ε ∈ {0.3, 1, 3, 10, 30, 100, 300, 1000} and random pulls ∈ {1, 3, 10, 30, 100, 300, 1000, 3000} per ε on a separate seed (seed+1) with five times the reported runs (100 at full size) and keeps the value with the lowest mean final regret; stage 2 runs the chosen values on the reported seed. Tuning on simulated data costs no privacy.",
			"Non-private counterparts for reference: UCB1 with the same Chapelle–Li width, and Beta–Bernoulli TS.",
		},
		Notes: []string{
			"Privacy (docs/reproduction-decisions.md A19): the paper's ε is k× what each tree needs; the reports certify ε/k and show the paper's ε beside them. Private TS skips phase A, so its trees get the half of ε that [MT] Alg 2 reserves for the gap estimates (ε0 = ε/k, as private UCB's); with the paper's split (ε/(2k)) a TS run \"at ε\" would be ε/2-DP even by the paper's accounting and would meet UCB with twice the noise. ε in the figures is the paper's ε.",
			"docs/reproduction-decisions.md A20's fixes are in mt-ts: argmax over μ̂, m_a counts only tree pulls, noisy sums clipped to [0, m_a], ceilings, budget guard.",
			"Failure mode: the trees' node noise is drawn once. When the best arm's noisy sum is clipped to 0 at a count n where its index falls below a suboptimal arm's, it is never pulled again: its count, hence its noise, never changes, and the run's regret grows linearly. With the Chapelle–Li width the width vanishes with the clipped sum (sqrt(r ln t)/n + ln t/n with r = 0), so only a large Γ/n rescues the arm; Alg 1's own sqrt(2 ln t/n) would eventually. Private TS fails the same way through Beta(r+1, m−r+1) with r clipped to 0. The paper's theoretical Γ makes this unlikely by design; tuned-down values make it a rare event (a few percent of runs) that shows up as a jump in the mean curve and a large standard error. This is why tuning uses five times as many runs as the reported sweep: with 5 runs it picked values that got stuck on the reported seed.",
			"docs/reproduction-decisions.md A25: E10.saturates and E10.ts-below-ucb stay as stated (on the means) and are expected to fail; two robust checks on the medians, E10.median-ts-below-ucb and E10.median-saturates (at ε ≥ 0.5), must pass. They were chosen after the original checks were seen. The stuck runs (final regret ≥ 0.9·Δ·T) are counted per policy and ε in the measured columns.",
		},
	}
	// Tuning uses five times the reported runs: the regret of a small Γ or
	// pull count is heavy-tailed (a tree's noise, drawn once, can bury the
	// best arm for good in a few percent of runs; see the notes), and the
	// mean over a few tuning runs misses those runs and prefers exactly the
	// values that produce them.
	tuneRuns := func(c *Context) int { return 5 * c.Runs() }
	r.Stages = []Stage{
		func(c *Context) ([]Sweep, error) {
			var out []Sweep
			for _, e := range mtEpsilons {
				sw := Sweep{Key: "tune-" + epsKey(e), Spec: sim.Spec{Env: mtBernoulli, Horizon: c.Horizon(), Runs: tuneRuns(c), Seed: c.R.Seed + 1}}
				for _, g := range mtGammaEps {
					// Γ = g/ε, rounded to 12 significant digits so that
					// the spec reads gamma=3, not 2.9999999999999996.
					gamma, _ := strconv.ParseFloat(strconv.FormatFloat(g/e, 'g', 12, 64), 64)
					sw.Spec.Policies = append(sw.Spec.Policies, mtUCB(e, gamma))
					sw.Labels = append(sw.Labels, fmt.Sprintf("private UCB Γ=%s", num(gamma, 4)))
				}
				for _, m := range mtRandomPulls {
					sw.Spec.Policies = append(sw.Spec.Policies, mtTS(e, m))
					sw.Labels = append(sw.Labels, fmt.Sprintf("private TS pulls=%d", m))
				}
				out = append(out, sw)
			}
			return out, nil
		},
		func(c *Context) ([]Sweep, error) {
			// T/2 and T/10 are recorded exactly (extra checkpoints) for
			// the saturation checks.
			T := c.Horizon()
			sw := Sweep{Key: "main", Spec: sim.Spec{Env: mtBernoulli, Horizon: T, Runs: c.Runs(), Seed: c.R.Seed,
				ExtraCheckpoints: []int{T / 10, (T + 9) / 10, T / 2, (T + 1) / 2}}}
			for _, e := range mtEpsilons {
				ps, err := c.Policies("tune-" + epsKey(e))
				if err != nil {
					return nil, err
				}
				var ucb, ts []PolicyResult
				for _, p := range ps {
					if p.Entry.Spec.Name == "mt-ucb" {
						ucb = append(ucb, p)
					} else {
						ts = append(ts, p)
					}
				}
				bu, bt := best(ucb), best(ts)
				g, m := bu.Entry.Params["gamma"], int(bt.Entry.Params["randomPulls"])
				sw.Spec.Policies = append(sw.Spec.Policies, mtUCB(e, g), mtTS(e, m))
				sw.Labels = append(sw.Labels, fmt.Sprintf("private UCB ε=%g (Γ=%s)", e, num(g, 4)), fmt.Sprintf("private TS ε=%g (pulls=%d)", e, m))
			}
			sw.Spec.Policies = append(sw.Spec.Policies, spec("ucb1", "width", 1), spec("beta-ts"))
			sw.Labels = append(sw.Labels, "UCB1, Chapelle–Li width (not private)", "Beta–Bernoulli TS (not private)")
			return []Sweep{sw}, nil
		},
	}
	// split returns private UCB and TS per ε (in mtEpsilons order) and the
	// two non-private policies.
	split := func(c *Context) (ucb, ts []PolicyResult, np []PolicyResult, err error) {
		ps, err := c.Policies("main")
		if err != nil {
			return nil, nil, nil, err
		}
		for i := range mtEpsilons {
			ucb, ts = append(ucb, ps[2*i]), append(ts, ps[2*i+1])
		}
		return ucb, ts, ps[2*len(mtEpsilons):], nil
	}
	r.Figures = []FigureDef{{File: "fig1_mt_private", Caption: "[MT] Fig 1: pseudo-regret of private UCB (left) and private TS (right) for k = 5, Δ = 0.5 at each ε, with the non-private counterpart (mean and 95% band).",
		Build: func(c *Context) (report.Figure, error) {
			ucb, ts, np, err := split(c)
			if err != nil {
				return report.Figure{}, err
			}
			a := regretPanel("private UCB (Alg 1)", append(ucb, np[0]), false)
			b := regretPanel("private TS (Alg 2)", append(ts, np[1]), false)
			return wide(2, a, b), nil
		}}}
	// measure adapts a check on the main sweep's private UCB and TS (one per
	// ε) to a Target's Measure.
	measure := func(f func(ucb, ts []PolicyResult) (string, bool)) func(*Context) (string, bool, error) {
		return func(c *Context) (string, bool, error) {
			ucb, ts, _, err := split(c)
			if err != nil {
				return "", false, err
			}
			m, ok := f(ucb, ts)
			return m, ok, nil
		}
	}
	r.Targets = []Target{
		{ID: "E10.saturates", Name: "regret saturates", Source: "docs/reproduction-decisions.md §3 E10, A25; [MT] §5",
			Target:         "for both private algorithms at every ε, the regret saturates: less than 15% of the final mean regret accrues in the second half, R(T) − R(T/2) ≤ 0.15·R(T) (linear growth gives 50%, logarithmic ≈ 6%)",
			Tolerance:      "fraction ≤ 0.15",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A25: heavy tails decide the means. The trees' noise is fixed once drawn and the tuned algorithms have little optimism, so a few runs in 20 bury the best arm for good and grow linearly (the stuck runs, final regret ≥ 0.9·Δ·T, are counted in the measured column), and at ε = 0.1 private UCB has not saturated by T = 1e5 (issue 3: it stops accruing regret after about 1e5 rounds). E10.median-saturates checks the medians at ε ≥ 0.5.",
			Measure: measure(func(ucb, ts []PolicyResult) (string, bool) {
				ok := true
				var parts []string
				for _, p := range append(ucb, ts...) {
					T := float64(p.T)
					f := (p.At(T) - p.At(T/2)) / p.At(T)
					mark := ""
					if !(f <= 0.15) {
						ok, mark = false, " ✗"
					}
					n := 0
					for k := range p.Runs {
						if r := p.RunAt(k, T); r > 0 && (r-p.RunAt(k, T/2))/r > 0.15 {
							n++
						}
					}
					parts = append(parts, fmt.Sprintf("%s: %.3f%s (%d/%d runs not saturated, %d stuck)", shortMT(p.Label), f, mark, n, len(p.Runs), mtStuck(p)))
				}
				return strings.Join(parts, "; "), ok
			})},
		{ID: "E10.ts-below-ucb", Name: "TS below UCB", Source: "docs/reproduction-decisions.md §3 E10, A25; [MT] §5",
			Target:         "private TS has lower mean final regret than private UCB at every ε",
			Tolerance:      "comparison of means (paired s.e., the medians and the stuck runs shown)",
			ExpectedToFail: true,
			Reason:         "docs/reproduction-decisions.md A25: heavy tails decide the means. With fixed tree noise and no optimism one stuck run in 20 (final regret ≥ 0.9·Δ·T, counted in the measured column) lifts a policy's mean above the other's although the paired differences are within about 1 s.e. of zero; on the runs A25 examined the medians put TS below UCB at every ε, which E10.median-ts-below-ucb checks.",
			Measure: measure(func(ucb, ts []PolicyResult) (string, bool) {
				ok := true
				var parts []string
				for i, e := range mtEpsilons {
					d, se := Diff(ucb[i], ts[i])
					ok = ok && ts[i].Mean() < ucb[i].Mean()
					parts = append(parts, fmt.Sprintf("ε=%g: TS %s vs UCB %s (difference %s; medians %s vs %s; stuck runs %d vs %d of %d)", e, num(ts[i].Mean(), 4), num(ucb[i].Mean(), 4), pm(d, se),
						num(sim.Quantile(ts[i].Final, 0.5), 4), num(sim.Quantile(ucb[i].Final, 0.5), 4), mtStuck(ts[i]), mtStuck(ucb[i]), len(ts[i].Final)))
				}
				return strings.Join(parts, "; "), ok
			})},
		{ID: "E10.median-ts-below-ucb", Name: "TS below UCB (medians)", Source: "docs/reproduction-decisions.md A25 (a robust check, chosen after the original ones were seen)",
			Target:    "the median final regret of private TS is below private UCB's at every ε",
			Tolerance: "comparison of medians",
			Measure: measure(func(ucb, ts []PolicyResult) (string, bool) {
				ok := true
				var parts []string
				for i, e := range mtEpsilons {
					mt, mu := sim.Quantile(ts[i].Final, 0.5), sim.Quantile(ucb[i].Final, 0.5)
					mark := ""
					if !(mt < mu) {
						ok, mark = false, " ✗"
					}
					parts = append(parts, fmt.Sprintf("ε=%g: TS %s vs UCB %s%s (stuck runs %d vs %d of %d)", e, num(mt, 4), num(mu, 4), mark,
						mtStuck(ts[i]), mtStuck(ucb[i]), len(ts[i].Final)))
				}
				return strings.Join(parts, "; "), ok
			})},
		{ID: "E10.median-saturates", Name: "median regret saturates", Source: "docs/reproduction-decisions.md A25 (a robust check, chosen after the original ones were seen)",
			Target:    "for both private algorithms at every ε ≥ 0.5, the median regret's slope over [T/2, T] is at most 10% of its slope over [0, T/10]: (m(T) − m(T/2))/(T/2) ≤ 0.1·m(T/10)/(T/10), m(t) the median over runs of R(t)",
			Tolerance: "ratio ≤ 0.1",
			Measure: measure(func(ucb, ts []PolicyResult) (string, bool) {
				ok := true
				var parts []string
				for _, ps := range [][]PolicyResult{ucb, ts} {
					for i, e := range mtEpsilons {
						if e < 0.5 {
							continue
						}
						p := ps[i]
						T := float64(p.T)
						m10, m2, m1 := mtMedianAt(p, T/10), mtMedianAt(p, T/2), mtMedianAt(p, T)
						ratio := ((m1 - m2) / (T / 2)) / (m10 / (T / 10))
						mark := ""
						if !(ratio <= 0.1) {
							ok, mark = false, " ✗"
						}
						parts = append(parts, fmt.Sprintf("%s: %.3f%s (medians %s, %s, %s at T/10, T/2, T)", shortMT(p.Label), ratio, mark,
							num(m10, 4), num(m2, 4), num(m1, 4)))
					}
				}
				return strings.Join(parts, "; "), ok
			})},
		{ID: "E10.eps-order", Name: "regret falls as ε rises", Source: "docs/reproductions.md E10; [MT] §5",
			Target:    "for both algorithms, mean final regret falls as ε rises: every step ε→ε' has mean(ε') ≤ mean(ε) + 2 s.e., and mean(ε=2) < mean(ε=0.1) − 2 s.e. (s.e. of the paired difference)",
			Tolerance: "2 s.e. (paired)",
			Measure: measure(func(ucb, ts []PolicyResult) (string, bool) {
				ok := true
				var parts []string
				for j, ps := range [][]PolicyResult{ucb, ts} {
					var ms []string
					for i, p := range ps {
						ms = append(ms, num(p.Mean(), 4))
						if i > 0 {
							if d, se := Diff(p, ps[i-1]); d > 2*se {
								ok = false
								ms[i] += "✗"
							}
						}
					}
					d, se := Diff(ps[0], ps[len(ps)-1])
					ok = ok && d > 2*se
					parts = append(parts, fmt.Sprintf("%s: %s (ε=0.1 − ε=2: %s)", []string{"UCB", "TS"}[j], strings.Join(ms, " > "), pm(d, se)))
				}
				return strings.Join(parts, "; "), ok
			})},
		{ID: "E10.A19", Name: "privacy reports", Source: "docs/reproduction-decisions.md A19; [MT] Algs 1, 2 (docs/tree-based.md §1.7, §1.8)",
			Target:    "private UCB states the paper's ε and certifies ε/k; private TS (phase A skipped, so its trees get the whole budget) states the paper's ε and certifies ε/k (k = 5)",
			Tolerance: "relative 1e-12",
			Measure: measure(func(ucb, ts []PolicyResult) (string, bool) {
				ok := true
				for i, e := range mtEpsilons {
					for _, p := range []PolicyResult{ucb[i], ts[i]} {
						rp := p.Entry.Report
						want := e / 5
						if rp.Paper == nil || rp.Certified.Notion != privacy.NotionPure || !relClose(rp.Paper.Value, e, 1e-12) ||
							!relClose(rp.Certified.Value, want, 1e-12) {
							ok = false
						}
					}
				}
				return fmt.Sprintf("ε=1: UCB paper %g, certified %g; TS paper %g, certified %g (and likewise for every ε)",
					ucb[2].Entry.Report.Paper.Value, ucb[2].Entry.Report.Certified.Value,
					ts[2].Entry.Report.Paper.Value, ts[2].Entry.Report.Certified.Value), ok
			})},
	}
	return r
}

// mtStuck counts a policy's stuck runs (docs/reproduction-decisions.md A25): final regret at
// least 0.9·Δ·T, i.e. the best arm buried for good early on.
func mtStuck(p PolicyResult) int {
	n := 0
	for _, r := range p.Final {
		if r >= 0.9*mtGap*float64(p.T) {
			n++
		}
	}
	return n
}

// mtMedianAt is the median over runs of the regret at round t.
func mtMedianAt(p PolicyResult, t float64) float64 {
	xs := make([]float64, len(p.Runs))
	for k := range p.Runs {
		xs[k] = p.RunAt(k, t)
	}
	return sim.Quantile(xs, 0.5)
}

// shortMT shortens a label "private UCB ε=0.1 (Γ=30)" to "UCB ε=0.1".
func shortMT(label string) string {
	s := strings.TrimPrefix(label, "private ")
	if i := strings.Index(s, " ("); i >= 0 {
		s = s[:i]
	}
	return s
}
