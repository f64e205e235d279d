package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/bandit/conformance"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/mab/policytest"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// Tests of serving the pure-DP epoch policies Lazy-DP-TS, Anytime-Lazy-UCB,
// AdaP-UCB and DP-SE with grid = 1: the conformance suite, the secure grid
// noise, restores that redraw nothing, the one-time ledger charge, the
// noise scale, and the refusal of tampered states.

// esvNames are the policies under test.
var esvNames = []string{"lazy-dp-ts", "anytime-lazy-ucb", "adap-ucb", "dp-se"}

// esvBuild builds a registered policy with the given parameters.
func esvBuild(t testing.TB, name string, s bandit.Setting, p bandit.Params, r *rand.Rand) bandit.Policy {
	t.Helper()
	d, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	full, err := d.Complete(p)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := d.New(s, full, r)
	if err != nil {
		t.Fatalf("%s %v: %v", name, p, err)
	}
	return pol
}

// TestEpochServeDescriptors checks what the service relies on: a Serving
// entry forcing grid = 1, a grid parameter defaulting to 0 (simulation),
// bandit.Metered, and a report in words that names the grid noise.
func TestEpochServeDescriptors(t *testing.T) {
	for _, name := range esvNames {
		d, _ := Lookup(name)
		if d.Serving == nil || d.Serving.Params["grid"] != 1 || d.Serving.DurableSelect {
			t.Errorf("%s: Serving = %+v, want grid = 1", name, d.Serving)
		}
		p, err := d.Complete(nil)
		if err != nil || p["grid"] != 0 {
			t.Errorf("%s: default grid %v (%v), want 0", name, p["grid"], err)
		}
		s := bandit.Setting{K: 3, Horizon: 100}
		for _, grid := range []float64{0, 1} {
			p["grid"] = grid
			rep, err := d.Report(s, p)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := d.New(s, p, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := pol.(bandit.Metered); !ok {
				t.Errorf("%s is not bandit.Metered", name)
			}
			own := pol.(bandit.Private).Privacy()
			for _, r := range []privacy.Report{rep, own} {
				words := "continuous Laplace"
				if grid == 1 {
					words = "snapped discrete Laplace on a power-of-two grid"
				}
				if !strings.Contains(r.Derivation, "ε-DP (event-level) for the whole reward stream") || !strings.Contains(r.Derivation, words) {
					t.Errorf("%s grid=%v: derivation %q lacks the guarantee in words or %q", name, grid, r.Derivation, words)
				}
				if r.Certified != (privacy.Guarantee{Notion: privacy.NotionPure, Value: 1}) {
					t.Errorf("%s grid=%v: certified %+v, want pure ε = 1 (the grid pays for its snapping)", name, grid, r.Certified)
				}
			}
		}
	}
}

// TestEpochServeConformance runs the checks of mab/policytest with grid = 1
// at K = 5 and K = 100: parameters, determinism, report, metered cost and
// state round trip, through bandit/conformance as policytest.Run does. The
// one check left out is policytest's zero-allocation check of Select+Update:
// a grid release allocates (big.Int arithmetic of noise.GridLaplace), so
// only Select is checked not to allocate here. TestConformance runs the
// whole suite at grid = 0.
func TestEpochServeConformance(t *testing.T) {
	for _, name := range esvNames {
		d, _ := Lookup(name)
		for _, s := range []bandit.Setting{{K: 5, Horizon: 2000}, {K: 100, Horizon: 3000}} {
			t.Run(fmt.Sprintf("%s/K=%d", name, s.K), func(t *testing.T) {
				esvConformance(t, d, s, bandit.Params{"grid": 1})
			})
		}
	}
}

func esvConformance(t *testing.T, d bandit.Descriptor, s bandit.Setting, user bandit.Params) {
	p, err := d.Complete(user)
	if err != nil {
		t.Fatal(err)
	}
	newPol := func(src *rand.PCG) bandit.Policy {
		pol, err := d.New(s, p, rand.New(src))
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	polSeed := func() *rand.PCG { return rand.NewPCG(policytest.PolicySeed1, policytest.PolicySeed2) }
	newEnv := func(src *rand.PCG) *policytest.Bernoulli {
		return policytest.NewBernoulli(policytest.SpreadMeans(s.K), rand.New(src))
	}
	envSeed := func() *rand.PCG { return rand.NewPCG(policytest.EnvSeed1, policytest.EnvSeed2) }
	t.Run("params", func(t *testing.T) {
		conformance.CheckParams(t, d, "New", "K = 0", func(q bandit.Params) error {
			_, err := d.New(bandit.Setting{K: 0, Horizon: s.Horizon}, q, rand.New(rand.NewPCG(1, 2)))
			return err
		})
	})
	t.Run("determinism", func(t *testing.T) {
		var arms [2][]int
		for i := range arms {
			res, err := policytest.Play(newPol(polSeed()), newEnv(envSeed()), s.Horizon)
			if err != nil {
				t.Fatal(err)
			}
			arms[i] = res.Arms
			if n := len(res.Arms); n != s.Horizon {
				t.Fatalf("%d rounds played, want %d", n, s.Horizon)
			}
		}
		if i := conformance.FirstDifference(arms[0], arms[1]); i >= 0 {
			t.Fatalf("same seeds, different arms at round %d", i)
		}
	})
	t.Run("report", func(t *testing.T) {
		pol := newPol(polSeed())
		conformance.CheckReport(t, d, s, p, pol, func() error {
			_, err := policytest.Play(pol, newEnv(envSeed()), s.Horizon)
			return err
		})
	})
	t.Run("select-allocs", func(t *testing.T) {
		pol := newPol(polSeed())
		if _, err := policytest.Play(pol, newEnv(envSeed()), s.Horizon/2); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(1, func() {
			for range 500 {
				pol.Select()
			}
		}); n != 0 {
			t.Errorf("Select allocated %v times over 500 calls, want 0", n)
		}
	})
	t.Run("metered", func(t *testing.T) {
		pol := newPol(polSeed())
		env := newEnv(envSeed())
		conformance.CheckMetered(t, d, s, p, pol, func() {
			a := pol.Select()
			pol.Update(a, env.Pull(a))
		})
	})
	t.Run("state", func(t *testing.T) {
		conformance.CheckState(t, conformance.StateRun{
			Horizon:    s.Horizon,
			PolicySeed: [2]uint64{policytest.PolicySeed1, policytest.PolicySeed2},
			EnvSeed:    [2]uint64{policytest.EnvSeed1, policytest.EnvSeed2},
			New:        func(src *rand.PCG) any { return newPol(src) },
			Play: func(pol any, src *rand.PCG, n int) ([]int, error) {
				res, err := policytest.Play(pol.(bandit.Policy), newEnv(src), n)
				return res.Arms, err
			},
		})
	})
}

// esvRelease is one kept noisy value v of arm arm: v·mul is the output of
// a Laplace release of sensitivity sens (mul = the epoch or episode length
// for a mean released as a sum, else 1), and z = v·mul − the exact
// statistic released is that release's noise.
type esvRelease struct {
	arm             int
	v, mul, sens, z float64
}

// esvTracker follows the exact statistic each arm's next release will
// release (epoch or episode sum; DP-SE's epoch sum), from the rewards,
// independently of the policy's own buffers.
type esvTracker struct{ sums map[int]float64 }

// esvStep plays one round of p (Select, a reward from pull, Update) and
// returns the releases that round kept.
func esvStep(p bandit.Policy, tr *esvTracker, pull func(a int) float64) []esvRelease {
	if tr.sums == nil {
		tr.sums = map[int]float64{}
	}
	var out []esvRelease
	rel := func(a int, v, mul, sens, exact float64) {
		out = append(out, esvRelease{arm: a, v: v, mul: mul, sens: sens, z: v*mul - exact})
	}
	switch q := p.(type) {
	case *LazyDPTS, *LazyUCB:
		st := &p.(interface{ core() *lazyCore }).core().st
		a := p.Select()
		x := pull(a)
		before := st.Releases
		p.Update(a, x)
		tr.sums[a] += x
		if st.Releases != before {
			rel(a, st.Mu[a], float64(st.O[a]), 1, tr.sums[a])
			tr.sums[a] = 0
		}
	case *AdaPUCB:
		st := &q.st
		a := p.Select()
		x := pull(a)
		before := slices.Clone(st.Total)
		p.Update(a, x)
		tr.sums[a] += x
		for j := range st.Total {
			if st.Total[j] != before[j] {
				rel(j, st.Mu[j], float64(st.N[j]), 1, tr.sums[j])
				tr.sums[j] = 0
			}
		}
	case *DPSE:
		e0, re0 := q.Epoch()
		alive := q.Survivors()
		a := p.Select()
		x := pull(a)
		p.Update(a, x)
		if len(alive) > 1 {
			tr.sums[a] += x
		}
		if e, _ := q.Epoch(); e != e0 {
			r := float64(re0)
			for _, j := range alive {
				rel(j, q.st.Noisy[j], 1, 1/r, tr.sums[j]/r)
			}
			clear(tr.sums)
		}
	default:
		panic(fmt.Sprintf("esvStep: %T", p))
	}
	return out
}

// esvRun plays p for T rounds on Bernoulli arms (environment seed envSeed)
// and returns the releases.
func esvRun(p bandit.Policy, means []float64, T int, envSeed uint64) []esvRelease {
	env := rand.New(rand.NewPCG(envSeed, 0xe5))
	pull := func(a int) float64 {
		if env.Float64() < means[a] {
			return 1
		}
		return 0
	}
	var tr esvTracker
	var out []esvRelease
	for range T {
		out = append(out, esvStep(p, &tr, pull)...)
	}
	return out
}

// esvGranularity returns the grid step of the secure mechanism that
// pureRelease uses for (sens, ε), after checking that it is a multiple of
// noise.NewGridLaplace's step for the same (ε, sensitivity) (the mechanism
// runs at ε rounded down by a few ulps, so its step can be one power of two
// larger, never smaller).
func esvGranularity(t testing.TB, sens, eps float64) float64 {
	t.Helper()
	m, err := counting.SecureNoise(nil).Laplace(pureLapScale(sens, eps), sens)
	if err != nil {
		t.Fatal(err)
	}
	g := m.(*noise.GridLaplace).Granularity()
	ref, err := noise.NewGridLaplace(noise.GridLaplaceOptions{Epsilon: eps, Sensitivity: sens})
	if err != nil {
		t.Fatal(err)
	}
	if r := g / ref.Granularity(); r != 1 && r != 2 {
		t.Fatalf("sensitivity %v, ε %v: mechanism step %v, NewGridLaplace step %v", sens, eps, g, ref.Granularity())
	}
	return g
}

// esvOnGrid reports whether x is an integer multiple of the power of two g.
func esvOnGrid(x, g float64) bool { q := x / g; return q == math.Trunc(q) }

// esvMeans are the arms of the grid and restore tests; with β = 0.5
// (esvParams) DP-SE ends epoch 1 after 1491 rounds, drops the last arm and
// ends epoch 2 after about 6460.
var esvMeans = []float64{0.75, 0.70, 0.26}

func esvParams(name string, grid float64, eps float64) bandit.Params {
	p := bandit.Params{"grid": grid, "epsilon": eps}
	if name == "dp-se" {
		p["beta"] = 0.5
	}
	return p
}

// TestEpochServeGridNoise checks the secure noise with grid = 1: every kept
// noisy value (lazy epoch means and AdaP-UCB episode means times their
// length, DP-SE epoch means) is an integer multiple of the grid step of the
// mechanism for its (ε, sensitivity), at ε = 1 and ε = 0.7; the same values
// at grid = 0 are not (so the check can fail). The releases read the
// policy's generator: two policies on the same seed keep identical values,
// other seeds different ones.
func TestEpochServeGridNoise(t *testing.T) {
	const T = 7000
	s := bandit.Setting{K: 3, Horizon: T}
	for _, name := range esvNames {
		for _, eps := range []float64{1, 0.7} {
			t.Run(fmt.Sprintf("%s/eps=%v", name, eps), func(t *testing.T) {
				run := func(grid float64, seed uint64) []esvRelease {
					return esvRun(esvBuild(t, name, s, esvParams(name, grid, eps), rand.New(rand.NewPCG(seed, 3))), esvMeans, T, 9)
				}
				rels := run(1, 1)
				if len(rels) < 3 {
					t.Fatalf("only %d releases in %d rounds", len(rels), T)
				}
				for _, r := range rels {
					if g := esvGranularity(t, r.sens, eps); !esvOnGrid(r.v*r.mul, g) {
						t.Errorf("arm %d: kept %v (×%v) is not on the grid %v of sensitivity %v", r.arm, r.v, r.mul, g, r.sens)
					}
				}
				off := 0
				for _, r := range run(0, 1) {
					if !esvOnGrid(r.v*r.mul, esvGranularity(t, r.sens, eps)) {
						off++
					}
				}
				if off == 0 {
					t.Errorf("grid = 0: every continuous release is on the grid; the check cannot fail")
				}
				if again := run(1, 1); !slices.Equal(again, rels) {
					t.Errorf("same seed, different kept values: the release does not read only the policy's generator")
				}
				other := run(1, 2)
				same := 0
				for i := range min(len(other), len(rels)) {
					if other[i].v == rels[i].v {
						same++
					}
				}
				if same > len(rels)/4 {
					t.Errorf("another seed keeps %d of %d values unchanged", same, len(rels))
				}
			})
		}
	}
}

// esvSource is a switchable rand.Source, like the service's: Select draws
// from the policy's own stream, Update from a stream keyed by a seed stored
// with the rewards.
type esvSource struct{ cur, sel rand.Source }

func (s *esvSource) Uint64() uint64 { return s.cur.Uint64() }

// TestEpochServeRestoreNoRedraw checks, with grid = 1, that a state saved
// and restored into a policy on another generator keeps every noisy value
// (the re-encoded state is byte-identical: nothing was redrawn), and that
// when the two then see the same rewards with the same update stream (the
// service's replay), every later release and the whole state stay
// identical.
func TestEpochServeRestoreNoRedraw(t *testing.T) {
	const T, cut = 7000, 3000
	s := bandit.Setting{K: 3, Horizon: T}
	for _, name := range esvNames {
		t.Run(name, func(t *testing.T) {
			srcP := &esvSource{sel: rand.NewPCG(1, 2)}
			srcP.cur = srcP.sel
			p := esvBuild(t, name, s, esvParams(name, 1, 1), rand.New(srcP))
			env := rand.New(rand.NewPCG(5, 5))
			pull := func(a int) float64 {
				if env.Float64() < esvMeans[a] {
					return 1
				}
				return 0
			}
			var trP esvTracker
			n := 0
			for range cut {
				n += len(esvStep(p, &trP, pull))
			}
			if n < 3 {
				t.Fatalf("only %d releases before the cut", n)
			}
			saved, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			srcQ := &esvSource{sel: rand.NewPCG(77, 78)} // another select stream
			srcQ.cur = srcQ.sel
			q := esvBuild(t, name, s, esvParams(name, 1, 1), rand.New(srcQ))
			if err := json.Unmarshal(saved, q); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(q); string(again) != string(saved) {
				t.Fatalf("restored state differs from the saved one (a value was redrawn):\n%s\n%s", saved, again)
			}
			later := 0
			for i := range T - cut {
				a := p.Select()
				q.Select() // its own select stream: only the Beta draws of Lazy-DP-TS differ
				x := pull(a)
				var seed [32]byte
				seed[0], seed[1] = byte(i), byte(i>>8)
				srcP.cur, srcQ.cur = rand.NewChaCha8(seed), rand.NewChaCha8(seed)
				before := esvKept(p)
				p.Update(a, x)
				q.Update(a, x)
				srcP.cur, srcQ.cur = srcP.sel, srcQ.sel
				if !slices.Equal(esvKept(p), before) {
					later++
				}
				if !slices.Equal(esvKept(p), esvKept(q)) {
					t.Fatalf("round %d: the restored policy's kept values differ after the same update stream", cut+i+1)
				}
			}
			if later == 0 {
				t.Fatalf("no release after the restore: the continuation check is empty")
			}
			jp, _ := json.Marshal(p)
			jq, _ := json.Marshal(q)
			if string(jp) != string(jq) {
				t.Errorf("final states differ:\n%s\n%s", jp, jq)
			}
		})
	}
}

// esvKept returns a copy of the kept noisy values of p.
func esvKept(p bandit.Policy) []float64 {
	switch q := p.(type) {
	case *LazyDPTS:
		return slices.Clone(q.st.Mu)
	case *LazyUCB:
		return slices.Clone(q.st.Mu)
	case *AdaPUCB:
		return slices.Clone(q.st.Mu)
	case *DPSE:
		return slices.Clone(q.st.Noisy)
	}
	panic(fmt.Sprintf("esvKept: %T", p))
}

// TestEpochServeLedger checks the one-time charge: NextCost is the certified
// ε before the first Select and 0 after it, also after a save and restore
// (and ε again for a state saved before any Select); a pure filter of
// budget ε charged NextCost before each of 10,000 Selects, with a restore
// into a fresh policy half way, has spent exactly ε and refused nothing.
func TestEpochServeLedger(t *testing.T) {
	const T = 10000
	for _, name := range esvNames {
		for _, eps := range []float64{1, 0.3} {
			t.Run(fmt.Sprintf("%s/eps=%v", name, eps), func(t *testing.T) {
				s := bandit.Setting{K: 3, Horizon: T}
				build := func(seed uint64) bandit.Policy {
					return esvBuild(t, name, s, bandit.Params{"grid": 1, "epsilon": eps}, rand.New(rand.NewPCG(seed, 1)))
				}
				cost := func(p bandit.Policy) privacy.Guarantee { return p.(bandit.Metered).NextCost() }
				want := privacy.Guarantee{Notion: privacy.NotionPure, Value: eps}
				p := build(1)
				if c := cost(p); c != want {
					t.Fatalf("NextCost before the first Select = %+v, want %+v", c, want)
				}
				fresh, _ := json.Marshal(p)
				q := build(2)
				if err := json.Unmarshal(fresh, q); err != nil {
					t.Fatal(err)
				}
				if c := cost(q); c != want {
					t.Errorf("restored from a state before any Select: NextCost %+v, want %+v", c, want)
				}
				f, err := privacy.NewPureFilter(eps)
				if err != nil {
					t.Fatal(err)
				}
				env := rand.New(rand.NewPCG(3, 3))
				for i := range T {
					c := cost(p)
					if i > 0 && c.Value != 0 {
						t.Fatalf("step %d: NextCost %v after the first Select, want 0", i+1, c.Value)
					}
					if !f.CanSpend(c.Value) {
						t.Fatalf("step %d: the filter refuses %v (spent %v of %v)", i+1, c.Value, f.Spent(), eps)
					}
					if err := f.Spend(c.Value); err != nil {
						t.Fatal(err)
					}
					a := p.Select()
					x := 0.0
					if env.Float64() < esvMeans[a] {
						x = 1
					}
					p.Update(a, x)
					if i == T/2 {
						js, _ := json.Marshal(p)
						r := build(4)
						if err := json.Unmarshal(js, r); err != nil {
							t.Fatal(err)
						}
						if c := cost(r); c.Value != 0 {
							t.Fatalf("after a save and restore: NextCost %v, want 0 (charged already)", c.Value)
						}
						p = r
					}
				}
				if got := f.Spent(); got != eps {
					t.Errorf("spent %v over %d steps, want exactly ε = %v", got, T, eps)
				}
			})
		}
	}
}

// TestEpochServeNoiseScale is the privacy check that fails if the noise is
// removed or halved: with grid = 1 and ε = 0.5, the noise of 8000 releases
// per policy (released − exact, in units of the sensitivity: the epoch or
// episode sum's noise for the lazy policies and AdaP-UCB, the epoch mean's
// noise times R_e for DP-SE) has empirical variance within 10% of the
// Laplace variance 2(Δ/ε)² = 8. The variance estimate has a relative
// standard error of sqrt(5/n) ≈ 2.5% for Laplace noise (fourth moment
// 24b⁴), so 10% is 4 s.e.; halved noise gives 2 and none 0. The seeds are
// fixed, so the test is deterministic.
func TestEpochServeNoiseScale(t *testing.T) {
	const eps, n = 0.5, 8000
	want := 2 / (eps * eps)
	for _, name := range esvNames {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 12))
			var sum2, sum float64
			count := 0
			for count < n {
				// K = 2 with deterministic rewards 0.5: no elimination
				// needed for DP-SE's epoch means; β close to 1 keeps its
				// epoch short (R_1 = 356).
				k, T := 1, 8
				params := bandit.Params{"grid": 1, "epsilon": eps}
				if name == "dp-se" {
					k, T = 2, 712
					params["beta"] = 0.999999
				}
				p := esvBuild(t, name, bandit.Setting{K: k, Horizon: T}, params, r)
				var tr esvTracker
				for range T {
					for _, rel := range esvStep(p, &tr, func(int) float64 { return 0.5 }) {
						z := rel.z / rel.sens // the release's noise per unit sensitivity
						sum += z
						sum2 += z * z
						count++
					}
				}
			}
			mean := sum / float64(count)
			v := sum2/float64(count) - mean*mean
			if math.Abs(v/want-1) > 0.10 {
				t.Errorf("%d releases: noise variance %.4g per unit sensitivity, want 2/ε² = %.4g ± 10%%", count, v, want)
			}
			if math.Abs(mean) > 4*math.Sqrt(want/float64(count)) {
				t.Errorf("noise mean %.4g, want 0 ± %.3g", mean, 4*math.Sqrt(want/float64(count)))
			}
		})
	}
}

// TestEpochServeRestoreRefusesTampered checks that UnmarshalJSON refuses a
// stored state that does not fit, with an error naming the policy and what
// is wrong: an altered ε (or K) in the stored options, a dropped array, a
// negative count, an out-of-range buffered sum, a value that is not a
// number; and that the untampered state restores, into a built policy and
// into a zero value alike.
func TestEpochServeRestoreRefusesTampered(t *testing.T) {
	s := bandit.Setting{K: 3, Horizon: 1000}
	released := map[string]string{"lazy-dp-ts": "mu", "anytime-lazy-ucb": "mu", "adap-ucb": "mu", "dp-se": "noisy"}
	for _, name := range esvNames {
		t.Run(name, func(t *testing.T) {
			build := func() bandit.Policy {
				return esvBuild(t, name, s, esvParams(name, 1, 1), rand.New(rand.NewPCG(1, 2)))
			}
			p := build()
			esvRun(p, esvMeans, 300, 4)
			good, _ := json.Marshal(p)
			tamper := func(f func(opts, st map[string]any)) []byte {
				var m map[string]any
				if err := json.Unmarshal(good, &m); err != nil {
					t.Fatal(err)
				}
				f(m["options"].(map[string]any), m["state"].(map[string]any))
				b, _ := json.Marshal(m)
				return b
			}
			cases := []struct {
				what  string
				state []byte
				zero  bool // restore into a zero value (no options of its own)
				frags []string
			}{
				{"epsilon altered", tamper(func(o, _ map[string]any) { o["Epsilon"] = 2.0 }), false,
					[]string{"differ from this policy's", "Epsilon:2", "Epsilon:1"}},
				{"grid altered", tamper(func(o, _ map[string]any) { o["Grid"] = false }), false, []string{"differ from this policy's"}},
				{"K altered", tamper(func(o, _ map[string]any) { o["K"] = 4.0 }), false, []string{"differ from this policy's"}},
				{"K altered, zero value", tamper(func(o, _ map[string]any) { o["K"] = 4.0 }), true, []string{"want K = 4"}},
				{"pulls dropped", tamper(func(_, st map[string]any) { delete(st, "pulls") }), false, []string{`"pulls"`, "missing"}},
				{"released values dropped", tamper(func(_, st map[string]any) { delete(st, released[name]) }), false, []string{`"` + released[name] + `"`}},
				{"pull count negative", tamper(func(_, st map[string]any) { st["pulls"].([]any)[0] = -1.0 }), false, []string{"pull count -1"}},
				{"steps negative", tamper(func(_, st map[string]any) { st["steps"] = -5.0 }), false, []string{"steps = -5"}},
				{"released value not a number", tamper(func(_, st map[string]any) { st[released[name]].([]any)[0] = "NaN" }), false, nil},
			}
			switch name {
			case "dp-se":
				cases = append(cases, struct {
					what  string
					state []byte
					zero  bool
					frags []string
				}{"epoch sum out of range", tamper(func(_, st map[string]any) { st["sums"].([]any)[0] = -0.5 }), false, []string{"epoch sum -0.5"}})
			case "adap-ucb":
				cases = append(cases, struct {
					what  string
					state []byte
					zero  bool
					frags []string
				}{"episode length negative", tamper(func(_, st map[string]any) { st["n_last"].([]any)[0] = -2.0 }), false, []string{"arm 0", "inconsistent"}})
			default:
				cases = append(cases, struct {
					what  string
					state []byte
					zero  bool
					frags []string
				}{"buffer sum out of range", tamper(func(_, st map[string]any) { st["buf"].([]any)[0] = 1e9 }), false, []string{"arm 0", "inconsistent"}})
			}
			for _, c := range cases {
				var q bandit.Policy
				if c.zero {
					q = esvZero(name)
				} else {
					q = build()
				}
				err := json.Unmarshal(c.state, q)
				if err == nil {
					t.Errorf("%s: accepted", c.what)
					continue
				}
				for _, f := range append([]string{name + ": decoding state"}, c.frags...) {
					if !strings.Contains(err.Error(), f) {
						t.Errorf("%s: error %q does not contain %q", c.what, err, f)
					}
				}
			}
			for _, q := range []bandit.Policy{build(), esvZero(name)} {
				if err := json.Unmarshal(good, q); err != nil {
					t.Errorf("the untampered state into %T: %v", q, err)
				} else if again, _ := json.Marshal(q); string(again) != string(good) {
					t.Errorf("the untampered state restores differently")
				}
			}
		})
	}
}

// esvZero returns a zero value of the named policy's type.
func esvZero(name string) bandit.Policy {
	switch name {
	case "lazy-dp-ts":
		return &LazyDPTS{}
	case "anytime-lazy-ucb":
		return &LazyUCB{}
	case "adap-ucb":
		return &AdaPUCB{}
	case "dp-se":
		return &DPSE{}
	}
	panic(name)
}
