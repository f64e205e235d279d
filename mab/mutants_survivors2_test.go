package mab

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// Tests killing the mutants that survived the second gremlins run on mab
// (mtts.go, gaussts.go, tsgaussian.go, mtsgaussian.go, mtucb.go). Each test
// names the mutants it kills.

// mut2NewMTTS builds an MTTS or fails the test.
func mut2NewMTTS(t *testing.T, o MTTSOptions, seed uint64) *MTTS {
	t.Helper()
	p, err := NewMTTS(o, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		t.Fatalf("NewMTTS(%+v): %v", o, err)
	}
	return p
}

// mut2Play runs n rounds of p, rewarding arm a with reward[a].
func mut2Play(p *MTTS, n int, reward []float64) {
	for range n {
		a := p.Select()
		p.Update(a, reward[a])
	}
}

// mut2Restore marshals p, lets edit change the decoded JSON object (nil:
// no change) and restores it into a fresh policy built with the options o
// (or into a zero MTTS when o is nil), returning UnmarshalJSON's error.
func mut2Restore(t *testing.T, p *MTTS, o *MTTSOptions, edit func(opts, st map[string]any)) error {
	t.Helper()
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	if edit != nil {
		var j map[string]any
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		edit(j["options"].(map[string]any), j["state"].(map[string]any))
		if b, err = json.Marshal(j); err != nil {
			t.Fatal(err)
		}
	}
	q := &MTTS{}
	if o != nil {
		q = mut2NewMTTS(t, *o, 99)
	}
	return q.UnmarshalJSON(b)
}

// TestMut2MTTSNextCost pins the filter charge of the first Select: the
// certified ε/(2k) when phase A runs, ε/k without it (skipGap or K = 1)
// (Mishra & Thakurta, UAI 2015, Alg 2: k trees at ε/(2k) after phase A's
// half), and the report's derivation states the matching bound. Kills
// mtts.go:487:18 (`skipGap || k != 1` picks the derivation of the other
// case: "ε/k-DP" at K = 2 with phase A, "ε/(2k)-DP" at K = 1).
func TestMut2MTTSNextCost(t *testing.T) {
	for _, c := range []struct {
		k    int
		skip bool
		want float64
	}{{2, false, 0.5 / 4}, {1, false, 0.5}, {3, true, 0.5 / 3}, {3, false, 0.5 / 6}} {
		p := mut2NewMTTS(t, MTTSOptions{K: c.k, Horizon: 1000, Epsilon: 0.5, SkipGap: c.skip, Gap: 1}, 1)
		if g := p.NextCost(); g.Value != c.want {
			t.Errorf("K=%d skipGap=%v: NextCost = %v, want %v", c.k, c.skip, g.Value, c.want)
		}
		r := p.Privacy()
		if r.Certified.Value != c.want {
			t.Errorf("K=%d skipGap=%v: certified %v, want %v", c.k, c.skip, r.Certified.Value, c.want)
		}
		head := "ε/(2k)-DP"
		if c.skip || c.k == 1 {
			head = "ε/k-DP"
		}
		if !strings.HasPrefix(r.Derivation, head) {
			t.Errorf("K=%d skipGap=%v: derivation %.40q..., want it to begin %q", c.k, c.skip, r.Derivation, head)
		}
	}
}

// TestMut2MTTSHorizonTwo: T = 2 is the smallest valid horizon. Kills
// mtts.go:189:18 (`Horizon <= 2` refuses it).
func TestMut2MTTSHorizonTwo(t *testing.T) {
	if _, err := NewMTTS(MTTSOptions{K: 2, Horizon: 2, Epsilon: 1}, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatalf("T = 2: %v", err)
	}
	if _, err := NewMTTS(MTTSOptions{K: 2, Horizon: 1, Epsilon: 1}, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Fatal("T = 1 accepted")
	}
}

// TestMut2MTTSGridPhaseACheck: the grid mechanism refuses a scale b/Δ
// below 2^-982 (noise.NewGridLaplace), and NewMTTS must refuse options
// whose phase-A batch-mean release (b = 2k/ε, Δ = 1 relative) would be
// refused later, even when the trees' (b = L·2k/ε, larger) are fine.
//   - K = 2, ε = 6·2^982: phase-A b = 2^-982/1.5 is refused, trees are
//     fine, so NewMTTS must fail. Kills mtts.go:256:7 CONDITIONALS_NEGATION
//     (`k <= 1` skips the phase-A check; the run would panic at the
//     first batch end).
//   - K = 2, ε = 2·2^982: phase-A b = 2^-981 is fine. Kills mtts.go:257:23
//     (`ε/(2/k)` = ε/1 checks b = 2^-983, refused).
//   - K = 1, T = 64, ε = 3·2^982: K = 1 has no phase A, so only the trees
//     (b = L/ε with L ≥ 3 levels) are checked and must pass. Kills
//     mtts.go:256:7 CONDITIONALS_BOUNDARY (`k >= 1` also checks a phase-A
//     release b = 2/ε = 2^-982/1.5 that K = 1 never makes, and refuses).
func TestMut2MTTSGridPhaseACheck(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	if _, err := NewMTTS(MTTSOptions{K: 2, Horizon: 64, Epsilon: 6 * 0x1p982, Grid: true}, r); err == nil {
		t.Error("K=2, ε = 6·2^982, grid: accepted although the phase-A release cannot be made")
	}
	if _, err := NewMTTS(MTTSOptions{K: 2, Horizon: 64, Epsilon: 2 * 0x1p982, Grid: true}, r); err != nil {
		t.Errorf("K=2, ε = 2·2^982, grid: %v", err)
	}
	if _, err := NewMTTS(MTTSOptions{K: 1, Horizon: 64, Epsilon: 3 * 0x1p982, Grid: true}, r); err != nil {
		t.Errorf("K=1, ε = 3·2^982, grid: %v", err)
	}
}

// TestMut2MTTSStoppingRule checks Alg 2's stopping rule
// |μ̂_a(1) − μ̂_a(2)| > Δ̂ with a(1), a(2) the top two arms by μ̂. At
// ε = 1000 the Laplace noise 2k/(εm) is ≤ 0.002, far from the margins.
//   - K = 2, means (0, 1): gap 1 > 0.5, phase B after one batch. Kills
//     mtts.go:307:8 (both mutators: a2 starts at 1 = a(1), so the gap is 0)
//     and mtts.go:309:8 (`a == a1` makes a(2) = a(1)).
//   - K = 3, means (0.7, 1, 0): top two differ by 0.3 ≤ 0.5, phase A
//     goes on. Kills mtts.go:309:21 (`a2 <= 0` lets arm 2 replace arm 0
//     as a(2), giving gap 1).
//   - K = 2, ε = 1e300, means (0.5, 1): the released means are exactly
//     0.5 and 1 (noise ~1e-300 is absorbed), gap = Δ̂ = 0.5 exactly, which
//     is not > Δ̂: phase A goes on. Kills mtts.go:313:41 (`>=`).
func TestMut2MTTSStoppingRule(t *testing.T) {
	p := mut2NewMTTS(t, MTTSOptions{K: 2, Horizon: 1000, Epsilon: 1000}, 3)
	m := p.st.BatchM
	mut2Play(p, 2*m, []float64{0, 1})
	if p.Phase() != MTTSRandomPulls || p.st.Batches != 1 {
		t.Errorf("K=2 means (0,1): phase %d after %d batches, want phase B after 1", p.Phase(), p.st.Batches)
	}

	p = mut2NewMTTS(t, MTTSOptions{K: 3, Horizon: 1000, Epsilon: 1000}, 4)
	m = p.st.BatchM
	mut2Play(p, 3*m, []float64{0.7, 1, 0})
	if p.Phase() != MTTSGapEstimation || p.st.Batches != 1 {
		t.Errorf("K=3 means (0.7,1,0): phase %d after %d batches, want phase A after 1", p.Phase(), p.st.Batches)
	}

	p = mut2NewMTTS(t, MTTSOptions{K: 2, Horizon: 100, Epsilon: 1e300}, 5)
	mut2Play(p, 2, []float64{0.5, 1})
	if p.st.MuHat[0] != 0.5 || p.st.MuHat[1] != 1 {
		t.Fatalf("released means %v, want exactly (0.5, 1)", p.st.MuHat)
	}
	if p.Phase() != MTTSGapEstimation {
		t.Errorf("gap exactly Δ̂: phase %d, want phase A to continue", p.Phase())
	}
}

// TestMut2MTTSScheduleEdges runs K = 2, ε = 1e300 (every batch has m = 1
// cycle, and equal rewards give equal released means, so phase A ends
// only by the budget guard) at T = 20.
//   - The guard lets a batch that exactly fills T run (τ + km = T is not
//     > T): τ = 20 when phase B begins. Kills mtts.go:278:25 (`>=`: τ = 18).
//   - The state in the last batch (τ + km = T) and the state at phase B
//     with τ = T both restore. Kill mtts.go:629:53 (`>=`) and
//     mtts.go:606:43 (`tau >= Horizon`).
func TestMut2MTTSScheduleEdges(t *testing.T) {
	o := MTTSOptions{K: 2, Horizon: 20, Epsilon: 1e300}
	p := mut2NewMTTS(t, o, 6)
	half := []float64{0.5, 0.5}
	mut2Play(p, 19, half)
	if p.Phase() != MTTSGapEstimation || p.st.Tau != 18 || p.st.BatchM != 1 {
		t.Fatalf("after 19 rounds: phase %d, τ = %d, m = %d; want phase A, 18, 1", p.Phase(), p.st.Tau, p.st.BatchM)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Errorf("restoring the last batch's state: %v", err)
	}
	mut2Play(p, 1, half)
	tau, _, _, bStart, _, guarded := p.Schedule()
	if p.Phase() != MTTSRandomPulls || tau != 20 || bStart != 20 || !guarded {
		t.Errorf("after 20 rounds: phase %d, τ = %d, B from %d, guarded %v; want phase B, 20, 20, true", p.Phase(), tau, bStart, guarded)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Errorf("restoring the phase-B state with τ = T: %v", err)
	}
}

// TestMut2MTTSRestoreValid restores states the policy itself produced
// (UnmarshalJSON must accept them):
//   - a fresh K = 2 policy (phase A, cycle 0). Kills mtts.go:630:14
//     (`Cycles <= 0`).
//   - skipGap with Δ̂ = 0.5, n_B = ⌈Γ/Δ̂²⌉ = ⌈4Γ⌉, at the start of phase B
//     (m_a = 0, no leaves). Kills mtts.go:638:63 (Γ·Δ̂² gives ⌈Γ/4⌉),
//     mtts.go:638:66 (Γ/(Δ̂/Δ̂) gives ⌈Γ⌉) and mtts.go:557:80
//     (`c-want >= m_a` refuses 0 leaves with m_a = 0).
//   - skipGap with randomPulls = 2 right at the start of phase C
//     (steps = c_start), and with randomPulls = 1 (one leaf per tree,
//     c − 1 = 0 ≤ m_a = 1). Kill mtts.go:655:48 (`Steps <= CStart`) and
//     mtts.go:557:80 (both mutators: c + 1 = 2 > m_a = 1 is refused).
//   - K = 2, ε = 1e300, equal rewards: after 64 batches of m = 1 (the
//     check allows up to 64 completed batches). Kills mtts.go:594:80
//     (`Batches >= 64`).
func TestMut2MTTSRestoreValid(t *testing.T) {
	o := MTTSOptions{K: 2, Horizon: 1000, Epsilon: 1}
	if err := mut2Restore(t, mut2NewMTTS(t, o, 1), &o, nil); err != nil {
		t.Errorf("fresh phase-A state: %v", err)
	}

	o = MTTSOptions{K: 2, Horizon: 100, Epsilon: 1, SkipGap: true, Gap: 0.5}
	p := mut2NewMTTS(t, o, 2)
	l := math.Log(100)
	if want := int(math.Ceil(192 * l * l * l / 0.25)); p.st.NB != want {
		t.Fatalf("n_B = %d, want ⌈192·ln³T/(ε·Δ̂²)⌉ = %d", p.st.NB, want)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Errorf("fresh phase-B state with Δ̂ = 0.5: %v", err)
	}

	o = MTTSOptions{K: 2, Horizon: 100, Epsilon: 1, SkipGap: true, Gap: 1, RandomPulls: 2}
	p = mut2NewMTTS(t, o, 3)
	mut2Play(p, 4, []float64{1, 0})
	if p.Phase() != MTTSThompson || p.st.CStart != 4 {
		t.Fatalf("phase %d, C from %d; want phase C from round 4", p.Phase(), p.st.CStart)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Errorf("state at the start of phase C: %v", err)
	}

	o.RandomPulls = 1
	p = mut2NewMTTS(t, o, 3)
	mut2Play(p, 2, []float64{1, 0})
	if p.Phase() != MTTSThompson || p.st.M[0] != 1 || p.trees[0].Count() != 1 {
		t.Fatalf("phase %d, m_a %v, want phase C with m_a = 1 and one leaf", p.Phase(), p.st.M)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Errorf("state at the start of phase C with n_B = 1: %v", err)
	}

	o = MTTSOptions{K: 2, Horizon: 1000, Epsilon: 1e300}
	p = mut2NewMTTS(t, o, 4)
	mut2Play(p, 128, []float64{0.5, 0.5})
	if p.Phase() != MTTSGapEstimation || p.st.Batches != 64 {
		t.Fatalf("phase %d after %d batches, want phase A after 64", p.Phase(), p.st.Batches)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Errorf("state after 64 batches: %v", err)
	}
}

// TestMut2MTTSRestoreForged refuses states that break the schedule the
// options imply (each forged from a real state by one consistent change):
//   - round-robin position K. Kills mtts.go:590:26 (`Pos > k`).
//   - phase A with cycle = m (the batch should have ended). Kills
//     mtts.go:630:31 (`Cycles > BatchM`).
//   - phase A at K = 1 (K = 1 has no phase A). Kills mtts.go:593:14
//     (`k >= 1`).
//   - phase A whose batch overruns T (τ + km = 10 > T = 9). Kills
//     mtts.go:629:39 (`τ − km`) and mtts.go:629:50 (`τ + k/m`).
//   - phase B with cycle = n_B. Kills mtts.go:649:51 (`Cycles > NB`).
//   - a state restored into a policy built with other options (ε = 2 vs 1).
//     Kills mtts.go:537:9 (`p.r == nil` accepts it).
func TestMut2MTTSRestoreForged(t *testing.T) {
	set := func(st map[string]any, kv ...any) {
		for i := 0; i < len(kv); i += 2 {
			st[kv[i].(string)] = kv[i+1]
		}
	}

	o := MTTSOptions{K: 2, Horizon: 1_000_000, Epsilon: 1}
	p := mut2NewMTTS(t, o, 1)
	mut2Play(p, 2, []float64{0.5, 0.5})
	if p.st.Pos != 0 || p.st.Cycles != 1 || p.st.BatchM < 2 {
		t.Fatalf("pos %d cycles %d m %d", p.st.Pos, p.st.Cycles, p.st.BatchM)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Fatalf("unforged: %v", err)
	}
	if err := mut2Restore(t, p, &o, func(_, st map[string]any) { set(st, "pos", 2, "cycles", 0) }); err == nil {
		t.Error("round-robin position K accepted")
	}

	// m = ⌈192·2·ln 100/ε⌉ = ⌈1.5⌉ = 2.
	o = MTTSOptions{K: 2, Horizon: 100, Epsilon: 384 * math.Log(100) / 1.5}
	p = mut2NewMTTS(t, o, 2)
	mut2Play(p, 2, []float64{0.5, 0.5})
	if p.st.BatchM != 2 || p.st.Cycles != 1 {
		t.Fatalf("m = %d, cycles %d; want 2, 1", p.st.BatchM, p.st.Cycles)
	}
	if err := mut2Restore(t, p, &o, func(_, st map[string]any) {
		set(st, "cycles", 2, "steps", 4, "pulls", []int{2, 2})
	}); err == nil {
		t.Error("phase-A cycle = m accepted")
	}

	o = MTTSOptions{K: 1, Horizon: 100, Epsilon: 1e300}
	p = mut2NewMTTS(t, o, 3)
	if err := mut2Restore(t, p, &o, func(_, st map[string]any) {
		delete(st, "trees")
		set(st, "phase", MTTSGapEstimation, "n_b", 0, "b_start", 0, "batch_m", 1)
	}); err == nil {
		t.Error("phase A at K = 1 accepted")
	}

	// m = ⌈192·2·ln 9/ε⌉ = ⌈4.5⌉ = 5 at T = 9; the state is a fresh
	// phase-A one of T = 100 relabelled to T = 9, where km = 10 > T.
	eps := 384 * math.Log(9) / 4.5
	o = MTTSOptions{K: 2, Horizon: 100, Epsilon: eps}
	p = mut2NewMTTS(t, o, 4)
	if p.Phase() != MTTSGapEstimation {
		t.Fatal("not in phase A")
	}
	if got := mttsBatchM(MTTSOptions{K: 2, Horizon: 9, Epsilon: eps}, 1); got != 5 {
		t.Fatalf("m at T = 9 is %v, want 5", got)
	}
	if err := mut2Restore(t, p, nil, func(opts, st map[string]any) {
		opts["Horizon"] = 9
		set(st, "batch_m", 5)
	}); err == nil {
		t.Error("phase-A batch overrunning T accepted")
	}

	o = MTTSOptions{K: 2, Horizon: 100, Epsilon: 1, SkipGap: true, Gap: 1, RandomPulls: 3}
	p = mut2NewMTTS(t, o, 5)
	mut2Play(p, 4, []float64{1, 0})
	if p.Phase() != MTTSRandomPulls || p.st.Cycles != 2 || p.st.Pos != 0 {
		t.Fatalf("phase %d cycles %d pos %d", p.Phase(), p.st.Cycles, p.st.Pos)
	}
	if err := mut2Restore(t, p, &o, nil); err != nil {
		t.Fatalf("unforged phase B: %v", err)
	}
	if err := mut2Restore(t, p, &o, func(_, st map[string]any) {
		set(st, "cycles", 3, "steps", 6, "pulls", []int{3, 3}, "m", []int{3, 3})
	}); err == nil {
		t.Error("phase-B cycle = n_B accepted")
	}

	o = MTTSOptions{K: 2, Horizon: 100, Epsilon: 1}
	o2 := o
	o2.Epsilon = 2
	if err := mut2Restore(t, mut2NewMTTS(t, o, 6), &o2, nil); err == nil {
		t.Error("state of ε = 1 restored into a policy with ε = 2")
	}
}

// TestMut2MTTSBetaPosterior checks phase C's θ_a ~ Beta(r_a + 1,
// m_a − r_a + 1): with ε = 1e300 (tree noise ~1e-299) and 200 phase-B
// pulls per arm, arm 0 (all rewards 1) has r = m = 200, so θ_0 ~
// Beta(201, 1) exceeds 0.9 except with probability 0.9^201 < 1e-9, and
// arm 1 (all 0) has θ_1 ~ Beta(1, 201) < 0.1 likewise. Kills mtts.go:375:28
// (both mutators: Beta(r+1, m+r+1) = Beta(201, 401) has mean 1/3).
func TestMut2MTTSBetaPosterior(t *testing.T) {
	p := mut2NewMTTS(t, MTTSOptions{K: 2, Horizon: 1000, Epsilon: 1e300, SkipGap: true, Gap: 1, RandomPulls: 200}, 8)
	mut2Play(p, 400, []float64{1, 0})
	if p.Phase() != MTTSThompson {
		t.Fatalf("phase %d, want C", p.Phase())
	}
	for i := range 20 {
		a := p.Select()
		if a != 0 || p.th[0] < 0.9 || p.th[1] > 0.1 {
			t.Fatalf("draw %d: arm %d, θ = %v; want arm 0 with θ_0 > 0.9, θ_1 < 0.1", i, a, p.th)
		}
		p.Update(a, 1)
	}
}

// TestMut2GaussianTSCosts: GaussianTS charges 0 while an arm is unplayed
// and max_i 1/sqrt(n_i) over played arms afterwards (Ou et al., AISTATS
// 2024, Lemma 3, per-round GDP). After pulls (1, 2) the charge is 1.
// Kills gaussts.go:117:21 and gaussts.go:118:11 (the unplayed count does
// not reach 0, the charge stays 0) and tsgaussian.go:94:29
// (minPositive skips n = 1, giving 1/sqrt(2)). Also T = K is valid:
// kills gaussts.go:77:15.
func TestMut2GaussianTSCosts(t *testing.T) {
	p, err := NewGaussianTS(GaussianTSOptions{K: 2, Horizon: 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatalf("T = K = 2: %v", err)
	}
	if g := p.NextCost(); g.Value != 0 {
		t.Fatalf("initial cost %v, want 0", g.Value)
	}
	for _, a := range []int{0, 1, 1} {
		p.Select()
		p.Update(a, 0.5)
	}
	if g := p.NextCost(); g.Value != 1 {
		t.Errorf("cost after pulls (1, 2) = %v, want 1/sqrt(1) = 1", g.Value)
	}
}

// TestMut2TSGaussianValid: T = 1 is valid (constructor and registry
// report), and the states with an unplayed arm (n = 0) and with S = n (all
// rewards 1) restore. Kills tsgaussian.go:148:18, tsgaussian.go:256:17,
// tsgaussian.go:134:8 (`n <= 0`) and tsgaussian.go:134:29 (`s < n`).
func TestMut2TSGaussianValid(t *testing.T) {
	if _, err := NewTSGaussian(TSGaussianOptions{K: 2, Horizon: 1}, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Errorf("T = 1: %v", err)
	}
	d, err := Lookup("ts-gaussian")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.Report(bandit.Setting{K: 2, Horizon: 1}, nil); err != nil || r.Certified.Value != 0 {
		t.Errorf("registry report at T = 1: %v, %v; want sqrt((1−1)/2) = 0", r.Certified.Value, err)
	}
	if _, err := d.Report(bandit.Setting{K: 2, Horizon: 0}, nil); err == nil {
		t.Error("registry report at T = 0 accepted")
	}

	o := TSGaussianOptions{K: 2, Horizon: 10}
	p, _ := NewTSGaussian(o, rand.New(rand.NewPCG(1, 2)))
	p.Select()
	p.Update(0, 1)
	p.Select()
	p.Update(0, 1)
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	q, _ := NewTSGaussian(o, rand.New(rand.NewPCG(1, 3)))
	if err := q.UnmarshalJSON(b); err != nil {
		t.Errorf("restoring n = (2, 0), S = (2, 0): %v", err)
	}
}

// TestMut2MTSGaussian covers M-TS-Gaussian (Ou et al., AISTATS 2024,
// Alg 2; certified sqrt(m/(c(max(b,1)+1))), lagged sqrt(m/(2c)), m = T − bK
// data-reading rounds):
//   - T = 1 (K = 1, b = 0) is valid. Kills mtsgaussian.go:104:15.
//   - b out of range names [0, T/K] = [0, 5]. Kills mtsgaussian.go:108:120.
//   - K = 2, b = 2, T = 20, c = 1: a Thompson round with no reward applied
//     at all reads no data, so the report stays sqrt(16/3). Kills
//     mtsgaussian.go:153:38 (`m >= 0` marks it lagged: sqrt(16/2)).
//   - same with c = 4 and one reward applied (n = (1, 0) < b): lagged,
//     certified sqrt(16/(2·4)) = sqrt(2). Kills mtsgaussian.go:184:36
//     (sqrt(16·4/2)).
func TestMut2MTSGaussian(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	if _, err := NewMTSGaussian(MTSGaussianOptions{K: 1, Horizon: 1, B: 0, C: 1}, r); err != nil {
		t.Errorf("T = 1: %v", err)
	}
	_, err := NewMTSGaussian(MTSGaussianOptions{K: 2, Horizon: 10, B: 6, C: 1}, r)
	if err == nil || !strings.Contains(err.Error(), "[0, 5]") {
		t.Errorf("b = 6 > T/K = 5: error %v, want one naming [0, 5]", err)
	}

	p, _ := NewMTSGaussian(MTSGaussianOptions{K: 2, Horizon: 20, B: 2, C: 1}, r)
	for range 5 {
		p.Select()
	}
	if got, want := p.Privacy().Certified.Value, math.Sqrt(16.0/3); math.Abs(got-want) > 1e-12 {
		t.Errorf("no reward applied: certified %v, want sqrt(16/3) = %v", got, want)
	}

	p, _ = NewMTSGaussian(MTSGaussianOptions{K: 2, Horizon: 20, B: 2, C: 4}, r)
	for range 4 {
		p.Select()
	}
	p.Update(0, 1)
	p.Select()
	if got, want := p.Privacy().Certified.Value, math.Sqrt2; math.Abs(got-want) > 1e-12 {
		t.Errorf("lagged: certified %v, want sqrt(16/8) = %v", got, want)
	}
}

// TestMut2MTUCB covers mt-ucb (Mishra & Thakurta, UAI 2015, Alg 1):
//   - T = 2 is valid, fail = 1 is not (range (0, 1)). Kill mtucb.go:136:18
//     and mtucb.go:145:57.
//   - SelectProbs puts its mass on the arm Select returns next, at every
//     round of a run (both use ln(t+1)). Kills mtucb.go:231:34
//     (SelectProbs with ln(t−1)).
//   - a stored tree with sensitivity 2 (not leaves in [0, 1]) is refused.
//     Kills mtucb.go:444:89 (`Sensitivity == 1` accepts any other).
func TestMut2MTUCB(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	if _, err := NewMTUCB(MTUCBOptions{K: 2, Horizon: 2, Epsilon: 1}, r); err != nil {
		t.Errorf("T = 2: %v", err)
	}
	if _, err := NewMTUCB(MTUCBOptions{K: 2, Horizon: 10, Epsilon: 1, Fail: 1}, r); err == nil {
		t.Error("fail = 1 accepted")
	}

	o := MTUCBOptions{K: 3, Horizon: 300, Epsilon: 100}
	p, err := NewMTUCB(o, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	env := rand.New(rand.NewPCG(3, 3))
	means := []float64{0.3, 0.5, 0.6}
	out := make([]float64, 3)
	for i := range 300 {
		p.SelectProbs(nil, out, 1, nil)
		a := p.Select()
		if out[a] != 1 {
			t.Fatalf("round %d: Select chose %d, SelectProbs said %v", i, a, out)
		}
		x := 0.0
		if env.Float64() < means[a] {
			x = 1
		}
		p.Update(a, x)
	}

	// K = 2, ε = 1e300 (noise and Γ ≈ 0): rewards 0.92, 0.5, 0.92 give
	// n = (2, 1), means (0.92, 0.5) at t = 3. Select's ln 4: indices
	// 0.92 + sqrt(ln 4) = 2.097 < 0.5 + sqrt(2 ln 4) = 2.165, arm 1; with
	// ln 2 instead arm 0 (1.753 > 1.677) would be chosen.
	p2, err := NewMTUCB(MTUCBOptions{K: 2, Horizon: 100, Epsilon: 1e300}, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []float64{0.92, 0.5, 0.92} {
		if a := p2.Select(); a != []int{0, 1, 0}[i] {
			t.Fatalf("round %d chose arm %d", i, a)
		}
		p2.Update([]int{0, 1, 0}[i], x)
	}
	out2 := make([]float64, 2)
	p2.SelectProbs(nil, out2, 1, nil)
	if a := p2.Select(); a != 1 || out2[1] != 1 {
		t.Errorf("t = 3: Select %d, SelectProbs %v; want arm 1 from both", a, out2)
	}

	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	q, _ := NewMTUCB(o, rand.New(rand.NewPCG(4, 4)))
	if err := q.UnmarshalJSON(b); err != nil {
		t.Fatalf("unforged: %v", err)
	}
	forged := strings.Replace(string(b), `"epsilon":`, `"sensitivity":2,"epsilon":`, 1)
	if forged == string(b) {
		t.Fatalf("no tree options found in %.300s", b)
	}
	if err := q.UnmarshalJSON([]byte(forged)); err == nil {
		t.Error("tree with sensitivity 2 accepted")
	}
}
