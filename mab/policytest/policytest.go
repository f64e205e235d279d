// Package policytest is the conformance suite for K-armed policies
// (bandit.Policy registered through a bandit.Descriptor), in the manner of
// testing/slogtest: a policy package calls Run from its tests for every
// descriptor it registers, and Run checks the contracts that the simulator,
// the reproductions and the decision service rely on (the contracts of
// package bandit; issue 3 "Acceptance"):
//
//   - parameters: every default lies in its range, Complete rejects a value
//     outside the range (below, above, NaN, non-integer) with an error naming
//     the parameter, and rejects unknown names; New rejects K = 0;
//   - determinism: two runs with the same seeds choose the same arms;
//   - arms lie in [0, K), and the pull counts sum to T;
//   - Select and Update do not allocate after warm-up (testing.AllocsPerRun
//     over half a run);
//   - the privacy report is present and consistent: certified notion "none"
//     exactly when the descriptor is not Private; a finite ε at δ ∈ {1e-5,
//     1e-6} for private policies; certified ε ≤ the paper's ε wherever the
//     paper's value is valid (Report.PaperValid); the policy's own Privacy()
//     after T rounds equals the descriptor's Report;
//   - a bandit.Metered policy's NextCost is in the certified notion and its
//     composition over a run (Σμ² for GDP, Σρ for zCDP, Σε for pure DP,
//     order-wise Σε(α) for RDP) does not exceed the certified value;
//   - a policy implementing json.Marshaler and json.Unmarshaler continues
//     identically (and ends in the same state) after its state is saved
//     mid-run and restored into a fresh policy whose generator is restored
//     separately, and refuses another policy's state.
//
// The kind-independent checks are shared with linear/lineartest through
// bandit/conformance.
//
// The environment is a small Bernoulli bandit local to this package (means
// spread evenly over [0.1, 0.9]), so the suite does not depend on env.
package policytest

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
	PolicySeed1, PolicySeed2 = 0x5eed, 0x9011c7
	EnvSeed1, EnvSeed2       = 0xe57, 0xb4d17
)

// Bernoulli is a K-armed Bernoulli environment with its own generator.
type Bernoulli struct {
	means []float64
	best  float64
	r     *rand.Rand
}

// NewBernoulli returns a Bernoulli environment with the given means in [0, 1]
// (copied), drawing rewards from r. It panics on a mean outside [0, 1].
func NewBernoulli(means []float64, r *rand.Rand) *Bernoulli {
	e := &Bernoulli{means: append([]float64(nil), means...), best: math.Inf(-1), r: r}
	for _, m := range means {
		if !(m >= 0 && m <= 1) {
			panic(fmt.Sprintf("policytest: Bernoulli mean %v outside [0, 1]", m))
		}
		e.best = max(e.best, m)
	}
	return e
}

// SpreadMeans returns K means evenly spaced from 0.9 (arm 0) down to 0.1
// (arm K−1); 0.5 when K = 1.
func SpreadMeans(k int) []float64 {
	m := make([]float64, k)
	for i := range m {
		if k == 1 {
			m[i] = 0.5
		} else {
			m[i] = 0.9 - 0.8*float64(i)/float64(k-1)
		}
	}
	return m
}

// K returns the number of arms.
func (e *Bernoulli) K() int { return len(e.means) }

// Mean returns arm a's mean.
func (e *Bernoulli) Mean(a int) float64 { return e.means[a] }

// Best returns the largest mean.
func (e *Bernoulli) Best() float64 { return e.best }

// Pull draws arm a's reward, 1 with probability Mean(a) and 0 otherwise.
func (e *Bernoulli) Pull(a int) float64 {
	if e.r.Float64() < e.means[a] {
		return 1
	}
	return 0
}

// Result is the outcome of Play.
type Result struct {
	Arms         []int   // the arm of every round
	Counts       []int   // pulls per arm
	Reward       float64 // Σ rewards
	PseudoRegret float64 // Σ_t (best mean − mean of a_t)
}

// RealisedRegret returns T·best − Σ rewards.
func (r Result) RealisedRegret(best float64) float64 {
	return float64(len(r.Arms))*best - r.Reward
}

// Play runs p on e for T rounds (Select, Pull, Update). It returns an error at
// the first arm outside [0, K).
func Play(p bandit.Policy, e *Bernoulli, T int) (Result, error) {
	res := Result{Arms: make([]int, T), Counts: make([]int, e.K())}
	for t := range T {
		a := p.Select()
		if a < 0 || a >= e.K() {
			return res, fmt.Errorf("round %d: Select returned arm %d outside [0, %d)", t, a, e.K())
		}
		x := e.Pull(a)
		p.Update(a, x)
		res.Arms[t] = a
		res.Counts[a]++
		res.Reward += x
		res.PseudoRegret += e.best - e.means[a]
	}
	return res, nil
}

// Run checks descriptor d at setting s with parameters p (the user's
// parameters; Run completes them with d.Complete) as subtests of t. The
// horizon s.Horizon is the number of rounds played; keep it small (a few
// thousand rounds) so the suite stays fast.
func Run(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	t.Helper()
	if d.Name == "" || d.New == nil || d.Report == nil {
		t.Fatalf("descriptor %q: Name, New and Report must be set", d.Name)
	}
	if s.K < 1 || s.Horizon < 4 {
		t.Fatalf("%s: policytest needs K ≥ 1 and T ≥ 4 (K = %d, T = %d)", d.Name, s.K, s.Horizon)
	}
	params, err := d.Complete(p)
	if err != nil {
		t.Fatalf("%s: Complete(%v): %v", d.Name, p, err)
	}
	t.Run("params", func(t *testing.T) { checkParams(t, d, s) })
	t.Run("determinism", func(t *testing.T) { checkDeterminism(t, d, s, params) })
	t.Run("report", func(t *testing.T) { checkReport(t, d, s, params) })
	t.Run("allocs", func(t *testing.T) { checkAllocs(t, d, s, params) })
	t.Run("metered", func(t *testing.T) { checkMetered(t, d, s, params) })
	t.Run("state", func(t *testing.T) { checkState(t, d, s, params) })
}

func newPolicy(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params, src *rand.PCG) bandit.Policy {
	t.Helper()
	pol, err := d.New(s, p, rand.New(src))
	if err != nil {
		t.Fatalf("%s: New(%+v, %v): %v", d.Name, s, p, err)
	}
	return pol
}

func newEnv(k int) *Bernoulli {
	return NewBernoulli(SpreadMeans(k), rand.New(rand.NewPCG(EnvSeed1, EnvSeed2)))
}

// stepper returns one round of pol on env (Select, Pull, Update).
func stepper(pol bandit.Policy, env *Bernoulli) func() {
	return func() {
		a := pol.Select()
		pol.Update(a, env.Pull(a))
	}
}

func checkParams(t *testing.T, d bandit.Descriptor, s bandit.Setting) {
	conformance.CheckParams(t, d, "New", "K = 0", func(params bandit.Params) error {
		_, err := d.New(bandit.Setting{K: 0, Horizon: s.Horizon}, params, rand.New(rand.NewPCG(1, 2)))
		return err
	})
}

func checkDeterminism(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	var runs [2]Result
	for i := range runs {
		pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
		res, err := Play(pol, newEnv(s.K), s.Horizon)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		runs[i] = res
	}
	if i := conformance.FirstDifference(runs[0].Arms, runs[1].Arms); i >= 0 {
		t.Fatalf("same seeds, different arms at round %d: %d vs %d", i, runs[0].Arms[i], runs[1].Arms[i])
	}
	sum := 0
	for _, c := range runs[0].Counts {
		sum += c
	}
	if sum != s.Horizon {
		t.Errorf("pull counts sum to %d, want T = %d", sum, s.Horizon)
	}
}

func checkReport(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
	conformance.CheckReport(t, d, s, p, pol, func() error {
		_, err := Play(pol, newEnv(s.K), s.Horizon)
		return err
	})
}

func checkAllocs(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
	// Rounds 1..T/2 warm up, rounds T/2+1..T are measured.
	conformance.CheckAllocs(t, s.Horizon/2, stepper(pol, newEnv(s.K)))
}

func checkMetered(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	pol := newPolicy(t, d, s, p, rand.NewPCG(PolicySeed1, PolicySeed2))
	conformance.CheckMetered(t, d, s, p, pol, stepper(pol, newEnv(s.K)))
}

func checkState(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params) {
	conformance.CheckState(t, conformance.StateRun{
		Horizon:    s.Horizon,
		PolicySeed: [2]uint64{PolicySeed1, PolicySeed2},
		EnvSeed:    [2]uint64{EnvSeed1, EnvSeed2},
		New:        func(src *rand.PCG) any { return newPolicy(t, d, s, p, src) },
		Play: func(pol any, envSrc *rand.PCG, n int) ([]int, error) {
			res, err := Play(pol.(bandit.Policy), NewBernoulli(SpreadMeans(s.K), rand.New(envSrc)), n)
			return res.Arms, err
		},
	})
}
