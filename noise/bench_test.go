package noise

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Benchmarks. Run with
//
//	go test -run '^$' -bench . -benchtime 1s -count 6 ./noise/ | benchstat -
//
// Figures are recorded in BENCHMARKS.txt.

var sinkF float64
var sinkB bool
var sinkI *big.Int

func BenchmarkNormFloat64PCG(b *testing.B) { // the floor of the performance targets in BENCHMARKS.md
	b.ReportAllocs()
	r := newPCG(1)
	for b.Loop() {
		sinkF = r.NormFloat64()
	}
}

func BenchmarkNormFloat64ChaCha8(b *testing.B) {
	b.ReportAllocs()
	r := rand.New(NewSecureSource())
	for b.Loop() {
		sinkF = r.NormFloat64()
	}
}

func BenchmarkGaussian(b *testing.B) {
	b.ReportAllocs()
	r := newPCG(1)
	for b.Loop() {
		sinkF = Gaussian(r, 2)
	}
}

func BenchmarkLaplace(b *testing.B) {
	b.ReportAllocs()
	r := newPCG(1)
	for b.Loop() {
		sinkF = Laplace(r, 2)
	}
}

func BenchmarkExponential(b *testing.B) {
	b.ReportAllocs()
	r := newPCG(1)
	for b.Loop() {
		sinkF = Exponential(r, 2)
	}
}

var gammaShapes = []struct {
	name  string
	shape float64
}{{"k=0.5", 0.5}, {"k=2.5", 2.5}, {"k=300", 300}}

func BenchmarkGamma(b *testing.B) {
	for _, c := range gammaShapes {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			r := newPCG(1)
			for b.Loop() {
				sinkF = Gamma(r, c.shape, 1)
			}
		})
	}
}

func BenchmarkGammaGonum(b *testing.B) {
	for _, c := range gammaShapes {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			d := distuv.Gamma{Alpha: c.shape, Beta: 1, Src: rand.NewPCG(1, 2)}
			for b.Loop() {
				sinkF = d.Rand()
			}
		})
	}
}

var betaShapes = []struct {
	name string
	a, b float64
}{{"0.5,0.5", 0.5, 0.5}, {"2,5", 2, 5}, {"300,700", 300, 700}}

func BenchmarkBeta(b *testing.B) {
	for _, c := range betaShapes {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			r := newPCG(1)
			for b.Loop() {
				sinkF = Beta(r, c.a, c.b)
			}
		})
	}
}

func BenchmarkBetaGonum(b *testing.B) {
	for _, c := range betaShapes {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			d := distuv.Beta{Alpha: c.a, Beta: c.b, Src: rand.NewPCG(1, 2)}
			for b.Loop() {
				sinkF = d.Rand()
			}
		})
	}
}

func BenchmarkUint64(b *testing.B) {
	for name, src := range map[string]rand.Source{
		"PCG": rand.NewPCG(1, 2), "ChaCha8": NewSecureSource(), "crypto": CryptoSource{},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkF = float64(src.Uint64())
			}
		})
	}
}

// exactSources are the sources of the exact-sampler benchmarks: seeded PCG
// (tests), ChaCha8 from NewSecureSource, and crypto/rand (the default).
func exactSources() []struct {
	name string
	src  rand.Source
} {
	return []struct {
		name string
		src  rand.Source
	}{{"PCG", rand.NewPCG(1, 2)}, {"ChaCha8", NewSecureSource()}, {"crypto", CryptoSource{}}}
}

func BenchmarkBernoulliExp(b *testing.B) {
	for _, g := range []struct {
		name  string
		gamma *big.Rat
	}{{"γ=1/3", big.NewRat(1, 3)}, {"γ=5/2", big.NewRat(5, 2)}} {
		for _, s := range exactSources() {
			b.Run(g.name+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sinkB = BernoulliExp(s.src, g.gamma)
				}
			})
		}
	}
}

func BenchmarkDiscreteLaplace(b *testing.B) {
	for _, t := range []struct {
		name  string
		scale *big.Rat
	}{{"t=3/2", big.NewRat(3, 2)}, {"t≈2^40/0.3", new(big.Rat).SetFloat64(0x1p40 / 0.3)}} {
		for _, s := range exactSources() {
			b.Run(t.name+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sinkI = DiscreteLaplace(s.src, t.scale)
				}
			})
		}
	}
}

func BenchmarkDiscreteGaussian(b *testing.B) {
	for _, v := range []struct {
		name   string
		sigma2 *big.Rat
	}{{"σ²=9/2", big.NewRat(9, 2)}, {"σ≈1.5·2^39", new(big.Rat).SetFloat64(0x1.8p39 * 0x1.8p39)}} {
		for _, s := range exactSources() {
			b.Run(v.name+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sinkI = DiscreteGaussian(s.src, v.sigma2)
				}
			})
		}
	}
}

func BenchmarkGridLaplace(b *testing.B) {
	for _, s := range exactSources() {
		m := mustLaplace(b, 0.3, 1, s.src)
		b.Run("Release/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkF = m.Release(12.345)
			}
		})
		b.Run("Sample/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkF = m.Sample()
			}
		})
	}
}

func BenchmarkGridGaussian(b *testing.B) {
	for _, s := range exactSources() {
		m := mustGaussian(b, 3, 1, s.src)
		b.Run("Release/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkF = m.Release(12.345)
			}
		})
		b.Run("Sample/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkF = m.Sample()
			}
		})
	}
}
