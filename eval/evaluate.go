package eval

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// Options configure Evaluate.
type Options struct {
	Estimators []Estimator // default: all
	// SwitchTau is Switch-DR's weight threshold τ, taken as given (0 makes
	// Switch-DR equal DM, math.Inf(1) equal DR; DefaultSwitchTau is the
	// CLI's default). Negative is an error.
	SwitchTau float64
	// Bootstrap is the number of bootstrap replicates (0: no bootstrap
	// interval).
	Bootstrap int
	Seed      uint64
	// QHat, when not nil, is the reward model to use; otherwise the log's
	// qhat columns, otherwise FitRewardModel with Model.
	QHat  *ActionDist
	Model ModelOptions
}

// DefaultSwitchTau is Switch-DR's default threshold.
const DefaultSwitchTau = 10

// Result is one estimator's estimate with its 95% intervals.
type Result struct {
	Estimator Estimator
	Estimate  float64
	Normal    Interval // mean ± 1.96 s.e. of the per-round contributions
	Bootstrap Interval // percentile; NaN without bootstrap
	ESS       float64  // effective sample size of the weights; NaN for DM
}

// Report is Evaluate's output.
type Report struct {
	N, A, P    int
	Model      string // where q̂ came from ("" when no estimator used one)
	SwitchTau  float64
	Bootstrap  int
	MeanReward float64 // the logging policy's average reward (on-policy)
	Results    []Result
}

// Evaluate runs the estimators on the log for the target policy: per-round
// terms in one pass, each estimator's contributions, normal intervals, and
// one shared bootstrap (every estimator is computed on the same replicate
// multiplicities).
func Evaluate(l *Log, target *ActionDist, o Options) (*Report, error) {
	if l == nil || l.N == 0 {
		return nil, errors.New("empty log")
	}
	if target == nil {
		return nil, errors.New("no target policy")
	}
	if err := target.checkPolicy(l, "target policy"); err != nil {
		return nil, err
	}
	if len(o.Estimators) == 0 {
		o.Estimators = Estimators()
	}
	if o.SwitchTau < 0 || math.IsNaN(o.SwitchTau) {
		return nil, fmt.Errorf("switch-dr threshold must be ≥ 0, got %v", o.SwitchTau)
	}
	if o.Bootstrap < 0 {
		return nil, fmt.Errorf("bootstrap replicates must be ≥ 0, got %d", o.Bootstrap)
	}
	rep := &Report{N: l.N, A: l.A, P: l.P, SwitchTau: o.SwitchTau, Bootstrap: o.Bootstrap, MeanReward: mean(l.Reward)}
	var qhat *ActionDist
	for _, e := range o.Estimators {
		if !e.valid() {
			return nil, fmt.Errorf("unknown estimator %q", e)
		}
		if e.needsModel() && qhat == nil {
			switch {
			case o.QHat != nil:
				qhat, rep.Model = o.QHat, "given"
			case l.QHat != nil:
				qhat, rep.Model = l.QHat, "the log's qhat columns"
			default:
				q, desc, err := FitRewardModel(l, o.Model)
				if err != nil {
					return nil, fmt.Errorf("reward model: %w", err)
				}
				qhat, rep.Model = q, desc
			}
			if err := qhat.checkModel(l); err != nil {
				return nil, err
			}
		}
	}
	t := ComputeTerms(l, target, qhat)
	contrib := make([][]float64, len(o.Estimators))
	stats := make([]Ratio, len(o.Estimators))
	// Each estimator's per-round terms, estimate, normal interval and ESS
	// are independent of the others': they run side by side.
	rep.Results = make([]Result, len(o.Estimators))
	errs := make([]error, len(o.Estimators))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k, e := range o.Estimators {
		g.Go(func() error {
			c, err := t.Contributions(e, o.SwitchTau)
			if err != nil {
				errs[k] = err
				return nil
			}
			contrib[k] = c
			est := mean(c)
			if e == SNIPS {
				est, _ = t.snips()
			}
			rep.Results[k] = Result{
				Estimator: e, Estimate: est, Normal: NormalInterval(c),
				Bootstrap: Interval{math.NaN(), math.NaN()}, ESS: t.ESS(e, o.SwitchTau),
			}
			return nil
		})
	}
	g.Wait()
	var wr []float64
	for k, e := range o.Estimators {
		if errs[k] != nil {
			return nil, errs[k]
		}
		c := contrib[k]
		switch e {
		case IPS:
			wr = c
			stats[k] = Ratio{Num: c}
		case SNIPS:
			stats[k] = Ratio{Den: t.W}
		default:
			stats[k] = Ratio{Num: c}
		}
	}
	if o.Bootstrap > 0 {
		for k, e := range o.Estimators {
			if e == SNIPS {
				if wr == nil {
					wr = make([]float64, l.N)
					for i := range wr {
						wr[i] = t.W[i] * t.R[i]
					}
				}
				stats[k].Num = wr
			}
		}
		reps := Bootstrap(stats, o.Bootstrap, o.Seed)
		for k := range rep.Results {
			rep.Results[k].Bootstrap = PercentileInterval(reps[k])
		}
	}
	return rep, nil
}
