package mab

import (
	"math/rand/v2"
	"testing"
)

// lazyOneArm returns a one-arm lazy state in epoch r with bn buffered
// rewards, consistent in every other respect (pulls 2^{r+1} − 1 + bn).
func lazyOneArm(r, bn int) *lazyArms {
	pulls := 1<<(r+1) - 1 + bn
	return &lazyArms{Mu: []float64{0.5}, O: []int{1 << r}, R: []int{r}, Buf: []float64{0}, BufN: []int{bn},
		Pulls: []int{pulls}, Init: 1, Steps: pulls, Releases: 1 + r}
}

// TestLazyArmsCheckEpochBounds: a restored lazy state is refused when its
// running epoch holds as many rewards as the epoch's length 2^{r+1} (add
// releases the epoch at that count, so the state is unreachable, and a
// buffer that long would be released with the wrong scale), and accepted one
// reward short. The epoch counter is capped at 60 (2^61 pulls), inclusive.
func TestLazyArmsCheckEpochBounds(t *testing.T) {
	for _, c := range []struct {
		r, bn int
		ok    bool
	}{
		{3, 15, true}, {3, 16, false}, {0, 1, true}, {0, 2, false},
		{60, 0, true}, {61, 0, false},
	} {
		err := lazyOneArm(c.r, c.bn).check(1)
		if (err == nil) != c.ok {
			t.Errorf("epoch %d with %d buffered rewards: check = %v, want accepted %v", c.r, c.bn, err, c.ok)
		}
	}
}

// TestLazyUCBSelectProbsTie: when two arms have the same index, SelectProbs
// puts its mass on the arm Select plays (the first of them), so a logged
// propensity is that of the arm actually released.
func TestLazyUCBSelectProbsTie(t *testing.T) {
	p, err := NewLazyUCB(LazyUCBOptions{K: 3, Epsilon: 1, C1: 2, C2: 3}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	// Arms 0 and 1 identical and ahead of arm 2.
	p.st = lazyArms{Mu: []float64{0.7, 0.7, 0.1}, O: []int{2, 2, 2}, R: []int{1, 1, 1}, Buf: []float64{0, 0, 0},
		BufN: []int{0, 0, 0}, Pulls: []int{3, 3, 3}, Init: 3, Steps: 9, Releases: 6}
	if err := p.st.check(3); err != nil {
		t.Fatal(err)
	}
	if p.index(0) != p.index(1) || !(p.index(1) > p.index(2)) {
		t.Fatalf("indices %v %v %v: want arms 0 and 1 tied above arm 2", p.index(0), p.index(1), p.index(2))
	}
	out := make([]float64, 3)
	p.SelectProbs(nil, out, 0, nil)
	if out[0] != 1 || out[1] != 0 || out[2] != 0 {
		t.Errorf("SelectProbs on a tie between arms 0 and 1 = %v, want all mass on arm 0", out)
	}
	if a := p.Select(); a != 0 {
		t.Errorf("Select on the tie = %d, want 0", a)
	}
}

// TestUCB1PlaysUnseenArmsAfterRepeatedRewards: rewards may arrive for any
// arm (a server applies the rewards it is sent), so one arm can be updated
// many times before the others are seen. Select must still play the lowest
// unplayed arm first.
func TestUCB1PlaysUnseenArmsAfterRepeatedRewards(t *testing.T) {
	p, err := NewUCB1(UCB1Options{K: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		p.Update(0, 1)
	}
	if a := p.Select(); a != 1 {
		t.Fatalf("after 4 rewards of arm 0 only, Select = %d, want the unplayed arm 1", a)
	}
	p.Update(1, 0)
	if a := p.Select(); a != 2 {
		t.Errorf("after arms 0 and 1, Select = %d, want the unplayed arm 2", a)
	}
}
