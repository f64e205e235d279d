package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/env"
)

// Contextual simulation.
//
// A plan is contextual when its environment is a kind of package ctxenv
// (ctxenv.IsKind): its policies are then looked up with
// Registry.LookupContextual and built with Descriptor.NewContextual, and
// Setting is {K: candidates per round, Dim: feature dimension, Horizon}.
// Everything else is as for K-armed plans: equal-budget calibration,
// cells, streams, shards, merge and the output files.
//
// Each cell (entry, run) plays on its own environment instance
// Ctx.ForRun(run) driven by the run's environment stream, which depends on
// (environment, seed, run) only. ctxenv.Env.Next draws everything random
// about a round (candidates and the reward uniform) in a fixed number of
// draws whatever the policy did, so every cell of run r sees the same
// candidate sets and the same reward table: paired comparisons with common
// random numbers, as in the K-armed case.
//
// Regret. The best candidate changes every round, so the pseudo-regret is
// accumulated per round: Σ_{s≤t} (max_i μ_s(i) − μ_s(a_s)), and the
// realised regret is Σ_{s≤t} max_i μ_s(i) − Σ_{s≤t} r_s. RunResult.Oracle
// is Σ_s max_i μ_s(i) over the horizon and RunResult.Pulls counts the
// plays of each candidate slot (for the dataset environments slot a is
// action a; for synthetic-linear the slots are exchangeable).
//
// Non-private counterparts. A private contextual policy is compared with
// its non-private counterpart (Counterpart) when the plan has one: the
// summary reports 100 × its expected reward Σ_t μ_t(a_t) over that of the
// counterpart, per run (paired) and then averaged over runs, next to the
// absolute regret.

// counterparts maps each private contextual policy to the non-private policy
// it perturbs, by registry name. It is the one place this mapping is
// defined ([ADA] Table 1 reports AdaPrivate-TS as a percentage of Linear TS
// and AdaPrivate-UCB of LinUCB; Tables 3, 4 and 6 report the UCB-type
// baselines as a percentage of LinUCB).
var counterparts = map[string]string{
	"adaprivate-ts":  "lints",
	"adaprivate-ucb": "linucb",
	// Private LinUCB/LinTS of [MT] §5.1 (tree counters on A and b).
	"mt-lints":  "lints",
	"mt-linucb": "linucb",
	// The private linear baselines of [ADA] §4 are LinUCB-type.
	"jdp-linucb":      "linucb",
	"zcdp-episodic":   "linucb",
	"adac-oful":       "linucb",
	"dgs-linucb":      "linucb",
	"coreset-elim-dp": "linucb",
	"batched-agg-dp":  "linucb",
	// [ADA] Table 4's ablation baseline (noise on A and b).
	"ucb-ab-noise": "linucb",
}

// Counterpart returns the registry name of the non-private counterpart of a
// private contextual policy (adaprivate-ts → lints, adaprivate-ucb →
// linucb, the LinUCB-type private baselines → linucb), and false for a
// policy that has none.
func Counterpart(policy string) (string, bool) {
	c, ok := counterparts[policy]
	return c, ok
}

// Counterparts returns a copy of the whole mapping (private policy →
// non-private counterpart), for help texts and tests.
func Counterparts() map[string]string { return maps.Clone(counterparts) }

// Contextual reports whether the plan runs a contextual environment.
func (p *Plan) Contextual() bool { return p.Ctx != nil }

// CounterpartOf returns the index of entry i's non-private counterpart in
// p.Entries, and false when entry i has none in this plan (K-armed plans,
// non-private entries, policies without a counterpart, or a plan that does
// not include the counterpart).
func (p *Plan) CounterpartOf(i int) (int, bool) {
	if c := p.Entries[i].cp; c >= 0 {
		return c, true
	}
	return -1, false
}

// envName returns the canonical spec of the plan's environment.
func (p *Plan) envName() string {
	if p.Ctx != nil {
		return p.Ctx.Name()
	}
	return p.Env.Name()
}

// kindHint explains a failed lookup when the name is a policy of the other
// kind (a contextual policy on a K-armed environment or the reverse).
func (p *Plan) kindHint(name string, reg Registry, err error) error {
	other, want := reg.LookupContextual, "a contextual environment (e.g. --env "+ctxenv.Kinds()[0].Example+")"
	if p.Contextual() {
		other, want = reg.Lookup, "a K-armed environment (e.g. --env "+env.Kinds()[0].Example+")"
	}
	if other == nil {
		return err
	}
	if _, e := other(name); e != nil {
		return err
	}
	return fmt.Errorf("%w; %s is a policy for %s, not for %s", err, name, want, p.Spec.Env)
}

// tryBuild builds a policy once (and discards it) so that parameter errors
// surface when the plan is made.
func (p *Plan) tryBuild(d bandit.Descriptor, params bandit.Params) error {
	r := bandit.NewRand(1, 2)
	if p.Contextual() {
		if d.NewContextual == nil {
			return fmt.Errorf("%s is not a contextual policy", d.Name)
		}
		_, err := d.NewContextual(p.Setting, params, r)
		return err
	}
	if d.New == nil {
		return fmt.Errorf("%s is not a K-armed policy", d.Name)
	}
	_, err := d.New(p.Setting, params, r)
	return err
}

// matchCounterparts sets each private contextual entry's counterpart: among
// the plan's non-private entries of the counterpart policy, the one that
// agrees with it on the most shared parameters (λ, v, α, …), the earliest on
// ties.
func (p *Plan) matchCounterparts() {
	for i := range p.Entries {
		en := &p.Entries[i]
		en.cp = -1
		if !p.Contextual() || !en.Private {
			continue
		}
		want, ok := counterparts[en.Spec.Name]
		if !ok {
			continue
		}
		best := -1
		for j := range p.Entries {
			c := &p.Entries[j]
			if c.Private || c.Spec.Name != want {
				continue
			}
			score := 0
			for k, v := range c.Params {
				if w, ok := en.Params[k]; ok && w == v {
					score++
				}
			}
			if best < 0 || score > best {
				best, en.cp = score, j
			}
		}
	}
}

// runContextualCell runs one cell of a contextual plan.
func (p *Plan) runContextualCell(ctx context.Context, entry, run int, pr *progress) (RunResult, error) {
	en := &p.Entries[entry]
	er, polr := p.Streams(entry, run)
	pol, err := en.desc.NewContextual(p.Setting, en.Params, polr)
	if err != nil {
		return RunResult{}, fmt.Errorf("%s, run %d: %w", en.Name, run, err)
	}
	e := p.Ctx.ForRun(run)
	k, d := e.K(), e.Dim()
	out := RunResult{Entry: entry, Run: run,
		Pseudo: make([]float64, len(p.Checkpoints)), Realised: make([]float64, len(p.Checkpoints)),
		Pulls: make([]int64, k)}
	cands := candidateBuffers(k, d)
	var tick func(int) bool
	if pr != nil {
		tick = func(rounds int) bool {
			pr.add(int64(rounds), 0)
			return ctx.Err() == nil
		}
	}
	if err := playContextual(pol, e, er, cands, p.Checkpoints, &out, tick); err != nil {
		if errors.Is(err, errStopped) {
			return RunResult{}, ctx.Err()
		}
		return RunResult{}, fmt.Errorf("%s, run %d: %w", en.Name, run, err)
	}
	return out, nil
}

// candidateBuffers returns k buffers of length d over one backing array.
func candidateBuffers(k, d int) [][]float64 {
	back := make([]float64, k*d)
	out := make([][]float64, k)
	for i := range out {
		out[i] = back[i*d : (i+1)*d : (i+1)*d]
	}
	return out
}

// playContextual runs rounds 1..T (T = cps[len(cps)−1]) of one contextual
// cell: Next on the environment stream r (which fills cands), Select,
// Reward/Mean/Best of the chosen candidate, Update with its features. It
// accumulates the pseudo-regret Σ (Best_t − Mean_t(a_t)), the oracle reward
// Σ Best_t and the reward Σ r_t, records the pseudo- and realised regret at
// each checkpoint and calls tick (if non-nil) with the rounds since the
// last call; tick returning false stops the run with errStopped. out's
// slices must be allocated (len(cps), len(cps), K). It does not allocate
// (tested).
func playContextual(pol bandit.Contextual, e ctxenv.Env, r *rand.Rand, cands [][]float64, cps []int,
	out *RunResult, tick func(int) bool) error {
	k := uint(e.K())
	cands = cands[:k]
	pulls := out.Pulls[:k]
	T := cps[len(cps)-1]
	ci, next, last := 0, cps[0], 0
	sum, oracle, pseudo := 0.0, 0.0, 0.0
	for t := 1; t <= T; t++ {
		e.Next(r, cands)
		a := pol.Select(cands)
		if uint(a) >= k {
			return fmt.Errorf("round %d: policy selected candidate %d, outside [0, %d)", t, a, k)
		}
		x := e.Reward(a)
		best := e.Best()
		pseudo += best - e.Mean(a)
		oracle += best
		sum += x
		pulls[a]++
		pol.Update(cands[a], x)
		if t == next {
			out.Pseudo[ci] = pseudo
			out.Realised[ci] = oracle - sum
			ci++
			if ci < len(cps) {
				next = cps[ci]
			}
			if tick != nil && !tick(t-last) {
				return errStopped
			}
			last = t
		}
	}
	out.Reward = sum
	out.Oracle = oracle
	return nil
}

// ctxStats are the contextual columns of one entry: expected and oracle
// reward, and the percentage of the counterpart's expected reward.
type ctxStats struct {
	expected, oracle float64
	cp               string
	pct, pctSE       float64
	hasPct           bool
}

// contextualStats computes entry i's contextual summary from the ordered
// runs of the plan (R runs per entry).
func (p *Plan) contextualStats(i int, runs []RunResult) ctxStats {
	R := p.Spec.Runs
	last := len(p.Checkpoints) - 1
	cell := runs[i*R : (i+1)*R]
	col := make([]float64, R)
	var st ctxStats
	for k, rr := range cell {
		col[k] = rr.Oracle - rr.Pseudo[last]
	}
	st.expected, _ = meanStderr(col)
	for k, rr := range cell {
		col[k] = rr.Oracle
	}
	st.oracle, _ = meanStderr(col)
	c, ok := p.CounterpartOf(i)
	if !ok {
		return st
	}
	st.cp = p.Entries[c].Name
	base := runs[c*R : (c+1)*R]
	for k, rr := range cell {
		b := base[k].Oracle - base[k].Pseudo[last]
		if !(b > 0) {
			return st // a run where the counterpart earned nothing: no percentage
		}
		col[k] = 100 * (rr.Oracle - rr.Pseudo[last]) / b
	}
	st.pct, st.pctSE = meanStderr(col)
	st.hasPct = true
	return st
}

// Pct returns 100 × the expected reward of entry i over that of entry j,
// run by run (paired), as the mean and standard error over runs. It is how
// the summary's pct_of_counterpart is computed, for any pair of entries of a
// contextual plan (e.g. "% of LinUCB" for a TS-type policy). ok is false for
// K-armed aggregates and when entry j's expected reward is 0 in some run.
func (a *Aggregate) Pct(i, j int) (mean, stderr float64, ok bool) {
	p := a.Plan
	if !p.Contextual() {
		return 0, 0, false
	}
	R := p.Spec.Runs
	last := len(p.Checkpoints) - 1
	col := make([]float64, R)
	for k := range R {
		x, y := a.Runs[i*R+k], a.Runs[j*R+k]
		b := y.Oracle - y.Pseudo[last]
		if !(b > 0) {
			return 0, 0, false
		}
		col[k] = 100 * (x.Oracle - x.Pseudo[last]) / b
	}
	mean, stderr = meanStderr(col)
	return mean, stderr, true
}
