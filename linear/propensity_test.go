package linear

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/bandit/conformance"
)

// The propensities of every contextual policy that states them agree with
// the frequencies of its own Select (conformance.CheckPropensities: 5
// standard errors, 20000 draws against 20000 Select calls, fixed seeds), in
// a trained state where no candidate is certain.
func TestSelectProbsMatchSelect(t *testing.T) {
	const d, k, n, draws = 3, 4, 20000, 20000
	train := rand.New(rand.NewPCG(11, 12))
	// Candidates and a training stream that leaves two candidates close.
	cands := [][]float64{{0.6, 0.1, 0.2}, {0.5, 0.3, 0.1}, {0.1, 0.6, 0.3}, {0.2, 0.2, 0.2}}
	theta := []float64{0.5, 0.45, 0.1}
	type trainee interface {
		Select([][]float64) int
		Update([]float64, float64)
	}
	fit := func(p trainee, rounds int) {
		for range rounds {
			i := train.IntN(k)
			p.Select(cands)
			x := cands[i]
			m := dotVec(x, theta)
			r := 0.0
			if train.Float64() < m {
				r = 1
			}
			p.Update(x, r)
		}
	}
	check := func(t *testing.T, p interface {
		bandit.Propensities
		Select([][]float64) int
	}, after func()) {
		r := rand.New(rand.NewPCG(21, 22))
		conformance.CheckPropensities(t, k, n,
			func(out []float64) int { return p.SelectProbs(cands, out, draws, r) },
			func() int { a := p.Select(cands); after(); return a })
	}
	t.Run("lints", func(t *testing.T) {
		p, _ := NewLinTS(LinTSOptions{Dim: d, Lambda: 1, V: 0.5}, rand.New(rand.NewPCG(1, 2)))
		fit(p, 60)
		check(t, p, func() {})
	})
	t.Run("lints-disjoint", func(t *testing.T) {
		p, _ := NewLinTS(LinTSOptions{Dim: d, K: k, Lambda: 1, V: 0.5, Disjoint: true}, rand.New(rand.NewPCG(1, 2)))
		for range 40 { // disjoint updates go to the arm Select chose
			i := p.Select(cands)
			p.UpdateArm(i, cands[i], float64(train.IntN(2)))
		}
		check(t, p, func() {})
	})
	t.Run("linucb", func(t *testing.T) {
		p, _ := NewLinUCB(LinUCBOptions{Dim: d, Lambda: 1, Alpha: 0.5})
		fit(p, 60)
		check(t, p, func() {})
	})
	for _, ucb := range []bool{false, true} {
		// Forced exploration at round ~20 of d = 3: pt = 3·ln 21/21 ≈ 0.43,
		// so the mixture matters. after() undoes Select's round count so
		// that every call has the same pt (the forced counter is a
		// statistic only).
		opts := AdaPrivateOptions{Dim: d, UCB: ucb, Lambda: 1, V: 0.5, Alpha: 0.5, GammaV: 1, BatchSize: 5, Sigma: 0.5, Forced: 1}
		p, err := NewAdaPrivate(opts, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		fit(p, 20)
		if p.Releases() == 0 {
			t.Fatal("no release: the test would not read released state")
		}
		t.Run(opts.name(), func(t *testing.T) {
			check(t, p, func() { p.rounds-- })
		})
		t.Run(opts.name()+"-forced-share", func(t *testing.T) {
			// The mixture floor: every candidate has at least pt/K.
			out := make([]float64, k)
			p.SelectProbs(cands, out, draws, rand.New(rand.NewPCG(3, 4)))
			floor := p.forcedProb(p.rounds+1) / k
			for i, v := range out {
				if v < floor-1e-15 {
					t.Errorf("candidate %d: probability %v below the forced share %v", i, v, floor)
				}
			}
		})
	}
}

// SelectProbs must not move the policy's own random stream: the decisions
// after it are those of a twin that never called it.
func TestSelectProbsLeavesStream(t *testing.T) {
	cands := [][]float64{{0.6, 0.1}, {0.5, 0.3}}
	a, _ := NewAdaPrivate(AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, GammaV: 1, BatchSize: 3, Sigma: 1, Forced: 2}, rand.New(rand.NewPCG(5, 6)))
	b, _ := NewAdaPrivate(AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, GammaV: 1, BatchSize: 3, Sigma: 1, Forced: 2}, rand.New(rand.NewPCG(5, 6)))
	out := make([]float64, 2)
	other := rand.New(rand.NewPCG(7, 8))
	for i := range 200 {
		a.SelectProbs(cands, out, 16, other)
		x, y := a.Select(cands), b.Select(cands)
		if x != y {
			t.Fatalf("round %d: %d after SelectProbs, %d without", i, x, y)
		}
		a.Update(cands[x], float64(i%2))
		b.Update(cands[y], float64(i%2))
	}
}

// The privacy claim behind AdaPrivate's SelectProbs: it reads only released
// state. Two policies with the same released batches and the same played
// vectors, whose current (unreleased) batches hold different rewards, state
// the same probabilities from the same draws, although their unreleased
// sums differ; once those rewards are released, the released statistic
// differs (and TS's probabilities with it).
func TestAdaPrivateSelectProbsReadOnlyReleasedState(t *testing.T) {
	cands := [][]float64{{0.6, 0.1, 0.2}, {0.5, 0.3, 0.1}, {0.1, 0.6, 0.3}}
	for _, ucb := range []bool{false, true} {
		opts := AdaPrivateOptions{Dim: 3, UCB: ucb, Lambda: 1, V: 0.5, Alpha: 0.5, GammaV: 1, BatchSize: 10, Sigma: 0.5}
		a, _ := NewAdaPrivate(opts, rand.New(rand.NewPCG(1, 2)))
		b, _ := NewAdaPrivate(opts, rand.New(rand.NewPCG(1, 2)))
		// Identical first batch (released), then 9 rounds of a second batch
		// with opposite rewards (not released: B = 10).
		for i := range 19 {
			x := cands[i%3]
			ra, rb := float64(i%2), float64(i%2)
			if i >= 10 {
				ra, rb = 1, 0
			}
			a.Select(cands)
			b.Select(cands)
			a.Update(x, ra)
			b.Update(x, rb)
		}
		if a.Releases() != 1 || b.Releases() != 1 {
			t.Fatalf("releases %d, %d: want 1 each", a.Releases(), b.Releases())
		}
		if fmt.Sprint(a.s) == fmt.Sprint(b.s) {
			t.Fatal("the unreleased sums are equal: the test would prove nothing")
		}
		pa, pb := make([]float64, 3), make([]float64, 3)
		a.SelectProbs(cands, pa, 4096, rand.New(rand.NewPCG(9, 9)))
		b.SelectProbs(cands, pb, 4096, rand.New(rand.NewPCG(9, 9)))
		if fmt.Sprint(pa) != fmt.Sprint(pb) {
			t.Errorf("%s: SelectProbs %v vs %v differ with equal released state", opts.name(), pa, pb)
		}
		// Completing the batch releases the differing sums (with the same
		// noise: same generator stream) and moves the probabilities.
		a.Select(cands)
		b.Select(cands)
		a.Update(cands[0], 1)
		b.Update(cands[0], 0)
		a.SelectProbs(cands, pa, 4096, rand.New(rand.NewPCG(9, 9)))
		b.SelectProbs(cands, pb, 4096, rand.New(rand.NewPCG(9, 9)))
		if fmt.Sprint(a.Released()) == fmt.Sprint(b.Released()) {
			t.Errorf("%s: released statistics equal after releasing different rewards", opts.name())
		}
		if !ucb && fmt.Sprint(pa) == fmt.Sprint(pb) { // UCB's argmax may well stay put
			t.Errorf("%s: SelectProbs %v unchanged after releasing different rewards", opts.name(), pa)
		}
	}
}
