package linear

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/linear/lineartest"
	"github.com/dpbandit/dpbandit/privacy"
	"gonum.org/v1/gonum/mat"
)

// The baselines' shared tests: the conformance suite for every baseline
// descriptor, learning on ctxenv's synthetic problem, JSON round trips on
// it, calibration to an equal budget, and the certified λ_min bound.

// blNames lists the baseline descriptors of this package's baseline files.
var blNames = []string{"mt-linucb", "mt-lints", "jdp-linucb", "zcdp-episodic", "adac-oful", "dgs-linucb", "coreset-elim-dp", "batched-agg-dp"}

// blSmallParams are parameters that make the batched baselines release
// within the short horizons of the tests.
func blSmallParams(name string) bandit.Params {
	switch name {
	case "coreset-elim-dp", "batched-agg-dp":
		return bandit.Params{"batch": 50}
	}
	return nil
}

func TestBaselineConformance(t *testing.T) {
	for _, name := range blNames {
		t.Run(name, func(t *testing.T) {
			d, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			lineartest.Run(t, d, bandit.Setting{Dim: 5, K: 5, Horizon: 600}, blSmallParams(name))
		})
	}
}

// BLEnvSpec is the learning problem of the tests.
const BLEnvSpec = "synthetic-linear:d=5,pool=50,k=5"

// BLEnv is the part of a ctxenv.Env the tests use. The environment comes
// from BLNewEnv, which baseline_env_test.go (package linear_test) sets to
// ctxenv.Parse(BLEnvSpec).ForRun(0): ctxenv imports linear (for the DP-SVD
// features), so this package's own tests cannot import ctxenv.
type BLEnv interface {
	K() int
	Dim() int
	Next(r *rand.Rand, cands [][]float64)
	Reward(i int) float64
	Mean(i int) float64
	Best() float64
}

// BLNewEnv builds a fresh instance (run 0) of an environment spec (set by
// an external test file's init, before any test runs).
var BLNewEnv func(spec string) (BLEnv, error)

func blNewEnv(t testing.TB, spec string) BLEnv {
	t.Helper()
	if BLNewEnv == nil {
		t.Fatal("BLNewEnv is not set (baseline_env_test.go)")
	}
	e, err := BLNewEnv(spec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// blPlay runs pol (nil: uniform random with the policy stream) on the
// synthetic problem for T rounds with the environment stream seeded by
// seed, and returns the pseudo-regret and the choices.
func blPlay(t testing.TB, pol bandit.Contextual, T int, seed uint64) (float64, []int) {
	t.Helper()
	run := blNewEnv(t, BLEnvSpec)
	er := rand.New(rand.NewPCG(seed, 0xe17))
	ur := rand.New(rand.NewPCG(seed, 0x7a4d))
	cands := make([][]float64, run.K())
	for i := range cands {
		cands[i] = make([]float64, run.Dim())
	}
	regret, choices := 0.0, make([]int, T)
	for s := range T {
		run.Next(er, cands)
		a := 0
		if pol == nil {
			a = ur.IntN(len(cands))
		} else {
			a = pol.Select(cands)
			pol.Update(cands[a], run.Reward(a))
		}
		regret += run.Best() - run.Mean(a)
		choices[s] = a
	}
	return regret, choices
}

// blBuild builds a registered baseline for d = 5, K = 5 and the horizon.
func blBuild(t testing.TB, name string, T int, p bandit.Params, seed uint64) bandit.Contextual {
	t.Helper()
	pol, _, err := Build(bandit.Spec{Name: name, Params: p}, bandit.Setting{Dim: 5, K: 5, Horizon: T}, rand.New(rand.NewPCG(seed, 0x90)))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// blLearnCases are the budgets at which each baseline is asked to learn at
// T = 5000 on the d = 5 problem (stated in the test's failure message).
var blLearnCases = []struct {
	name string
	p    bandit.Params
}{
	{"mt-linucb", bandit.Params{"epsilon0": 1}},
	{"mt-lints", bandit.Params{"epsilon0": 1}},
	{"jdp-linucb", bandit.Params{"epsilon": 10}},
	{"zcdp-episodic", bandit.Params{"epsilon": 5}},
	{"adac-oful", bandit.Params{"epsilon": 1}},
	{"dgs-linucb", bandit.Params{"epsilon": 5}},
	{"coreset-elim-dp", bandit.Params{"epsilon": 1}},
	{"batched-agg-dp", bandit.Params{"epsilon": 1}},
}

// TestBaselineLearns checks that every baseline beats uniform random play
// on synthetic-linear:d=5,pool=50,k=5 at T = 5000: its pseudo-regret,
// summed over 3 environment seeds, must be at most 60% of uniform random's
// on the same rounds.
func TestBaselineLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("learning runs (8 policies × 3 seeds × 5000 rounds)")
	}
	const T, ratio = 5000, 0.6
	var random float64
	for seed := range uint64(3) {
		r, _ := blPlay(t, nil, T, seed)
		random += r
	}
	for _, c := range blLearnCases {
		t.Run(c.name, func(t *testing.T) {
			var got float64
			for seed := range uint64(3) {
				r, _ := blPlay(t, blBuild(t, c.name, T, c.p, seed), T, seed)
				got += r
			}
			t.Logf("%s %v: pseudo-regret %.1f vs uniform %.1f (ratio %.3f)", c.name, c.p, got, random, got/random)
			if got > ratio*random {
				t.Errorf("%s with %v: pseudo-regret %.1f over 3 seeds is above %.0f%% of uniform random's %.1f", c.name, c.p, got, 100*ratio, random)
			}
		})
	}
}

// TestBaselineJSONContinues saves every baseline mid-run on the synthetic
// problem (after releases, phases and tree nodes exist), restores it into a
// fresh policy built with the same options and the generator restored
// separately, and checks that the rest of the run is identical. The
// environment of the restored run is a second instance advanced through
// the same rounds.
func TestBaselineJSONContinues(t *testing.T) {
	const T, half = 3000, 1700
	for _, c := range blLearnCases {
		t.Run(c.name, func(t *testing.T) {
			s := bandit.Setting{Dim: 5, K: 5, Horizon: T}
			src := rand.NewPCG(7, 0x90)
			pol, _, err := Build(bandit.Spec{Name: c.name, Params: c.p}, s, rand.New(src))
			if err != nil {
				t.Fatal(err)
			}
			envA, envB := blEnvStepper(t), blEnvStepper(t)
			for range half {
				cands, reward := envA()
				a := pol.Select(cands)
				pol.Update(cands[a], reward(a))
				envB()
			}
			state, err := pol.(json.Marshaler).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			rng, _ := src.MarshalBinary()
			src2 := &rand.PCG{}
			if err := src2.UnmarshalBinary(rng); err != nil {
				t.Fatal(err)
			}
			fresh, _, err := Build(bandit.Spec{Name: c.name, Params: c.p}, s, rand.New(src2))
			if err != nil {
				t.Fatal(err)
			}
			if err := fresh.(json.Unmarshaler).UnmarshalJSON(state); err != nil {
				t.Fatalf("UnmarshalJSON: %v", err)
			}
			for i := range T - half {
				ca, ra := envA()
				a := pol.Select(ca)
				pol.Update(ca[a], ra(a))
				cb, rb := envB()
				b := fresh.Select(cb)
				fresh.Update(cb[b], rb(b))
				if a != b {
					t.Fatalf("restored policy diverges at round %d: %d, want %d", half+i, b, a)
				}
			}
			again, _ := fresh.(json.Marshaler).MarshalJSON()
			final, _ := pol.(json.Marshaler).MarshalJSON()
			if string(again) != string(final) {
				t.Errorf("states differ at the end of the continued runs")
			}
			if err := fresh.(json.Unmarshaler).UnmarshalJSON([]byte(`{"policy":"linucb","options":{},"state":{}}`)); err == nil {
				t.Errorf("UnmarshalJSON accepted another policy's state")
			}
		})
	}
}

// blEnvStepper returns a function that advances an instance of the
// synthetic problem (environment stream seeded identically every time) by
// one round and returns the candidates and the reward function.
func blEnvStepper(t testing.TB) func() ([][]float64, func(int) float64) {
	t.Helper()
	run := blNewEnv(t, BLEnvSpec)
	er := rand.New(rand.NewPCG(3, 4))
	cands := make([][]float64, run.K())
	for i := range cands {
		cands[i] = make([]float64, run.Dim())
	}
	return func() ([][]float64, func(int) float64) {
		run.Next(er, cands)
		return cands, run.Reward
	}
}

// blMinEig returns the smallest eigenvalue of the d×d symmetric a.
func blMinEig(t testing.TB, d int, a []float64) float64 {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(d, append([]float64(nil), a...)), false) {
		t.Fatal("EigenSym failed")
	}
	return es.Values(nil)[0]
}

func TestBaselineLambdaMinBound(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, d := range []int{1, 2, 5, 20, 50} {
		for trial := range 20 {
			lambda := []float64{1e-3, 1, 10}[trial%3]
			f := blRandomSPD(r, d, lambda, 1+trial*37)
			sym := make([]float64, d*d)
			f.SymTo(sym)
			truth := blMinEig(t, d, sym)
			got := newBLEig(d).lowerBound(f, lambda)
			// The floor λ holds exactly for A = λI + Σxxᵀ; EigenSym's own
			// rounding (≈ 1e-16·‖A‖) is allowed for.
			if got > truth+1e-13*float64(d)*(lambda+float64(1+trial*37)) {
				t.Fatalf("d=%d trial %d: certified bound %v exceeds λ_min %v", d, trial, got, truth)
			}
			if got < lambda {
				t.Fatalf("d=%d trial %d: bound %v below the floor %v", d, trial, got, lambda)
			}
			// Tightness: at least 45% of λ_min (the candidate starts at 0.999
			// of the estimate and halves on failure).
			if got < 0.45*truth {
				t.Errorf("d=%d trial %d: bound %v is loose against λ_min %v", d, trial, got, truth)
			}
		}
	}
}

// blRandomSPD returns A = λI + Σ_{n} xxᵀ for n random vectors of norm ≤ 1.
func blRandomSPD(r *rand.Rand, d int, lambda float64, n int) *chol.Factor {
	f := chol.New(d, lambda)
	x := make([]float64, d)
	for range n {
		for i := range x {
			x[i] = r.NormFloat64()
		}
		blClip(x, x)
		f.Update(x)
	}
	return f
}

func TestBaselineTriIndex(t *testing.T) {
	for _, n := range []int{1, 2, 5, 21} {
		k := 0
		for i := range n {
			for j := i; j < n; j++ {
				if got := blTriIndex(n, i, j); got != k {
					t.Fatalf("blTriIndex(%d, %d, %d) = %d, want %d", n, i, j, got, k)
				}
				k++
			}
		}
	}
}

// TestBaselineCalibrate calibrates every baseline to (ε, δ) = (1, 1e-5) at
// d = 20, T = 10⁴ on both bases and checks the resulting reports: the
// certified ε never exceeds the target, equals it (to 1e-6) on the
// certified basis, and on the paper basis the paper's value is the target
// (ρ_BS16(1, 1e-5) for the zCDP baselines, ε for mt-*, the (ε, δ) of the
// σ formula for jdp-linucb).
func TestBaselineCalibrate(t *testing.T) {
	s := bandit.Setting{Dim: 20, K: 5, Horizon: 10000}
	rhoBS, _ := privacy.ZCDPRhoBS(1, 1e-5)
	type tc struct {
		name string
		user bandit.Params
	}
	cases := []tc{{"zcdp-episodic", bandit.Params{"split": 0}}}
	for _, n := range blNames {
		cases = append(cases, tc{n, nil})
	}
	for _, c := range cases {
		d, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
			got, err := d.Calibrate(s, bandit.Target{Epsilon: 1, Delta: 1e-5, Basis: basis}, c.user)
			if err != nil {
				t.Fatalf("%s %v (%s): %v", c.name, c.user, basis, err)
			}
			p := bandit.Params{}
			for k, v := range c.user {
				p[k] = v
			}
			for k, v := range got {
				p[k] = v
			}
			full, err := d.Complete(p)
			if err != nil {
				t.Fatalf("%s: calibrated parameters %v rejected: %v", c.name, got, err)
			}
			rep, err := d.Report(s, full)
			if err != nil {
				t.Fatal(err)
			}
			eps, _, err := rep.Certified.Epsilon(1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if eps > 1+1e-9 {
				t.Errorf("%s %v (%s): certified ε = %v exceeds the target 1", c.name, c.user, basis, eps)
			}
			paperValid := rep.Paper != nil && rep.PaperValid
			switch {
			case basis == bandit.BasisCertified || (rep.Paper != nil && !rep.PaperValid):
				if eps < 1-1e-6 {
					t.Errorf("%s %v (%s): certified ε = %v, want the target 1", c.name, c.user, basis, eps)
				}
			case c.name == "mt-linucb" || c.name == "mt-lints":
				if math.Abs(rep.Paper.Value-1) > 1e-12 || rep.Paper.Value > 1 {
					t.Errorf("%s (paper): paper ε = %v, want 1", c.name, rep.Paper.Value)
				}
			case c.name == "jdp-linucb":
				if full["epsilon"] != 1 || full["delta"] != 1e-5 || full["sigma"] != 0 {
					t.Errorf("jdp-linucb (paper): parameters %v, want the paper's formula at (1, 1e-5)", full)
				}
			case paperValid:
				if math.Abs(rep.Paper.Value/rhoBS-1) > 1e-12 {
					t.Errorf("%s (paper): paper ρ = %v, want ρ_BS16(1, 1e-5) = %v", c.name, rep.Paper.Value, rhoBS)
				}
			}
			t.Logf("%-16s %-9s → %v: certified ε(1e-5) = %.6f", c.name, basis, got, eps)
		}
	}
}
