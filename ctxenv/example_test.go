package ctxenv_test

import (
	"fmt"

	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/env"
)

// A simulation loop on the synthetic environment of docs/reproductions.md E12 ([ADA] §4), with the
// environment stream of run 0 from env.Streams and a greedy-by-first
// candidate "policy".
func Example() {
	e, err := ctxenv.Parse("synthetic-linear:d=20,pool=100,k=5")
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Name())
	fmt.Println("d =", e.Dim(), "K =", e.K())

	run := e.ForRun(0) // one instance per run (or per goroutine)
	// The caller owns the streams; every cell of a run gets the same
	// environment stream, hence the same candidates and reward table.
	envRand, _ := env.Streams(env.HashString(e.Name()+"\x00"+"1"), 0, 0)
	cands := make([][]float64, run.K())
	for i := range cands {
		cands[i] = make([]float64, run.Dim())
	}
	regret := 0.0
	for range 1000 {
		run.Next(envRand, cands)
		choice := 0 // a policy would pick from cands
		_ = run.Reward(choice)
		regret += run.Best() - run.Mean(choice)
	}
	fmt.Println("pseudo-regret positive:", regret > 0)
	// Output:
	// synthetic-linear:d=20,pool=100,k=5,theta=2,link=logistic,seed=1,problem=fixed
	// d = 20 K = 5
	// pseudo-regret positive: true
}
