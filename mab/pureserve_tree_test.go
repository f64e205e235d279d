package mab

// Serving the tree-based pure-DP policies (dp-ts, mt-ucb, mt-ts) with
// grid = 1: conformance, secure noise, no redraw, the ledger, the noise
// scale, and the refusal of tampered states.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/bandit/conformance"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/mab/policytest"
	"github.com/dpbandit/dpbandit/privacy"
)

// treeSrvSpecs are the served configurations under test: every policy at
// its defaults, and mt-ts in its three phase schedules (phase A skipped and
// reaching phase C; phase A feasible at ε = 200).
var treeSrvSpecs = []string{
	"dp-ts", "mt-ucb", "mt-ucb:width=1,gamma=5", "mt-ts",
	"mt-ts:skipGap=1,gap=0.5,randomPulls=40", "mt-ts:epsilon=200,randomPulls=30",
}

// treeSrvGrid returns spec's descriptor and its parameters with grid = 1
// (what the service forces).
func treeSrvGrid(t testing.TB, spec string) (bandit.Descriptor, bandit.Params) {
	t.Helper()
	sp, err := bandit.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Lookup(sp.Name)
	if err != nil {
		t.Fatal(err)
	}
	p := bandit.Params{}
	for k, v := range sp.Params {
		p[k] = v
	}
	p["grid"] = 1
	return d, p
}

// treeSrvBuild builds spec with grid = 1 at setting s on a PCG stream.
func treeSrvBuild(t testing.TB, spec string, s bandit.Setting, seed uint64) bandit.Policy {
	t.Helper()
	d, p := treeSrvGrid(t, spec)
	full, err := d.Complete(p)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := d.New(s, full, rand.New(rand.NewPCG(seed, 0x7ee)))
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return pol
}

// treeSrvEnv is the Bernoulli environment of these tests.
func treeSrvEnv(k int, seed uint64) *policytest.Bernoulli {
	return policytest.NewBernoulli(policytest.SpreadMeans(k), rand.New(rand.NewPCG(seed, 0xe57)))
}

// treeSrvState returns pol's JSON state as a map, for inspection and
// tampering.
func treeSrvState(t testing.TB, pol any) map[string]any {
	t.Helper()
	b, err := json.Marshal(pol)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// treeSrvTrees returns the stored trees of a policy state (mt-ucb: "trees";
// dp-ts and mt-ts: "state.trees"); nil entries are skipped.
func treeSrvTrees(t testing.TB, pol any) []counting.State {
	t.Helper()
	var j struct {
		Trees []*counting.State `json:"trees"`
		State struct {
			Trees []*counting.State `json:"trees"`
		} `json:"state"`
	}
	b, _ := json.Marshal(pol)
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	var out []counting.State
	for _, s := range append(j.Trees, j.State.Trees...) {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// treeSrvGranularity is the grid step of the secure Laplace mechanism of
// scale b for sensitivity d, built exactly as counting.SecureNoise builds
// it (without drawing anything).
func treeSrvGranularity(t testing.TB, b, d float64) float64 {
	t.Helper()
	m, err := counting.SecureNoise(nil).Laplace(b, d)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := m.(interface{ Granularity() float64 })
	if !ok {
		t.Fatalf("secure mechanism %T states no grid step", m)
	}
	return g.Granularity()
}

// treeSrvOnGrid reports whether x is an integer multiple of g.
func treeSrvOnGrid(x, g float64) bool { return math.Mod(x, g) == 0 }

// TestTreePoliciesServable: the three descriptors are served, with grid
// forced to 1, and grid defaults to 0 (simulation).
func TestTreePoliciesServable(t *testing.T) {
	for _, name := range []string{"dp-ts", "mt-ucb", "mt-ts"} {
		d, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if d.Serving != pureServing || d.Serving.Params["grid"] != 1 {
			t.Errorf("%s: Serving = %+v, want pureServing (grid = 1)", name, d.Serving)
		}
		full, err := d.Complete(nil)
		if err != nil || full["grid"] != 0 {
			t.Errorf("%s: default grid = %v (%v), want 0", name, full["grid"], err)
		}
	}
}

// TestTreePoliciesConformanceGrid runs the conformance checks of
// mab/policytest with grid = 1, at K = 5 and K = 3: parameters,
// determinism, report, metering and state. The allocation check is left
// out: a grid release allocates big.Int words (noise.GridLaplace), and
// policytest.Run has no switch for it (the grid = 0 runs in
// TestConformance check it).
func TestTreePoliciesConformanceGrid(t *testing.T) {
	for _, spec := range treeSrvSpecs {
		for _, s := range []bandit.Setting{{K: 5, Horizon: 2000}, {K: 3, Horizon: 1500}} {
			t.Run(fmt.Sprintf("%s/K=%d", spec, s.K), func(t *testing.T) {
				d, p := treeSrvGrid(t, spec)
				params, err := d.Complete(p)
				if err != nil {
					t.Fatal(err)
				}
				newPol := func(src *rand.PCG) bandit.Policy {
					pol, err := d.New(s, params, rand.New(src))
					if err != nil {
						t.Fatalf("New: %v", err)
					}
					return pol
				}
				env := func() *policytest.Bernoulli {
					return policytest.NewBernoulli(policytest.SpreadMeans(s.K), rand.New(rand.NewPCG(policytest.EnvSeed1, policytest.EnvSeed2)))
				}
				seed := func() *rand.PCG { return rand.NewPCG(policytest.PolicySeed1, policytest.PolicySeed2) }
				step := func(pol bandit.Policy, e *policytest.Bernoulli) func() {
					return func() { a := pol.Select(); pol.Update(a, e.Pull(a)) }
				}
				t.Run("params", func(t *testing.T) {
					conformance.CheckParams(t, d, "New", "K = 0", func(pp bandit.Params) error {
						pp["grid"] = 1
						_, err := d.New(bandit.Setting{K: 0, Horizon: s.Horizon}, pp, rand.New(rand.NewPCG(1, 2)))
						return err
					})
				})
				t.Run("determinism", func(t *testing.T) {
					var runs [2]policytest.Result
					for i := range runs {
						res, err := policytest.Play(newPol(seed()), env(), s.Horizon)
						if err != nil {
							t.Fatal(err)
						}
						runs[i] = res
					}
					if i := conformance.FirstDifference(runs[0].Arms, runs[1].Arms); i >= 0 {
						t.Fatalf("same seeds, different arms at round %d", i)
					}
				})
				t.Run("report", func(t *testing.T) {
					pol := newPol(seed())
					conformance.CheckReport(t, d, s, params, pol, func() error {
						_, err := policytest.Play(pol, env(), s.Horizon)
						return err
					})
					rep, _ := d.Report(s, params)
					if !strings.Contains(rep.Derivation, "discrete Laplace on a power-of-two grid") || !strings.Contains(rep.Derivation, "-DP (event-level) for the whole transcript") {
						t.Errorf("grid report does not state the guarantee in words and the grid noise: %s", rep.Derivation)
					}
				})
				t.Run("metered", func(t *testing.T) {
					pol := newPol(seed())
					if _, ok := pol.(bandit.Metered); !ok {
						t.Fatalf("%T is not bandit.Metered", pol)
					}
					conformance.CheckMetered(t, d, s, params, pol, step(pol, env()))
				})
				t.Run("state", func(t *testing.T) {
					conformance.CheckState(t, conformance.StateRun{
						Horizon:    s.Horizon,
						PolicySeed: [2]uint64{policytest.PolicySeed1, policytest.PolicySeed2},
						EnvSeed:    [2]uint64{policytest.EnvSeed1, policytest.EnvSeed2},
						New:        func(src *rand.PCG) any { return newPol(src) },
						Play: func(pol any, envSrc *rand.PCG, n int) ([]int, error) {
							res, err := policytest.Play(pol.(bandit.Policy), policytest.NewBernoulli(policytest.SpreadMeans(s.K), rand.New(envSrc)), n)
							return res.Arms, err
						},
					})
				})
			})
		}
	}
}

// treeSrvKept returns every kept noisy value of a grid policy with the grid
// step of the mechanism that released it: tree nodes (occupied levels),
// DP-TS's released totals C, MT-TS's released phase-A means.
func treeSrvKept(t testing.TB, pol bandit.Policy) (vals, steps []float64) {
	t.Helper()
	add := func(v, g float64) { vals, steps = append(vals, v), append(steps, g) }
	for _, s := range treeSrvTrees(t, pol) {
		if !s.Discrete {
			t.Fatalf("a tree of %T was released with continuous noise under grid = 1", pol)
		}
		l := s.Laplace
		b, err := counting.ScaleForEpsilon(l.Capacity, 1, l.Epsilon)
		if err != nil {
			t.Fatal(err)
		}
		g := treeSrvGranularity(t, b, 1)
		for j, v := range s.Noisy {
			if s.Count>>j&1 == 1 {
				add(v, g)
			}
		}
	}
	switch p := pol.(type) {
	case *DPTS:
		g := treeSrvGranularity(t, pureLapScale(1, p.opts.Epsilon/2), 1)
		for a, c := range p.st.C {
			if p.st.O[a] > 0 {
				add(c, g)
			}
		}
	case *MTTS:
		if p.st.Batches > 0 {
			m := float64(p.st.BatchM)
			if p.st.Phase != MTTSGapEstimation {
				// The last batch's m: Δ̂ was halved after it.
				m = mttsBatchM(p.opts, 2*p.st.Delta)
			}
			sens, eps := 1/m, p.opts.Epsilon/float64(2*p.opts.K)
			g := treeSrvGranularity(t, pureLapScale(sens, eps), sens)
			for _, v := range p.st.MuHat {
				add(v, g)
			}
		}
	}
	return vals, steps
}

// TestTreePoliciesSecureNoise: with grid = 1 every kept noisy value (tree
// nodes, DP-TS's logarithmic-mechanism totals, MT-TS's phase-A means) lies
// on the grid of the mechanism that released it, and comes from the
// policy's generator: the same seed gives the same values, another seed
// other values.
func TestTreePoliciesSecureNoise(t *testing.T) {
	const T = 3000
	for _, spec := range treeSrvSpecs {
		if spec == "mt-ts" {
			continue // at the defaults phase B outlasts T: nothing is released
		}
		t.Run(spec, func(t *testing.T) {
			s := bandit.Setting{K: 3, Horizon: T}
			run := func(seed uint64) bandit.Policy {
				pol := treeSrvBuild(t, spec, s, seed)
				if _, err := policytest.Play(pol, treeSrvEnv(3, 5), T); err != nil {
					t.Fatal(err)
				}
				return pol
			}
			a, b, c := run(1), run(1), run(2)
			vals, steps := treeSrvKept(t, a)
			if len(vals) == 0 {
				t.Fatal("no kept noisy value to check")
			}
			for i, v := range vals {
				if !treeSrvOnGrid(v, steps[i]) {
					t.Errorf("kept value %v is not a multiple of its mechanism's grid step %v", v, steps[i])
				}
			}
			vb, _ := treeSrvKept(t, b)
			vc, _ := treeSrvKept(t, c)
			same, differ := len(vb) == len(vals), false
			for i := range min(len(vals), len(vb)) {
				same = same && vb[i] == vals[i]
			}
			for i := range min(len(vals), len(vc)) {
				differ = differ || vc[i] != vals[i]
			}
			if !same {
				t.Error("the same seed released different values")
			}
			if !differ {
				t.Error("another seed released the same values: the noise does not come from the policy's generator")
			}
			t.Logf("%d kept values on their grids", len(vals))
		})
	}
}

// TestTreePoliciesNoRedraw: a state saved mid-run and restored into a fresh
// policy (grid = 1) keeps every released value, draws nothing while it is
// restored (the generator is untouched), and with the same update
// randomness releases exactly what the original releases afterwards.
func TestTreePoliciesNoRedraw(t *testing.T) {
	const T, cut = 3000, 1700
	for _, spec := range treeSrvSpecs {
		t.Run(spec, func(t *testing.T) {
			s := bandit.Setting{K: 3, Horizon: T}
			d, p := treeSrvGrid(t, spec)
			full, _ := d.Complete(p)
			src := rand.NewPCG(11, 12)
			pol, err := d.New(s, full, rand.New(src))
			if err != nil {
				t.Fatal(err)
			}
			envSrc := rand.NewPCG(13, 14)
			env := policytest.NewBernoulli(policytest.SpreadMeans(3), rand.New(envSrc))
			if _, err := policytest.Play(pol, env, cut); err != nil {
				t.Fatal(err)
			}
			saved, _ := json.Marshal(pol)
			keptBefore, _ := treeSrvKept(t, pol)
			polRNG, _ := src.MarshalBinary()
			envRNG, _ := envSrc.MarshalBinary()

			src2 := &rand.PCG{}
			if err := src2.UnmarshalBinary(polRNG); err != nil {
				t.Fatal(err)
			}
			before, _ := src2.MarshalBinary()
			q, err := d.New(s, full, rand.New(src2))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(saved, q); err != nil {
				t.Fatal(err)
			}
			after, _ := src2.MarshalBinary()
			if string(before) != string(after) {
				t.Error("building or restoring the policy drew from its generator")
			}
			if again, _ := json.Marshal(q); string(again) != string(saved) {
				t.Errorf("the restored state differs from the saved one")
			}
			keptAfter, _ := treeSrvKept(t, q)
			if len(keptAfter) != len(keptBefore) {
				t.Fatalf("%d kept values after the restore, %d before", len(keptAfter), len(keptBefore))
			}
			for i := range keptBefore {
				if keptAfter[i] != keptBefore[i] {
					t.Fatalf("kept value %d changed across the restore: %v, was %v", i, keptAfter[i], keptBefore[i])
				}
			}
			envSrc2 := &rand.PCG{}
			if err := envSrc2.UnmarshalBinary(envRNG); err != nil {
				t.Fatal(err)
			}
			want, err := policytest.Play(pol, env, T-cut)
			if err != nil {
				t.Fatal(err)
			}
			got, err := policytest.Play(q, policytest.NewBernoulli(policytest.SpreadMeans(3), rand.New(envSrc2)), T-cut)
			if err != nil {
				t.Fatal(err)
			}
			if i := conformance.FirstDifference(want.Arms, got.Arms); i >= 0 {
				t.Fatalf("the restored policy diverges at round %d", cut+i)
			}
			a, _ := json.Marshal(pol)
			b, _ := json.Marshal(q)
			if string(a) != string(b) {
				t.Error("after the same rounds the restored policy released other values than the original")
			}
		})
	}
}

// treeSrvCertified returns the certified pure ε of pol's report.
func treeSrvCertified(t testing.TB, pol bandit.Policy) float64 {
	t.Helper()
	rep := pol.(bandit.Private).Privacy()
	if rep.Certified.Notion != privacy.NotionPure {
		t.Fatalf("certified notion %q, want pure", rep.Certified.Notion)
	}
	return rep.Certified.Value
}

// TestTreePoliciesLedger: NextCost is the certified ε before the first
// Select and 0 afterwards, also after a round trip of the state (saved
// before the first Select: charged again; after: never again); a pure
// filter charged NextCost before every Select of a 10,000-round run spends
// exactly the certified ε, which is ε (dp-ts), ε/k (mt-ucb, mt-ts without
// phase A) or ε/(2k) (mt-ts with phase A).
func TestTreePoliciesLedger(t *testing.T) {
	const T, k, eps = 10000, 3, 1.5
	cases := []struct {
		spec string
		want float64
	}{
		{"dp-ts:epsilon=1.5", eps},
		{"mt-ucb:epsilon=1.5", eps / k},
		{"mt-ts:epsilon=1.5", eps / (2 * k)},
		{"mt-ts:epsilon=1.5,skipGap=1,gap=0.5,randomPulls=50", eps / k},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			s := bandit.Setting{K: k, Horizon: T}
			pol := treeSrvBuild(t, c.spec, s, 3)
			m := pol.(bandit.Metered)
			if cert := treeSrvCertified(t, pol); cert != c.want {
				t.Fatalf("certified ε = %v, want %v", cert, c.want)
			}
			if got := m.NextCost(); got.Notion != privacy.NotionPure || got.Value != c.want {
				t.Fatalf("NextCost before the first Select = %+v, want pure %v", got, c.want)
			}
			// A state saved before the first Select is charged again.
			fresh := treeSrvBuild(t, c.spec, s, 4)
			js, _ := json.Marshal(pol)
			if err := json.Unmarshal(js, fresh); err != nil {
				t.Fatal(err)
			}
			if got := fresh.(bandit.Metered).NextCost().Value; got != c.want {
				t.Errorf("NextCost after restoring an uncharged state = %v, want %v", got, c.want)
			}
			f, err := privacy.NewPureFilter(c.want)
			if err != nil {
				t.Fatal(err)
			}
			env := treeSrvEnv(k, 6)
			for step := range T {
				x := m.NextCost()
				if step > 0 && x.Value != 0 {
					t.Fatalf("step %d: NextCost = %v after the first Select, want 0", step, x.Value)
				}
				if err := f.Spend(x.Value); err != nil {
					t.Fatalf("step %d: the filter refused %v: %v", step, x.Value, err)
				}
				a := pol.Select()
				pol.Update(a, env.Pull(a))
				if step == T/2 {
					q := treeSrvBuild(t, c.spec, s, 5)
					js, _ := json.Marshal(pol)
					if err := json.Unmarshal(js, q); err != nil {
						t.Fatal(err)
					}
					if got := q.(bandit.Metered).NextCost().Value; got != 0 {
						t.Errorf("NextCost after a round trip of a charged state = %v, want 0", got)
					}
				}
			}
			if f.Spent() != c.want || f.Steps() != T {
				t.Errorf("the filter spent %v over %d steps, want exactly %v over %d", f.Spent(), f.Steps(), c.want, T)
			}
		})
	}
}

// TestTreePoliciesBeyondHorizon: the trees hold T leaves per arm; past
// that an arm's rewards are not read, so nothing is released beyond what
// the certified ε covers: the trees' nodes do not change whatever the
// rewards, NextCost stays 0, and the filter's spend stays at the certified
// ε. (DP-TS's chunk trees are sized per chunk and are anytime: it keeps
// learning past T at the same ε.)
func TestTreePoliciesBeyondHorizon(t *testing.T) {
	const T = 8
	for _, spec := range []string{"mt-ucb", "mt-ts:skipGap=1,gap=1,randomPulls=2", "dp-ts"} {
		t.Run(spec, func(t *testing.T) {
			pol := treeSrvBuild(t, spec, bandit.Setting{K: 1, Horizon: T}, 7)
			m := pol.(bandit.Metered)
			f, _ := privacy.NewPureFilter(treeSrvCertified(t, pol))
			var full string
			for step := range 20 * T {
				if err := f.Spend(m.NextCost().Value); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				a := pol.Select()
				pol.Update(a, float64(step%2))
				if step == 3*T {
					b, _ := json.Marshal(treeSrvTrees(t, pol))
					full = string(b)
				}
			}
			if f.Spent() != treeSrvCertified(t, pol) {
				t.Errorf("spent %v, certified %v", f.Spent(), treeSrvCertified(t, pol))
			}
			b, _ := json.Marshal(treeSrvTrees(t, pol))
			if spec != "dp-ts" && string(b) != full {
				t.Error("a full tree changed after the horizon: rewards beyond T were read")
			}
			if spec == "dp-ts" && pol.(*DPTS).st.O[0] != 20*T {
				t.Errorf("dp-ts observed %d rewards, want all %d (anytime)", pol.(*DPTS).st.O[0], 20*T)
			}
		})
	}
}

// treeSrvNodeNoise returns the noise of the node tr released by its last
// Add, divided by the standard deviation sqrt(2)·b of Lap(b), b = L/ε0 (L
// from the tree's capacity, ε0 the per-tree budget the policy's analysis
// states, given by the test, not the counter's own scale).
func treeSrvNodeNoise(tr *counting.Counter, eps0 float64) float64 {
	s := tr.State()
	i := bits.TrailingZeros(uint(s.Count))
	b := float64(bits.Len(uint(tr.Capacity()))) / eps0
	return (s.Noisy[i] - s.Exact[i]) / (math.Sqrt2 * b)
}

// TestTreePoliciesNoiseScale measures, with grid = 1 and fixed seeds, the
// variance of the released noise against the stated scale: tree nodes
// Lap(L/ε0) (mt-ucb, ε0 = ε/k; mt-ts phases B–C, ε0 = ε/k without phase A;
// dp-ts chunk trees, L = r+1 at ε/2), dp-ts's logarithmic releases
// Lap(2/ε), and mt-ts's phase-A means Lap(2k/(εm)). Each estimate is a
// mean of n ≥ 3000 squared standardised draws (relative s.e. √5/√n ≤ 4.1%
// for Laplace); tolerance ±15%. Removing the noise gives 0, halving it
// 0.25.
func TestTreePoliciesNoiseScale(t *testing.T) {
	check := func(t *testing.T, what string, z2 []float64) {
		t.Helper()
		v := 0.0
		for _, x := range z2 {
			v += x / float64(len(z2))
		}
		if len(z2) < 3000 || math.Abs(v-1) > 0.15 {
			t.Errorf("%s: variance / stated variance = %.4f over %d draws, want 1 ± 0.15", what, v, len(z2))
		} else {
			t.Logf("%s: variance / stated variance = %.4f over %d draws", what, v, len(z2))
		}
	}
	t.Run("mt-ucb", func(t *testing.T) {
		p := treeSrvBuild(t, "mt-ucb:epsilon=4", bandit.Setting{K: 2, Horizon: 4096}, 21).(*MTUCB)
		var z2 []float64
		for range 3500 {
			p.Update(0, 0.5)
			z := treeSrvNodeNoise(p.Tree(0), 4.0/2) // ε0 = ε/k
			z2 = append(z2, z*z)
		}
		check(t, "tree nodes, b = L·k/ε", z2)
	})
	t.Run("mt-ts", func(t *testing.T) {
		p := treeSrvBuild(t, "mt-ts:epsilon=4,skipGap=1,gap=1,randomPulls=1", bandit.Setting{K: 2, Horizon: 8192}, 22).(*MTTS)
		var z2 []float64
		for p.Phase() != MTTSThompson {
			p.Update(p.Select(), 1)
		}
		for range 3500 {
			p.Update(0, 1)
			z := treeSrvNodeNoise(p.trees[0], 4.0/2) // ε0 = ε/k without phase A
			z2 = append(z2, z*z)
		}
		check(t, "phase-C tree nodes, b = L·k/ε", z2)

		// Phase A: K = 1000 arms at ε = 1e4, T = 1e6: one batch of
		// m = ⌈192·1000·ln 1e6/1e4⌉ = 266 cycles, whose 1000 means are
		// released with Lap(2k/(εm)); three seeds.
		z2 = z2[:0]
		const k, T, eps = 1000, 1000000, 1e4
		for seed := range uint64(3) {
			q := treeSrvBuild(t, "mt-ts:epsilon=1e4,randomPulls=1", bandit.Setting{K: k, Horizon: T}, 30+seed).(*MTTS)
			m := q.st.BatchM
			for q.st.Batches == 0 {
				q.Update(q.Select(), 0.5)
			}
			b := 2 * k / (eps * float64(m))
			for _, mu := range q.st.MuHat {
				z := (mu - 0.5) / (math.Sqrt2 * b)
				z2 = append(z2, z*z)
			}
		}
		check(t, "phase-A means, b = 2k/(εm)", z2)
	})
	t.Run("dp-ts", func(t *testing.T) {
		// Tree nodes: one arm, 4000 pulls at ε = 2 (chunks 1..11).
		p := treeSrvBuild(t, "dp-ts:epsilon=2", bandit.Setting{K: 1, Horizon: 4096}, 23).(*DPTS)
		var z2 []float64
		for range 4000 {
			p.Update(0, 0.5)
			if p.st.ChunkN[0] > 0 {
				z := treeSrvNodeNoise(p.trees[0][p.st.R[0]], 2.0/2) // ε/2
				z2 = append(z2, z*z)
			}
		}
		check(t, "chunk tree nodes, b = L/(ε/2)", z2)

		// Logarithmic releases: the initial pull of 3000 arms, Lap(2/ε).
		z2 = z2[:0]
		q := treeSrvBuild(t, "dp-ts:epsilon=2", bandit.Setting{K: 3000, Horizon: 4}, 24).(*DPTS)
		for a := range 3000 {
			q.Update(a, 0.25)
			const b = 2 / 2.0 // 2/ε
			z := (q.st.C[a] - 0.25) / (math.Sqrt2 * b)
			z2 = append(z2, z*z)
		}
		check(t, "logarithmic releases, b = 2/ε", z2)
	})
}

// treeSrvTamper returns pol's state with edit applied to its JSON map.
func treeSrvTamper(t testing.TB, pol any, edit func(m map[string]any)) []byte {
	t.Helper()
	m := treeSrvState(t, pol)
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// treeSrvPath returns the map or slice element at the path of keys
// (string) and indices (int).
func treeSrvPath(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// TestTreePoliciesRestoreRefuses tampers with stored states (grid = 1) and
// requires UnmarshalJSON to refuse each with an error naming the problem,
// leaving the policy unchanged: a tree's ε altered, a node missing, a tree
// released with continuous noise, the wrong number of arms, the options
// altered, a NaN (which JSON cannot carry) or an out-of-range value, and
// schedule facts that do not add up.
func TestTreePoliciesRestoreRefuses(t *testing.T) {
	type tamper struct {
		name string
		edit func(m map[string]any)
		frag string
	}
	setF := func(path []any, key string, v any) func(map[string]any) {
		return func(m map[string]any) { treeSrvPath(m, path...).(map[string]any)[key] = v }
	}
	dropLast := func(path []any, key string) func(map[string]any) {
		return func(m map[string]any) {
			o := treeSrvPath(m, path...).(map[string]any)
			s := o[key].([]any)
			o[key] = s[:len(s)-1]
		}
	}
	cases := []struct {
		spec    string
		k       int
		steps   int
		tree    []any // path to a stored tree
		perArm  []any // path to the object holding per-arm arrays
		arrays  string
		tampers []tamper
	}{
		{"mt-ucb", 3, 700, []any{"trees", 0}, []any{}, "n", []tamper{
			{"options", setF([]any{"options"}, "Epsilon", 2.0), "differ"},
			{"steps", setF([]any{}, "steps", 1.0), "steps"},
		}},
		{"dp-ts", 3, 700, []any{"state", "trees", 0}, []any{"state"}, "o", []tamper{
			{"chunk sum", setF([]any{"state"}, "chunk_sum", []any{-1.0, 0.0, 0.0}), "chunk"},
			{"initial pulls", setF([]any{"state"}, "init", 2.0), "initial pulls"},
			{"released total", nil, "invalid character 'N'"}, // NaN spliced in below: JSON has no NaN, and the decoder refuses it before UnmarshalJSON runs
		}},
		{"mt-ts:skipGap=1,gap=0.5,randomPulls=40", 3, 700, []any{"state", "trees", 0}, []any{"state"}, "m", []tamper{
			{"τ", setF([]any{"state"}, "tau", 3.0), "τ"},
			{"Δ̂", setF([]any{"state"}, "delta_hat", 0.25), "Δ̂"},
			{"n_B", setF([]any{"state"}, "n_b", 39.0), "n_B"},
			{"phase", setF([]any{"state"}, "phase", 1.0), "phase"},
		}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			s := bandit.Setting{K: c.k, Horizon: 3000}
			pol := treeSrvBuild(t, c.spec, s, 9)
			if _, err := policytest.Play(pol, treeSrvEnv(c.k, 9), c.steps); err != nil {
				t.Fatal(err)
			}
			all := append([]tamper{
				{"tree ε", func(m map[string]any) {
					l := treeSrvPath(m, append(c.tree, "laplace")...).(map[string]any)
					l["epsilon"] = l["epsilon"].(float64) * 2
				}, "ε0"},
				{"tree capacity", func(m map[string]any) {
					l := treeSrvPath(m, append(c.tree, "laplace")...).(map[string]any)
					l["capacity"] = l["capacity"].(float64) + 1
				}, "capacity"},
				{"node missing", dropLast(c.tree, "noisy"), "levels"},
				{"node non-finite", nil, "decoding state"}, // spliced in below
				{"continuous noise", setF(c.tree, "discrete", false), "discrete"},
				{"arms", dropLast(c.perArm, c.arrays), "K"},
				{"pulls", func(m map[string]any) {
					treeSrvPath(m, append(c.perArm, "pulls")...).([]any)[0] = 1e6
				}, "pull"},
			}, c.tampers...)
			good, _ := json.Marshal(pol)
			for _, tp := range all {
				t.Run(tp.name, func(t *testing.T) {
					q := treeSrvBuild(t, c.spec, s, 10)
					before, _ := json.Marshal(q)
					var bad []byte
					if tp.name == "node non-finite" {
						// encoding/json cannot write 1e999: splice it in.
						bad = []byte(strings.Replace(string(good), `"noisy":[`, `"noisy":[1e999,`, 1))
					} else if tp.name == "released total" {
						bad = []byte(strings.Replace(string(good), `"c":[`, `"c":[NaN,`, 1))
					} else {
						bad = treeSrvTamper(t, pol, tp.edit)
					}
					err := json.Unmarshal(bad, q)
					if err == nil {
						t.Fatalf("a state with %s tampered with was accepted", tp.name)
					}
					if !strings.Contains(err.Error(), tp.frag) {
						t.Errorf("error %q does not name the problem (%q)", err, tp.frag)
					}
					if after, _ := json.Marshal(q); string(after) != string(before) {
						t.Error("a refused state changed the policy")
					}
				})
			}
			q := treeSrvBuild(t, c.spec, s, 10)
			if err := json.Unmarshal(good, q); err != nil {
				t.Errorf("the untampered state was refused: %v", err)
			}
		})
	}
}
