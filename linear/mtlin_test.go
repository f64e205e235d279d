package linear

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/privacy"
	"gonum.org/v1/gonum/mat"
)

// TestBaselineMTLinReport checks [MT] §5.1's composition (d = 6, ε0 = 0.1:
// 27 streams, ε = 2.7, [MT] §5.1; docs/tree-based.md §1.9 ✔) and the certified tight value
// ε0·((d−1)/2 + 2 + √d), for the policy and its descriptor.
func TestBaselineMTLinReport(t *testing.T) {
	for _, name := range []string{"mt-linucb", "mt-lints"} {
		d, _ := Lookup(name)
		p, _ := d.Complete(nil) // ε0 = 0.1
		rep, err := d.Report(bandit.Setting{Dim: 6, K: 5, Horizon: 10000}, p)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Paper == nil || rep.Paper.Notion != privacy.NotionPure || math.Abs(rep.Paper.Value-2.7) > 1e-12 || !rep.PaperValid {
			t.Errorf("%s: paper value %+v, want pure ε = 2.7 (27 × 0.1), valid", name, rep.Paper)
		}
		want := 0.1 * (2.5 + 2 + math.Sqrt(6)) // 0.69494897…
		if rep.Certified.Notion != privacy.NotionPure || math.Abs(rep.Certified.Value-want) > 1e-12 || rep.Certified.Value < want {
			t.Errorf("%s: certified %+v, want pure ε = %.12g (rounded up)", name, rep.Certified, want)
		}
		if !strings.Contains(rep.Neighbouring, "private contexts") {
			t.Errorf("%s: neighbouring relation %q does not say the contexts are private", name, rep.Neighbouring)
		}
		pol := blBuild(t, name, 100, bandit.Params{}, 1)
		if got := pol.(bandit.Private).Privacy(); got.Certified.Value != mtlinReport(name, 5, 0.1).Certified.Value {
			t.Errorf("%s: Privacy() %v differs from the report for the same options", name, got.Certified.Value)
		}
	}
	// d = 1: basic composition (2 streams) is the smaller bound.
	if paper, cert := mtValues(1, 0.1); paper != 0.2 || cert != 0.2 {
		t.Errorf("d = 1: paper %v, certified %v; want 0.2 and 0.2", paper, cert)
	}
}

// TestBaselineMTLinTightBound searches pairs of neighbouring leaves (x, r),
// (x′, r′) with ‖x‖, ‖x′‖ ≤ 1 for the privacy-loss multiplier
// Σ_i |c_i|/Δ_i of the certified bound, and checks it never exceeds
// (d−1)/2 + 2 + √d.
func TestBaselineMTLinTightBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{1, 2, 3, 6, 20} {
		bound := float64(d-1)/2 + 2 + math.Sqrt(float64(d))
		loss := func(x []float64, rx float64, y []float64, ry float64) float64 {
			s := 0.0
			for i := range d {
				for j := i; j < d; j++ {
					c := math.Abs(x[i]*x[j] - y[i]*y[j])
					if i == j {
						s += c // Δ = 1
					} else {
						s += c / 2 // Δ = 2
					}
				}
				s += math.Abs(rx*x[i]-ry*y[i]) / 2
			}
			return s
		}
		x, y := make([]float64, d), make([]float64, d)
		worst := 0.0
		for trial := range 20000 {
			for i := range d {
				switch trial % 3 {
				case 0: // dense, equal magnitudes, random signs
					x[i] = float64(1-2*r.IntN(2)) / math.Sqrt(float64(d))
					y[i] = float64(1-2*r.IntN(2)) / math.Sqrt(float64(d))
				default:
					x[i], y[i] = r.NormFloat64(), r.NormFloat64()
				}
			}
			blClip(x, x)
			blClip(y, y)
			if trial%3 == 0 {
				for i := range d { // rescale onto the sphere exactly
					x[i] /= math.Sqrt(dotVec(x, x))
				}
			}
			l := loss(x, float64(r.IntN(2)), y, r.Float64())
			worst = max(worst, l)
			if l > bound*(1+1e-12) {
				t.Fatalf("d=%d: loss multiplier %v exceeds the certified bound %v at x=%v y=%v", d, l, bound, x, y)
			}
		}
		t.Logf("d=%d: worst multiplier found %.4g, bound %.4g, basic composition %d", d, worst, bound, mtStreams(d))
	}
}

// TestBaselineMTLinGramThroughTrees checks that the policy's Ã is exactly
// the trees' released Ŝ plus (shift+λ)I and θ̂ = Ã⁻¹b̃ with b̃ the trees'
// sums, and that the released values differ visibly from the exact
// statistics.
func TestBaselineMTLinGramThroughTrees(t *testing.T) {
	const d = 4
	p, err := NewMTLinUCB(MTLinOptions{Dim: d, Horizon: 64, Epsilon0: 0.5, Lambda: 1, Alpha: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	exactS, exactB := make([]float64, d*d), make([]float64, d)
	x := make([]float64, d)
	for range 21 {
		for i := range x {
			x[i] = r.NormFloat64() / 2
		}
		blClip(x, x)
		rew := r.Float64()
		p.Update(x, rew)
		for i := range d {
			for j := range d {
				exactS[i*d+j] += x[i] * x[j]
			}
			exactB[i] += rew * x[i]
		}
	}
	noisyS, noisyB := make([]float64, d*d), make([]float64, d)
	p.NoisyStats(noisyS, noisyB)
	a := make([]float64, d*d)
	p.c.fac.SymTo(a)
	maxDiff := 0.0
	for i := range d {
		for j := range d {
			want := noisyS[i*d+j]
			if i == j {
				want += p.Shift() + 1
			}
			if math.Abs(a[i*d+j]-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("Ã[%d][%d] = %v, want released Ŝ + (s+λ)δ = %v", i, j, a[i*d+j], want)
			}
			maxDiff = max(maxDiff, math.Abs(noisyS[i*d+j]-exactS[i*d+j]))
		}
	}
	// Laplace node scale b = LΔ/ε0 = 7·2/0.5 = 28 (L = 7 at T = 64):
	// the released entries are off by tens, not by rounding.
	if maxDiff < 1 {
		t.Errorf("the released Gram matrix is within %v of the exact one: no noise visible", maxDiff)
	}
	mean := p.c.meanVec()
	var A mat.Dense
	A.CloneFrom(mat.NewDense(d, d, a))
	var th mat.VecDense
	if err := th.SolveVec(&A, mat.NewVecDense(d, noisyB)); err != nil {
		t.Fatal(err)
	}
	for i := range d {
		if math.Abs(mean[i]-th.AtVec(i)) > 1e-9*(1+math.Abs(th.AtVec(i))) {
			t.Fatalf("θ̂[%d] = %v, want Ã⁻¹b̃ = %v (b̃ the released sums)", i, mean[i], th.AtVec(i))
		}
		if noisyB[i] == exactB[i] {
			t.Errorf("b̃[%d] equals the exact b: no noise", i)
		}
	}
}

// TestBaselineMTLinNoiseScale checks the wiring of the per-stream Laplace
// scales: after 7 leaves (popcount 3) at T = 8 (L = 4 levels), ε0 = 1, the
// error variance of an off-diagonal Gram entry and of a b entry is
// 3·2·(LΔ/ε0)² with Δ = 2, and of a diagonal entry with Δ = 1. 3000
// independent policies; tolerance 12% (≈ 4 standard errors of a variance
// estimate of a 3-term Laplace sum).
func TestBaselineMTLinNoiseScale(t *testing.T) {
	const d, n = 2, 3000
	x := []float64{0.6, -0.8}
	var off, diag, bb float64
	for s := range uint64(n) {
		p, err := NewMTLinTS(MTLinOptions{Dim: d, Horizon: 8, Epsilon0: 1, Lambda: 1, V: 1}, rand.New(rand.NewPCG(s, 77)))
		if err != nil {
			t.Fatal(err)
		}
		for range 7 {
			p.Update(x, 1)
		}
		g, b := make([]float64, d*d), make([]float64, d)
		p.NoisyStats(g, b)
		off += math.Pow(g[1]-7*x[0]*x[1], 2)
		diag += math.Pow(g[0]-7*x[0]*x[0], 2)
		bb += math.Pow(b[1]-7*x[1], 2)
	}
	L := float64(counting.Levels(8))
	k := float64(bits.OnesCount(7))
	for _, c := range []struct {
		what string
		got  float64
		delt float64
	}{{"off-diagonal", off / n, 2}, {"diagonal", diag / n, 1}, {"b", bb / n, 2}} {
		want := k * 2 * math.Pow(L*c.delt/1, 2)
		if math.Abs(c.got/want-1) > 0.12 {
			t.Errorf("%s entry: error variance %.1f, want %.1f (popcount 3 × 2b², b = LΔ/ε0)", c.what, c.got, want)
		}
	}
}

// TestBaselineMTLinPositiveDefinite runs mt-linucb and mt-lints for 20000
// rounds at the paper's ε0 = 0.1 (noise far above the signal, so the shift
// is needed) and checks every 250 rounds that λ_min(Ã) ≥ λ (up to
// rounding), and that the shift was positive in some rounds.
func TestBaselineMTLinPositiveDefinite(t *testing.T) {
	const T = 20000
	for _, name := range []string{"mt-linucb", "mt-lints"} {
		pol := blBuild(t, name, T, bandit.Params{"epsilon0": 0.1}, 9)
		var c *mtLinCore
		switch q := pol.(type) {
		case *MTLinUCB:
			c = &q.c
		case *MTLinTS:
			c = &q.c
		}
		step := blEnvStepper(t)
		shifted := 0
		a := make([]float64, 25)
		for s := 1; s <= T; s++ {
			cands, reward := step()
			i := pol.Select(cands)
			pol.Update(cands[i], reward(i))
			if c.shift > 0 {
				shifted++
			}
			if s%250 == 0 {
				c.fac.SymTo(a)
				lo := blMinEig(t, 5, a)
				if lo < 1-1e-9*(1+c.shift) {
					t.Fatalf("%s round %d: λ_min(Ã) = %v < λ = 1 (shift %v)", name, s, lo, c.shift)
				}
			}
		}
		if shifted == 0 {
			t.Errorf("%s: the shift was never positive: the test did not exercise it", name)
		}
		t.Logf("%s: shift positive in %d of %d rounds, final shift %.4g", name, shifted, T, c.shift)
	}
}

func TestBaselineMTLinValidation(t *testing.T) {
	good := MTLinOptions{Dim: 3, Horizon: 10, Epsilon0: 0.1, Lambda: 1, Alpha: 1, V: 1}
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		mod  func(*MTLinOptions)
		want string
	}{
		{func(o *MTLinOptions) { o.Dim = 0 }, "dimension"},
		{func(o *MTLinOptions) { o.Horizon = 0 }, "horizon"},
		{func(o *MTLinOptions) { o.Epsilon0 = 0 }, "epsilon0"},
		{func(o *MTLinOptions) { o.Epsilon0 = math.NaN() }, "epsilon0"},
		{func(o *MTLinOptions) { o.Lambda = 0 }, "lambda"},
		{func(o *MTLinOptions) { o.Alpha = -1 }, "alpha"},
		{func(o *MTLinOptions) { o.V = -1 }, "v ="},
	} {
		o := good
		c.mod(&o)
		_, err1 := NewMTLinUCB(o, r)
		_, err2 := NewMTLinTS(o, r)
		err := err1
		if c.want == "v =" {
			err = err2
		} else if c.want == "alpha" {
			err = err1
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %+v: error %v, want one naming %q", o, err, c.want)
		}
	}
	if _, err := NewMTLinUCB(good, nil); err == nil {
		t.Errorf("a nil generator was accepted")
	}
}
