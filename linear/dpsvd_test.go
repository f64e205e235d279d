package linear_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/privacy"
)

// TestDPSVDSensitivity checks docs/reproduction-decisions.md A16 numerically: for unit-norm rows
// u, v the released upper triangle of uuᵀ − vvᵀ has L2 norm ≤ √2, and
// orthogonal rows reach it (so 1/n_users, the paper's value, is too small).
func TestDPSVDSensitivity(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	upper := func(u, v []float64) float64 {
		var s float64
		for i := range u {
			for j := i; j < len(u); j++ {
				d := u[i]*u[j] - v[i]*v[j]
				s += d * d
			}
		}
		return math.Sqrt(s)
	}
	worst := 0.0
	for range 20000 {
		n := 2 + r.IntN(6)
		u, v := make([]float64, n), make([]float64, n)
		for _, w := range [][]float64{u, v} {
			var s float64
			for i := range w {
				w[i] = r.NormFloat64()
				s += w[i] * w[i]
			}
			s = math.Sqrt(s)
			for i := range w {
				w[i] /= s
			}
		}
		if got := upper(u, v); got > math.Sqrt2*(1+1e-12) {
			t.Fatalf("upper-triangle norm %v > √2", got)
		} else {
			worst = max(worst, got)
		}
	}
	// e1 vs e2: diagonal entries 1 and −1 give exactly √2.
	if got := upper([]float64{1, 0, 0}, []float64{0, 1, 0}); math.Abs(got-math.Sqrt2) > 1e-15 {
		t.Errorf("orthogonal unit rows: %v, want √2", got)
	}
	t.Logf("largest random upper-triangle norm: %.4f (bound √2 = 1.4142)", worst)
}

// TestDPSVDRecoversSubspace: on a rank-2 rating matrix of 4000 users and 12
// items, DP-SVD at ε = 10 (paper basis) returns features whose span is close
// to the true top-2 item subspace (the projection distance ‖P − P̂‖_F < 0.3),
// with ‖x_j‖ ≤ 1 for every item and eigenvalues descending and ≥ 0.
func TestDPSVDRecoversSubspace(t *testing.T) {
	const users, items, d = 4000, 12, 2
	r := rand.New(rand.NewPCG(5, 6))
	f1, f2 := make([]float64, items), make([]float64, items)
	for j := range items {
		f1[j] = 1
		f2[j] = float64(j%2)*2 - 1
	}
	rows := make([][]float64, users)
	for u := range rows {
		a, b := r.NormFloat64(), 0.6*r.NormFloat64()
		rows[u] = make([]float64, items)
		for j := range items {
			rows[u][j] = a*f1[j] + b*f2[j]
		}
	}
	res, err := linear.DPSVDDense(rows, linear.DPSVDOptions{Dim: d, Epsilon: 10, Delta: 1e-5, Rand: rand.New(rand.NewPCG(7, 8))})
	if err != nil {
		t.Fatal(err)
	}
	// True projector onto span{f1, f2} (orthogonal: f1·f2 = 0).
	p := mat.NewDense(items, items, nil)
	ph := mat.NewDense(items, items, nil)
	n1, n2 := float64(items), float64(items)
	for i := range items {
		for j := range items {
			p.Set(i, j, f1[i]*f1[j]/n1+f2[i]*f2[j]/n2)
			var s float64
			for k := range d {
				s += res.Features[i][k] * res.Features[j][k]
			}
			ph.Set(i, j, s)
		}
	}
	var diff mat.Dense
	diff.Sub(p, ph)
	if dist := mat.Norm(&diff, 2); dist > 0.3 {
		t.Errorf("projection distance %v to the true subspace", dist)
	}
	for j, x := range res.Features {
		var s float64
		for _, v := range x {
			s += v * v
		}
		if s > 1+1e-12 {
			t.Errorf("item %d feature norm² %v > 1", j, s)
		}
	}
	if !(res.Eigenvalues[0] >= res.Eigenvalues[1] && res.Eigenvalues[1] >= 0) {
		t.Errorf("eigenvalues %v", res.Eigenvalues)
	}
	// σ on the paper basis with Δ = √2/n: σ = (√2/4000)/sqrt(2ρ_BS(10, 1e-5)).
	rho, _ := privacy.ZCDPRhoBS(10, 1e-5)
	if want := math.Sqrt2 / users / math.Sqrt(2*rho); math.Abs(res.Sigma-want) > 1e-9*want {
		t.Errorf("σ = %v, want %v", res.Sigma, want)
	}
}

// TestDPSVDReport: certified μ = (√2/n)/σ-GDP meets the target on both bases;
// the paper's 1/n value is shown as invalid; the grid variant certifies zCDP
// within the target and runs.
func TestDPSVDReport(t *testing.T) {
	const n, m = 500, 6
	for _, eps := range []float64{1, 5, 10} {
		for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
			for _, grid := range []bool{false, true} {
				tg := bandit.Target{Epsilon: eps, Delta: 1e-5, Basis: basis}
				s, err := linear.DPSVDSigma(n, m, tg, grid)
				if err != nil {
					t.Fatal(err)
				}
				rep := linear.DPSVDReport(n, m, s, grid)
				e, _, err := rep.Certified.Epsilon(1e-5)
				if err != nil || e > eps {
					t.Errorf("ε=%v %s grid=%v: certified ε = %v (%v)", eps, basis, grid, e, err)
				}
				if basis == bandit.BasisCertified && e < eps*(1-1e-6) {
					t.Errorf("ε=%v certified basis grid=%v: ε = %v, want the target", eps, grid, e)
				}
				if !grid {
					if rep.Paper == nil || rep.PaperValid || rep.Certified.Notion != privacy.NotionGDP {
						t.Errorf("report %+v", rep)
					}
					if mu := rep.Certified.Value; math.Abs(mu-math.Sqrt2/n/s) > 1e-12*mu {
						t.Errorf("μ = %v, want √2/(nσ) = %v", mu, math.Sqrt2/n/s)
					}
				}
				if !strings.HasPrefix(rep.Neighbouring, "user-level") {
					t.Errorf("neighbouring %q", rep.Neighbouring)
				}
			}
		}
	}
	rows := []linear.RatingRow{{Items: []int{0, 2}, Values: []float64{1, 2}}, {Items: []int{1}, Values: []float64{3}}}
	res, err := linear.DPSVD(3, rows, linear.DPSVDOptions{Dim: 2, Epsilon: 1, Delta: 1e-5, Grid: true, GridSource: rand.NewPCG(1, 1)})
	if err != nil || len(res.Features) != 3 || len(res.Features[0]) != 2 || res.Report.Certified.Notion != privacy.NotionZCDP {
		t.Errorf("grid DP-SVD: %+v %v", res, err)
	}
	// Validation.
	bad := []struct {
		rows  []linear.RatingRow
		items int
		opts  linear.DPSVDOptions
		want  string
	}{
		{nil, 3, linear.DPSVDOptions{Dim: 1, Sigma: 1, Rand: rand.New(rand.NewPCG(1, 1))}, "no users"},
		{rows, 3, linear.DPSVDOptions{Dim: 4, Sigma: 1, Rand: rand.New(rand.NewPCG(1, 1))}, "dimension"},
		{rows, 3, linear.DPSVDOptions{Dim: 1, Sigma: 1}, "Rand"},
		{[]linear.RatingRow{{Items: []int{3}, Values: []float64{1}}}, 3, linear.DPSVDOptions{Dim: 1, Sigma: 1, Rand: rand.New(rand.NewPCG(1, 1))}, "item 3"},
		{[]linear.RatingRow{{Items: []int{0, 0}, Values: []float64{1, 1}}}, 3, linear.DPSVDOptions{Dim: 1, Sigma: 1, Rand: rand.New(rand.NewPCG(1, 1))}, "repeated"},
		{rows, 3, linear.DPSVDOptions{Dim: 1, Rand: rand.New(rand.NewPCG(1, 1))}, "ε"},
	}
	for _, b := range bad {
		if _, err := linear.DPSVD(b.items, b.rows, b.opts); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want %q", b.opts, err, b.want)
		}
	}
}
