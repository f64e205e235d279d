package ctxenv

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/dpbandit/dpbandit/env"
)

// Link is the map from the linear score θ*ᵀx to the mean reward of the
// synthetic environment.
type Link int

const (
	// Logistic: μ(x) = σ(θ*ᵀx) = 1/(1 + e^{−θ*ᵀx}) ([ADA] §4; docs/reproductions.md E12, assumed
	// there). With ‖x‖ = 1 and ‖θ*‖ = 2, μ ∈ [σ(−2), σ(2)] ≈ [0.119, 0.881].
	Logistic Link = iota
	// Linear: μ(x) = clamp((1 + θ*ᵀx/‖θ*‖)/2, 0, 1). With ‖x‖ ≤ 1 the clamp
	// never binds and μ ∈ [0, 1]. The model is affine with intercept ½: a
	// linear policy without an intercept is misspecified by the constant,
	// which does not change which candidate is best. ‖θ*‖ (theta) does not
	// matter under this link.
	Linear
)

// String returns "logistic" or "linear".
func (l Link) String() string {
	switch l {
	case Logistic:
		return "logistic"
	case Linear:
		return "linear"
	}
	return "Link(" + strconv.Itoa(int(l)) + ")"
}

// SyntheticOptions configures [NewSynthetic]. The zero value is not valid;
// [DefaultSyntheticOptions] gives docs/reproductions.md E12 ([ADA] §4).
type SyntheticOptions struct {
	D      int     // feature dimension, in [1, 10000]
	Pool   int     // number of arms in the pool, in [1, 10^6]; Pool·D ≤ 5·10^7
	K      int     // candidates per round, in [1, Pool]
	Theta  float64 // ‖θ*‖, in (0, 10^6]
	Link   Link    // Logistic or Linear
	Seed   uint64  // problem seed: selects the pool and θ*
	PerRun bool    // draw a new problem per run (ForRun(run)) instead of one for all runs
}

// DefaultSyntheticOptions returns docs/reproductions.md E12 ([ADA] §4): d = 20, a pool of 100, 5
// candidates, ‖θ*‖ = 2, logistic link, problem seed 1, one problem for all
// runs.
func DefaultSyntheticOptions() SyntheticOptions {
	return SyntheticOptions{D: 20, Pool: 100, K: 5, Theta: 2, Link: Logistic, Seed: 1}
}

// Valid ranges of the synthetic options.
const (
	maxSynthD        = 10000
	maxSynthPool     = 1000000
	maxSynthPoolD    = 50000000
	maxSynthTheta    = 1e6
	syntheticProblem = 0x63747873796e7468 // "ctxsynth": domain tag of the problem stream
)

// validate reports the first invalid option.
func (o SyntheticOptions) validate() error {
	switch {
	case o.D < 1 || o.D > maxSynthD:
		return specErrorf("synthetic-linear d=%d is outside [1,%d]", o.D, maxSynthD)
	case o.Pool < 1 || o.Pool > maxSynthPool:
		return specErrorf("synthetic-linear pool=%d is outside [1,%d]", o.Pool, maxSynthPool)
	case o.Pool*o.D > maxSynthPoolD:
		return specErrorf("synthetic-linear pool×d = %d×%d exceeds %d features", o.Pool, o.D, maxSynthPoolD)
	case o.K < 1 || o.K > o.Pool:
		return specErrorf("synthetic-linear k=%d is outside [1,pool=%d]", o.K, o.Pool)
	case !(o.Theta > 0 && o.Theta <= maxSynthTheta):
		return specErrorf("synthetic-linear theta=%s is outside (0,%g]", fmtFloat(o.Theta), maxSynthTheta)
	case o.Link != Logistic && o.Link != Linear:
		return specErrorf("synthetic-linear link %v is not logistic or linear", o.Link)
	}
	return nil
}

// synthProblem is the immutable part of a synthetic environment.
type synthProblem struct {
	pool  []float64 // Pool×D, row j = arm j, unit norm
	theta []float64 // θ*, norm Theta
	means []float64 // μ(x_j) per pool arm
}

// Synthetic is the synthetic contextual environment of docs/reproductions.md E12 ([ADA] §4): a pool
// of arms with features drawn from N(0, I_d) and normalised to unit norm,
// θ* drawn from N(0, I_d) and rescaled to ‖θ*‖ = Theta, K candidates per
// round drawn uniformly without replacement from the pool, and reward
// Bernoulli(μ(x)) with μ given by the [Link].
//
// The problem (pool and θ*) is a deterministic function of (Seed, run): it
// is drawn from the PCG stream env.Streams(0x63747873796e7468 ⊕ Seed, 0,
// run)'s environment stream (the same mixing as every other stream of the
// project, under its own domain tag), pool rows first, each by D NormFloat64
// then normalised, then θ* by D NormFloat64 then rescaled. With
// PerRun = false, run is 0 for every instance: all runs (and all seeds of a
// sweep) face the same problem, and only the candidate sequence and the
// rewards vary; change Seed for another problem. With PerRun = true,
// ForRun(run) draws the problem of that run (run 0 being the problem of
// PerRun = false), so a sweep averages over problems as well.
//
// Construct it with [NewSynthetic] or [Parse]. See [Env] for concurrency.
type Synthetic struct {
	opt  SyntheticOptions
	prob *synthProblem
	perm []int32 // persistent partial Fisher–Yates state
	cur  []int32 // pool indices of the current candidates (a prefix of perm)
	u    float64 // the round's uniform
	best float64
}

// NewSynthetic builds the synthetic environment of run 0. The error wraps
// [ErrSpec] and names the first bad option and its valid range. Cost:
// O(Pool·D) to draw the problem.
func NewSynthetic(o SyntheticOptions) (*Synthetic, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return newSyntheticRun(o, newSynthProblem(o, 0)), nil
}

func newSyntheticRun(o SyntheticOptions, p *synthProblem) *Synthetic {
	return &Synthetic{opt: o, prob: p, perm: identity(o.Pool)}
}

// newSynthProblem draws the pool and θ* of run.
func newSynthProblem(o SyntheticOptions, run int) *synthProblem {
	es, _ := env.StreamSeeds(syntheticProblem^o.Seed, 0, run)
	r := rand.New(rand.NewPCG(es[0], es[1]))
	d := o.D
	p := &synthProblem{
		pool:  make([]float64, o.Pool*d),
		theta: make([]float64, d),
		means: make([]float64, o.Pool),
	}
	for j := range o.Pool {
		unitGaussian(r, p.pool[j*d:(j+1)*d], 1)
	}
	unitGaussian(r, p.theta, o.Theta)
	for j := range o.Pool {
		s := dot(p.theta, p.pool[j*d:(j+1)*d])
		switch o.Link {
		case Logistic:
			p.means[j] = sigmoid(s)
		case Linear:
			p.means[j] = min(max((1+s/o.Theta)/2, 0), 1)
		}
	}
	return p
}

// unitGaussian fills x with N(0, I) draws rescaled to norm scale (redrawing
// the measure-zero event x = 0).
func unitGaussian(r *rand.Rand, x []float64, scale float64) {
	for {
		for i := range x {
			x[i] = r.NormFloat64()
		}
		if n := math.Sqrt(dot(x, x)); n > 0 {
			for i := range x {
				x[i] *= scale / n
			}
			return
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// sigmoid returns 1/(1+e^{−s}) without overflow.
func sigmoid(s float64) float64 {
	if s >= 0 {
		return 1 / (1 + math.Exp(-s))
	}
	e := math.Exp(s)
	return e / (1 + e)
}

// Options returns the options the environment was built with.
func (e *Synthetic) Options() SyntheticOptions { return e.opt }

// Theta returns a copy of θ*.
func (e *Synthetic) Theta() []float64 { return append([]float64(nil), e.prob.theta...) }

// PoolSize returns the number of arms in the pool.
func (e *Synthetic) PoolSize() int { return e.opt.Pool }

// PoolArm returns a copy of the features of pool arm j.
func (e *Synthetic) PoolArm(j int) []float64 {
	d := e.opt.D
	return append([]float64(nil), e.prob.pool[j*d:(j+1)*d]...)
}

// PoolMean returns the mean reward of pool arm j.
func (e *Synthetic) PoolMean(j int) float64 { return e.prob.means[j] }

// Candidate returns the pool index of candidate i of the current round.
func (e *Synthetic) Candidate(i int) int { return int(e.cur[i]) }

// Dim returns d.
func (e *Synthetic) Dim() int { return e.opt.D }

// K returns the number of candidates per round.
func (e *Synthetic) K() int { return e.opt.K }

// Next draws K pool arms uniformly without replacement (K draws, partial
// Fisher–Yates) and the round's uniform (1 draw), and copies the arms'
// features into cands. O(K·D).
func (e *Synthetic) Next(r *rand.Rand, cands [][]float64) {
	d, k := e.opt.D, e.opt.K
	checkCands(cands, k, d)
	e.cur = partialShuffle(r, e.perm, k)
	e.u = env.Uniform(r)
	best := 0.0
	for i, j := range e.cur {
		copy(cands[i][:d], e.prob.pool[int(j)*d:(int(j)+1)*d])
		best = max(best, e.prob.means[j])
	}
	e.best = best
}

// Reward returns 1 if 1 − U_t < Mean(i), else 0.
func (e *Synthetic) Reward(i int) float64 {
	if e.cur == nil {
		return 0
	}
	return bernoulli(e.u, e.prob.means[e.cur[i]])
}

// Mean returns μ of candidate i.
func (e *Synthetic) Mean(i int) float64 {
	if e.cur == nil {
		return 0
	}
	return e.prob.means[e.cur[i]]
}

// Best returns the largest mean among the current candidates.
func (e *Synthetic) Best() float64 { return e.best }

// Name returns the canonical spec, e.g.
// "synthetic-linear:d=20,pool=100,k=5,theta=2,link=logistic,seed=1,problem=fixed".
func (e *Synthetic) Name() string {
	o := e.opt
	problem := "fixed"
	if o.PerRun {
		problem = "per-run"
	}
	return "synthetic-linear:d=" + strconv.Itoa(o.D) + ",pool=" + strconv.Itoa(o.Pool) +
		",k=" + strconv.Itoa(o.K) + ",theta=" + fmtFloat(o.Theta) + ",link=" + o.Link.String() +
		",seed=" + strconv.FormatUint(o.Seed, 10) + ",problem=" + problem
}

// ForRun returns a fresh instance for run: the same problem unless
// PerRun, in which case the problem of run (O(Pool·D) to draw).
func (e *Synthetic) ForRun(run int) Env {
	if e.opt.PerRun {
		return newSyntheticRun(e.opt, newSynthProblem(e.opt, run))
	}
	return newSyntheticRun(e.opt, e.prob)
}
