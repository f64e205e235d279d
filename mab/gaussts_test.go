package mab

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/mab/policytest"
)

// TestGaussianTSConvention: one pull per arm in index order, then the (0,0)
// posterior N(S/n, 1/n); report sqrt(T−K) certified (docs/reproduction-decisions.md A1) with the
// paper's sqrt(T/2) marked invalid for this convention.
func TestGaussianTSConvention(t *testing.T) {
	const K, T = 4, 3000
	p, err := NewGaussianTS(GaussianTSOptions{K: K, Horizon: T}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	env := policytest.NewBernoulli([]float64{0.3, 0.5, 0.7, 0.4}, rand.New(rand.NewPCG(3, 4)))
	var sum float64
	for round := range T {
		c := p.NextCost().Value
		if round < K && c != 0 {
			t.Fatalf("initial round %d costs %v", round, c)
		}
		if c > 1 {
			t.Fatalf("round %d costs %v > 1", round, c)
		}
		sum += c * c
		a := p.Select()
		if round < K && a != round {
			t.Fatalf("initial round %d pulled %d", round, a)
		}
		p.Update(a, env.Pull(a))
	}
	for i := range K {
		n, s := float64(p.st.Pulls[i]), p.st.Sum[i]
		if p.post[i].mean != s/n || p.post[i].sd != 1/math.Sqrt(n) {
			t.Errorf("arm %d posterior %+v, want N(S/n, 1/n)", i, p.post[i])
		}
	}
	rep := p.Privacy()
	if want := math.Sqrt(T - K); rep.Certified.Value < want || rep.Certified.Value > want*(1+1e-15) {
		t.Errorf("certified %v, want sqrt(T−K) = %v", rep.Certified.Value, want)
	}
	if rep.PaperValid || rep.Paper == nil || rep.Paper.Value != math.Sqrt(T/2.0) {
		t.Errorf("paper value must be sqrt(T/2) marked invalid: %+v", rep)
	}
	if sum > rep.Certified.Value*rep.Certified.Value*(1+1e-9) {
		t.Errorf("Σ NextCost² = %v above certified²", sum)
	}
	if _, err := NewGaussianTS(GaussianTSOptions{K: 5, Horizon: 4}, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Errorf("T < K accepted")
	}
}
