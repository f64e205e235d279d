package counting

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/noise"
)

// Tests that kill mutants gremlins found surviving in this package
// (docs/mutation-testing.md). Each pins a boundary or an exact value.

// TestSimNoiseRejectsZeroScales pins the boundaries of SimNoise's checks:
// a node mechanism with scale 0 adds no noise, and one with sensitivity 0
// has nothing to calibrate to, so b = 0, σ = 0 and Δ = 0 are all refused
// (b > 0, σ > 0 and Δ > 0 are strict), while the smallest positive values
// are accepted.
func TestSimNoiseRejectsZeroScales(t *testing.T) {
	nz := SimNoise(rand.New(rand.NewPCG(1, 2)))
	tiny := math.SmallestNonzeroFloat64
	for _, tc := range []struct {
		what     string
		lap      bool
		scale, d float64
		ok       bool
	}{
		{"Laplace b = 0", true, 0, 1, false},
		{"Laplace Δ = 0", true, 1, 0, false},
		{"Laplace b, Δ tiny", true, tiny, tiny, true},
		{"Gaussian σ = 0", false, 0, 1, false},
		{"Gaussian Δ = 0", false, 1, 0, false},
		{"Gaussian σ, Δ tiny", false, tiny, tiny, true},
	} {
		var err error
		if tc.lap {
			_, err = nz.Laplace(tc.scale, tc.d)
		} else {
			_, err = nz.Gaussian(tc.scale, tc.d)
		}
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want accepted", tc.what, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", tc.what, err)
		}
	}
}

// TestSimNoiseAddsTheSamplersDraw pins what the simulation mechanisms
// release: x + noise.Laplace(r, b) and x + noise.Gaussian(r, σ) exactly, draw
// for draw on a replica of the generator (seeded simulations reproduce bit
// for bit; x − Z would have the same law but not the same runs).
func TestSimNoiseAddsTheSamplersDraw(t *testing.T) {
	nz := SimNoise(rand.New(rand.NewPCG(7, 8)))
	rep := rand.New(rand.NewPCG(7, 8))
	lap, err := nz.Laplace(0.75, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []float64{0, 1, -2.5, 10} {
		if got, want := lap.Release(x), x+noise.Laplace(rep, 0.75); got != want {
			t.Fatalf("Laplace release %d of %v = %v, want x + Laplace draw = %v", i, x, got, want)
		}
	}
	g, err := nz.Gaussian(1.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []float64{0, 1, -2.5, 10} {
		if got, want := g.Release(x), x+noise.Gaussian(rep, 1.5); got != want {
			t.Fatalf("Gaussian release %d of %v = %v, want x + Gaussian draw = %v", i, x, got, want)
		}
	}
}

// TestCheckTreeBoundaries pins the edges of the options check shared by both
// tree mechanisms: the largest capacity 2^62 is valid and 2^62+1 is not; the
// node sums' bound Capacity·max(|Lower|, |Lower+Sensitivity|) ≤ 1e300 is
// inclusive, and it is the product with the capacity and the upper end
// Lower+Sensitivity that count; a Lower+Sensitivity that overflows is
// refused by its own check, with its own message.
func TestCheckTreeBoundaries(t *testing.T) {
	for _, tc := range []struct {
		capacity     int
		sens, lower  float64
		ok           bool
		wantInErrMsg string
	}{
		{MaxCapacity, 1, 0, true, ""},
		{MaxCapacity + 1, 1, 0, false, "Capacity"},
		{1, 1e300, 0, true, ""},                    // m = 1e300 exactly: allowed
		{2, 1e300, 0, false, "≤ 1e300"},            // m = 2e300
		{2, 5e299, 5e299, false, "≤ 1e300"},        // |Lower+Sensitivity| = 1e300 is the max
		{1, 5e299, 5e299, true, ""},                // m = 1e300
		{1, 1e308, 1e308, false, "must be finite"}, // Lower+Sensitivity = +Inf
	} {
		err := checkTree(tc.capacity, tc.sens, tc.lower)
		if tc.ok && err != nil {
			t.Errorf("checkTree(%d, %g, %g) = %v, want nil", tc.capacity, tc.sens, tc.lower, err)
		}
		if !tc.ok {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantInErrMsg) {
				t.Errorf("checkTree(%d, %g, %g) = %v, want ErrInvalid mentioning %q", tc.capacity, tc.sens, tc.lower, err, tc.wantInErrMsg)
			}
		}
	}
}

// TestGaussianGivenSigmaExactCost pins the cost of a Gaussian tree built
// from its σ with a sensitivity Δ ≠ 1: ρ = LΔ²/(2σ²) and μ = √L·Δ/σ, each
// enlarged by the package's safety factor (L = 3 levels at T = 5, Δ = 2,
// σ = 3 give ρ = 2/3 and μ = 2√3/3). A σ so large that ρ underflows to 0
// is refused: a tree never claims to cost nothing.
func TestGaussianGivenSigmaExactCost(t *testing.T) {
	nz := SimNoise(rand.New(rand.NewPCG(3, 4)))
	c, err := NewGaussian(GaussianOptions{Capacity: 5, Sensitivity: 2, Sigma: 3}, nz)
	if err != nil {
		t.Fatal(err)
	}
	L, d, s := 3.0, 2.0, 3.0
	if want := L * d * d / (2 * s * s) * safety; c.Rho() != want {
		t.Errorf("ρ = %v, want LΔ²/(2σ²)·safety = %v", c.Rho(), want)
	}
	if want := math.Sqrt(L) * d / s * safety; c.Mu() != want {
		t.Errorf("μ = %v, want √L·Δ/σ·safety = %v", c.Mu(), want)
	}
	if math.Abs(c.Rho()-2.0/3) > 1e-12 || math.Abs(c.Mu()-2*math.Sqrt(3)/3) > 1e-12 {
		t.Errorf("ρ = %v, μ = %v, want 2/3 and 2√3/3", c.Rho(), c.Mu())
	}
	if _, err := NewGaussian(GaussianOptions{Capacity: 5, Sensitivity: 1, Sigma: 1e300}, nz); !errors.Is(err, ErrInvalid) {
		t.Errorf("σ = 1e300 (ρ underflows to 0): error %v, want ErrInvalid", err)
	}
}

// TestSecureNoiseBounds pins the grid mechanisms' limits in SecureNoise:
// the ratio scale/Δ (not scale·Δ) is bounded by 2^36 inclusive, the error
// names the ratio, and the Laplace node's ε is Δ/b rounded down (exact when
// Δ/b is a float: b = 2, Δ = 1 gives ε = 1/2 exactly, not one ulp less).
func TestSecureNoiseBounds(t *testing.T) {
	nz := SecureNoise(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		b, d float64
		ok   bool
	}{
		{0x1p36, 1, true},
		{0x1p35, 0.5, true},                       // b/Δ = 2^36
		{0x1p36, 0.5, false},                      // b/Δ = 2^37 (b·Δ = 2^35 would pass)
		{math.Nextafter(0x1p36, 1e300), 1, false}, // just above 2^36
	} {
		for _, lap := range []bool{true, false} {
			var err error
			if lap {
				_, err = nz.Laplace(tc.b, tc.d)
			} else {
				_, err = nz.Gaussian(tc.b, tc.d)
			}
			switch {
			case tc.ok && err != nil:
				t.Errorf("laplace=%v scale %v, Δ %v: %v, want accepted", lap, tc.b, tc.d, err)
			case !tc.ok && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprint(tc.b/tc.d))):
				t.Errorf("laplace=%v scale %v, Δ %v: error %v, want ErrInvalid naming the ratio %v", lap, tc.b, tc.d, err, tc.b/tc.d)
			}
		}
	}
	m, err := nz.Laplace(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if eps := m.(*noise.GridLaplace).Epsilon(); eps != 0.5 {
		t.Errorf("node ε for b = 2, Δ = 1 is %v, want exactly 0.5", eps)
	}
	m, err = nz.Laplace(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	eps := m.(*noise.GridLaplace).Epsilon()
	if prod := new(big.Rat).Mul(new(big.Rat).SetFloat64(eps), big.NewRat(3, 1)); prod.Cmp(big.NewRat(1, 1)) > 0 || eps != math.Nextafter(1.0/3, 0) && eps != 1.0/3 {
		t.Errorf("node ε for b = 3, Δ = 1 is %v: want the largest float with 3ε ≤ 1", eps)
	}
}

// TestAddBatchOfOne: a batch of n = 1 value is a leaf like Add's (accepted
// in [Lower, Lower+Δ]); n = 0 is refused with ErrInvalid.
func TestAddBatchOfOne(t *testing.T) {
	c, err := NewLaplace(LaplaceOptions{Capacity: 4, Epsilon: 1}, SimNoise(rand.New(rand.NewPCG(9, 9))))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddBatch(0.5, 1); err != nil {
		t.Errorf("AddBatch(0.5, 1) = %v, want accepted", err)
	}
	if err := c.AddBatch(0, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("AddBatch(0, 0) = %v, want ErrInvalid", err)
	}
	if c.Count() != 1 {
		t.Errorf("count %d after one batch, want 1", c.Count())
	}
}
