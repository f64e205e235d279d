package mab

import (
	"math/rand/v2"
	"testing"
)

// TestMTTSRestoresLongGapEstimation: a state the policy produced itself
// always restores. At a very large ε with two equal arms, phase A keeps
// halving Δ̂ (its released means never separate), and after 130 rounds at
// T = 1000 it has completed more than 64 gap batches, which the restore
// check used to refuse. Δ̂ = 2⁻ⁿ can halve 1074 times before it reaches 0
// (the batch size is then infinite and the budget guard ends phase A), so
// the check allows that many.
func TestMTTSRestoresLongGapEstimation(t *testing.T) {
	o := MTTSOptions{K: 2, Horizon: 1000, Epsilon: 1e300}
	p, err := NewMTTS(o, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for range 130 {
		p.Update(p.Select(), 0.5)
	}
	if p.st.Batches <= 64 {
		t.Fatalf("only %d gap batches: the test needs more than 64", p.st.Batches)
	}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewMTTS(o, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.UnmarshalJSON(b); err != nil {
		t.Fatalf("a state after %d gap batches does not restore: %v", p.st.Batches, err)
	}
	if q.st.Batches != p.st.Batches || q.st.Delta != p.st.Delta {
		t.Fatalf("restored batches %d, Δ̂ %v; want %d, %v", q.st.Batches, q.st.Delta, p.st.Batches, p.st.Delta)
	}
}
