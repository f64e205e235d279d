package eval

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The bootstrap is deterministic in the seed and does not depend on the
// number of goroutines (each replicate owns a PCG stream); at n = 20000 its
// percentile interval is close to the normal one (both estimate the same
// sampling distribution of a mean).
func TestBootstrapDeterministicAndCalibrated(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 20000)
	for i := range x {
		x[i] = r.ExpFloat64()
	}
	a := Bootstrap([]Ratio{{Num: x}}, 400, 7)[0]
	prev := runtime.GOMAXPROCS(1)
	b := Bootstrap([]Ratio{{Num: x}}, 400, 7)[0]
	runtime.GOMAXPROCS(prev)
	if len(a) != 400 || len(b) != 400 {
		t.Fatalf("%d, %d replicates", len(a), len(b))
	}
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("replicate %d: %v vs %v with one goroutine", k, a[k], b[k])
		}
	}
	bi, ni := PercentileInterval(a), NormalInterval(x)
	if w, nw := bi.Hi-bi.Lo, ni.Hi-ni.Lo; math.Abs(w-nw) > 0.15*nw || math.Abs((bi.Lo+bi.Hi)/2-(ni.Lo+ni.Hi)/2) > 0.1*nw {
		t.Errorf("bootstrap %v, normal %v", bi, ni)
	}
}

// The Poisson(1) table has mean and variance 1 within its 2^-16
// resolution.
func TestPoissonTable(t *testing.T) {
	var s, s2 float64
	for _, c := range poissonTable {
		s += float64(c)
		s2 += float64(c) * float64(c)
	}
	m := s / 65536
	v := s2/65536 - m*m
	if math.Abs(m-1) > 1e-4 || math.Abs(v-1) > 1e-3 {
		t.Errorf("mean %v, variance %v", m, v)
	}
}

// Normal interval of a known sample: mean ± 1.96·sd/√n.
func TestNormalInterval(t *testing.T) {
	iv := NormalInterval([]float64{1, 2, 3, 4})
	h := z975 * math.Sqrt(5.0/3/4)
	if !near(iv.Lo, 2.5-h, 1e-14) || !near(iv.Hi, 2.5+h, 1e-14) {
		t.Errorf("%v", iv)
	}
}
