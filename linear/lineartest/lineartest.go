// Package lineartest is the conformance suite for contextual policies
// (bandit.Contextual registered through a bandit.Descriptor with
// NewContextual), the contextual counterpart of mab/policytest, in the
// manner of testing/slogtest: a policy package calls Run from its tests for
// every descriptor it registers, and Run checks the contracts that the
// simulator, the reproductions and the decision service rely on (the contracts of
// package bandit):
//
//   - parameters: every default lies in its range; Complete rejects a value
//     outside the range (below, above, NaN, non-integer) with an error naming
//     the parameter, and unknown names; NewContextual rejects d = 0 with an
//     error, not a panic;
//   - determinism: two runs with the same seeds choose the same candidates;
//   - every index lies in [0, K);
//   - Select and Update do not allocate after warm-up (testing.AllocsPerRun
//     over half a run), unless Config.AllocsReason excuses it;
//   - the privacy report is present and consistent: certified notion "none"
//     exactly when the descriptor is not Private; a finite ε at δ ∈ {1e-5,
//     1e-6} for private policies; certified ε ≤ the paper's ε wherever the
//     paper's value is valid (Report.PaperValid); the policy's own Privacy()
//     after T rounds equals the descriptor's Report;
//   - a bandit.Metered policy's NextCost is in the certified notion and its
//     composition over a run (Σμ² for GDP, Σρ for zCDP, Σε for pure DP,
//     order-wise Σε(α) for RDP) does not exceed the certified value;
//   - a policy implementing json.Marshaler and json.Unmarshaler continues
//     identically after its state is saved mid-run and restored into a fresh
//     policy whose generator is restored separately, and refuses another
//     policy's state;
//   - candidates are read, not retained: scribbling over last round's
//     candidate buffers after Update does not change the next choices.
//
// The environment is a small linear-Bernoulli problem local to this package
// (Env), so the suite does not depend on ctxenv. The kind-independent checks
// are shared with mab/policytest through bandit/conformance.
package lineartest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/bandit/conformance"
)

// Fixed seeds of the suite: the policy's PCG stream and the environment's.
const (
	PolicySeed1, PolicySeed2 = 0x5eed, 0x11ea7
	EnvSeed1, EnvSeed2       = 0xe57, 0xc0de
)

// Env is a contextual linear-Bernoulli environment: θ* uniform on the unit
// sphere of R^d (fixed by the problem seed), and each round K candidates
// with uniform directions and norms uniform in [½, 1] (every candidate
// satisfies the unit-norm bound of the private policies). The reward of
// candidate x is Bernoulli((1 + θ*ᵀx)/2). The round's randomness (candidates
// and one reward uniform) comes from the generator passed to Next, a fixed
// number of draws per round, so runs are reproducible.
type Env struct {
	d, k  int
	theta []float64
	cands [][]float64
	means []float64
	u     float64
}

// NewEnv returns an environment with dimension d ≥ 1 and k ≥ 1 candidates,
// whose θ* is drawn from a PCG seeded with problem.
func NewEnv(d, k int, problem uint64) *Env {
	r := rand.New(rand.NewPCG(problem, 0x7e7a))
	e := &Env{d: d, k: k, theta: make([]float64, d), cands: make([][]float64, k), means: make([]float64, k)}
	unit(r, e.theta)
	for i := range e.cands {
		e.cands[i] = make([]float64, d)
	}
	return e
}

func unit(r *rand.Rand, v []float64) {
	var n float64
	for i := range v {
		v[i] = r.NormFloat64()
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
}

// Dim returns d. K returns the number of candidates.
func (e *Env) Dim() int { return e.d }

// K returns the number of candidates per round.
func (e *Env) K() int { return e.k }

// Theta returns θ* (owned by the environment).
func (e *Env) Theta() []float64 { return e.theta }

// Next draws a round from r and returns the candidates, owned by the
// environment and overwritten by the next call.
func (e *Env) Next(r *rand.Rand) [][]float64 {
	for i, c := range e.cands {
		unit(r, c)
		scale := 0.5 + 0.5*r.Float64()
		for j := range c {
			c[j] *= scale
		}
		var s float64
		for j, v := range c {
			s += v * e.theta[j]
		}
		e.means[i] = (1 + s) / 2
	}
	e.u = r.Float64()
	return e.cands
}

// Reward returns candidate i's reward this round: 1 if U < mean, else 0.
func (e *Env) Reward(i int) float64 {
	if e.u < e.means[i] {
		return 1
	}
	return 0
}

// Mean returns candidate i's mean reward this round.
func (e *Env) Mean(i int) float64 { return e.means[i] }

// Best returns the largest mean this round.
func (e *Env) Best() float64 {
	b := math.Inf(-1)
	for _, m := range e.means {
		b = max(b, m)
	}
	return b
}

// Result is the outcome of Play.
type Result struct {
	Choices      []int   // the candidate index of every round
	Reward       float64 // Σ rewards
	PseudoRegret float64 // Σ_t (best mean − mean of the choice)
}

// Play runs p on e for T rounds (Next, Select, Reward, Update), drawing the
// rounds from r. It returns an error at the first index outside [0, K).
func Play(p bandit.Contextual, e *Env, r *rand.Rand, T int) (Result, error) {
	res := Result{Choices: make([]int, T)}
	for t := range T {
		c := e.Next(r)
		a := p.Select(c)
		if a < 0 || a >= e.k {
			return res, fmt.Errorf("round %d: Select returned %d outside [0, %d)", t, a, e.k)
		}
		x := e.Reward(a)
		p.Update(c[a], x)
		res.Choices[t] = a
		res.Reward += x
		res.PseudoRegret += e.Best() - e.Mean(a)
	}
	return res, nil
}

// Config adjusts Run for policies with documented exceptions.
type Config struct {
	// AllocsReason, when not empty, skips the allocation check and says why
	// (e.g. secure discrete noise at batch releases allocates big integers).
	AllocsReason string
}

// Run checks descriptor d at setting s (Dim, K, Horizon) with parameters p
// (the user's parameters; Run completes them with d.Complete) as subtests
// of t. The horizon is the number of rounds played; keep it small (a few
// thousand rounds) so the suite stays fast.
func Run(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	t.Helper()
	RunConfig(t, d, s, p, Config{})
}

// RunConfig is Run with a Config.
func RunConfig(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params, c Config) {
	t.Helper()
	if d.Name == "" || d.NewContextual == nil || d.Report == nil {
		t.Fatalf("descriptor %q: Name, NewContextual and Report must be set", d.Name)
	}
	if s.Dim < 1 || s.K < 1 || s.Horizon < 4 {
		t.Fatalf("%s: lineartest needs Dim ≥ 1, K ≥ 1 and T ≥ 4 (Dim = %d, K = %d, T = %d)", d.Name, s.Dim, s.K, s.Horizon)
	}
	params, err := d.Complete(p)
	if err != nil {
		t.Fatalf("%s: Complete(%v): %v", d.Name, p, err)
	}
	t.Run("params", func(t *testing.T) { checkParams(t, d, s) })
	t.Run("determinism", func(t *testing.T) { checkDeterminism(t, d, s, params) })
	t.Run("report", func(t *testing.T) { checkReport(t, d, s, params) })
	t.Run("allocs", func(t *testing.T) {
		if c.AllocsReason != "" {
			t.Skip(c.AllocsReason)
		}
		checkAllocs(t, d, s, params)
	})
	t.Run("metered", func(t *testing.T) { checkMetered(t, d, s, params) })
	t.Run("state", func(t *testing.T) { checkState(t, d, s, params) })
	t.Run("no-retain", func(t *testing.T) { checkNoRetain(t, d, s, params) })
}

func newPolicy(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params, src *rand.PCG) bandit.Contextual {
	t.Helper()
	pol, err := d.NewContextual(s, p, rand.New(src))
	if err != nil {
		t.Fatalf("%s: NewContextual(%+v, %v): %v", d.Name, s, p, err)
	}
	return pol
}

func newEnv(s bandit.Setting) (*Env, *rand.Rand) {
	return NewEnv(s.Dim, s.K, 1), rand.New(rand.NewPCG(EnvSeed1, EnvSeed2))
}

// step plays one round of pol on e, drawing it from r (Next, Select,
// Reward, Update), and returns the round's candidates and choice.
func step(pol bandit.Contextual, e *Env, r *rand.Rand) ([][]float64, int) {
	c := e.Next(r)
	a := pol.Select(c)
	pol.Update(c[a], e.Reward(a))
	return c, a
}

// stepper returns one round of pol on a fresh environment of s.
func stepper(pol bandit.Contextual, s bandit.Setting) func() {
	e, r := newEnv(s)
	return func() { step(pol, e, r) }
}

func checkParams(t *testing.T, d bandit.Descriptor, s bandit.Setting) {
	conformance.CheckParams(t, d, "NewContextual", "Dim = 0", func(params bandit.Params) error {
		bad := s
		bad.Dim = 0
		_, err := d.NewContextual(bad, params, rand.New(rand.NewPCG(1, 2)))
		return err
	})
}

func checkDeterminism(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	var runs [2]Result
	for i := range runs {
		pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
		e, r := newEnv(s)
		res, err := Play(pol, e, r, s.Horizon)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		runs[i] = res
	}
	if i := conformance.FirstDifference(runs[0].Choices, runs[1].Choices); i >= 0 {
		t.Fatalf("same seeds, different choices at round %d: %d vs %d", i, runs[0].Choices[i], runs[1].Choices[i])
	}
}

func checkReport(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
	conformance.CheckReport(t, d, s, p, pol, func() error {
		e, r := newEnv(s)
		_, err := Play(pol, e, r, s.Horizon)
		return err
	})
}

func checkAllocs(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
	// Rounds 1..T/2 warm up, rounds T/2+1..T are measured.
	conformance.CheckAllocs(t, s.Horizon/2, stepper(pol, s))
}

func checkMetered(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
	conformance.CheckMetered(t, d, s, p, pol, stepper(pol, s))
}

func checkState(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	conformance.CheckState(t, conformance.StateRun{
		Horizon:    s.Horizon,
		PolicySeed: [2]uint64{PolicySeed1, PolicySeed2},
		EnvSeed:    [2]uint64{EnvSeed1, EnvSeed2},
		New:        func(src *rand.PCG) any { return newPolicy(t, d, s, p, src) },
		Play: func(pol any, envSrc *rand.PCG, n int) ([]int, error) {
			res, err := Play(pol.(bandit.Contextual), NewEnv(s.Dim, s.K, 1), rand.New(envSrc), n)
			return res.Choices, err
		},
	})
}

// checkNoRetain plays two copies of the policy; in one, the candidate
// buffers of each round are overwritten with garbage after Update (before
// the next round's draw refills them). A policy that keeps references to
// candidates or to x would diverge.
func checkNoRetain(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	var runs [2][]int
	for k := range runs {
		pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
		e, r := newEnv(s)
		n := min(s.Horizon, 500)
		runs[k] = make([]int, n)
		for i := range n {
			c, a := step(pol, e, r)
			runs[k][i] = a
			if k == 1 {
				for _, x := range c {
					for j := range x {
						x[j] = math.NaN()
					}
				}
			}
		}
	}
	if i := conformance.FirstDifference(runs[0], runs[1]); i >= 0 {
		t.Fatalf("overwriting the candidate buffers after Update changed the choice at round %d", i)
	}
}
