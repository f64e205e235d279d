package linear

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
)

// TestJDPOptionBounds: each of JDP-LinUCB's parameter ranges, at its closed
// end (accepted) and just past its open end (refused, naming the range).
func TestJDPOptionBounds(t *testing.T) {
	ok := JDPLinUCBOptions{Dim: 3, Horizon: 100, Epsilon: 1, Delta: 1e-5, Lambda: 1, Alpha: 1, Fail: 0.1}
	for _, c := range []struct {
		mod  func(*JDPLinUCBOptions)
		want string // "" = accepted
	}{
		{func(o *JDPLinUCBOptions) { o.Dim = 200 }, ""},
		{func(o *JDPLinUCBOptions) { o.Dim = 201 }, "outside [1, 200]"},
		{func(o *JDPLinUCBOptions) { o.Horizon = 2 }, ""},
		{func(o *JDPLinUCBOptions) { o.Horizon = 1 }, "horizon T = 1 is outside its valid range [2, ∞)"},
		{func(o *JDPLinUCBOptions) { o.Epsilon = 1e-6 }, ""},
		{func(o *JDPLinUCBOptions) { o.Delta = 0 }, "delta = 0 is outside its valid range (0, 1)"},
		{func(o *JDPLinUCBOptions) { o.Delta = 1 }, "delta = 1 is outside its valid range (0, 1)"},
		{func(o *JDPLinUCBOptions) { o.Fail = 0 }, "fail = 0 is outside its valid range (0, 1)"},
		{func(o *JDPLinUCBOptions) { o.Fail = 1 }, "fail = 1 is outside its valid range (0, 1)"},
	} {
		o := ok
		c.mod(&o)
		err := checkJDP(o)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", o, err, c.want)
		}
	}
}

// TestJDPTreesAndStats: the d(d+1)/2 Gram trees carry node noise σ off the
// diagonal and √2σ on it (the paper's symmetric (Z+Zᵀ)/√2), the d reward
// trees σ; and with a negligible σ the released V̂ and û are Σ x̃x̃ᵀ and
// Σ r·x̃ over the clipped features x̃ (one feature vector of norm 2 is
// clipped to norm 1).
func TestJDPTreesAndStats(t *testing.T) {
	const d = 3
	opts := JDPLinUCBOptions{Dim: d, Horizon: 64, Delta: 1e-5, Sigma: 1e-12, Lambda: 1, Alpha: 1, Fail: 0.1}
	p, err := NewJDPLinUCB(opts, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range d {
		for j := i; j < d; j++ {
			want := opts.Sigma
			if i == j {
				want = math.Sqrt2 * opts.Sigma
			}
			if got := p.gram[blTriIndex(d, i, j)].Scale(); got != want {
				t.Errorf("Gram tree (%d, %d): node σ = %v, want %v", i, j, got, want)
			}
		}
	}
	checkReleasedStats(t, d, p.Update, p.NoisyStats)
}

// TestJDPReportDerivation: the derivation states the event-level μ = √(1.5L)/σ
// next to the certified joint-DP μ = 2√L/σ, and, for a σ set directly, what
// the paper's formula would claim for it: ε = 4√m·L̃²·ln(4/δ)/σ, m = ⌈log₂T⌉+1.
func TestJDPReportDerivation(t *testing.T) {
	o := JDPLinUCBOptions{Dim: 2, Horizon: 100, Delta: 1e-5, Sigma: 3, Lambda: 1, Alpha: 1, Fail: 0.1}
	r := jdpReport(o)
	L := float64(counting.Levels(100))
	if want := fmt.Sprintf("%g GDP. ", math.Sqrt(1.5*L)/3); !strings.Contains(r.Derivation, want) {
		t.Errorf("derivation %q does not state the event-level μ %q", r.Derivation, want)
	}
	pe := 4 * math.Sqrt(float64(jdpM(100))) * 2 * math.Log(4/1e-5) / 3
	if want := fmt.Sprintf("claim (%.6g, %g)-JDP", pe, 1e-5); !strings.Contains(r.Derivation, want) {
		t.Errorf("derivation %q does not state the paper's claim %q", r.Derivation, want)
	}
	if jdpM(100) != 8 {
		t.Errorf("m = ⌈log₂ 100⌉ + 1 = %d, want 8", jdpM(100))
	}
	o.Sigma, o.Epsilon = 0, 1
	if r := jdpReport(o); !strings.Contains(r.Derivation, "Paper: σ² = 16·m·L̃⁴·ln(4/δ)²/ε²") {
		t.Errorf("with the paper's σ the derivation does not state its formula: %q", r.Derivation)
	}
}

// TestJDPCalibrate: calibration works down to T = 2 on both bases; the
// paper basis passes (ε, δ) through, and the certified σ's report meets the
// μ asked for.
func TestJDPCalibrate(t *testing.T) {
	d, err := Lookup("jdp-linucb")
	if err != nil {
		t.Fatal(err)
	}
	s := bandit.Setting{Dim: 2, K: 3, Horizon: 2}
	p, err := d.Calibrate(s, bandit.Target{Epsilon: 1, Delta: 1e-5}, nil)
	if err != nil || p["epsilon"] != 1 || p["delta"] != 1e-5 || p["sigma"] != 0 {
		t.Fatalf("paper basis at T = 2: %v, %v; want ε = 1, δ = 1e-5, σ = 0", p, err)
	}
	p, err = d.Calibrate(s, bandit.Target{Mu: 0.5, Basis: bandit.BasisCertified}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, err := d.Complete(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Report(s, full)
	if err != nil {
		t.Fatal(err)
	}
	if r.Certified.Value > 0.5 || r.Certified.Value < 0.5*(1-1e-9) {
		t.Errorf("certified μ = 0.5 calibrates to σ = %v reporting μ = %v", p["sigma"], r.Certified.Value)
	}
}

// checkReleasedStats feeds three fixed (x, r) rounds (one x of norm 2, which
// is clipped) to update, then checks the released Gram matrix and reward
// vector that stats writes against Σ x̃x̃ᵀ and Σ r·x̃ over the clipped
// features x̃, within 1e-9 (the policies are built with negligible noise).
func checkReleasedStats(t *testing.T, d int, update func(x []float64, r float64), stats func(gram, b []float64)) {
	t.Helper()
	xs := [][]float64{{0.6, -0.8, 0}, {0, 0, 2}, {-0.5, 0.5, 0.5}}
	rs := []float64{1, 0.5, 0.25}
	gram, b := make([]float64, d*d), make([]float64, d)
	for k, x := range xs {
		update(x, rs[k])
		xc := append([]float64(nil), x...)
		blClip(xc, xc)
		for i := range d {
			for j := range d {
				gram[i*d+j] += xc[i] * xc[j]
			}
			b[i] += rs[k] * xc[i]
		}
	}
	g, bb := make([]float64, d*d), make([]float64, d)
	stats(g, bb)
	for i := range d * d {
		if math.Abs(g[i]-gram[i]) > 1e-9 {
			t.Fatalf("released Gram matrix %v, want Σ x̃x̃ᵀ = %v", g, gram)
		}
	}
	for i := range d {
		if math.Abs(bb[i]-b[i]) > 1e-9 {
			t.Fatalf("released reward vector %v, want Σ r·x̃ = %v", bb, b)
		}
	}
}

// constNoise is a counting.Noise whose mechanisms add a fixed value: it
// lets a test plant a released tree sum.
type constNoise float64

type constMech float64

func (m constMech) Release(x float64) float64 { return x + float64(m) }

func (n constNoise) Laplace(b, delta float64) (counting.Mechanism, error) { return constMech(n), nil }
func (n constNoise) Gaussian(sigma, delta float64) (counting.Mechanism, error) {
	return constMech(n), nil
}
func (n constNoise) Discrete() bool { return false }

// TestJDPShiftSearch pins the fallback search: when 2Υ does not make
// V̂ + s·I positive definite, the shift is the first of 2Υ·2^j that does.
// The planted V̂ = diag(−6Υ, 10⁶) fails at 2Υ and 4Υ and passes at 8Υ (the
// Gershgorin cap 10⁶ is far above), so the shift is exactly 8Υ.
func TestJDPShiftSearch(t *testing.T) {
	p, err := NewJDPLinUCB(JDPLinUCBOptions{Dim: 2, Horizon: 8, Sigma: 1, Lambda: 1, Alpha: 1, Fail: 0.1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ups := p.Upsilon()
	plant := map[int]float64{blTriIndex(2, 0, 0): -6 * ups, blTriIndex(2, 1, 1): 1e6}
	for k := range p.gram {
		c, err := counting.NewGaussian(counting.GaussianOptions{Capacity: 8, Sigma: 1, Lower: -1, Sensitivity: 2}, constNoise(plant[k]))
		if err != nil {
			t.Fatal(err)
		}
		p.gram[k] = c
	}
	for i := range p.uvec {
		c, err := counting.NewGaussian(counting.GaussianOptions{Capacity: 8, Sigma: 1, Lower: -1, Sensitivity: 2}, constNoise(0))
		if err != nil {
			t.Fatal(err)
		}
		p.uvec[i] = c
	}
	p.Update([]float64{0, 0}, 0)
	if got := p.Shift(); got != 8*ups {
		t.Errorf("fallback shift %v, want 8Υ = %v (Υ = %v)", got, 8*ups, ups)
	}
}
