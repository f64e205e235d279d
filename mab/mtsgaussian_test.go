package mab

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/mab/policytest"
)

// TestMTSReportSPEC checks M-TS's paper and tight values against
// docs/gaussian-ts.md §1.4, docs/reproduction-decisions.md A9,
// docs/reproductions.md E7 and §3.0 (Ou et al. Fig. 1), to the printed digits.
func TestMTSReportSPEC(t *testing.T) {
	const T = 1_000_000
	lt := math.Log(T)
	// E7: b = 0, c = 5(ln T)^α, paper formula.
	for i, want := range []string{"447.2", "322.1", "232.0", "167.1", "120.3"} {
		alpha := []float64{0, 0.25, 0.5, 0.75, 1}[i]
		rep := mtsReport(5, T, 0, 5*math.Pow(lt, alpha))
		matchPrinted(t, fmt.Sprintf("E7 α=%v paper", alpha), rep.Paper.Value, want)
	}
	// A9: b = 0, c = 5: paper 447.2, tight 316.2.
	rep := mtsReport(5, T, 0, 5)
	matchPrinted(t, "A3 10^2.5", mtsReport(5, 100_000, 0, 1).Paper.Value, "316.2")
	matchPrinted(t, "A9 paper", rep.Paper.Value, "447.2")
	matchPrinted(t, "A9 tight", rep.Certified.Value, "316.2")

	// §3.0, Fig. 1: T = 1000, only c(b+1) matters for the paper value.
	fig1 := []struct {
		cb1  float64
		eta  string
		eps  [3]string // δ = 1e-2, 1e-4, 1e-6
		b, k int
	}{
		{1, "31.62", [3]string{"572.6", "616.7", "649.4"}, 0, 5},
		{2, "22.36", [3]string{"301.1", "332.2", "355.4"}, 1, 5},
		{11, "9.535", [3]string{"66.74", "80.07", "89.97"}, 10, 5},
		{101, "3.147", [3]string{"11.53", "16.00", "19.30"}, 0, 5},
	}
	for _, f := range fig1 {
		c := f.cb1 / float64(f.b+1)
		rep := mtsReport(f.k, 1000, f.b, c)
		matchPrinted(t, fmt.Sprintf("Fig1 c(b+1)=%v η", f.cb1), rep.Paper.Value, f.eta)
		for j, delta := range []float64{1e-2, 1e-4, 1e-6} {
			st, err := rep.At(delta)
			if err != nil {
				t.Fatal(err)
			}
			matchPrinted(t, fmt.Sprintf("Fig1 c(b+1)=%v ε(δ=%g)", f.cb1, delta), *st.PaperEpsilon, f.eps[j])
			if *st.Epsilon > *st.PaperEpsilon {
				t.Errorf("certified ε above paper ε")
			}
		}
	}

	// Tight formula of §1.4 for b ≥ 1: sqrt((T − bK)/(c(b+1))); b = 0: one
	// fewer data-reading round than SPEC's T − bK, equal to the printed digits.
	for _, c := range []struct {
		k, T, b int
		c       float64
	}{{5, 100_000, 99, 10}, {5, 100_000, 3999, 1}, {10, 50_000, 1, 3}, {5, 100_000, 0, 1}} {
		rep := mtsReport(c.k, c.T, c.b, c.c)
		spec := math.Sqrt(float64(c.T-c.b*c.k) / (c.c * float64(max(c.b, 1)+1)))
		paper := math.Sqrt(float64(c.T) / (c.c * float64(c.b+1)))
		if c.b >= 1 && math.Abs(rep.Certified.Value-spec) > 1e-14*spec {
			t.Errorf("%+v: certified %v, SPEC §1.4 η* = %v", c, rep.Certified.Value, spec)
		}
		if c.b == 0 && (rep.Certified.Value > spec || rep.Certified.Value < spec*(1-1/float64(c.T))) {
			t.Errorf("%+v: certified %v, want sqrt((T−1)/(2c)) just below %v", c, rep.Certified.Value, spec)
		}
		if math.Abs(rep.Paper.Value-paper) > 1e-14*paper || rep.Certified.Value > rep.Paper.Value || !rep.PaperValid {
			t.Errorf("%+v: paper %v (want %v), certified %v", c, rep.Paper.Value, paper, rep.Certified.Value)
		}
	}
	// b = 0, c = 1 is TS-Gaussian: the same certified value; the paper values
	// differ by √2 (Lemma 4 at b = 0 is sqrt(T), 10^2.5 at T = 1e5; Lemma 3
	// is sqrt(T/2); docs/reproduction-decisions.md A3).
	a, b := mtsReport(5, 12345, 0, 1), tsGaussianReport(12345)
	if a.Certified.Value != b.Certified.Value || math.Abs(a.Paper.Value-math.Sqrt2*b.Paper.Value) > 1e-12*a.Paper.Value {
		t.Errorf("M-TS(0, 1) report %v/%v differs from TS-Gaussian %v/%v", a.Certified.Value, a.Paper.Value, b.Certified.Value, b.Paper.Value)
	}
}

// TestMTSPrePullE1 checks docs/reproductions.md E1's exact target on the E1 instance
// (means .75, .625, .5, .375, .25): the pre-pull phase plays arm 0 b times,
// then arm 1 b times, …, so its pseudo-regret is exactly b·ΣΔ = 1.25b in
// every run; its realised regret has mean 1.25b and per-run s.d.
// sqrt(1.09375b), and the mean over R runs must lie within 3 s.e.
func TestMTSPrePullE1(t *testing.T) {
	means := []float64{0.75, 0.625, 0.5, 0.375, 0.25}
	const runs = 200
	for _, b := range []int{1, 49, 999} {
		const T = 100_000
		var sum float64
		for run := range runs {
			p, err := NewMTSGaussian(MTSGaussianOptions{K: 5, Horizon: T, B: b, C: float64(T) / (25 * float64(b+1))},
				rand.New(rand.NewPCG(uint64(run), 11)))
			if err != nil {
				t.Fatal(err)
			}
			env := policytest.NewBernoulli(means, rand.New(rand.NewPCG(uint64(run), 12)))
			res, err := policytest.Play(p, env, 5*b)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range res.Arms {
				if a != i/b {
					t.Fatalf("b=%d: pre-pull round %d played arm %d, want %d (block order)", b, i, a, i/b)
				}
			}
			if math.Abs(res.PseudoRegret-1.25*float64(b)) > 1e-9*float64(b) {
				t.Fatalf("b=%d: pre-pull pseudo-regret %v, want %v", b, res.PseudoRegret, 1.25*float64(b))
			}
			if c := p.NextCost(); c.Value == 0 {
				t.Fatalf("b=%d: the first Thompson round must cost > 0", b)
			}
			sum += res.RealisedRegret(env.Best())
		}
		mean := sum / runs
		se := math.Sqrt(1.09375 * float64(b) / runs)
		if math.Abs(mean-1.25*float64(b)) > 3*se {
			t.Errorf("b=%d: mean realised pre-pull regret %v, want 1.25b = %v ± 3·%v", b, mean, 1.25*float64(b), se)
		}
	}
}

// TestMTSPhases: NextCost is 0 during the pre-pulls and 1/sqrt(c(n+1)) with
// n the smallest count afterwards; Σ NextCost² ≤ certified²; the counts sum
// to T; b = 0, c = 1 plays exactly like TS-Gaussian under the same seed.
func TestMTSPhases(t *testing.T) {
	const K, T, b, c = 4, 5000, 10, 2.5
	p, err := NewMTSGaussian(MTSGaussianOptions{K: K, Horizon: T, B: b, C: c}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	env := policytest.NewBernoulli([]float64{0.7, 0.6, 0.5, 0.4}, rand.New(rand.NewPCG(3, 4)))
	var sum float64
	for round := range T {
		cost := p.NextCost().Value
		if round < b*K && cost != 0 {
			t.Fatalf("pre-pull round %d costs %v", round, cost)
		}
		if round >= b*K {
			// 1/√(c(m+1)) rounded up (mab/cost.go): at most 2 ulps above
			// the float quotient, never below the exact value
			// (TestMTSGaussianCostRoundedUp).
			want := 1 / math.Sqrt(c*float64(minPositive(p.st.Pulls)+1))
			if cost < math.Nextafter(want, 0) || cost > math.Nextafter(math.Nextafter(want, 2), 2) || cost > math.Nextafter(math.Nextafter(1/math.Sqrt(c*(b+1)), 2), 2) {
				t.Fatalf("round %d: cost %v, want %v rounded up", round, cost, want)
			}
		}
		sum += cost * cost
		a := p.Select()
		p.Update(a, env.Pull(a))
	}
	_, cert := mtsValues(K, T, b, c)
	if sum > cert*cert*(1+1e-9) {
		t.Errorf("Σ NextCost² = %v > certified² %v", sum, cert*cert)
	}
	total := 0
	for i, n := range p.st.Pulls {
		total += n
		if n < b {
			t.Errorf("arm %d has %d < b pulls", i, n)
		}
	}
	if total != T {
		t.Errorf("pull counts sum to %d, want %d", total, T)
	}

	m, _ := NewMTSGaussian(MTSGaussianOptions{K: 3, Horizon: 3000, B: 0, C: 1}, rand.New(rand.NewPCG(9, 9)))
	g, _ := NewTSGaussian(TSGaussianOptions{K: 3, Horizon: 3000}, rand.New(rand.NewPCG(9, 9)))
	e1 := policytest.NewBernoulli([]float64{0.5, 0.6, 0.4}, rand.New(rand.NewPCG(5, 5)))
	e2 := policytest.NewBernoulli([]float64{0.5, 0.6, 0.4}, rand.New(rand.NewPCG(5, 5)))
	r1, _ := policytest.Play(m, e1, 3000)
	r2, _ := policytest.Play(g, e2, 3000)
	for i := range r1.Arms {
		if r1.Arms[i] != r2.Arms[i] {
			t.Fatalf("M-TS(b=0, c=1) and TS-Gaussian differ at round %d", i)
		}
	}
}

// TestMTSOptions: the constructor names the bad parameter and its range.
func TestMTSOptions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, o := range []MTSGaussianOptions{
		{K: 0, Horizon: 10, B: 0, C: 1},
		{K: 5, Horizon: 0, B: 0, C: 1},
		{K: 5, Horizon: 100, B: 21, C: 1},
		{K: 5, Horizon: 100, B: -1, C: 1},
		{K: 5, Horizon: 100, B: 0, C: 0},
		{K: 5, Horizon: 100, B: 0, C: math.Inf(1)},
	} {
		if _, err := NewMTSGaussian(o, r); err == nil {
			t.Errorf("NewMTSGaussian(%+v) accepted", o)
		} else {
			t.Log(err)
		}
	}
	if _, err := NewMTSGaussian(MTSGaussianOptions{K: 5, Horizon: 100, B: 20, C: 1}, r); err != nil {
		t.Errorf("bK = T rejected: %v", err)
	}
	if _, _, err := Build(bandit.Spec{Name: "mts-gaussian", Params: bandit.Params{"b": 1e300}}, bandit.Setting{K: 5, Horizon: 100}, r); err == nil {
		t.Errorf("b = 1e300 accepted")
	} else if !strings.Contains(err.Error(), "b = ") {
		t.Errorf("error does not name b: %v", err)
	}
}
