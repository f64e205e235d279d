package counting

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"strings"
	"testing"
)

func TestLevels(t *testing.T) {
	for _, tc := range []struct{ T, L int }{
		{1, 1}, {2, 2}, {3, 2}, {4, 3}, {7, 3}, {8, 4}, {9, 4}, {1000, 10}, {1 << 20, 21}, {1<<20 - 1, 20}, {MaxCapacity, 63},
	} {
		if got := Levels(tc.T); got != tc.L {
			t.Errorf("Levels(%d) = %d, want %d", tc.T, got, tc.L)
		}
		// L = ⌈log₂(T+1)⌉ as well (docs/accountant.md §2.5).
		n := 0
		for uint64(1)<<n < uint64(tc.T)+1 {
			n++
		}
		if n != tc.L {
			t.Errorf("⌈log₂(%d+1)⌉ = %d ≠ Levels = %d", tc.T, n, tc.L)
		}
	}
}

// TestOracleT8 reproduces docs/accountant.md T8 (tree mechanism at T = 2^20). The
// values are hard-coded from docs/accountant.md T8 (also committed in
// privacy/testdata/oracles.json); the GLS values are T9. Tolerance 1e-12
// relative (closed forms).
func TestOracleT8(t *testing.T) {
	const T = 1 << 20
	const tol = 1e-12
	for _, eps := range []float64{1, 0.5, 2} {
		c, err := NewLaplace(LaplaceOptions{Capacity: T, Epsilon: eps}, SimNoise(pcg(1)))
		if err != nil {
			t.Fatal(err)
		}
		if c.Levels() != 21 {
			t.Fatalf("L = %d, want 21", c.Levels())
		}
		if !relClose(c.Scale(), 21/eps, tol) {
			t.Errorf("ε=%v: b = %v, want 21/ε = %v", eps, c.Scale(), 21/eps)
		}
		if !relClose(c.NodeVariance(), 882/(eps*eps), tol) {
			t.Errorf("ε=%v: node variance = %v, want 882/ε² = %v", eps, c.NodeVariance(), 882/(eps*eps))
		}
		maxPop, sumPop := 0, 0
		var maxVar float64
		var sumVar neumaier
		for s := 1; s <= T; s++ {
			p := bits.OnesCount(uint(s))
			maxPop = max(maxPop, p)
			sumPop += p
			v := c.Variance(s)
			maxVar = max(maxVar, v)
			sumVar.add(v)
		}
		if maxPop != 20 || sumPop != 10*T+1 { // mean popcount 10 + 2⁻²⁰
			t.Errorf("popcount max/sum = %d/%d, want 20/%d", maxPop, sumPop, 10*T+1)
		}
		// Laplace prefix variance at ε = 1: max 17640, mean 8820.00084114075.
		wantMax, wantMean := 17640/(eps*eps), 8820.00084114075/(eps*eps)
		if !relClose(maxVar, wantMax, tol) {
			t.Errorf("ε=%v: max prefix variance %v, want %v", eps, maxVar, wantMax)
		}
		if mean := sumVar.sum() / T; !relClose(mean, wantMean, tol) {
			t.Errorf("ε=%v: mean prefix variance %.15g, want %.15g", eps, mean, wantMean)
		}
	}
	// Gaussian tree under ρ-zCDP: max prefix variance 20·21/(2ρ) = 210/ρ.
	for _, rho := range []float64{0.5, 0.01, 3} {
		c, err := NewGaussian(GaussianOptions{Capacity: T, Rho: rho}, SimNoise(pcg(1)))
		if err != nil {
			t.Fatal(err)
		}
		maxVar := 0.0
		for s := 1; s <= T; s++ {
			maxVar = max(maxVar, c.Variance(s))
		}
		if !relClose(maxVar, 210/rho, tol) {
			t.Errorf("ρ=%v: max prefix variance %v, want 210/ρ = %v", rho, maxVar, 210/rho)
		}
		if !relClose(c.Variance(T-1), 210/rho, tol) || !relClose(c.Variance(T), 21/(2*rho), tol) {
			t.Errorf("ρ=%v: Var(T−1)=%v, Var(T)=%v", rho, c.Variance(T-1), c.Variance(T))
		}
	}
}

// TestNodesReleased checks, with leaves x_i = 2^(i−1) (so an exact node sum
// names its leaves) and no noise, exactly which nodes are released and what
// Sum adds, at capacity 8 = 2³ (L = 4: the root is released and used at t = 8).
func TestNodesReleased(t *testing.T) {
	for _, tc := range []struct {
		gls  bool
		want []float64
	}{
		// plain: [1], [1,2], [3], [1..4], [5], [5,6], [7], [1..8]
		{false, []float64{1, 3, 4, 15, 16, 48, 64, 255}},
		// GLS: every node, bottom-up at its completion time
		{true, []float64{1, 2, 3, 4, 8, 12, 15, 16, 32, 48, 64, 128, 192, 240, 255}},
	} {
		nz := newRec(nil)
		c, err := NewLaplace(LaplaceOptions{Capacity: 8, Epsilon: 1, Sensitivity: 128, GLS: tc.gls}, nz)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			x := float64(uint(1) << i)
			mustAdd(t, c, x)
			if got, want := c.Sum(), float64(uint(1)<<(i+1)-1); got != want {
				t.Errorf("gls=%v t=%d: noiseless Sum = %v, want %v", tc.gls, i+1, got, want)
			}
		}
		if !slices.Equal(nz.rec.exact, tc.want) {
			t.Errorf("gls=%v: released exact sums %v, want %v", tc.gls, nz.rec.exact, tc.want)
		}
		// Full at exactly T = 2³; one more Add errors and changes nothing.
		sum := c.Sum()
		err = c.Add(1)
		if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "Capacity = 8") {
			t.Errorf("gls=%v: Add beyond capacity: err = %v, want ErrFull naming Capacity", tc.gls, err)
		}
		if err := c.AddBatch(1, 1); !errors.Is(err, ErrFull) {
			t.Errorf("AddBatch beyond capacity: %v", err)
		}
		if c.Count() != 8 || c.Sum() != sum || len(nz.rec.exact) != len(tc.want) {
			t.Errorf("gls=%v: failed Add changed the counter", tc.gls)
		}
	}
}

// TestPlainSumUsesPopcountNodes: with each release adding exactly +1, the
// plain Sum is off by popcount(t), for capacities 2^k, 2^k−1, 2^k+1 and 1,
// filled exactly to capacity.
func TestPlainSumUsesPopcountNodes(t *testing.T) {
	for _, T := range []int{1, 2, 7, 8, 9, 16, 100, 1024} {
		c, err := NewGaussian(GaussianOptions{Capacity: T, Sigma: 1}, newRec(func() float64 { return 1 }))
		if err != nil {
			t.Fatal(err)
		}
		truth := 0.0
		for s := 1; s <= T; s++ {
			x := float64(s%3) / 2
			mustAdd(t, c, x)
			truth += x
			if got, want := c.Sum()-truth, float64(bits.OnesCount(uint(s))); math.Abs(got-want) > 1e-9 {
				t.Fatalf("T=%d t=%d: Sum−truth = %v, want popcount = %v", T, s, got, want)
			}
		}
		if err := c.Add(0); !errors.Is(err, ErrFull) {
			t.Errorf("T=%d: Add beyond capacity: %v", T, err)
		}
	}
}

// TestNoiseDrawnOnce: Sum is deterministic and draws nothing; each leaf
// causes exactly one release (plain) or trailingZeros(t)+1 releases (GLS).
func TestNoiseDrawnOnce(t *testing.T) {
	for _, gls := range []bool{false, true} {
		r := pcg(7)
		nz := newRec(func() float64 { return r.NormFloat64() })
		c, err := NewLaplace(LaplaceOptions{Capacity: 100, Epsilon: 1, GLS: gls}, nz)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for s := 1; s <= 100; s++ {
			mustAdd(t, c, 0.5)
			if gls {
				want += bits.TrailingZeros(uint(s)) + 1
			} else {
				want++
			}
			a := c.Sum()
			for range 3 {
				if b := c.Sum(); b != a {
					t.Fatalf("gls=%v t=%d: Sum changed between calls: %v then %v", gls, s, a, b)
				}
			}
			if len(nz.rec.exact) != want {
				t.Fatalf("gls=%v t=%d: %d releases, want %d", gls, s, len(nz.rec.exact), want)
			}
		}
	}
}

func TestAddRange(t *testing.T) {
	c, err := NewLaplace(LaplaceOptions{Capacity: 10, Epsilon: 1}, SimNoise(pcg(1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{-1e-12, 1 + 1e-12, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := c.Add(x); !errors.Is(err, ErrRange) {
			t.Errorf("Add(%v) on [0,1]: err = %v, want ErrRange", x, err)
		}
	}
	for _, x := range []float64{0, 1, 0.25} {
		mustAdd(t, c, x)
	}
	s, err := NewGaussian(GaussianOptions{Capacity: 10, Rho: 1, Lower: -1, Sensitivity: 2}, SimNoise(pcg(1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{-1, 1, 0} {
		mustAdd(t, s, x)
	}
	if err := s.Add(1.0001); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "[-1, 1]") {
		t.Errorf("Add(1.0001) on [−1,1]: %v", err)
	}
	// AddBatch: a sum of n values in [0, 1] as one leaf ([MT] Alg 2; docs/tree-based.md §1.8).
	if err := c.AddBatch(7, 7); err != nil {
		t.Errorf("AddBatch(7, 7): %v", err)
	}
	if c.Count() != 4 {
		t.Errorf("Count after 3 Adds and one AddBatch = %d, want 4", c.Count())
	}
	for _, tc := range []struct {
		sum  float64
		n    int
		want error
	}{{7.5, 7, ErrRange}, {-0.5, 3, ErrRange}, {1, 0, ErrInvalid}, {math.NaN(), 2, ErrRange}} {
		if err := c.AddBatch(tc.sum, tc.n); !errors.Is(err, tc.want) {
			t.Errorf("AddBatch(%v, %d) = %v, want %v", tc.sum, tc.n, err, tc.want)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	nz := SimNoise(pcg(1))
	lap := []struct {
		o     LaplaceOptions
		field string
	}{
		{LaplaceOptions{Capacity: 0, Epsilon: 1}, "Capacity"},
		{LaplaceOptions{Capacity: -5, Epsilon: 1}, "Capacity"},
		{LaplaceOptions{Capacity: MaxCapacity + 1, Epsilon: 1}, "Capacity"},
		{LaplaceOptions{Capacity: 8}, "Epsilon"},
		{LaplaceOptions{Capacity: 8, Epsilon: -1}, "Epsilon"},
		{LaplaceOptions{Capacity: 8, Epsilon: math.NaN()}, "Epsilon"},
		{LaplaceOptions{Capacity: 8, Epsilon: math.Inf(1)}, "Epsilon"},
		{LaplaceOptions{Capacity: 8, Epsilon: 1, Sensitivity: -1}, "Sensitivity"},
		{LaplaceOptions{Capacity: 8, Epsilon: 1, Sensitivity: math.Inf(1)}, "Sensitivity"},
		{LaplaceOptions{Capacity: 8, Epsilon: 1, Lower: math.NaN()}, "Lower"},
		{LaplaceOptions{Capacity: 8, Epsilon: 1, Lower: math.Inf(-1)}, "Lower"},
	}
	for _, tc := range lap {
		_, err := NewLaplace(tc.o, nz)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("NewLaplace(%+v): err = %v, want ErrInvalid naming %s", tc.o, err, tc.field)
		}
	}
	gau := []struct {
		o     GaussianOptions
		field string
	}{
		{GaussianOptions{Capacity: 0, Rho: 1}, "Capacity"},
		{GaussianOptions{Capacity: 8}, "exactly one of Rho, Mu, Sigma"},
		{GaussianOptions{Capacity: 8, Rho: 1, Sigma: 2}, "exactly one of Rho, Mu, Sigma"},
		{GaussianOptions{Capacity: 8, Rho: -1}, "Rho"},
		{GaussianOptions{Capacity: 8, Mu: math.Inf(1)}, "Mu"},
		{GaussianOptions{Capacity: 8, Sigma: math.NaN()}, "Sigma"},
		{GaussianOptions{Capacity: 8, Sigma: 1e-300}, "Sigma"}, // ρ overflows
		{GaussianOptions{Capacity: 8, Rho: 1, Sensitivity: math.NaN()}, "Sensitivity"},
	}
	for _, tc := range gau {
		_, err := NewGaussian(tc.o, nz)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("NewGaussian(%+v): err = %v, want ErrInvalid naming %q", tc.o, err, tc.field)
		}
	}
	if _, err := NewLaplace(LaplaceOptions{Capacity: 8, Epsilon: 1}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil noise: %v", err)
	}
	if _, err := NewGaussian(GaussianOptions{Capacity: 8, Rho: 1}, SimNoise(nil)); !errors.Is(err, ErrInvalid) {
		t.Errorf("SimNoise(nil): %v", err)
	}
}

func TestCalibration(t *testing.T) {
	// b for a target ε; σ for a target ρ or μ (T = 1000: L = 10).
	b, err := ScaleForEpsilon(1000, 2, 0.5)
	if err != nil || !relClose(b, 40, 1e-14) || b < 40 {
		t.Errorf("ScaleForEpsilon = %v, %v; want 40 (never below)", b, err)
	}
	s, err := SigmaForRho(1000, 1, 0.2)
	if err != nil || !relClose(s, 5, 1e-14) || s < 5 {
		t.Errorf("SigmaForRho = %v, %v; want √(10/0.4) = 5", s, err)
	}
	s, err = SigmaForMu(1000, 1, math.Sqrt(10)/4)
	if err != nil || !relClose(s, 4, 1e-14) {
		t.Errorf("SigmaForMu = %v, %v; want 4", s, err)
	}
	if _, err := SigmaForRho(0, 1, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("SigmaForRho(capacity 0): %v", err)
	}
	if _, err := ScaleForEpsilon(8, 1, 0); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Epsilon") {
		t.Errorf("ScaleForEpsilon(ε=0): %v", err)
	}
	// The three Gaussian parametrisations agree.
	for _, o := range []GaussianOptions{{Capacity: 1000, Rho: 0.2}, {Capacity: 1000, Mu: math.Sqrt(0.4)}, {Capacity: 1000, Sigma: 5}} {
		c, err := NewGaussian(o, SimNoise(pcg(1)))
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(c.Scale(), 5, 1e-14) || !relClose(c.Rho(), 0.2, 1e-14) || !relClose(c.Mu(), math.Sqrt(0.4), 1e-14) {
			t.Errorf("%+v: σ=%v ρ=%v μ=%v, want 5, 0.2, √0.4", o, c.Scale(), c.Rho(), c.Mu())
		}
		// Never under-report: ρ·2σ² ≥ LΔ² in float arithmetic.
		if c.Rho()*2*c.Scale()*c.Scale() < 10 {
			t.Errorf("%+v: ρ=%v σ=%v under-reports", o, c.Rho(), c.Scale())
		}
	}
	// The noise source is asked for the counter's own scale and sensitivity.
	nz := newRec(nil)
	if _, err := NewLaplace(LaplaceOptions{Capacity: 1 << 20, Epsilon: 1, Sensitivity: 3}, nz); err != nil {
		t.Fatal(err)
	}
	if nz.rec.kind != "laplace" || !relClose(nz.rec.scale, 63, 1e-14) || nz.rec.delta != 3 {
		t.Errorf("Noise.Laplace called with %+v, want b = 63, Δ = 3", *nz.rec)
	}
}

func TestVariancePanics(t *testing.T) {
	c, _ := NewLaplace(LaplaceOptions{Capacity: 8, Epsilon: 1}, SimNoise(pcg(1)))
	if c.Variance(0) != 0 {
		t.Errorf("Variance(0) = %v", c.Variance(0))
	}
	for _, s := range []int{-1, 9} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Variance(%d) did not panic", s)
				}
			}()
			c.Variance(s)
		}()
	}
}

func TestZeroAllocs(t *testing.T) {
	for _, gls := range []bool{false, true} {
		for _, gauss := range []bool{false, true} {
			var c *Counter
			var err error
			if gauss {
				c, err = NewGaussian(GaussianOptions{Capacity: 1 << 16, Rho: 1, GLS: gls}, SimNoise(pcg(3)))
			} else {
				c, err = NewLaplace(LaplaceOptions{Capacity: 1 << 16, Epsilon: 1, GLS: gls}, SimNoise(pcg(3)))
			}
			if err != nil {
				t.Fatal(err)
			}
			var sink float64
			allocs := testing.AllocsPerRun(5000, func() {
				if err := c.Add(0.5); err != nil {
					panic(err)
				}
				sink += c.Sum()
			})
			if allocs != 0 {
				t.Errorf("gauss=%v gls=%v: Add+Sum allocates %v times per call", gauss, gls, allocs)
			}
			_ = sink
		}
	}
}
