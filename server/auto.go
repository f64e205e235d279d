package server

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/recommend"
)

// "policy": "auto" and the near-uniform warning: the service asks the
// recommender (package recommend, the engine of `dpbandit recommend`) which
// served private policy learns at the experiment's arms, horizon and budget.
// It runs an equal-budget simulation on a panel of instances (the user's
// means are unknown), bounded in time, with a fixed seed, so the same
// request gets the same answer on the same machine.

// autoPolicy is the policy name that asks the service to choose.
const autoPolicy = "auto"

// recommendTime bounds one recommendation at creation; the recommender cuts
// runs, then the horizon, to fit (and says so in its notes).
const recommendTime = 3 * time.Second

// recommendSeed makes the choice deterministic for a given setting.
const recommendSeed = 20261126

// recommendFor runs the recommender for a K-armed private experiment. The
// answers for the last few settings are kept (recommendations), so that
// creating many experiments alike costs one simulation.
func recommendFor(ctx context.Context, arms, horizon int, b *Budget) (*recommend.Result, error) {
	if b == nil || b.Mu != 0 {
		return nil, fmt.Errorf("the recommender compares policies at an (epsilon, delta) budget; give \"budget\": {\"epsilon\": ε, \"delta\": δ}")
	}
	key := recKey{arms, min(horizon, recommend.MaxHorizon), b.Epsilon, b.Delta}
	recommendations.Lock()
	res := recommendations.m[key]
	recommendations.Unlock()
	if res != nil {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*recommendTime)
	defer cancel()
	res, err := recommend.Run(ctx, recommend.Options{Arms: key.arms, Horizon: key.horizon,
		Budget: bandit.Target{Epsilon: b.Epsilon, Delta: b.Delta, Basis: bandit.BasisCertified},
		Seed:   recommendSeed, MaxTime: recommendTime})
	if err != nil {
		return nil, err
	}
	recommendations.Lock()
	if len(recommendations.m) >= 64 {
		clear(recommendations.m)
	}
	recommendations.m[key] = res
	recommendations.Unlock()
	return res, nil
}

type recKey struct {
	arms, horizon  int
	epsilon, delta float64
}

var recommendations = struct {
	sync.Mutex
	m map[recKey]*recommend.Result
}{m: map[recKey]*recommend.Result{}}

// chooseAuto replaces "auto" in req by the recommended policy and returns
// the reason, in words, for the response.
func chooseAuto(ctx context.Context, req *createRequest) (string, error) {
	if req.Dim != nil || req.FeatureNorm != nil {
		return "", badf("policy: \"auto\" chooses among the K-armed private policies; for a contextual experiment name the policy (adaprivate-ts, adaprivate-ucb)")
	}
	if req.Budget == nil {
		return "", badf("policy: \"auto\" chooses among the private policies and needs a budget, e.g. \"budget\": {\"epsilon\": 1, \"delta\": 1e-6}; for no privacy name a policy such as ucb1 with \"budget\": null")
	}
	if len(req.Arms) < recommend.MinArms || len(req.Arms) > recommend.MaxArms {
		return "", badf("arms: \"auto\" needs between %d and %d arms (got %d)", recommend.MinArms, recommend.MaxArms, len(req.Arms))
	}
	if req.Horizon < 1 || req.Horizon > maxHorizon {
		return "", badf("horizon: give the planned number of decisions T as an integer in [1, 2^40] (got %d)", req.Horizon)
	}
	if len(req.Params) > 0 {
		return "", badf("params: \"auto\" calibrates the chosen policy itself; remove params, or name the policy")
	}
	res, err := recommendFor(ctx, len(req.Arms), req.Horizon, req.Budget)
	if err != nil {
		return "", badf("policy \"auto\": %v", err)
	}
	rec := res.Recommendation
	if rec.Policy == "" {
		return "", badf("policy \"auto\": no served private policy can run at this budget (%s); raise the budget", skippedWords(res))
	}
	req.Policy = rec.Policy
	reason := fmt.Sprintf("chosen by \"auto\": %s, %s", rec.Policy, rec.Reason)
	if len(res.Notes) > 0 {
		reason += " (" + res.Notes[0] + ")"
	}
	return reason, nil
}

func skippedWords(res *recommend.Result) string {
	if len(res.Skipped) == 0 {
		return "none was compared"
	}
	s := res.Skipped[0].Policy + ": " + res.Skipped[0].Reason
	if n := len(res.Skipped) - 1; n > 0 {
		s += fmt.Sprintf("; and %d more", n)
	}
	return s
}

// uniformWarning says, in words, when the recommender's own simulation
// expects policy to play close to uniformly at this budget (its share of
// the best arm over the last 20% of the rounds within a quarter of 1/K of
// uniform play's), naming the policy that does best. "" otherwise, and when
// the recommender cannot say.
func uniformWarning(ctx context.Context, c *Config) string {
	if !c.Private || c.Contextual || c.Budget == nil || c.Budget.Mu != 0 || len(c.Arms) < recommend.MinArms || len(c.Arms) > recommend.MaxArms {
		return ""
	}
	res, err := recommendFor(ctx, len(c.Arms), c.Horizon, c.Budget)
	if err != nil {
		return ""
	}
	k := float64(len(c.Arms))
	for _, r := range res.Rows {
		if r.Policy != c.Policy {
			continue
		}
		if r.BestShare > 1.25/k || math.IsNaN(r.BestShare) {
			return ""
		}
		better := res.Recommendation
		w := fmt.Sprintf("at this budget %s is expected to play close to uniformly: in the service's own simulation (%d runs on %d instances) it played the best arm in %.0f%% of the last 20%% of the decisions, against %.0f%% for uniform play",
			c.Policy, res.Runs, len(res.Instances), 100*r.BestShare, 100/k)
		if better.Policy != "" && better.Policy != c.Policy {
			for _, b := range res.Rows {
				if b.Policy == better.Policy {
					w += fmt.Sprintf("; %s played it in %.0f%% at the same budget: consider \"policy\": %q (or \"auto\")", b.Policy, 100*b.BestShare, b.Policy)
				}
			}
		}
		return w
	}
	return ""
}
