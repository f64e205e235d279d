package mab

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
)

// Benchmarks of one round (Select + Update) of this package's policies at
// K = 5 and K = 100, and the floor of Gaussian Thompson sampling: K
// NormFloat64 draws on PCG plus an argmax (BENCHMARKS.md; issue 3
// asks TS-Gaussian to stay within 1.5× of it). Rewards come from a cheap
// integer hash (Bernoulli with means spread over [0.1, 0.9]) so that the
// environment costs next to nothing. Results: BENCHMARKS.txt.
//
//	go test ./mab -run '^$' -bench 'Round|Floor' -benchmem -count 10

var benchSink int

// BenchmarkFloor is K NormFloat64 draws on PCG and an argmax.
func BenchmarkFloor(b *testing.B) {
	for _, k := range []int{5, 100} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			s := 0
			for b.Loop() {
				best, bv := 0, math.Inf(-1)
				for i := range k {
					if v := r.NormFloat64(); v > bv {
						best, bv = i, v
					}
				}
				s += best
			}
			benchSink = s
		})
	}
}

// benchReward returns a 0/1 reward for (round, arm) with mean ≈ threshold/1024.
func benchReward(t uint64, thr uint64) float64 {
	h := t*0x9e3779b97f4a7c15 ^ thr*0xbf58476d1ce4e5b9
	h ^= h >> 29
	if h&1023 < thr {
		return 1
	}
	return 0
}

// BenchmarkRound is one Select + Update of each policy of this package.
func BenchmarkRound(b *testing.B) {
	cases := []struct {
		name string
		p    bandit.Params
	}{
		{"ucb1", nil},
		{"ucb1", bandit.Params{"width": 1}},
		{"beta-ts", nil},
		{"gaussian-ts", nil},
		{"ts-gaussian", nil},
		{"mts-gaussian", bandit.Params{"b": 10, "c": 5}},
		{"dp-ts-ucb", bandit.Params{"alpha": 0}},
		{"dp-ts-ucb", bandit.Params{"alpha": 1}},
	}
	for _, c := range cases {
		for _, k := range []int{5, 100} {
			name := bandit.Spec{Name: c.name, Params: c.p}.String()
			b.Run(fmt.Sprintf("%s/K=%d", name, k), func(b *testing.B) {
				pol, _, err := Build(bandit.Spec{Name: c.name, Params: c.p}, bandit.Setting{K: k, Horizon: 1_000_000}, rand.New(rand.NewPCG(1, 2)))
				if err != nil {
					b.Fatal(err)
				}
				thr := make([]uint64, k)
				for i := range thr {
					thr[i] = uint64(1024 * (0.9 - 0.8*float64(i)/float64(k-1)))
				}
				// Warm up past initialisation and pre-pulls.
				var t uint64
				for ; t < uint64(20*k); t++ {
					a := pol.Select()
					pol.Update(a, benchReward(t, thr[a]))
				}
				b.ReportAllocs()
				for b.Loop() {
					a := pol.Select()
					pol.Update(a, benchReward(t, thr[a]))
					t++
				}
			})
		}
	}
}

// pairedFloorRatio times blocks of n rounds of the floor and of the policy
// spec alternately, blocks times, and returns the fastest block of each (ns
// per round): the minimum over interleaved blocks is robust to other load on
// the machine, which a plain ns/op is not.
func pairedFloorRatio(spec bandit.Spec, k, blocks, n int) (floor, pol float64) {
	r := rand.New(rand.NewPCG(1, 2))
	p, _, err := Build(spec, bandit.Setting{K: k, Horizon: 1_000_000}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	thr := make([]uint64, k)
	for i := range thr {
		thr[i] = uint64(1024 * (0.9 - 0.8*float64(i)/float64(max(k-1, 1))))
	}
	var t uint64
	for ; t < 10_000; t++ {
		a := p.Select()
		p.Update(a, benchReward(t, thr[a]))
	}
	floor, pol = math.Inf(1), math.Inf(1)
	s := 0
	for range blocks {
		start := time.Now()
		for range n {
			best, bv := 0, math.Inf(-1)
			for i := range k {
				if v := r.NormFloat64(); v > bv {
					best, bv = i, v
				}
			}
			s += best
		}
		floor = min(floor, float64(time.Since(start).Nanoseconds())/float64(n))
		start = time.Now()
		for range n {
			a := p.Select()
			p.Update(a, benchReward(t, thr[a]))
			t++
		}
		pol = min(pol, float64(time.Since(start).Nanoseconds())/float64(n))
	}
	benchSink = s
	return floor, pol
}

// BenchmarkVsFloor reports the round cost of the Gaussian samplers over the
// floor from interleaved blocks (metric "ratio"; issue 3 requires < 1.5 for
// ts-gaussian). Rounds 1..10⁴ are a warm-up.
func BenchmarkVsFloor(b *testing.B) {
	for _, spec := range []string{"ts-gaussian", "mts-gaussian:b=10,c=5", "gaussian-ts", "dp-ts-ucb:alpha=0"} {
		sp, err := bandit.ParseSpec(spec)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range []int{5, 100} {
			b.Run(fmt.Sprintf("%s/K=%d", spec, k), func(b *testing.B) {
				var floor, pol float64
				for b.Loop() {
					floor, pol = pairedFloorRatio(sp, k, 200, 200)
				}
				b.ReportMetric(floor, "floor-ns/round")
				b.ReportMetric(pol, "policy-ns/round")
				b.ReportMetric(pol/floor, "ratio")
			})
		}
	}
}

// TestTSGaussianWithinFloor asserts the 1.5× target. Timing tests are
// unreliable on a loaded machine, so it runs only with DPBANDIT_PERF=1.
func TestTSGaussianWithinFloor(t *testing.T) {
	if os.Getenv("DPBANDIT_PERF") != "1" {
		t.Skip("set DPBANDIT_PERF=1 to run the timing check")
	}
	for _, k := range []int{5, 100} {
		floor, ts := pairedFloorRatio(bandit.Spec{Name: "ts-gaussian"}, k, 3000, 200)
		t.Logf("K=%d: floor %.1f ns, ts-gaussian %.1f ns per round, ratio %.2f", k, floor, ts, ts/floor)
		if ts > 1.5*floor {
			t.Errorf("K=%d: ts-gaussian %.1f ns per round > 1.5 × floor %.1f ns", k, ts, floor)
		}
	}
}
