package mab

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMTTSSkipGapOrder checks the documented phase order with skipGap: the
// first k·n_B rounds are a round-robin in index order (phase B), with
// n_B = randomPulls or ⌈Γ/Δ̂²⌉, Γ = 192 ln³T/ε; then phase C, in which every
// arm's tree holds one batch leaf plus one leaf per later pull, and m_a
// counts exactly those pulls.
func TestMTTSSkipGapOrder(t *testing.T) {
	const T, k = 20000, 5
	lnT := math.Log(T)
	for _, c := range []struct {
		name   string
		opts   MTTSOptions
		wantNB int
	}{
		{"randomPulls", MTTSOptions{K: k, Horizon: T, Epsilon: 1, SkipGap: true, Gap: 0.5, RandomPulls: 37}, 37},
		{"Γ/Δ̂²", MTTSOptions{K: k, Horizon: T, Epsilon: 1000, SkipGap: true, Gap: 0.5},
			int(math.Ceil(192 * lnT * lnT * lnT / 1000 / 0.25))},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewMTTS(c.opts, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			tau, gap, nB, bStart, _, guarded := p.Schedule()
			if p.Phase() != MTTSRandomPulls || tau != 0 || gap != 0.5 || nB != c.wantNB || bStart != 0 || guarded {
				t.Fatalf("start: phase %d, τ %d, Δ̂ %v, n_B %d, B at %d, guarded %v; want phase B, 0, 0.5, %d, 0, false",
					p.Phase(), tau, gap, nB, bStart, guarded, c.wantNB)
			}
			pulls, _, arms := pdtRun(t, p, pdtEasy, T, 1)
			for i := range k * nB {
				if arms[i] != i%k {
					t.Fatalf("round %d plays %d, want round-robin arm %d", i+1, arms[i], i%k)
				}
			}
			if _, _, _, _, cStart, _ := p.Schedule(); p.Phase() != MTTSThompson || cStart != k*nB {
				t.Fatalf("phase %d, C began at %d; want phase C from round %d", p.Phase(), cStart, k*nB)
			}
			for a := range k {
				if p.st.M[a] != pulls[a] || p.trees[a].Count() != pulls[a]-nB+1 {
					t.Errorf("arm %d: m_a %d, tree leaves %d, pulls %d; want m_a = pulls, leaves = pulls − n_B + 1",
						a, p.st.M[a], p.trees[a].Count(), pulls[a])
				}
				if p.trees[a].Capacity() != T {
					t.Errorf("tree capacity %d, want T − τ = %d", p.trees[a].Capacity(), T)
				}
			}
		})
	}
}

// TestMTTSGapEstimation checks phase A (ε = 100 makes it feasible at
// T = 2e4): batches of m_i = ⌈192k ln T/(ε Δ̂_i²)⌉ round-robin cycles with
// Δ̂_i = 2^{−i}; τ = Σ k·m_i; the stopping rule held on the released means
// (or the guard fired); phase B starts at round τ with trees of T − τ
// leaves; m_a excludes the phase-A pulls.
func TestMTTSGapEstimation(t *testing.T) {
	const T, k, eps = 20000, 5, 100.0
	for seed := range uint64(5) {
		p, _ := NewMTTS(MTTSOptions{K: k, Horizon: T, Epsilon: eps, RandomPulls: 50}, rand.New(rand.NewPCG(seed, 2)))
		if p.Phase() != MTTSGapEstimation {
			t.Fatalf("phase %d at the start, want A", p.Phase())
		}
		pulls, _, arms := pdtRun(t, p, pdtEasy, T, seed)
		tau, gap, nB, bStart, cStart, guarded := p.Schedule()
		wantTau, d := 0, 1.0
		for i := 0; i < p.st.Batches; i++ {
			wantTau += k * int(math.Ceil(192*k*math.Log(T)/(eps*d*d)))
			d /= 2
		}
		if tau != wantTau || gap != d || bStart != tau || nB != 50 || cStart != tau+k*50 {
			t.Fatalf("seed %d: τ %d Δ̂ %v B at %d n_B %d C at %d; want τ %d Δ̂ %v B at τ, n_B 50, C at τ+250",
				seed, tau, gap, bStart, nB, cStart, wantTau, d)
		}
		for i := range tau + k*nB {
			if arms[i] != i%k {
				t.Fatalf("seed %d: round %d (phases A–B) plays %d, want %d", seed, i+1, arms[i], i%k)
			}
		}
		if !guarded {
			mu := append([]float64(nil), p.st.MuHat...)
			a1 := pureArgmax(mu)
			second := math.Inf(-1)
			for a, v := range mu {
				if a != a1 {
					second = max(second, v)
				}
			}
			if !(mu[a1]-second > gap) {
				t.Errorf("seed %d: phase A stopped with top-two gap %v ≤ Δ̂ = %v", seed, mu[a1]-second, gap)
			}
		}
		for a := range k {
			if p.st.M[a] != pulls[a]-tau/k || p.trees[a].Capacity() != T-tau {
				t.Errorf("seed %d arm %d: m_a %d (pulls %d, phase A %d), capacity %d (want %d)",
					seed, a, p.st.M[a], pulls[a], tau/k, p.trees[a].Capacity(), T-tau)
			}
		}
		t.Logf("seed %d: %d batches, τ = %d, Δ̂ = %v, guarded %v", seed, p.st.Batches, tau, gap, guarded)
	}
}

// TestMTTSGuard checks the budget guard: with the paper's defaults at
// k = 5, T = 2e4, ε = 1 the first batch (k·m = 47,540 rounds) overruns T, so
// phase A ends before it starts and phase B takes ⌈Γ⌉ = ⌈192 ln³T⌉ pulls per
// arm, more than T: the run is all round-robin ([MT] Alg 2; docs/tree-based.md §1.8 feasibility).
func TestMTTSGuard(t *testing.T) {
	const T = 20000
	p, _ := NewMTTS(MTTSOptions{K: 5, Horizon: T, Epsilon: 1}, rand.New(rand.NewPCG(1, 1)))
	tau, gap, nB, _, _, guarded := p.Schedule()
	lnT := math.Log(T)
	if !guarded || tau != 0 || gap != 1 || p.Phase() != MTTSRandomPulls || nB != int(math.Ceil(192*lnT*lnT*lnT)) {
		t.Fatalf("guarded %v τ %d Δ̂ %v phase %d n_B %d; want true, 0, 1, B, ⌈192 ln³T⌉", guarded, tau, gap, p.Phase(), nB)
	}
	_, _, arms := pdtRun(t, p, pdtEasy, T, 1)
	for i, a := range arms {
		if a != i%5 {
			t.Fatalf("round %d plays %d, want round-robin", i+1, a)
		}
	}
}

// TestMTTSPhaseBNoise checks that phase C reads the rewards through trees at
// ε0 = ε/k when phase A is skipped (its half of the budget goes to the
// trees): right after phase B the tree sum of arm 0 is its one batch leaf
// plus Lap(L/ε0) noise on that single node, so its variance is 2(L·k/ε)²,
// L = ⌊log₂(T−τ)⌋+1. 2000 runs, ±15% (the 2k of the phase-A split would
// give 4× the variance).
func TestMTTSPhaseBNoise(t *testing.T) {
	const k, T, eps, runs = 2, 500, 10.0, 2000
	var v float64
	for seed := range uint64(runs) {
		p, _ := NewMTTS(MTTSOptions{K: k, Horizon: T, Epsilon: eps, SkipGap: true, Gap: 1, RandomPulls: 10}, rand.New(rand.NewPCG(seed, 4)))
		for range k * 10 {
			p.Update(p.Select(), 1) // binarised 1s: the batch leaf is exactly 10
		}
		if p.Phase() != MTTSThompson {
			t.Fatal("not in phase C after k·n_B rounds")
		}
		d := p.trees[0].Sum() - 10
		v += d * d / runs
	}
	L := 9.0 // ⌊log₂ 500⌋ + 1
	want := 2 * (L * k / eps) * (L * k / eps)
	if math.Abs(v/want-1) > 0.15 {
		t.Errorf("phase-B leaf noise variance %.4g, want %.4g", v, want)
	}
}

// TestMTTSTreeBudget checks the trees' ε0 against the report: ε/(2k) after
// a phase A (half the budget went to the gap estimates), ε/k when phase A is
// skipped or K = 1; the certified ε is that ε0 and the paper's is ε.
func TestMTTSTreeBudget(t *testing.T) {
	for _, c := range []struct {
		k    int
		skip bool
		want float64
	}{{2, false, 3.0 / 4}, {2, true, 3.0 / 2}, {1, false, 3}, {5, true, 3.0 / 5}} {
		p, err := NewMTTS(MTTSOptions{K: c.k, Horizon: 200000, Epsilon: 3, SkipGap: c.skip, Gap: 1, RandomPulls: 1}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		env := rand.New(rand.NewPCG(3, 4))
		for i := 0; p.Phase() != MTTSThompson; i++ {
			if i == 200000 {
				t.Fatalf("K=%d skip=%v: phase C not reached", c.k, c.skip)
			}
			a := p.Select()
			p.Update(a, float64(env.IntN(2)))
		}
		for a, tr := range p.trees {
			if tr.Epsilon() != c.want {
				t.Errorf("K=%d skip=%v: tree %d has ε0 %v, want %v", c.k, c.skip, a, tr.Epsilon(), c.want)
			}
		}
		rep := p.Privacy()
		if rep.Certified.Value != c.want || rep.Paper == nil || rep.Paper.Value != 3 {
			t.Errorf("K=%d skip=%v: report certified %v paper %+v, want %v and 3", c.k, c.skip, rep.Certified.Value, rep.Paper, c.want)
		}
	}
}

// TestMTTSClipping runs at a tiny ε, where the tree sums fall far outside
// [0, m_a]: the Beta parameters must stay valid (noise.Beta panics on a
// non-positive shape) and every θ must lie in [0, 1].
func TestMTTSClipping(t *testing.T) {
	p, _ := NewMTTS(MTTSOptions{K: 3, Horizon: 3000, Epsilon: 0.01, SkipGap: true, Gap: 1, RandomPulls: 5}, rand.New(rand.NewPCG(5, 5)))
	env := rand.New(rand.NewPCG(5, 6))
	out := 0
	for range 3000 {
		a := p.Select()
		if p.Phase() == MTTSThompson {
			for j := range 3 {
				if s := p.trees[j].Sum(); s < 0 || s > float64(p.st.M[j]) {
					out++
				}
				if p.th[j] < 0 || p.th[j] > 1 {
					t.Fatalf("θ = %v", p.th[j])
				}
			}
		}
		p.Update(a, float64(env.IntN(2)))
	}
	if out == 0 {
		t.Error("no tree sum ever fell outside [0, m_a]: clipping not exercised")
	}
}

// TestMTTSRewardsOutOfOrder: in the service, decisions and rewards are
// decoupled (several decisions can be made before their rewards arrive,
// and the round-robin advances with the rewards), so in phase B an arm can
// receive more or fewer than n_B rewards. Its leaf then holds exactly the
// rewards it received (m_a of them) and nothing panics: K = 3, n_B = 4,
// decisions in bursts of 5 before their rewards.
func TestMTTSRewardsOutOfOrder(t *testing.T) {
	p, err := NewMTTS(MTTSOptions{K: 3, Horizon: 1000, Epsilon: 1e6, SkipGap: true, Gap: 1, RandomPulls: 4}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int, 3)
	for p.Phase() == MTTSRandomPulls {
		var arms [5]int
		for i := range arms {
			arms[i] = p.Select()
		}
		for _, a := range arms {
			if p.Phase() == MTTSRandomPulls {
				got[a]++
			}
			p.Update(a, 1)
		}
	}
	total := 0
	for a := range 3 {
		total += got[a]
		if p.st.M[a] < got[a] || p.trees[a].Count() < 1 {
			t.Errorf("arm %d: %d phase-B rewards, m_a = %d, %d leaves", a, got[a], p.st.M[a], p.trees[a].Count())
		}
		// ε = 1e6: the tree's first leaf is the arm's phase-B sum (all 1s).
		if leaf := p.trees[a].State().Exact[0]; p.trees[a].Count() == 1 && leaf != float64(got[a]) {
			t.Errorf("arm %d: phase-B leaf %v, want its %d rewards", a, leaf, got[a])
		}
	}
	if total != 3*4 || got[0] == 4 {
		t.Errorf("phase-B rewards per arm %v (total %d): the test does not exercise uneven arms", got, total)
	}
	t.Logf("phase-B rewards per arm: %v", got)
}
