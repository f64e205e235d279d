package mab

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLazyUCBEpochs checks the forgetful doubling epochs: with K = 1 and
// n pulls the released mean is built from the last completed epoch, of
// size 1, 2, 4, … (after 1, 3, 7, 15 pulls), with one Laplace release per
// epoch; the rewards of older epochs are forgotten.
func TestLazyUCBEpochs(t *testing.T) {
	p, err := NewLazyUCB(LazyUCBOptions{K: 1, Epsilon: 1e6, C1: 2, C2: 3}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	// Epochs: pull 1 (reward 0), pulls 2–3 (reward 1), pulls 4–7 (reward 0),
	// pulls 8–15 (reward 1). ε = 1e6 makes the noise negligible (scale 1e-6).
	reward := func(n int) float64 { // n = 1-based pull number
		switch {
		case n == 1:
			return 0
		case n <= 3:
			return 1
		case n <= 7:
			return 0
		}
		return 1
	}
	wantO := map[int]int{1: 1, 2: 1, 3: 2, 6: 2, 7: 4, 14: 4, 15: 8}
	wantMu := map[int]float64{1: 0, 3: 1, 7: 0, 15: 1}
	for n := 1; n <= 15; n++ {
		if a := p.Select(); a != 0 {
			t.Fatalf("K = 1 selected arm %d", a)
		}
		p.Update(0, reward(n))
		if o, ok := wantO[n]; ok && p.st.O[0] != o {
			t.Errorf("after %d pulls O = %d, want %d", n, p.st.O[0], o)
		}
		if m, ok := wantMu[n]; ok && math.Abs(p.st.Mu[0]-m) > 1e-4 {
			t.Errorf("after %d pulls μ̃ = %v, want %v (last epoch only)", n, p.st.Mu[0], m)
		}
	}
	if p.st.Releases != 4 {
		t.Errorf("%d Laplace releases after 15 pulls, want 4 (epochs 1, 2, 4, 8)", p.st.Releases)
	}
}

// TestLazyUCBNoiseScale checks the Laplace scale of a release: after the
// initial pull μ̃ − x has variance 2/ε², and after 3 pulls (epoch of 2)
// 2/(2ε)²; 3000 runs, tolerance ±15%.
func TestLazyUCBNoiseScale(t *testing.T) {
	const eps, runs = 0.5, 3000
	var v1, v3 float64
	for seed := range uint64(runs) {
		p, _ := NewLazyUCB(LazyUCBOptions{K: 1, Epsilon: eps, C1: 2, C2: 3}, rand.New(rand.NewPCG(seed, 1)))
		p.Update(0, 0.25)
		v1 += (p.st.Mu[0] - 0.25) * (p.st.Mu[0] - 0.25) / runs
		p.Update(0, 0.25)
		p.Update(0, 0.25)
		v3 += (p.st.Mu[0] - 0.25) * (p.st.Mu[0] - 0.25) / runs
	}
	if w := 2 / (eps * eps); math.Abs(v1/w-1) > 0.15 {
		t.Errorf("initial release variance %.4g, want 2/ε² = %.4g", v1, w)
	}
	if w := 2 / (4 * eps * eps); math.Abs(v3/w-1) > 0.15 {
		t.Errorf("epoch-of-2 release variance %.4g, want 2/(2ε)² = %.4g", v3, w)
	}
}

// TestLazyUCBIndex checks the index of Select against the formula
// μ̃ + sqrt(c1·log₂ t/O) + c2·log₂ t/(εO) at t = steps+1 (the log₂ reading,
// an assumption: see LazyUCB).
func TestLazyUCBIndex(t *testing.T) {
	p, _ := NewLazyUCB(LazyUCBOptions{K: 3, Epsilon: 0.7, C1: 1.5, C2: 2.5}, rand.New(rand.NewPCG(4, 4)))
	pdtRun(t, p, []float64{0.2, 0.5, 0.8}, 500, 3)
	a := p.Select()
	lt := math.Log2(501)
	for j := range 3 {
		o := float64(p.st.O[j])
		want := p.st.Mu[j] + math.Sqrt(1.5*lt/o) + 2.5*lt/(0.7*o)
		if math.Abs(p.idx[j]-want) > 1e-12 {
			t.Errorf("arm %d index %v, want %v", j, p.idx[j], want)
		}
	}
	if a != pureArgmax(p.idx) {
		t.Errorf("selected %d, argmax is %d", a, pureArgmax(p.idx))
	}
}

// TestLazyUCBIndexPinned pins the index at a few (ε, O, t) points computed
// by hand, with c1 = 2, c2 = 3 (the defaults):
//
//   - log₂ (default), ε = 1, O = 4, t = 1024, μ̃ = 0.5: log₂ 1024 = 10, so
//     0.5 + sqrt(2·10/4) + 3·10/(1·4) = 0.5 + √5 + 7.5 = 10.23606797749979;
//   - log₂, ε = 0.5, O = 16, t = 4096, μ̃ = 0: log₂ 4096 = 12, so
//     sqrt(2·12/16) + 3·12/(0.5·16) = √1.5 + 4.5 = 5.724744871391589;
//   - logbase = e (the natural-log variant), ε = 1, O = 4, t = 1024,
//     μ̃ = 0.5: ln 1024 = 6.931471805599453, so 0.5 + sqrt(2·6.9315/4) +
//     3·6.9315/4 = 0.5 + 1.861640... + 5.198603... = 7.560252559729107.
func TestLazyUCBIndexPinned(t *testing.T) {
	for _, c := range []struct {
		base, eps float64
		o, t      int
		mu, want  float64
	}{
		{0, 1, 4, 1024, 0.5, 10.23606797749979},
		{2, 0.5, 16, 4096, 0, 5.724744871391589},
		{math.E, 1, 4, 1024, 0.5, 7.560252559729107},
	} {
		p, err := NewLazyUCB(LazyUCBOptions{K: 1, Epsilon: c.eps, C1: 2, C2: 3, LogBase: c.base}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		p.st.Steps, p.st.O[0], p.st.Mu[0] = c.t-1, c.o, c.mu
		if got := p.index(0); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("logbase %v, ε = %v, O = %d, t = %d: index %.16g, want %.16g", c.base, c.eps, c.o, c.t, got, c.want)
		}
	}
	// The registry's default is the log₂ reading.
	d, _ := Lookup("anytime-lazy-ucb")
	if p, _ := d.Complete(nil); p["logbase"] != 2 {
		t.Errorf("default logbase %v, want 2", p["logbase"])
	}
}
