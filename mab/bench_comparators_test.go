package mab

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// benchComparatorSpecs are the configurations benchmarked: the papers'
// defaults, and for Mishra–Thakurta TS the skipGap configuration of its
// experiments so that the benchmark measures phase C (Thompson sampling on
// the trees) rather than the round-robin of phases A–B.
var benchComparatorSpecs = []string{
	"dp-se",
	"anytime-lazy-ucb",
	"lazy-dp-ts",
	"dp-ts",
	"adap-ucb",
	"mt-ucb",
	"mt-ucb:width=1,gamma=10",
	"mt-ts:skipGap=1,gap=0.5,randomPulls=10",
}

// BenchmarkComparators measures one Select+Update round at K = 5 and
// K = 100 on Bernoulli arms (means 0.9 for arm 0, 0.4 for the others; the
// reward draw, one PCG Float64, is included). The horizon is 2²⁴ (the
// trees are sized for it); the policy is rebuilt every 2²⁴ rounds, outside
// the timer. DP-SE and AdaP-UCB do almost nothing per round once they have
// committed, so their figures are averages dominated by cheap rounds.
func BenchmarkComparators(b *testing.B) {
	const T = 1 << 24
	for _, spec := range benchComparatorSpecs {
		for _, k := range []int{5, 100} {
			b.Run(fmt.Sprintf("%s/K=%d", spec, k), func(b *testing.B) {
				sp, err := bandit.ParseSpec(spec)
				if err != nil {
					b.Fatal(err)
				}
				means := make([]float64, k)
				for a := range means {
					means[a] = 0.4
				}
				means[0] = 0.9
				build := func() bandit.Policy {
					p, _, err := Build(sp, bandit.Setting{K: k, Horizon: T}, rand.New(rand.NewPCG(1, 2)))
					if err != nil {
						b.Fatal(err)
					}
					return p
				}
				p := build()
				env := rand.New(rand.NewPCG(3, 4))
				steps := 0
				b.ReportAllocs()
				for b.Loop() {
					if steps == T {
						b.StopTimer()
						p, steps = build(), 0
						b.StartTimer()
					}
					a := p.Select()
					x := 0.0
					if env.Float64() < means[a] {
						x = 1
					}
					p.Update(a, x)
					steps++
				}
			})
		}
	}
}

// BenchmarkComparatorsFloor is the reference cost measured beside the
// comparators (same machine, same load): K NormFloat64 draws and an argmax
// per round, the floor BENCHMARKS.md uses for Thompson sampling.
func BenchmarkComparatorsFloor(b *testing.B) {
	for _, k := range []int{5, 100} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			v := make([]float64, k)
			sink := 0
			for b.Loop() {
				for a := range v {
					v[a] = r.NormFloat64()
				}
				sink += pureArgmax(v)
			}
			_ = sink
		})
	}
}
