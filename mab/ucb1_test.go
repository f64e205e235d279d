package mab

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/mab/policytest"
)

// ucbIndex is docs/baselines.md §1.1's index, written out independently of the cache.
func ucbIndex(w UCB1Width, s float64, n, t int) float64 {
	lt := math.Log(float64(t))
	nn := float64(n)
	if w == WidthAuer {
		return s/nn + math.Sqrt(2*lt/nn)
	}
	return s/nn + math.Sqrt(math.Max(s, 0)*lt)/nn + lt/nn
}

// TestUCB1Index: after the initial pulls (index order), Select is the argmax
// of S/n + width with t = Σn, for both widths, on random histories.
func TestUCB1Index(t *testing.T) {
	for _, w := range []UCB1Width{WidthAuer, WidthChapelleLi} {
		p, err := NewUCB1(UCB1Options{K: 6, Width: w}, nil)
		if err != nil {
			t.Fatal(err)
		}
		env := policytest.NewBernoulli(policytest.SpreadMeans(6), rand.New(rand.NewPCG(1, 2)))
		for round := range 5000 {
			st := p.State()
			a := p.Select()
			if round < 6 {
				if a != round {
					t.Fatalf("initial round %d pulled %d", round, a)
				}
			} else {
				total := 0
				for _, n := range st.Pulls {
					total += n
				}
				best, bv := 0, math.Inf(-1)
				for i := range st.Pulls {
					if v := ucbIndex(w, st.Sum[i], st.Pulls[i], total); v > bv+1e-12 {
						best, bv = i, v
					}
				}
				if v := ucbIndex(w, st.Sum[a], st.Pulls[a], total); a != best && v < bv-1e-12 {
					t.Fatalf("width %d round %d: played %d (index %v), argmax %d (index %v)", w, round, a, v, best, bv)
				}
			}
			p.Update(a, env.Pull(a))
		}
		if st := p.State(); st.Pulls[0] < 2500 {
			t.Errorf("width %d: best arm pulled %d of 5000 times", w, st.Pulls[0])
		}
	}
	if _, err := NewUCB1(UCB1Options{K: 3, Width: 2}, nil); err == nil {
		t.Errorf("width 2 accepted")
	}
}

// TestUCB1Ties: equal indices go to the lowest arm.
func TestUCB1Ties(t *testing.T) {
	p, _ := NewUCB1(UCB1Options{K: 3}, nil)
	data, _ := json.Marshal(snapshot[UCB1Options, UCB1State]{Policy: "ucb1", Options: p.opts,
		State: UCB1State{Sum: []float64{1, 1, 1}, Pulls: []int{2, 2, 2}}})
	if err := p.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if a := p.Select(); a != 0 {
		t.Errorf("tie went to arm %d", a)
	}
}
