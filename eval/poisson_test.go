package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestXoshiroReferenceVector: the streams are xoshiro256** exactly. From
// the state (1, 2, 3, 4) the reference implementation (Blackman & Vigna,
// xoshiro256starstar.c) returns 11520, 0, 1509978240, 1215971899390074240;
// stream 0 of a poissonStreams set to that state must give those draws,
// which fillPoisson cuts into 16-bit uniforms (low bits first).
func TestXoshiroReferenceVector(t *testing.T) {
	want := []uint64{11520, 0, 1509978240, 1215971899390074240}
	var st poissonStreams
	for l := range 4 {
		st[l], st[4+l], st[8+l], st[12+l] = 1, 2, 3, 4
	}
	for _, fill := range []struct {
		name string
		f    func(*poissonStreams, []uint16)
	}{{"portable", fillPoissonPortable}, {"dispatch", fillPoisson}} {
		s := st
		w := make([]uint16, 16*len(want))
		fill.f(&s, w)
		for step, u := range want {
			for q := range 4 {
				x := uint16(u >> (16 * q))
				if got := w[16*step+q]; got != uint16(poissonTable[x]) {
					t.Fatalf("%s: step %d part %d: count %d, want poissonTable[%d] = %d", fill.name, step, q, got, x, poissonTable[x])
				}
			}
		}
	}
}

// TestPoissonThresholdsMatchTable: the kernel's comparison form counts,
// for every 16-bit u, exactly poissonTable[u].
func TestPoissonThresholdsMatchTable(t *testing.T) {
	thr := poissonThresholds
	for u := range 1 << 16 {
		biased := int16(uint16(u) ^ thr[0][0])
		k := 0
		for j := 1; j <= 8; j++ {
			if biased > int16(thr[j][0]) {
				k++
			}
		}
		if k != int(poissonTable[u]) {
			t.Fatalf("u = %d: thresholds count %d, table %d", u, k, poissonTable[u])
		}
	}
}

// TestFillPoissonKernelMatchesPortable: the AVX2 kernel and the portable
// loop give the same counts and leave the same states (where the kernel
// runs on this machine).
func TestFillPoissonKernelMatchesPortable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 kernel on this machine")
	}
	for _, n := range []int{16, 32, 48, 2048, 4096 + 16} {
		for j := range 5 {
			a, b := seedStreams(uint64(n), j), seedStreams(uint64(n), j)
			wa, wb := make([]uint16, n), make([]uint16, n)
			for range 3 { // the state carries over between calls
				fillPoisson(&a, wa)
				fillPoissonPortable(&b, wb)
				for i := range wa {
					if wa[i] != wb[i] {
						t.Fatalf("n=%d replicate %d: count %d: kernel %d, portable %d", n, j, i, wa[i], wb[i])
					}
				}
				if a != b {
					t.Fatalf("n=%d replicate %d: states differ", n, j)
				}
			}
		}
	}
}

// TestPoissonCountsLaw: 2²⁰ counts from the streams follow poissonTable's
// law (Poisson(1) to 2⁻¹⁶): a chi-square test over the counts 0..4 and ≥ 5
// (5 degrees of freedom; 20.5 is the 0.999 quantile, so a correct
// generator fails this fixed seed with probability 0.001), and the mean
// within 4 standard errors of 1.
func TestPoissonCountsLaw(t *testing.T) {
	const n = 1 << 20
	st := seedStreams(42, 3)
	w := make([]uint16, n)
	fillPoisson(&st, w)
	var obs [6]float64
	var sum float64
	for _, c := range w {
		obs[min(int(c), 5)]++
		sum += float64(c)
	}
	var p [6]float64
	for _, c := range poissonTable {
		p[min(int(c), 5)] += 1.0 / (1 << 16)
	}
	var chi2 float64
	for k := range obs {
		e := n * p[k]
		chi2 += (obs[k] - e) * (obs[k] - e) / e
	}
	if chi2 > 20.5 {
		t.Errorf("chi-square %.2f over 5 degrees of freedom (> 20.5): counts %v", chi2, obs)
	}
	if m := sum / n; math.Abs(m-1) > 4/math.Sqrt(n) {
		t.Errorf("mean count %.5f, want 1 ± %.5f", m, 4/math.Sqrt(n))
	}
	// Different replicates and lanes draw different streams.
	a, b := seedStreams(42, 0), seedStreams(42, 1)
	if a == b || a[0] == a[1] {
		t.Error("seedStreams repeats a state")
	}
}

// TestDots2x5KernelMatchesPortable: dots2x5 (its AVX2 kernel where this
// machine has one) and its portable loop give the same bits (the summation order is part of its contract), on
// columns of mixed magnitudes and lengths with and without a tail; and both
// agree with a plain sum to 1e-12 relative.
func TestDots2x5KernelMatchesPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 4, 7, 16, 1001, 2048} {
		w0, w1 := make([]uint16, n), make([]uint16, n)
		var cols [dotsWidth][]float64
		for k := range cols {
			cols[k] = make([]float64, n)
			for i := range n {
				cols[k][i] = (r.Float64() - 0.3) * math.Pow(10, float64(r.IntN(12)-6))
			}
		}
		for i := range n {
			w0[i], w1[i] = uint16(r.IntN(9)), uint16(r.IntN(9))
		}
		c := cols
		got := dots2x5(w0, w1, &c)
		want := dots2x5Using(false, w0, w1, &c)
		if got != want {
			t.Fatalf("n=%d: kernel %v, portable %v", n, got, want)
		}
		for k := range dotsWidth {
			var s0, s1, a0, a1 float64
			for i := range n {
				s0 += float64(w0[i]) * cols[k][i]
				s1 += float64(w1[i]) * cols[k][i]
				a0 += math.Abs(float64(w0[i]) * cols[k][i])
				a1 += math.Abs(float64(w1[i]) * cols[k][i])
			}
			if math.Abs(got[k]-s0) > 1e-12*a0 || math.Abs(got[dotsWidth+k]-s1) > 1e-12*a1 {
				t.Fatalf("n=%d column %d: %v, %v; plain sums %v, %v", n, k, got[k], got[dotsWidth+k], s0, s1)
			}
		}
	}
}
