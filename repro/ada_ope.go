package repro

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/eval"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/report"
)

// [ADA] Riyazat & Ukwatta, AdaPrivate-TS, §4.7 Table 5: off-policy
// evaluation on synthetic data with known ground truth (d = 50,
// T = 50,000). The paper prints one "true value" per policy (LinUCB 0.534,
// AdaPrivate at ε = 1/5/10: 0.765/0.766/0.764) and the errors of a naive,
// an IPS and a DR estimate, without saying which policy is evaluated, how
// the data are logged or what "naive" means. The protocol here:
//
//   - learning: each policy learns online for T rounds in the synthetic
//     environment (the ada environment at d = 50); its online average
//     reward is the "naive" estimate of its value;
//   - target: the FINAL learned policy, frozen (no more updates), with the
//     action distribution it would draw from at each logged round
//     (SelectProbs: exact for LinUCB, a Monte Carlo frequency over a stated
//     number of posterior draws for AdaPrivate-TS). The final policy is
//     what a deployment would keep, and it is the only reading under which
//     a "true value" differs from the online average (the per-round
//     policies' value is the online average in expectation, so a naive
//     error of 0.229 for LinUCB would be impossible);
//   - log: a uniform logger (pscore 1/K) on fresh rounds of the same
//     problem, with a separate random stream;
//   - truth: Σ_i Σ_a π(a | round i) μ(i, a) / n over the logged rounds, from
//     the environment's true means (exact given the rounds and π);
//   - estimates: IPS, SNIPS and DR (eval.Evaluate), DR's reward model a
//     cross-fitted ridge regression of the reward on the candidate's own
//     features, shared by all candidates (3 folds).

const (
	adaOPESeed  = 20250415
	adaOPEEnv   = "synthetic-linear:d=50,pool=100,k=5,theta=2,link=logistic,seed=1,problem=per-run"
	adaOPEDraws = 32 // posterior draws per round for a Thompson target's action distribution
	adaOPEFolds = 3
)

// adaOPEPolicy is one row of Table 5 with the paper's true value.
type adaOPEPolicy struct {
	label string
	spec  bandit.Spec
	paper float64
	id    string
}

func adaOPEPolicies() []adaOPEPolicy {
	return []adaOPEPolicy{
		{"LinUCB (non-private)", spec("linucb"), 0.534, "E14.ope-linucb"},
		{"AdaPrivate-TS (ε = 1)", adaTS(1), 0.765, "E14.ope-eps1"},
		{"AdaPrivate-TS (ε = 5)", adaTS(5), 0.766, "E14.ope-eps5"},
		{"AdaPrivate-TS (ε = 10)", adaTS(10), 0.764, "E14.ope-eps10"},
	}
}

// adaOPECell is one (policy, run): the frozen policy's true value on the
// logged rounds, the naive (online) estimate and the OPE estimates with
// their 95% normal intervals.
type adaOPECell struct {
	truth, naive float64
	est          map[eval.Estimator]eval.Result
}

// adaOPEResults are one run of the reproduction: cells[policy][run].
type adaOPEResults struct {
	pols   []adaOPEPolicy
	cells  [][]adaOPECell
	oracle []float64 // per run: the mean over logged rounds of the best candidate's mean
	nLog   int
}

var adaOPEStore sync.Map // *Context → *adaOPEResults

func adaOPEOf(c *Context) (*adaOPEResults, error) {
	v, ok := adaOPEStore.Load(c)
	if !ok {
		return nil, errors.New("the off-policy evaluations did not run")
	}
	return v.(*adaOPEResults), nil
}

// adaOPELog is one run's uniform log: the candidates (n×K×d, also the log's
// context, n×(K·d)), the true means (n×K) and the fitted reward model.
type adaOPELog struct {
	log    *eval.Log
	means  []float64
	oracle float64 // mean over rounds of max_a μ(i, a): no policy's value exceeds it
	qhat   *eval.ActionDist
	k, d   int
}

// newAdaOPELog logs n rounds of problem run with a uniform logger.
func newAdaOPELog(base ctxenv.Env, run, n int) (*adaOPELog, error) {
	e := base.ForRun(run)
	k, d := e.K(), e.Dim()
	r := bandit.NewRand(adaOPESeed+uint64(run), 0x6c6f67676572) // "logger"
	l := &eval.Log{N: n, A: k, P: 1, D: k * d, Action: make([]int32, n), Reward: make([]float64, n),
		PScore: make([]float64, n), Context: make([]float64, n*k*d)}
	out := &adaOPELog{log: l, means: make([]float64, n*k), k: k, d: d}
	cands := make([][]float64, k)
	for i := range n {
		row := l.Context[i*k*d : (i+1)*k*d]
		for a := range k {
			cands[a] = row[a*d : (a+1)*d]
		}
		e.Next(r, cands)
		a := r.IntN(k)
		l.Action[i], l.Reward[i], l.PScore[i] = int32(a), e.Reward(a), 1/float64(k)
		for j := range k {
			out.means[i*k+j] = e.Mean(j)
		}
		out.oracle += e.Best()
	}
	out.oracle /= float64(n)
	q, err := sharedRidgeModel(l, k, d, adaOPEFolds, 1, adaOPESeed+uint64(run))
	if err != nil {
		return nil, err
	}
	out.qhat = q
	return out, nil
}

// sharedRidgeModel is a cross-fitted ridge regression of the reward on the
// logged candidate's own features x (d of them, plus an intercept), one
// model shared by every candidate: rounds go to folds at random (seeded),
// and fold f's predictions q̂(i, a) = [1, x_{i,a}]·β_{−f} come from the
// other folds' fit (β = (XᵀX + λI)⁻¹Xᵀr), so no round's reward enters its
// own prediction. The context of round i holds its k candidates' features
// one after another.
func sharedRidgeModel(l *eval.Log, k, d, folds int, lambda float64, seed uint64) (*eval.ActionDist, error) {
	p := d + 1
	fold := make([]int, l.N)
	r := bandit.NewRand(seed, 0x7269646765) // "ridge"
	for i := range fold {
		fold[i] = r.IntN(folds)
	}
	// Per-fold sufficient statistics; a fold's model uses the others'.
	gram := make([][]float64, folds)
	xty := make([][]float64, folds)
	for f := range folds {
		gram[f], xty[f] = make([]float64, p*p), make([]float64, p)
	}
	x := make([]float64, p)
	feat := func(i, a int) []float64 {
		x[0] = 1
		copy(x[1:], l.Context[i*k*d+a*d:i*k*d+(a+1)*d])
		return x
	}
	for i := range l.N {
		f := fold[i]
		v := feat(i, int(l.Action[i]))
		g := gram[f]
		for u := range p {
			if v[u] == 0 {
				continue
			}
			row := g[u*p : (u+1)*p]
			for w := u; w < p; w++ {
				row[w] += v[u] * v[w]
			}
			xty[f][u] += v[u] * l.Reward[i]
		}
	}
	q := eval.NewActionDist(l.N, k, 1)
	beta := make([][]float64, folds)
	for f := range folds {
		a := make([]float64, p*p)
		b := make([]float64, p)
		for g := range folds {
			if g == f {
				continue
			}
			for j, v := range gram[g] {
				a[j] += v
			}
			for j, v := range xty[g] {
				b[j] += v
			}
		}
		for u := range p {
			a[u*p+u] += lambda
		}
		fac, ok := chol.NewFromSym(p, a)
		if !ok {
			return nil, errors.New("reward model: the ridge system is not positive definite")
		}
		beta[f] = make([]float64, p)
		fac.SolveTo(beta[f], b)
	}
	for i := range l.N {
		bf := beta[fold[i]]
		for a := range k {
			v := feat(i, a)
			s := 0.0
			for u, w := range bf {
				s += v[u] * w
			}
			q.Values[i*k+a] = s
		}
	}
	return q, nil
}

// adaOPERun learns pol for T rounds on problem run, freezes it and
// evaluates it on the run's log.
func adaOPERun(base ctxenv.Env, lg *adaOPELog, pol adaOPEPolicy, run, horizon int) (adaOPECell, error) {
	d, err := bandit.Lookup(bandit.ContextualKind, pol.spec.Name)
	if err != nil {
		return adaOPECell{}, err
	}
	s := bandit.Setting{K: lg.k, Horizon: horizon, Dim: lg.d}
	params, err := d.CompleteFor(s, pol.spec.Params)
	if err != nil {
		return adaOPECell{}, err
	}
	p, err := d.NewContextual(s, params, bandit.NewRand(adaOPESeed+uint64(run), 0x706f6c696379)) // "policy"
	if err != nil {
		return adaOPECell{}, err
	}
	probs, ok := p.(bandit.Propensities)
	if !ok {
		return adaOPECell{}, fmt.Errorf("%s cannot state its action distribution", pol.spec.Name)
	}
	e := base.ForRun(run)
	r := bandit.NewRand(adaOPESeed+uint64(run), 0x656e76) // "env": the same rounds for every policy
	cands := make([][]float64, lg.k)
	for a := range cands {
		cands[a] = make([]float64, lg.d)
	}
	sum := 0.0
	for range horizon {
		e.Next(r, cands)
		a := p.Select(cands)
		x := e.Reward(a)
		sum += x
		p.Update(cands[a], x)
	}
	cell := adaOPECell{naive: sum / float64(horizon)}
	// The frozen policy's action distribution at every logged round.
	l := lg.log
	target := eval.NewActionDist(l.N, lg.k, 1)
	pr := bandit.NewRand(adaOPESeed+uint64(run), 0x70726f6273) // "probs"
	truth := 0.0
	for i := range l.N {
		row := l.Context[i*lg.k*lg.d : (i+1)*lg.k*lg.d]
		for a := range cands {
			cands[a] = row[a*lg.d : (a+1)*lg.d]
		}
		out := target.Values[i*lg.k : (i+1)*lg.k]
		probs.SelectProbs(cands, out, adaOPEDraws, pr)
		for a, w := range out {
			truth += w * lg.means[i*lg.k+a]
		}
	}
	cell.truth = truth / float64(l.N)
	rep, err := eval.Evaluate(l, target, eval.Options{Estimators: []eval.Estimator{eval.IPS, eval.SNIPS, eval.DR}, QHat: lg.qhat})
	if err != nil {
		return adaOPECell{}, err
	}
	cell.est = map[eval.Estimator]eval.Result{}
	for _, res := range rep.Results {
		cell.est[res.Estimator] = res
	}
	return cell, nil
}

// adaOPEStage runs every (run, policy), in parallel over runs.
func adaOPEStage(c *Context) ([]Sweep, error) {
	base, err := ctxenv.Parse(adaOPEEnv)
	if err != nil {
		return nil, err
	}
	T := c.Horizon()
	res := &adaOPEResults{pols: adaOPEPolicies(), nLog: T}
	res.cells = make([][]adaOPECell, len(res.pols))
	res.oracle = make([]float64, c.Runs())
	for i := range res.cells {
		res.cells[i] = make([]adaOPECell, c.Runs())
	}
	// One run at a time per worker: its log holds n·K·d floats.
	err = c.parallel(c.Runs(), func(run int) error {
		lg, err := newAdaOPELog(base, run, res.nLog)
		if err != nil {
			return fmt.Errorf("run %d: log: %w", run, err)
		}
		res.oracle[run] = lg.oracle
		for pi, pol := range res.pols {
			cell, err := adaOPERun(base, lg, pol, run, T)
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", run, pol.label, err)
			}
			res.cells[pi][run] = cell
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	adaOPEStore.Store(c, res)
	return nil, c.writeOut(ResultsFile, adaOPETable(res))
}

// adaOPEStat is the mean over runs of a per-cell quantity with its s.e.
func adaOPEStat(cells []adaOPECell, f func(adaOPECell) float64) stat {
	xs := make([]float64, len(cells))
	for i, cl := range cells {
		xs[i] = f(cl)
	}
	return statOf(xs)
}

// adaOPEAbsErr is the mean absolute error of an estimator over runs.
func adaOPEAbsErr(cells []adaOPECell, e eval.Estimator) float64 {
	return adaOPEStat(cells, func(cl adaOPECell) float64 {
		if e == "naive" {
			return math.Abs(cl.naive - cl.truth)
		}
		return math.Abs(cl.est[e].Estimate - cl.truth)
	}).mean
}

// adaOPECoverage counts the (policy, run) cells whose 95% normal interval
// of e covers the true value.
func adaOPECoverage(res *adaOPEResults, e eval.Estimator) (covered, total int) {
	for _, cells := range res.cells {
		for _, cl := range cells {
			iv := cl.est[e].Normal
			if iv.Lo <= cl.truth && cl.truth <= iv.Hi {
				covered++
			}
			total++
		}
	}
	return covered, total
}

// adaOPETable is results.md: Table 5 as measured.
func adaOPETable(res *adaOPEResults) string {
	var b strings.Builder
	b.WriteString("# ada-ope results\n\n")
	fmt.Fprintf(&b, "### Table 5: off-policy evaluation on synthetic data with known ground truth (d = 50)\n\n")
	fmt.Fprintf(&b, "Each policy learns for T = %d rounds and is then frozen; the uniform log has %d rounds of the same problem. Mean over %d runs (problems); errors are mean absolute errors against the frozen policy's true value on the logged rounds. Paper: LinUCB 0.534, AdaPrivate 0.765 / 0.766 / 0.764.\n\n",
		res.nLog, res.nLog, len(res.cells[0]))
	tb := report.Table{Header: []string{"policy", "true value (± s.e.)", "paper", "naive error", "IPS error", "SNIPS error", "DR error", "DR ESS"},
		Align: []report.Align{report.Left, report.Right, report.Right, report.Right, report.Right, report.Right, report.Right, report.Right}}
	for i, pol := range res.pols {
		cells := res.cells[i]
		tv := adaOPEStat(cells, func(cl adaOPECell) float64 { return cl.truth })
		ess := adaOPEStat(cells, func(cl adaOPECell) float64 { return cl.est[eval.DR].ESS })
		tb.AddRow(pol.label, fmt.Sprintf("%.3f ± %.3f", tv.mean, tv.se), fmt.Sprintf("%.3f", pol.paper),
			fmt.Sprintf("%.3f", adaOPEAbsErr(cells, "naive")), fmt.Sprintf("%.3f", adaOPEAbsErr(cells, eval.IPS)),
			fmt.Sprintf("%.3f", adaOPEAbsErr(cells, eval.SNIPS)), fmt.Sprintf("%.3f", adaOPEAbsErr(cells, eval.DR)),
			fmt.Sprintf("%.0f", ess.mean))
	}
	or := statOf(res.oracle)
	tb.AddRow("oracle (best candidate every round)", fmt.Sprintf("%.3f ± %.3f", or.mean, or.se), "", "", "", "", "", "")
	_ = tb.Markdown(&b)
	b.WriteString("\nThe oracle row is the largest value any policy can have on these rounds: the paper's 0.765 lies above it.\n")
	return b.String()
}

func adaOPE() *Reproduction {
	r := &Reproduction{
		Name: "ada-ope", Paper: adaPaper, Experiments: "E14", Section: "§4.7, Table 5",
		Description: "off-policy evaluation of LinUCB and AdaPrivate-TS (ε = 1, 5, 10) on synthetic data with known ground truth, d = 50 (Table 5)",
		Full:        Size{Horizons: []int{50000}, Runs: 5},
		Quick:       Size{Horizons: []int{3000}, Runs: 2},
		Seed:        adaOPESeed, Env: adaOPEEnv, Metric: Value,
		Setup: []string{
			"Environment: the ada synthetic environment at d = 50 (a pool of 100 arms, 5 candidates per round, ‖θ*‖ = 2, Bernoulli(σ(θ*ᵀx)) rewards, a new problem per run); [ADA] states only d = 50 and T = 50,000.",
			"Target: the final learned policy. Each policy learns online for T rounds, then is frozen; its action distribution at a logged round is what it would draw from (LinUCB: exact; AdaPrivate-TS: the frequency over " + fmt.Sprint(adaOPEDraws) + " posterior draws, which then is the evaluated policy). The per-round policies' value equals the online average in expectation, so only the final policy can have a true value away from the naive estimate, as the paper's LinUCB row (naive error 0.229) requires.",
			"Log: a uniform logger (pscore = 1/5) on T fresh rounds of the same problem, with its own random stream. True value: the mean over the logged rounds of Σ_a π(a | round) μ(round, a), from the environment's true means.",
			"Estimates: naive = the policy's online average reward while learning; IPS, SNIPS and DR from eval.Evaluate (95% normal intervals); DR's reward model is a 3-fold cross-fitted ridge regression (λ = 1) of the reward on the logged candidate's own features and an intercept, one model for all candidates.",
			"Policies: LinUCB (non-private, the package defaults) and AdaPrivate-TS at ε ∈ {1, 5, 10}, δ = 1e-5 (the package defaults otherwise), as in ada-synthetic.",
		},
		Stages:  []Stage{adaOPEStage},
		Figures: []FigureDef{{File: "table5_ope", Caption: "True value of each frozen policy and its naive, IPS, SNIPS and DR estimates (mean over runs, 95% intervals of the mean)", Build: adaOPEFigure}},
		Notes: []string{
			"docs/reproduction-decisions.md A18: Table 5 puts the private policy's value (0.765) far above non-private LinUCB (0.534), which the paper's own Table 1 (AdaPrivate-TS at 96.7% of LinUCB at ε = 1) contradicts. The true-value checks keep the paper's numbers as soft targets (±5 pp) and record what this protocol measures; results.md's oracle row (the best candidate's mean every round) is the ceiling of any policy's value in this environment.",
			"The paper's IPS and DR errors (0.08–0.15) are an order of magnitude above what a uniform log of 50,000 rounds gives (about 1/√(n/K)); its logging protocol is not stated, so they are reported, not checked.",
		},
	}
	for i, pol := range adaOPEPolicies() {
		r.Targets = append(r.Targets, Target{ID: pol.id, Name: "true value, " + pol.label, Source: "[ADA] §4.7, Table 5; docs/reproduction-decisions.md A18",
			Target: fmt.Sprintf("the frozen policy's true value %.3f", pol.paper), Tolerance: "±5 pp (soft target)",
			Measure: adaOPEMeasure(func(res *adaOPEResults) (string, bool) {
				tv := adaOPEStat(res.cells[i], func(cl adaOPECell) float64 { return cl.truth })
				return fmt.Sprintf("%.3f ± %.3f (s.e., %d runs; the oracle's value on these rounds is %.3f)", tv.mean, tv.se, len(res.cells[i]), statOf(res.oracle).mean),
					math.Abs(tv.mean-pol.paper) <= 0.05
			})})
	}
	r.Targets = append(r.Targets,
		Target{ID: "E14.ope-ranking", Name: "AdaPrivate above LinUCB", Source: "[ADA] §4.7 (\"AdaPrivate achieves higher true policy value than LinUCB\"); docs/reproduction-decisions.md A18",
			Target: "each AdaPrivate-TS row's true value above LinUCB's", Tolerance: "mean over runs",
			Measure: adaOPEMeasure(func(res *adaOPEResults) (string, bool) {
				lin := adaOPEStat(res.cells[0], func(cl adaOPECell) float64 { return cl.truth }).mean
				ok := true
				var parts []string
				for i := 1; i < len(res.pols); i++ {
					v := adaOPEStat(res.cells[i], func(cl adaOPECell) float64 { return cl.truth }).mean
					ok = ok && v > lin
					parts = append(parts, fmt.Sprintf("%s %+.3f", res.pols[i].label, v-lin))
				}
				return "true value − LinUCB's: " + strings.Join(parts, "; "), ok
			})},
		Target{ID: "E14.ope-coverage", Name: "OPE intervals cover the truth", Source: "this reproduction's own check of its estimators (eval)",
			Target: "IPS, SNIPS and DR 95% normal intervals cover the true value in at least 80% of the (policy, run) cells", Tolerance: "80% (nominal 95%; few cells)",
			Measure: adaOPEMeasure(func(res *adaOPEResults) (string, bool) {
				ok := true
				var parts []string
				for _, e := range []eval.Estimator{eval.IPS, eval.SNIPS, eval.DR} {
					cov, tot := adaOPECoverage(res, e)
					ok = ok && float64(cov) >= 0.8*float64(tot)
					parts = append(parts, fmt.Sprintf("%s %d/%d", e, cov, tot))
				}
				return strings.Join(parts, "; "), ok
			})},
		Target{ID: "E14.ope-dr-beats-naive", Name: "DR closer than naive", Source: "[ADA] §4.7 (OPE validates the online results); this reproduction",
			Target: "for every policy, DR's mean absolute error below the naive (online) estimate's", Tolerance: "mean over runs",
			Measure: adaOPEMeasure(func(res *adaOPEResults) (string, bool) {
				ok := true
				var parts []string
				for i, pol := range res.pols {
					dr, nv := adaOPEAbsErr(res.cells[i], eval.DR), adaOPEAbsErr(res.cells[i], "naive")
					ok = ok && dr < nv
					parts = append(parts, fmt.Sprintf("%s: DR %.3f, naive %.3f", pol.label, dr, nv))
				}
				return strings.Join(parts, "; "), ok
			})},
	)
	return r
}

// adaOPEMeasure is a target's Measure over this run's evaluations.
func adaOPEMeasure(f func(res *adaOPEResults) (measured string, pass bool)) func(c *Context) (string, bool, error) {
	return func(c *Context) (string, bool, error) {
		res, err := adaOPEOf(c)
		if err != nil {
			return "", false, err
		}
		m, ok := f(res)
		return m, ok, nil
	}
}

// adaOPEFigure draws, per policy, the true value and the four estimates.
func adaOPEFigure(c *Context) (report.Figure, error) {
	res, err := adaOPEOf(c)
	if err != nil {
		return report.Figure{}, err
	}
	p := report.Panel{Title: "Table 5 (synthetic, d = 50): true value and estimates of each frozen policy",
		XLabel: "policy: 0 LinUCB, 1–3 AdaPrivate-TS at ε = 1, 5, 10", YLabel: "policy value", LegendRight: true}
	kinds := []struct {
		label string
		f     func(adaOPECell) float64
	}{
		{"true value", func(cl adaOPECell) float64 { return cl.truth }},
		{"naive (online average)", func(cl adaOPECell) float64 { return cl.naive }},
		{"IPS", func(cl adaOPECell) float64 { return cl.est[eval.IPS].Estimate }},
		{"SNIPS", func(cl adaOPECell) float64 { return cl.est[eval.SNIPS].Estimate }},
		{"DR", func(cl adaOPECell) float64 { return cl.est[eval.DR].Estimate }},
	}
	for ki, k := range kinds {
		s := report.Series{Label: k.label, Color: report.Palette[ki%len(report.Palette)], Dashed: ki == 0}
		for i := range res.pols {
			st := adaOPEStat(res.cells[i], k.f)
			s.X = append(s.X, float64(i)+0.06*float64(ki-2))
			s.Y = append(s.Y, st.mean)
			s.Lo = append(s.Lo, st.mean-1.96*st.se)
			s.Hi = append(s.Hi, st.mean+1.96*st.se)
		}
		p.Series = append(p.Series, s)
	}
	paper := report.Series{Label: "paper's true value", Dashed: true}
	for i, pol := range res.pols {
		paper.X = append(paper.X, float64(i))
		paper.Y = append(paper.Y, pol.paper)
	}
	p.Series = append(p.Series, paper)
	return report.Figure{Panels: []report.Panel{p}}, nil
}
