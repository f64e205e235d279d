package mab

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestMTUCBGamma checks Γ = k·ln²T·ln(kT ln T/γ)/ε with γ = 1/T by default,
// and the override.
func TestMTUCBGamma(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	p, _ := NewMTUCB(MTUCBOptions{K: 5, Horizon: 100000, Epsilon: 0.5}, r)
	lnT := math.Log(1e5)
	want := 5 * lnT * lnT * math.Log(5*1e5*lnT*1e5) / 0.5
	if math.Abs(p.Gamma()/want-1) > 1e-12 {
		t.Errorf("Γ = %v, want %v", p.Gamma(), want)
	}
	p, _ = NewMTUCB(MTUCBOptions{K: 5, Horizon: 100000, Epsilon: 0.5, Fail: 0.01}, r)
	if want := 5 * lnT * lnT * math.Log(5*1e5*lnT/0.01) / 0.5; math.Abs(p.Gamma()/want-1) > 1e-12 {
		t.Errorf("Γ(γ = 0.01) = %v, want %v", p.Gamma(), want)
	}
	p, _ = NewMTUCB(MTUCBOptions{K: 5, Horizon: 100000, Epsilon: 0.5, Gamma: 7}, r)
	if p.Gamma() != 7 {
		t.Errorf("tuned Γ = %v, want 7", p.Gamma())
	}
}

// TestMTUCBTreeNoise checks that the rewards are read through one Laplace
// tree per arm at ε0 = ε/k: after n leaves of 0.5, the noisy sum of arm 0
// minus 0.5n has variance 2b²·popcount(n) with b = L/ε0, L = ⌊log₂T⌋+1
// (docs/accountant.md §2.5). An ε (instead of ε/k) tree would show a variance k² = 4
// times smaller. 2000 runs, tolerance ±15%.
func TestMTUCBTreeNoise(t *testing.T) {
	const k, T, n, eps, runs = 2, 1000, 300, 4.0, 2000
	var v float64
	for seed := range uint64(runs) {
		p, err := NewMTUCB(MTUCBOptions{K: k, Horizon: T, Epsilon: eps}, rand.New(rand.NewPCG(seed, 9)))
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			p.Update(0, 0.5)
		}
		d := p.NoisySum(0) - 0.5*n
		v += d * d / runs
	}
	L := float64(bits.Len(T))
	b := L / (eps / k)
	want := 2 * b * b * float64(bits.OnesCount(n))
	if math.Abs(v/want-1) > 0.15 {
		t.Errorf("variance of the tree sum %.4g, want 2(L k/ε)²·popcount(n) = %.4g", v, want)
	}
	p, _ := NewMTUCB(MTUCBOptions{K: k, Horizon: T, Epsilon: eps}, rand.New(rand.NewPCG(1, 9)))
	if tr := p.Tree(0); tr.Capacity() != T || tr.Epsilon() != eps/k || tr.Scale() < b {
		t.Errorf("tree capacity %d, ε %v, scale %v; want %d, %v, ≥ %v", tr.Capacity(), tr.Epsilon(), tr.Scale(), T, eps/k, b)
	}
}

// TestMTUCBIndex checks that the index of Select is computed from the
// trees' noisy sums, clipped into [0, n_a], for both widths.
func TestMTUCBIndex(t *testing.T) {
	for _, width := range []int{0, 1} {
		p, _ := NewMTUCB(MTUCBOptions{K: 3, Horizon: 4096, Epsilon: 3, Gamma: 2, Width: width}, rand.New(rand.NewPCG(2, 2)))
		pdtRun(t, p, []float64{0.2, 0.5, 0.8}, 700, 2)
		a := p.Select()
		lnt := math.Log(701)
		clipped := 0
		for j := range 3 {
			n := float64(p.n[j])
			raw := p.NoisySum(j)
			s := min(max(raw, 0), n)
			if s != raw {
				clipped++
			}
			w := math.Sqrt(2 * lnt / n)
			if width == 1 {
				w = math.Sqrt(s*lnt)/n + lnt/n
			}
			if want := s/n + w + 2/n; math.Abs(p.idx[j]-want) > 1e-12 {
				t.Errorf("width %d, arm %d: index %v, want %v", width, j, p.idx[j], want)
			}
		}
		if a != pureArgmax(p.idx) {
			t.Errorf("selected %d, argmax %d", a, pureArgmax(p.idx))
		}
		t.Logf("width %d: %d of 3 sums clipped", width, clipped)
	}
}

// TestMTUCBClipping checks that a strongly noised run never produces an
// index outside the clipped range: every r_a/n_a term lies in [0, 1].
func TestMTUCBClipping(t *testing.T) {
	p, _ := NewMTUCB(MTUCBOptions{K: 4, Horizon: 2000, Epsilon: 0.01, Gamma: 1e-9}, rand.New(rand.NewPCG(3, 3)))
	env := rand.New(rand.NewPCG(3, 4))
	lo, hi := 0, 0
	for range 2000 {
		a := p.Select()
		if p.steps >= 4 {
			for j := range 4 {
				n := float64(p.n[j])
				m := p.idx[j] - math.Sqrt(2*math.Log(float64(p.steps+1))/n) - 1e-9/n
				if m < -1e-9 || m > 1+1e-9 {
					t.Fatalf("mean term %v outside [0, 1]", m)
				}
				if raw := p.NoisySum(j); raw < 0 {
					lo++
				} else if raw > n {
					hi++
				}
			}
		}
		p.Update(a, float64(env.IntN(2)))
	}
	if lo == 0 || hi == 0 {
		t.Errorf("clipping never exercised below (%d) or above (%d): the test is too weak", lo, hi)
	}
}

// TestMTUCBFullTree checks that pulls beyond the horizon do not touch the
// trees (their rewards are not read) and do not panic.
func TestMTUCBFullTree(t *testing.T) {
	p, _ := NewMTUCB(MTUCBOptions{K: 1, Horizon: 4, Epsilon: 1}, rand.New(rand.NewPCG(4, 4)))
	for range 10 {
		p.Update(p.Select(), 1)
	}
	if p.n[0] != 4 || p.pulls[0] != 10 || p.Tree(0).Count() != 4 {
		t.Errorf("n = %d, pulls = %d, tree count = %d; want 4, 10, 4", p.n[0], p.pulls[0], p.Tree(0).Count())
	}
	defer func() {
		if recover() == nil {
			t.Error("a reward of 1.5 was accepted")
		}
	}()
	q, _ := NewMTUCB(MTUCBOptions{K: 1, Horizon: 4, Epsilon: 1}, rand.New(rand.NewPCG(4, 4)))
	q.Update(0, 1.5)
}

// TestMTUCBOneLeafPerReward checks the structural fact behind the
// certified ε/k (docs/reproduction-decisions.md A19): every reward is inserted into exactly one
// leaf of exactly one tree, the tree of the arm that was pulled, so the
// trees' leaf counts are the pull counts and add up to T.
func TestMTUCBOneLeafPerReward(t *testing.T) {
	const T = 3000
	p, _ := NewMTUCB(MTUCBOptions{K: 4, Horizon: T, Epsilon: 1, Gamma: 3, Width: 1}, rand.New(rand.NewPCG(8, 8)))
	pulls, _, _ := pdtRun(t, p, []float64{0.3, 0.5, 0.7, 0.6}, T, 8)
	total := 0
	for a, tr := range p.trees {
		if tr.Count() != pulls[a] {
			t.Errorf("arm %d: tree holds %d leaves, arm pulled %d times", a, tr.Count(), pulls[a])
		}
		if rep := tr.Privacy(); rep.Certified.Value != p.Privacy().Certified.Value {
			t.Errorf("arm %d: tree certifies ε = %v, policy %v", a, rep.Certified.Value, p.Privacy().Certified.Value)
		}
		total += tr.Count()
	}
	if total != T {
		t.Errorf("trees hold %d leaves in all, want T = %d", total, T)
	}
}
