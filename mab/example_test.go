package mab_test

import (
	"fmt"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/mab"
)

// bernoulli returns a seeded reward source: arm a pays 1 with probability
// means[a], else 0.
func bernoulli(means []float64, seed uint64) func(arm int) float64 {
	r := bandit.NewRand(seed, seed+1)
	return func(arm int) float64 {
		if r.Float64() < means[arm] {
			return 1
		}
		return 0
	}
}

// M-TS-Gaussian (Ou et al., Algorithm 2) from its options struct: run it on
// seeded Bernoulli rewards and read its privacy report, the certified value
// beside the paper's, and ε at a δ.
func ExampleNewMTSGaussian() {
	p, err := mab.NewMTSGaussian(mab.MTSGaussianOptions{K: 3, Horizon: 10000, B: 10, C: 5}, bandit.NewRand(1, 2))
	if err != nil {
		panic(err)
	}
	reward := bernoulli([]float64{0.7, 0.5, 0.3}, 3)
	for range 10000 {
		a := p.Select()
		p.Update(a, reward(a))
	}
	rep := p.Privacy()
	st, err := rep.At(1e-6)
	if err != nil {
		panic(err)
	}
	fmt.Printf("certified %.4f-GDP (paper %.4f-GDP, valid: %v)\n", rep.Certified.Value, rep.Paper.Value, rep.PaperValid)
	fmt.Printf("ε = %.3f at δ = %g\n", *st.Epsilon, st.Delta)

	// The constructor validates its options and names the parameter.
	_, err = mab.NewMTSGaussian(mab.MTSGaussianOptions{K: 3, Horizon: 10000, B: 10, C: 0}, bandit.NewRand(1, 2))
	fmt.Println(err)
	// Output:
	// certified 13.4638-GDP (paper 13.4840-GDP, valid: true)
	// ε = 153.780 at δ = 1e-06
	// mts-gaussian: parameter c = 0 must be finite and > 0
}

// DP-SE (successive elimination with Laplace noise) is ε-DP, pure: its
// report is the same before and after any number of rounds.
func ExampleNewDPSE() {
	p, err := mab.NewDPSE(mab.DPSEOptions{K: 3, Horizon: 100000, Epsilon: 1}, bandit.NewRand(1, 2))
	if err != nil {
		panic(err)
	}
	reward := bernoulli([]float64{0.9, 0.5, 0.1}, 3)
	for range 100000 {
		a := p.Select()
		p.Update(a, reward(a))
	}
	rep := p.Privacy()
	fmt.Printf("%s: %s %g\n", rep.Mechanism, rep.Certified.Notion, rep.Certified.Value)
	fmt.Println("surviving arms:", p.Survivors())
	// Output:
	// dp-se: pure 1
	// surviving arms: [0]
}
