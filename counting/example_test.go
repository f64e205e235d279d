package counting_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/counting"
)

// One counter per arm holds that arm's reward sum (Mishra–Thakurta private
// UCB, [MT] Alg 1; docs/tree-based.md §1.7); here a single arm with 1000 Bernoulli(0.3) rewards.
func ExampleNewLaplace() {
	r := rand.New(rand.NewPCG(1, 2)) // simulation; the service uses counting.SecureNoise(nil)
	c, err := counting.NewLaplace(counting.LaplaceOptions{Capacity: 1024, Epsilon: 1}, counting.SimNoise(r))
	if err != nil {
		panic(err)
	}
	truth := 0.0
	for range 1000 {
		x := 0.0
		if r.Float64() < 0.3 {
			x = 1
		}
		truth += x
		if err := c.Add(x); err != nil {
			panic(err)
		}
	}
	est := c.Sum() // noisy prefix sum, post-processing of released nodes
	sd := c.Variance(c.Count())
	fmt.Printf("L = %d, b = %.4g, Var(error at t=1000) = %.4g\n", c.Levels(), c.Scale(), sd)
	fmt.Println("within 5 sd:", (est-truth)*(est-truth) < 25*sd)
	p := c.Privacy()
	fmt.Printf("%s %g\n", p.Certified.Notion, p.Certified.Value)
	// Output:
	// L = 11, b = 11, Var(error at t=1000) = 1452
	// within 5 sd: true
	// pure 1
}

// A Gaussian counter with Honaker's GLS estimate, calibrated for ρ-zCDP.
func ExampleNewGaussian() {
	c, err := counting.NewGaussian(counting.GaussianOptions{Capacity: 8, Rho: 0.5, GLS: true},
		counting.SimNoise(rand.New(rand.NewPCG(3, 4))))
	if err != nil {
		panic(err)
	}
	fmt.Printf("σ² = %.4g (L·Δ²/(2ρ) with L = %d)\n", c.NodeVariance(), c.Levels())
	for t := 1; t <= 8; t++ {
		fmt.Printf("t=%d GLS variance / σ² = %.4f (plain %d)\n", t, c.Variance(t)/c.NodeVariance(), []int{1, 1, 2, 1, 2, 2, 3, 1}[t-1])
	}
	p := c.Privacy()
	fmt.Printf("%s μ = %.4g\n", p.Certified.Notion, p.Certified.Value)
	// Output:
	// σ² = 4 (L·Δ²/(2ρ) with L = 4)
	// t=1 GLS variance / σ² = 1.0000 (plain 1)
	// t=2 GLS variance / σ² = 0.6667 (plain 1)
	// t=3 GLS variance / σ² = 1.6667 (plain 2)
	// t=4 GLS variance / σ² = 0.5714 (plain 1)
	// t=5 GLS variance / σ² = 1.5714 (plain 2)
	// t=6 GLS variance / σ² = 1.2381 (plain 2)
	// t=7 GLS variance / σ² = 2.2381 (plain 3)
	// t=8 GLS variance / σ² = 0.5333 (plain 1)
	// gdp μ = 1
}

// The service persists a counter's State and restores it after a restart
// without redrawing any node.
func ExampleRestore() {
	r := rand.New(rand.NewPCG(5, 6))
	c, _ := counting.NewGaussian(counting.GaussianOptions{Capacity: 100, Sigma: 2}, counting.SimNoise(r))
	for range 37 {
		_ = c.Add(1)
	}
	blob, _ := c.MarshalJSON() // store with the raw data: State.Exact is sensitive
	var s counting.State
	_ = json.Unmarshal(blob, &s)
	d, err := counting.Restore(s, counting.SimNoise(r))
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Count(), d.Sum() == c.Sum())
	// Output: 37 true
}
