package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/env"
)

// Options say how a plan is executed. They do not change the results.
type Options struct {
	// Workers bounds the number of cells run at once (≤ 0: GOMAXPROCS).
	Workers int
	// Shard selects the cells this process runs (zero value: all).
	Shard Shard
	// Progress, if non-nil, is called after each checkpoint of each cell
	// and when a cell finishes (after it is saved to Cache). Calls are
	// serialised (never concurrent) but come from worker goroutines; keep
	// it cheap.
	Progress func(Progress)
	// Cache, if non-nil, resumes a run: cells found in it are not run
	// again, and every cell run is saved to it as soon as it finishes. It
	// must have been opened for this plan.
	Cache *CellCache
}

// Progress is the state of a running sweep (this shard's cells only).
type Progress struct {
	Cells, CellsDone   int
	Rounds, RoundsDone int64
	// Resumed counts the cells (included in CellsDone) taken from the
	// cache instead of being run.
	Resumed int
}

// RunResult is the raw outcome of one cell (entry, run): regret at the
// plan's checkpoints, pulls per arm and the total reward.
type RunResult struct {
	Entry int `json:"entry"` // index into Plan.Entries
	Run   int `json:"run"`
	// Pseudo[i] is the pseudo-regret Σ_{s≤t}(μ* − μ_{a_s}) at t = Checkpoints[i],
	// computed as Σ_a n_a(t)·(μ* − μ_a).
	Pseudo []float64 `json:"pseudo"`
	// Realised[i] is the realised regret μ*·t − Σ_{s≤t} r_s at t = Checkpoints[i].
	Realised []float64 `json:"realised"`
	Pulls    []int64   `json:"pulls"`  // pulls per arm; they sum to the horizon
	Reward   float64   `json:"reward"` // Σ r_t over the horizon
	// Oracle is Σ_t max_i μ_t(i) over the horizon, the expected reward of
	// the best candidate of every round (contextual plans only; zero and
	// omitted for K-armed plans, where it is Best·T). The policy's expected
	// reward Σ_t μ_t(a_t) is Oracle − Pseudo[last].
	Oracle float64 `json:"oracle,omitempty"`
}

// Result is the outcome of running a plan, or this shard's part of it.
type Result struct {
	Plan  *Plan
	Shard Shard
	// Runs are the cells run, in cell order (entry-major, then run).
	Runs []RunResult
	// Resumed counts the cells of Runs taken from Options.Cache.
	Resumed int
}

// Run executes the plan's cells selected by o.Shard on a bounded pool of
// o.Workers goroutines. Each cell is independent of the others and of the
// schedule, so the results are identical for every Workers value and, after
// Merge, for every sharding. Cancelling ctx stops the cells at their next
// checkpoint and returns ctx's error; the cells finished by then are in
// o.Cache, if given, and a later Run with the same cache runs only the
// others (the result is the same as an uninterrupted run's).
func (p *Plan) Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Shard.check(); err != nil {
		return nil, err
	}
	if o.Cache != nil && o.Cache.plan != p && o.Cache.key != p.CacheKey() {
		return nil, errors.New("sim: the cell cache was opened for another plan")
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var cells []int
	for c := range p.Cells() {
		if o.Shard.owns(c) {
			cells = append(cells, c)
		}
	}
	pr := &progress{fn: o.Progress, p: Progress{Cells: len(cells), Rounds: int64(len(cells)) * int64(p.Spec.Horizon)}}
	res := &Result{Plan: p, Shard: o.Shard, Runs: make([]RunResult, len(cells))}
	var todo []int // indices into cells still to run
	for i, c := range cells {
		if o.Cache != nil {
			if r, ok := o.Cache.Load(c/p.Spec.Runs, c%p.Spec.Runs); ok {
				res.Runs[i] = r
				res.Resumed++
				pr.resumed(int64(p.Spec.Horizon))
				continue
			}
		}
		todo = append(todo, i)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, i := range todo {
		if gctx.Err() != nil {
			break
		}
		c := cells[i]
		g.Go(func() error {
			r, err := p.runCell(gctx, c/p.Spec.Runs, c%p.Spec.Runs, pr)
			if err != nil {
				return err
			}
			if o.Cache != nil {
				if err := o.Cache.Save(r); err != nil {
					return err
				}
			}
			res.Runs[i] = r
			pr.add(0, 1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// RunCell runs one cell alone (for tests and for reproducing one run from a
// manifest).
func (p *Plan) RunCell(entry, run int) (RunResult, error) {
	return p.runCell(context.Background(), entry, run, nil)
}

func (p *Plan) runCell(ctx context.Context, entry, run int, pr *progress) (RunResult, error) {
	if p.Ctx != nil {
		return p.runContextualCell(ctx, entry, run, pr)
	}
	en := &p.Entries[entry]
	er, polr := p.Streams(entry, run)
	pol, err := en.desc.New(p.Setting, en.Params, polr)
	if err != nil {
		return RunResult{}, fmt.Errorf("%s, run %d: %w", en.Name, run, err)
	}
	k := p.Setting.K
	out := RunResult{Entry: entry, Run: run,
		Pseudo: make([]float64, len(p.Checkpoints)), Realised: make([]float64, len(p.Checkpoints)),
		Pulls: make([]int64, k)}
	gaps := make([]float64, k)
	for a, m := range p.Means {
		gaps[a] = p.Best - m
	}
	var tick func(int) bool
	if pr != nil {
		tick = func(rounds int) bool {
			pr.add(int64(rounds), 0)
			return ctx.Err() == nil
		}
	}
	if err := play(pol, p.Env, er, p.Checkpoints, gaps, p.Best, &out, tick); err != nil {
		if errors.Is(err, errStopped) {
			return RunResult{}, ctx.Err()
		}
		return RunResult{}, fmt.Errorf("%s, run %d: %w", en.Name, run, err)
	}
	return out, nil
}

var errStopped = errors.New("stopped")

// play runs rounds 1..T (T = cps[len(cps)−1]) of one cell: Select, Pull on
// the environment stream r, Update. At each checkpoint it records the
// pseudo-regret Σ_a n_a·gap_a and the realised regret best·t − Σ r_s into
// out and calls tick (if non-nil) with the rounds since the last call; tick
// returning false stops the run with errStopped. out's slices must be
// allocated (len(cps), len(cps), K). play does not allocate (tested).
func play(pol bandit.Policy, e env.Env, r *rand.Rand, cps []int, gaps []float64, best float64,
	out *RunResult, tick func(int) bool) error {
	k := uint(len(gaps))
	pulls := out.Pulls[:k]
	T := cps[len(cps)-1]
	ci, next, last := 0, cps[0], 0
	sum := 0.0
	for t := 1; t <= T; t++ {
		a := pol.Select()
		if uint(a) >= k {
			return fmt.Errorf("round %d: policy selected arm %d, outside [0, %d)", t, a, k)
		}
		x := e.Pull(a, r)
		pol.Update(a, x)
		pulls[a]++
		sum += x
		if t == next {
			pseudo := 0.0
			for i, n := range pulls {
				pseudo += float64(n) * gaps[i]
			}
			out.Pseudo[ci] = pseudo
			out.Realised[ci] = best*float64(t) - sum
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
	return nil
}

// progress aggregates the progress of the workers and serialises calls.
type progress struct {
	mu sync.Mutex
	p  Progress
	fn func(Progress)
}

// resumed counts one cell taken from the cache, with its rounds.
func (pr *progress) resumed(rounds int64) {
	if pr.fn == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.p.Resumed++
	pr.p.RoundsDone += rounds
	pr.p.CellsDone++
	pr.fn(pr.p)
}

func (pr *progress) add(rounds int64, cells int) {
	if pr.fn == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.p.RoundsDone += rounds
	pr.p.CellsDone += cells
	pr.fn(pr.p)
}
