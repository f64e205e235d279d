package mab

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLazyDPTSPosterior checks the optimistic clipped Beta posterior: with
// ε huge the offset 3 ln t/(εO) vanishes and θ_j has the mean
// (μO+1)/(O+2) of Beta(μO+1, (1−μ)O+1); with ε tiny the offset clips μ to 1.
// 20000 draws, tolerance 0.01 (≈ 5 standard errors).
func TestLazyDPTSPosterior(t *testing.T) {
	for _, c := range []struct {
		eps    float64
		wantMu float64 // μ after the offset and clipping
	}{{1e9, 0.5}, {1e-6, 1}} {
		p, _ := NewLazyDPTS(LazyDPTSOptions{K: 1, Epsilon: c.eps, C: 3}, rand.New(rand.NewPCG(5, 5)))
		for n := 1; n <= 7; n++ { // epochs 1, 2, 4: O = 4
			p.Update(0, float64(n%2)) // the epoch of pulls 4–7 averages 0.5
		}
		if c.eps > 1 && math.Abs(p.st.Mu[0]-0.5) > 1e-6 {
			t.Fatalf("μ̃ = %v, want 0.5", p.st.Mu[0])
		}
		o := float64(p.st.O[0])
		if o != 4 {
			t.Fatalf("O = %v, want 4", o)
		}
		sum := 0.0
		const draws = 20000
		for range draws {
			p.Select()
			sum += p.th[0] / draws
		}
		want := (c.wantMu*o + 1) / (o + 2)
		if math.Abs(sum-want) > 0.01 {
			t.Errorf("ε = %g: mean of θ %.4f, want %.4f (Beta(μO+1, (1−μ)O+1), μ = %v)", c.eps, sum, want, c.wantMu)
		}
	}
}

// TestLazyDPTSNoiseScale checks the epoch release Lap(1/ε) on the sum:
// after 3 pulls (epoch of 2) μ̃ − x has variance 2/(2ε)²; 3000 runs, ±15%.
func TestLazyDPTSNoiseScale(t *testing.T) {
	const eps, runs = 0.8, 3000
	var v float64
	for seed := range uint64(runs) {
		p, _ := NewLazyDPTS(LazyDPTSOptions{K: 1, Epsilon: eps, C: 3}, rand.New(rand.NewPCG(seed, 2)))
		for range 3 {
			p.Update(0, 0.5)
		}
		v += (p.st.Mu[0] - 0.5) * (p.st.Mu[0] - 0.5) / runs
	}
	if w := 2 / (4 * eps * eps); math.Abs(v/w-1) > 0.15 {
		t.Errorf("release variance %.4g, want %.4g", v, w)
	}
}

// TestLazyDPTSOffsetPublished pins the optimism offset of Hu & Hegde (UAI
// 2022), Alg 2, line 7, 3·log(t)/(ε·O) with log = log₂ (§3, Notation), at
// points computed by hand:
//
//   - ε = 1, O = 1, t = 1024: 3·10/(1·1) = 30;
//   - ε = 0.5, O = 8, t = 4096: 3·12/(0.5·8) = 36/4 = 9;
//   - ε = 2, O = 64, t = 1000: log₂ 1000 = 9.965784284662087, so
//     3·9.965784284662087/128 = 0.23357306917176768;
//
// and the natural-log variant (logbase = e) at ε = 1, O = 1, t = 1024:
// 3·ln 1024 = 3·6.931471805599453 = 20.79441541679836, and at ε = 2,
// O = 64, t = 1000: 3·6.907755278982137/128 = 0.16190051435114383.
//
// Through Select, at the last point with μ̃ = 0 the Beta sample has mean
// (μO+1)/(O+2) with μ the offset: 0.24165 under log₂, 0.17211 under ln
// (20000 draws, s.e. ≈ 0.0004; tolerance 0.003).
func TestLazyDPTSOffsetPublished(t *testing.T) {
	for _, c := range []struct {
		base, eps float64
		o, t      int
		want      float64
	}{
		{0, 1, 1, 1024, 30},
		{2, 0.5, 8, 4096, 9},
		{0, 2, 64, 1000, 0.23357306917176768},
		{math.E, 1, 1, 1024, 20.79441541679836},
		{math.E, 2, 64, 1000, 0.16190051435114383},
	} {
		p, err := NewLazyDPTS(LazyDPTSOptions{K: 1, Epsilon: c.eps, C: 3, LogBase: c.base}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		p.st.Steps, p.st.O[0] = c.t-1, c.o
		if got := p.offset(0); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("logbase %v, ε = %v, O = %d, t = %d: offset %.16g, want %.16g", c.base, c.eps, c.o, c.t, got, c.want)
		}
	}
	for _, c := range []struct{ base, mu float64 }{{2, 0.23357306917176768}, {math.E, 0.16190051435114383}} {
		p, _ := NewLazyDPTS(LazyDPTSOptions{K: 1, Epsilon: 2, C: 3, LogBase: c.base}, rand.New(rand.NewPCG(2, 2)))
		p.st.Init, p.st.Steps, p.st.O[0], p.st.Mu[0] = 1, 999, 64, 0
		const draws = 20000
		sum := 0.0
		for range draws {
			p.Select()
			sum += p.th[0] / draws
		}
		if want := (c.mu*64 + 1) / 66; math.Abs(sum-want) > 0.003 {
			t.Errorf("logbase %v: mean θ %.5f, want %.5f", c.base, sum, want)
		}
	}
	d, _ := Lookup("lazy-dp-ts")
	if p, _ := d.Complete(nil); p["logbase"] != 2 || p["c"] != 3 {
		t.Errorf("defaults logbase %v, c %v; want 2 (published log₂), 3", p["logbase"], p["c"])
	}
	if _, err := NewLazyDPTS(LazyDPTSOptions{K: 1, Epsilon: 1, C: 3, LogBase: 1.5}, rand.New(rand.NewPCG(1, 1))); err == nil ||
		!strings.Contains(err.Error(), "logbase = 1.5") {
		t.Errorf("logbase 1.5: %v, want an error naming it", err)
	}
}
