package ctxenv

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpbandit/dpbandit/linear"
)

// lowRankSparse returns an n × m matrix with ratings on a random fraction
// p of the cells: a rank-r signal plus N(0, 0.1²) noise, offset by 3.
func lowRankSparse(n, m, rank int, p float64, seed uint64) *Sparse {
	r := rand.New(rand.NewPCG(seed, 7))
	a := make([]float64, n*rank)
	b := make([]float64, m*rank)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	for i := range b {
		b[i] = r.NormFloat64() / float64(1+i%rank) // decaying spectrum
	}
	var us, is []int32
	var vs []float32
	for u := range n {
		for j := range m {
			if r.Float64() >= p {
				continue
			}
			v := 3.0
			for k := range rank {
				v += a[u*rank+k] * b[j*rank+k]
			}
			us, is, vs = append(us, int32(u)), append(is, int32(j)), append(vs, float32(v+0.1*r.NormFloat64()))
		}
	}
	s, err := newSparse(n, m, us, is, vs, "synthetic")
	if err != nil {
		panic(err)
	}
	return s
}

// denseCentred returns the centred matrix as gonum Dense (the oracle's input).
func denseCentred(s *Sparse, mean float64) *mat.Dense {
	x := mat.NewDense(s.Users, s.Items, nil)
	for u := range s.Users {
		it, va := s.Row(u)
		for a, j := range it {
			x.Set(u, int(j), float64(va[a])-mean)
		}
	}
	return x
}

// projDist is ‖P_A − P_B‖_F/√(2d) for the column spans of two m × d
// row-major matrices with orthonormal columns: the root mean square of the
// sines of the principal angles, in [0, 1].
func projDist(a, b []float64, m, d int) float64 {
	// ‖P_A − P_B‖_F² = 2d − 2‖AᵀB‖_F².
	var f float64
	for p := range d {
		for q := range d {
			var s float64
			for j := range m {
				s += a[j*d+p] * b[j*d+q]
			}
			f += s * s
		}
	}
	return math.Sqrt(max(0, 2*float64(d)-2*f) / (2 * float64(d)))
}

// TestTruncatedSVDOracle compares both methods with gonum's dense SVD of
// the centred matrix (an independent oracle) on a dense 300 × 120 matrix
// with a rank-6 signal plus noise (a clear spectral gap after 6): singular values within 1e-6 relative, the top-6 right
// subspace within 1e-6 (projection distance), U orthonormal.
func TestTruncatedSVDOracle(t *testing.T) {
	x := lowRankSparse(300, 120, 6, 1, 1)
	const d = 6
	for _, method := range []SVDMethod{SVDExact, SVDRandomized} {
		s, err := TruncatedSVD(x, SVDOptions{Dim: d, Method: method, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		var ref mat.SVD
		if !ref.Factorize(denseCentred(x, s.Mean), mat.SVDThin) {
			t.Fatal("oracle SVD failed")
		}
		vals := ref.Values(nil)
		var v mat.Dense
		ref.VTo(&v)
		rv := make([]float64, x.Items*d)
		for j := range x.Items {
			for k := range d {
				rv[j*d+k] = v.At(j, k)
			}
		}
		for k := range d {
			if math.Abs(s.S[k]-vals[k]) > 1e-6*vals[k] {
				t.Errorf("%v: σ_%d = %.10g, oracle %.10g", method, k+1, s.S[k], vals[k])
			}
		}
		if pd := projDist(s.V, rv, x.Items, d); pd > 1e-6 {
			t.Errorf("%v: projection distance to the oracle's subspace %.3g > 1e-6", method, pd)
		}
		for p := range d {
			for q := range d {
				var g float64
				for u := range x.Users {
					g += s.U[u*d+p] * s.U[u*d+q]
				}
				want := 0.0
				if p == q {
					want = 1
				}
				if math.Abs(g-want) > 1e-8 {
					t.Fatalf("%v: (UᵀU)_%d%d = %v, want %v", method, p, q, g, want)
				}
			}
		}
	}
}

func TestTruncatedSVDErrors(t *testing.T) {
	x := lowRankSparse(20, 10, 2, 0.5, 2)
	for _, o := range []SVDOptions{{Dim: 0}, {Dim: 11}, {Dim: 2, Oversample: -1}, {Dim: 2, PowerIters: -3}} {
		if _, err := TruncatedSVD(x, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := TruncatedSVD(&Sparse{Users: 2, Items: 2, Start: []int32{0, 0, 0}}, SVDOptions{Dim: 1}); err == nil {
		t.Error("empty matrix: no error")
	}
}

// TestSVDHeldOutError: on MovieLens-100k with 10% of the ratings held out
// (seed 3), the RMSE of the rank-d reconstruction on the held-out ratings
// falls at every step of d = 1, 2, 5, 10, 20 by at least 0.001, falls by at
// least 0.04 from d = 1 to d = 20, and at d = 1 is already below the
// mean-only predictor's. (Measured 1.080, 1.057, 1.040, 1.027, 1.025 and
// 1.049 at d = 50: with missing ratings counted as the mean, the largest
// ranks start fitting the imputed zeros, which is why the test stops at
// 20 and the environments do not rely on more than a modest gain from d.)
func TestSVDHeldOutError(t *testing.T) {
	all, _, _, err := readMovieLens(testDataDir(), MovieLens100k)
	skipNoData(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	var us, is []int32
	var vs []float32
	type held struct {
		u, j int
		v    float64
	}
	var ho []held
	for u := range all.Users {
		it, va := all.Row(u)
		for a := range it {
			if r.Float64() < 0.1 {
				ho = append(ho, held{u, int(it[a]), float64(va[a])})
				continue
			}
			us, is, vs = append(us, int32(u)), append(is, it[a]), append(vs, va[a])
		}
	}
	tr, err := newSparse(all.Users, all.Items, us, is, vs, "train")
	if err != nil {
		t.Fatal(err)
	}
	prev := math.Inf(1)
	var first float64
	for i, d := range []int{1, 2, 5, 10, 20} {
		s, err := TruncatedSVD(tr, SVDOptions{Dim: d, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var se, se0 float64
		for _, h := range ho {
			e := s.Predict(h.u, h.j) - h.v
			se += e * e
			se0 += (s.Mean - h.v) * (s.Mean - h.v)
		}
		rmse := math.Sqrt(se / float64(len(ho)))
		t.Logf("d = %2d: held-out RMSE %.4f (mean only %.4f)", d, rmse, math.Sqrt(se0/float64(len(ho))))
		if i == 0 {
			first = rmse
			if rmse >= math.Sqrt(se0/float64(len(ho))) {
				t.Errorf("d = 1 RMSE %.4f is not below the mean-only %.4f", rmse, math.Sqrt(se0/float64(len(ho))))
			}
		}
		if rmse > prev-0.001 {
			t.Errorf("d = %d: RMSE %.4f did not fall by 0.001 from %.4f", d, rmse, prev)
		}
		prev = rmse
	}
	if first-prev < 0.04 {
		t.Errorf("RMSE fell only %.4f from d = 1 to d = 20, want ≥ 0.04", first-prev)
	}
}

// TestDPSVDSubspace: linear.DPSVD (Δ₂ = √2/n_train, docs/reproduction-decisions.md
// A16) on the Jester training split converges to the non-private top-d
// subspace of C = R̃ᵀR̃/n as ε grows: with d = 10 the projection distance
// (RMS sine of the principal angles) to the noise-free subspace is below
// 0.05 at ε = 100 and below 0.01 at ε = 1e4, and falls with ε over
// {0.01, 1, 100, 1e4}; at ε = 0.01 it is above 0.5 (far: at n_train ≈ 20,000
// σ_f ≈ 0.03 per entry, larger than all but the first eigenvalues).
func TestDPSVDSubspace(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Jester")
	}
	e, err := LoadJester(testDataDir(), DefaultJesterOptions())
	skipNoData(t, err)
	tr := e.TrainMatrix()
	rows := make([]linear.RatingRow, tr.Users)
	for u := range tr.Users {
		it, va := tr.Row(u)
		for a := range it {
			rows[u].Items = append(rows[u].Items, int(it[a]))
			rows[u].Values = append(rows[u].Values, float64(va[a]))
		}
	}
	const d = 10
	m := tr.Items
	flat := func(f [][]float64) []float64 {
		out := make([]float64, m*d)
		for j := range m {
			copy(out[j*d:(j+1)*d], f[j])
		}
		return out
	}
	ref, err := linear.DPSVD(m, rows, linear.DPSVDOptions{Dim: d, Sigma: math.SmallestNonzeroFloat64, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	want := flat(ref.Features)
	prev := math.Inf(1)
	for _, c := range []struct{ eps, below, above float64 }{{0.01, 1, 0.5}, {1, 1, 0}, {100, 0.05, 0}, {1e4, 0.01, 0}} {
		res, err := linear.DPSVD(m, rows, linear.DPSVDOptions{Dim: d, Epsilon: c.eps, Delta: 1e-5, Rand: rand.New(rand.NewPCG(2, 3))})
		if err != nil {
			t.Fatal(err)
		}
		wantSigma := math.Sqrt2 / float64(tr.Users) // Δ₂ before calibration
		if res.Sigma < wantSigma/math.Sqrt(2*1e12) {
			t.Fatalf("σ_f = %v implausibly small", res.Sigma)
		}
		pd := projDist(flat(res.Features), want, m, d)
		t.Logf("ε_f = %g: σ_f = %.3g, projection distance %.4f", c.eps, res.Sigma, pd)
		if pd >= c.below || pd <= c.above {
			t.Errorf("ε_f = %g: projection distance %.4f, want in (%g, %g)", c.eps, pd, c.above, c.below)
		}
		if pd >= prev {
			t.Errorf("ε_f = %g: projection distance %.4f did not fall from %.4f", c.eps, pd, prev)
		}
		prev = pd
	}
}
