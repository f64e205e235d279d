package bandit_test

import (
	"fmt"
	"maps"

	"github.com/dpbandit/dpbandit/bandit"
	_ "github.com/dpbandit/dpbandit/mab" // registers the K-armed policies
)

// A registered policy from its spec: look it up, calibrate its free parameter
// to an (ε, δ) budget, build it, run it on seeded Bernoulli rewards, and
// check its privacy report against the budget.
func Example() {
	spec, err := bandit.ParseSpec("mts-gaussian:b=10")
	if err != nil {
		panic(err)
	}
	d, err := bandit.Lookup(bandit.KArmed, spec.Name)
	if err != nil {
		panic(err)
	}
	setting := bandit.Setting{K: 3, Horizon: 10000}
	budget := bandit.Target{Epsilon: 1, Delta: 1e-6, Basis: bandit.BasisCertified}

	// Calibrate returns the parameters that meet the budget (here c); the
	// user's b is kept.
	cal, err := d.Calibrate(setting, budget, spec.Params)
	if err != nil {
		panic(err)
	}
	params := maps.Clone(spec.Params)
	maps.Copy(params, cal)
	if params, err = d.CompleteFor(setting, params); err != nil {
		panic(err)
	}
	pol, err := d.New(setting, params, bandit.NewRand(1, 2))
	if err != nil {
		panic(err)
	}

	// Feed it rewards: arm a pays 1 with probability means[a].
	means := []float64{0.7, 0.5, 0.3}
	rewards := bandit.NewRand(3, 4)
	pulls := make([]int, setting.K)
	for range setting.Horizon {
		a := pol.Select()
		x := 0.0
		if rewards.Float64() < means[a] {
			x = 1
		}
		pol.Update(a, x)
		pulls[a]++
	}

	rep := pol.(bandit.Private).Privacy()
	ach, err := bandit.Achieved(rep, budget, budget.Delta)
	if err != nil {
		panic(err)
	}
	fmt.Printf("b = %g, calibrated c = %.5g\n", params["b"], params["c"])
	fmt.Printf("played %d rounds; certified %.4f-GDP\n", pulls[0]+pulls[1]+pulls[2], rep.Certified.Value)
	fmt.Println(ach)
	// Output:
	// b = 10, calibrated c = 16177
	// played 10000 rounds; certified 0.2367-GDP
	// certified ε = 1 ≤ 1
}
