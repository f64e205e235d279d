package ctxenv

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user + system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadRatings measures reading the raw file and building the
// environment (split, d = 50 SVD features, warm-start prior), uncached. It
// also reports the process CPU time per build (cpu-ms/op), which on a
// shared machine is the better measure of the single-threaded build's own
// cost than the wall time.
func BenchmarkLoadRatings(b *testing.B) {
	dir := testDataDir()
	run := func(b *testing.B, build func() error) {
		c0 := cpuTime(b)
		n := 0
		for b.Loop() {
			if err := build(); err != nil {
				skipNoData(b, err)
			}
			n++
		}
		b.ReportMetric(float64(cpuTime(b)-c0)/float64(n)/1e6, "cpu-ms/op")
	}
	b.Run("movielens-100k", func(b *testing.B) {
		o := DefaultMovieLensOptions()
		run(b, func() error {
			all, ids, ds, err := readMovieLens(dir, o.Set)
			if err != nil {
				return err
			}
			_, err = buildRatings("movielens", ds, all, ids, o.RatingsOptions, false)
			return err
		})
	})
	b.Run("movielens-1m-partial", func(b *testing.B) {
		o := DefaultMovieLensOptions()
		o.Set = MovieLens1MPartial
		run(b, func() error {
			all, ids, ds, err := readMovieLens(dir, o.Set)
			if err != nil {
				return err
			}
			_, err = buildRatings("movielens", ds, all, ids, o.RatingsOptions, false)
			return err
		})
	})
	b.Run("jester", func(b *testing.B) {
		o := DefaultJesterOptions()
		run(b, func() error {
			all, ids, err := readJester(dir)
			if err != nil {
				return err
			}
			_, err = buildRatings("jester", "jester", all, ids, o, true)
			return err
		})
	})
}

// BenchmarkRatingsRound measures one round (Next and one Reward).
func BenchmarkRatingsRound(b *testing.B) {
	for _, spec := range []string{"movielens", "jester"} {
		b.Run(spec, func(b *testing.B) {
			e := mustParse(b, spec)
			r := rand.New(rand.NewPCG(1, 2))
			c := buffers(e)
			var sink float64
			b.ReportAllocs()
			for b.Loop() {
				e.Next(r, c)
				sink += e.Reward(0)
			}
			_ = sink
		})
	}
}
