package mab_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/bandit/conformance"
	"github.com/dpbandit/dpbandit/mab"
)

// Beta TS's Monte Carlo propensities and UCB1's exact ones agree with the
// frequencies of their own Select (conformance.CheckPropensities), in
// states where no arm is certain (Beta TS) and after the round-robin start
// (UCB1, where Select is deterministic).
func TestSelectProbsMatchSelect(t *testing.T) {
	const k, n, draws = 3, 20000, 20000
	type pol interface {
		bandit.Policy
		bandit.Propensities
	}
	env := rand.New(rand.NewPCG(31, 32))
	means := []float64{0.5, 0.55, 0.3}
	for _, c := range []struct {
		name   string
		p      pol
		rounds int
	}{
		{"beta-ts", must(mab.NewBetaTS(mab.BetaTSOptions{K: k}, rand.New(rand.NewPCG(1, 2)))), 30},
		{"ucb1-start", must(mab.NewUCB1(mab.UCB1Options{K: k}, nil)), 1},
		{"ucb1", must(mab.NewUCB1(mab.UCB1Options{K: k}, nil)), 50},
		{"ucb1-chapelle-li", must(mab.NewUCB1(mab.UCB1Options{K: k, Width: mab.WidthChapelleLi}, nil)), 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range c.rounds {
				a := c.p.Select()
				r := 0.0
				if env.Float64() < means[a] {
					r = 1
				}
				c.p.Update(a, r)
			}
			r := rand.New(rand.NewPCG(41, 42))
			conformance.CheckPropensities(t, k, n,
				func(out []float64) int { return c.p.SelectProbs(nil, out, draws, r) },
				c.p.Select)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
