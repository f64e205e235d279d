package counting

import (
	"math"
	"math/bits"
	"testing"
)

// TestOracleT9 reproduces docs/accountant.md T9 (streaming Honaker/GLS against
// the plain tree, unit node variance), hard-coded from docs/accountant.md T9 (also in
// privacy/testdata/oracles.json). Tolerance 1e-12 relative.
func TestOracleT9(t *testing.T) {
	const tol = 1e-12
	// Per-t GLS variances for T = 8.
	want8 := []float64{1, 2. / 3, 5. / 3, 4. / 7, 11. / 7, 26. / 21, 47. / 21, 8. / 15}
	c, err := NewGaussian(GaussianOptions{Capacity: 8, Sigma: 1, GLS: true}, SimNoise(pcg(1)))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want8 {
		if got := c.Variance(i + 1); !relClose(got, w, tol) {
			t.Errorf("T=8 t=%d: GLS variance %.15g, want %.15g", i+1, got, w)
		}
	}
	for _, tc := range []struct {
		T                  int
		plainMax, plainAvg float64
		glsMax, glsAvg     float64
	}{
		{8, 3, 1.625, 2.23809523809524, 1.18571428571429},
		{16, 4, 2.0625, 2.77142857142857, 1.41797235023041},
		{32, 5, 2.53125, 3.28755760368664, 1.65965181771633},
	} {
		plain, err := NewGaussian(GaussianOptions{Capacity: tc.T, Sigma: 1}, SimNoise(pcg(1)))
		if err != nil {
			t.Fatal(err)
		}
		gls, err := NewGaussian(GaussianOptions{Capacity: tc.T, Sigma: 1, GLS: true}, SimNoise(pcg(1)))
		if err != nil {
			t.Fatal(err)
		}
		var pm, gm, ps, gs float64
		for s := 1; s <= tc.T; s++ {
			pv, gv := plain.Variance(s), gls.Variance(s)
			pm, gm = max(pm, pv), max(gm, gv)
			ps, gs = ps+pv, gs+gv
		}
		// The GLS oracles carry 15 significant digits, so 1e-12 relative
		// is well inside their rounding.
		if !relClose(pm, tc.plainMax, tol) || !relClose(ps/float64(tc.T), tc.plainAvg, tol) {
			t.Errorf("T=%d plain max/mean = %v/%v, want %v/%v", tc.T, pm, ps/float64(tc.T), tc.plainMax, tc.plainAvg)
		}
		if !relClose(gm, tc.glsMax, tol) || !relClose(gs/float64(tc.T), tc.glsAvg, tol) {
			t.Errorf("T=%d GLS max/mean = %.15g/%.15g, want %.15g/%.15g", tc.T, gm, gs/float64(tc.T), tc.glsMax, tc.glsAvg)
		}
	}
}

// dyadicNodes returns the dyadic nodes (a, b] (0-based half-open leaf range
// [a, b)) of sizes ≤ T with b ≤ t, as in tree_online_gls_var of privacy/testdata/oracles.py.
func dyadicNodes(T, t int) [][2]int {
	var nodes [][2]int
	for size := 1; size <= T; size *= 2 {
		for a := 0; a+size <= t; a += size {
			nodes = append(nodes, [2]int{a, a + size})
		}
	}
	return nodes
}

// cholSolve solves M x = rhs for a symmetric positive definite M (row-major
// n×n), in place on copies.
func cholSolve(m []float64, n int, rhs []float64) []float64 {
	l := make([]float64, n*n)
	for j := range n {
		d := m[j*n+j]
		for k := range j {
			d -= l[j*n+k] * l[j*n+k]
		}
		d = math.Sqrt(d)
		l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			v := m[i*n+j]
			for k := range j {
				v -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = v / d
		}
	}
	y := make([]float64, n)
	for i := range n {
		v := rhs[i]
		for k := range i {
			v -= l[i*n+k] * y[k]
		}
		y[i] = v / l[i*n+i]
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		v := y[i]
		for k := i + 1; k < n; k++ {
			v -= l[k*n+i] * x[k]
		}
		x[i] = v / l[i*n+i]
	}
	return x
}

// bruteGLS returns the GLS estimate of the prefix sum [1, t] from the given
// nodes and their noisy values, and its variance (unit node variance):
// with A the node×leaf incidence and M = AᵀA, ŝ = M⁻¹Aᵀy, estimate 1ᵀŝ,
// variance 1ᵀM⁻¹1 (the Appendix's tree_online_gls_var).
func bruteGLS(t int, nodes [][2]int, y []float64) (est, variance float64) {
	m := make([]float64, t*t)
	aty := make([]float64, t)
	for k, nd := range nodes {
		for i := nd[0]; i < nd[1]; i++ {
			if y != nil {
				aty[i] += y[k]
			}
			for j := nd[0]; j < nd[1]; j++ {
				m[i*t+j]++
			}
		}
	}
	ones := make([]float64, t)
	for i := range ones {
		ones[i] = 1
	}
	for _, v := range cholSolve(m, t, ones) {
		variance += v
	}
	if y != nil {
		for _, v := range cholSolve(m, t, aty) {
			est += v
		}
	}
	return est, variance
}

// TestGLSVarianceBruteForce: GLSVariance(t) equals 1ᵀM⁻¹1 from all
// completed dyadic nodes, for every t ≤ T at T = 8, 13, 16, 32, 33.
func TestGLSVarianceBruteForce(t *testing.T) {
	for _, T := range []int{8, 13, 16, 32, 33} {
		for s := 1; s <= T; s++ {
			_, v := bruteGLS(s, dyadicNodes(T, s), nil)
			if got := GLSVariance(s); !relClose(got, v, 1e-12) {
				t.Errorf("T=%d t=%d: GLSVariance %.15g, brute force %.15g", T, s, got, v)
			}
		}
	}
	if GLSVariance(0) != 0 {
		t.Errorf("GLSVariance(0) = %v", GLSVariance(0))
	}
}

// TestGLSEstimateBruteForce: the counter's GLS Sum equals the brute-force
// GLS estimate computed from every node it released (recorded in release
// order: at time t, the nodes of levels 0..tz(t) ending at t), after every
// Add, and Variance(t) equals the brute-force GLS variance times σ².
func TestGLSEstimateBruteForce(t *testing.T) {
	for _, T := range []int{13, 32} {
		r := pcg(11)
		nz := newRec(func() float64 { return 3 * r.NormFloat64() })
		c, err := NewGaussian(GaussianOptions{Capacity: T, Sigma: 3, GLS: true}, nz)
		if err != nil {
			t.Fatal(err)
		}
		data := pcg(12)
		var nodes [][2]int // in release order
		for s := 1; s <= T; s++ {
			mustAdd(t, c, data.Float64())
			for j := 0; j <= bits.TrailingZeros(uint(s)); j++ {
				nodes = append(nodes, [2]int{s - 1<<j, s})
			}
			if len(nodes) != len(nz.rec.released) {
				t.Fatalf("T=%d t=%d: %d releases, want %d", T, s, len(nz.rec.released), len(nodes))
			}
			est, v := bruteGLS(s, nodes, nz.rec.released)
			if got := c.Sum(); math.Abs(got-est) > 1e-9*(1+math.Abs(est)) {
				t.Errorf("T=%d t=%d: GLS Sum %.15g, brute-force GLS %.15g", T, s, got, est)
			}
			if got := c.Variance(s); !relClose(got, 9*v, 1e-12) {
				t.Errorf("T=%d t=%d: Variance %v, want 9·%v", T, s, got, v)
			}
		}
	}
}
