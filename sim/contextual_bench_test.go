package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// e12GridSpecs are the sweeps of the E12 grid benchmark (issue 4): for each
// ε ∈ {0.5, 1, 2, 5}, LinTS, AdaPrivate-TS and AdaPrivate-UCB in
// equal-budget mode at (ε, 1e-5), 12 runs of T = 1e4 on docs/reproductions.md E12's
// synthetic problem: 4 ε × 12 seeds × 3 policies = 144 cells, 1.44e6
// rounds. It is what
//
//	for e in 0.5 1 2 5; do
//	  dpbandit simulate --env synthetic-linear:d=20,pool=100,k=5,problem=per-run --horizon 1e4 --runs 12 \
//	    --policy lints --policy adaprivate-ts --policy adaprivate-ucb --budget epsilon=$e,delta=1e-5 --out out/e12-$e
//	done
//
// computes.
func e12GridSpecs() []Spec {
	var out []Spec
	for _, e := range []float64{0.5, 1, 2, 5} {
		out = append(out, Spec{Env: "synthetic-linear:d=20,pool=100,k=5,problem=per-run", Horizon: 10000, Runs: 12, Seed: 1,
			Policies: mustParse("lints", "adaprivate-ts", "adaprivate-ucb"),
			Budget:   &bandit.Target{Epsilon: e, Delta: 1e-5}})
	}
	return out
}

// BenchmarkE12Grid runs the E12 grid (target: under 60 s on 2 cores).
//
//	go test ./sim/ -run '^$' -bench E12Grid -benchtime 1x -cpu 2
func BenchmarkE12Grid(b *testing.B) {
	var plans []*Plan
	cells := 0
	for _, s := range e12GridSpecs() {
		p, err := NewPlan(s, Default)
		if err != nil {
			b.Fatal(err)
		}
		plans = append(plans, p)
		cells += p.Cells()
	}
	if cells != 144 {
		b.Fatalf("%d cells, want 144", cells)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, p := range plans {
			if _, err := p.Run(context.Background(), Options{}); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(n), "s/grid")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/(float64(cells)*10000), "ns/round")
}

// BenchmarkContextualRound measures one round of the contextual loop (Next,
// Select, Reward/Mean/Best, Update, bookkeeping) on the E12 environment at
// d = 20 and d = 50, single-threaded; "fake greedy" (a diagonal test
// policy) shows the loop's own overhead.
//
//	go test ./sim/ -run '^$' -bench ContextualRound
func BenchmarkContextualRound(b *testing.B) {
	for _, d := range []int{20, 50} {
		for _, pol := range []string{"fake-greedy", "lints", "linucb", "adaprivate-ts:epsilon=1", "adaprivate-ucb:epsilon=1"} {
			b.Run(fmt.Sprintf("%s/d=%d", pol, d), func(b *testing.B) {
				reg := Default
				if pol == "fake-greedy" {
					reg = fakeCtxRegistry
				}
				const T = 20000
				p, err := NewPlan(Spec{Env: fmt.Sprintf("synthetic-linear:d=%d,pool=100,k=5", d), Horizon: T, Runs: 1,
					Policies: mustParse(pol)}, reg)
				if err != nil {
					b.Fatal(err)
				}
				out := RunResult{Pseudo: make([]float64, len(p.Checkpoints)), Realised: make([]float64, len(p.Checkpoints)),
					Pulls: make([]int64, p.Setting.K)}
				cands := candidateBuffers(p.Setting.K, p.Setting.Dim)
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					b.StopTimer()
					er, pr := p.Streams(0, n)
					en := p.Entries[0]
					pl, err := en.desc.NewContextual(p.Setting, en.Params, pr)
					if err != nil {
						b.Fatal(err)
					}
					e := p.Ctx.ForRun(n)
					clear(out.Pulls)
					b.StartTimer()
					if err := playContextual(pl, e, er, cands, p.Checkpoints, &out, nil); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/T, "ns/round")
			})
		}
	}
}
