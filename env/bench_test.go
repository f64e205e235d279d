package env

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPull measures one Pull of each kind through the Env interface on
// the instances of docs/reproductions.md (and a clipped Gaussian and Beta of the same size),
// cycling over the arms.
func BenchmarkPull(b *testing.B) {
	specs := []struct{ name, spec string }{
		{"bernoulli", "bernoulli:0.75,0.625,0.5,0.375,0.25"},
		{"truncexp", "truncexp:0.1,1,2,5,10"},
		{"gaussian", "gaussian:sd=0.1;0.9,0.7,0.5,0.3,0.1"},
		{"beta", "beta:2/5,3/4,1/1,0.5/0.5,5/1"},
		{"fixed", "fixed:0.75,0.625,0.5,0.375,0.25"},
	}
	for _, s := range specs {
		b.Run(s.name, func(b *testing.B) {
			e := mustParse(b, s.spec)
			r := rand.New(rand.NewPCG(1, 2))
			k := e.K()
			a := 0
			var sink float64
			b.ReportAllocs()
			for b.Loop() {
				sink += e.Pull(a, r)
				if a++; a == k {
					a = 0
				}
			}
			_ = sink
		})
	}
}

// BenchmarkUint64 is the floor: one PCG draw through *rand.Rand.
func BenchmarkUint64(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var sink uint64
	b.ReportAllocs()
	for b.Loop() {
		sink += r.Uint64()
	}
	_ = sink
}

// BenchmarkStreams measures deriving the two streams of one cell.
func BenchmarkStreams(b *testing.B) {
	h := HashString("bernoulli:0.75,0.625,0.5,0.375,0.25")
	b.ReportAllocs()
	run := 0
	for b.Loop() {
		Streams(h, 3, run)
		run++
	}
}
