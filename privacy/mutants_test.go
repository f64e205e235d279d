package privacy

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// Tests that kill mutants gremlins found surviving in this package
// (docs/mutation-testing.md). Each pins an exact value, a boundary or a
// minimality property.

// TestSubsampledGaussianSigmaIsMinimalBelowHalf pins the search of
// SubsampledGaussianSigma when the target is met with σ < 1/2 (a large ε):
// the returned σ must be the smallest that meets the target up to the
// bisection's resolution, not merely a feasible one (such as the first
// bracket 1/2). The check: ε(σ) ≤ target and ε(σ·(1−2⁻³⁰)) > target.
func TestSubsampledGaussianSigmaIsMinimalBelowHalf(t *testing.T) {
	const q, steps, eps, delta = 0.5, 1, 40.0, 1e-5
	sigma, conv, err := SubsampledGaussianSigma(q, steps, eps, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(sigma > 0 && sigma < 0.5) {
		t.Fatalf("σ = %v, want a value in (0, 1/2) for ε = %v", sigma, eps)
	}
	if conv.Epsilon > eps {
		t.Fatalf("σ = %v gives ε = %v above the target %v", sigma, conv.Epsilon, eps)
	}
	var o *SGMOptions
	smaller := sigma * (1 - 0x1p-30)
	c, err := SubsampledGaussianCurve(q, smaller, o.orders())
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := o.convert(c.Scale(steps), delta); err == nil && cs.Epsilon <= eps {
		t.Errorf("σ = %v is not minimal: σ·(1−2⁻³⁰) = %v already gives ε = %v ≤ %v", sigma, smaller, cs.Epsilon, eps)
	}
	if math.IsNaN(conv.Epsilon) {
		t.Error("NaN ε")
	}
}

// TestFilterCanSpendAgreesWithSpend: CanSpend(x) is exactly whether
// Spend(x) would succeed, and it records nothing: for each notion, on a
// sequence of steps that fit, exceed, are invalid or are +Inf, CanSpend's
// answer equals the outcome of Spend on a twin filter, and the filter that
// was only asked keeps spent 0.
func TestFilterCanSpendAgreesWithSpend(t *testing.T) {
	for _, n := range []Notion{NotionGDP, NotionZCDP, NotionPure} {
		asked, err := NewFilter(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		twin, _ := NewFilter(n, 1)
		for i, x := range []float64{0.5, 0, 2, -0.1, math.NaN(), math.Inf(1), 0.5, 0.75, 1e-9} {
			can := asked.CanSpend(x)
			did := twin.Spend(x) == nil
			if can != did {
				t.Errorf("%s step %d (x = %v): CanSpend = %v but Spend succeeded = %v", n, i, x, can, did)
			}
			// keep the two in step: the asked filter spends what the twin did
			if did {
				if err := asked.Spend(x); err != nil {
					t.Fatalf("%s: %v", n, err)
				}
			}
		}
		fresh, _ := NewFilter(n, 1)
		for _, x := range []float64{0.3, 1, 5} {
			fresh.CanSpend(x)
		}
		if fresh.Spent() != 0 || fresh.Steps() != 0 {
			t.Errorf("%s: CanSpend recorded something: spent %v, %d steps", n, fresh.Spent(), fresh.Steps())
		}
		if !fresh.CanSpend(1) || fresh.CanSpend(math.Nextafter(1, 2)) {
			t.Errorf("%s: CanSpend at the budget edge: CanSpend(1) = %v, CanSpend(1+ulp) = %v", n, fresh.CanSpend(1), fresh.CanSpend(math.Nextafter(1, 2)))
		}
	}
}

// TestLaplaceEpsilonZeroScale: a Laplace "mechanism" of scale 0 adds no
// noise and has no finite ε: LaplaceEpsilon(Δ, 0) is an error, not +Inf or 0.
func TestLaplaceEpsilonZeroScale(t *testing.T) {
	if e, err := LaplaceEpsilon(1, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("LaplaceEpsilon(1, 0) = %v, %v; want ErrInvalid", e, err)
	}
	if e, err := LaplaceEpsilon(1, math.SmallestNonzeroFloat64); err != nil || !(e > 0) {
		t.Errorf("LaplaceEpsilon(1, 5e-324) = %v, %v; want a positive ε (+Inf allowed)", e, err)
	}
}

// TestFilterSpentRoundedUp: a GDP filter's Spent() is √(Σμᵢ²) rounded up,
// never down: Spent()² ≥ Σμᵢ² exactly (big.Rat over the float steps) after
// every one of 200 steps of irregular sizes, and Spent() exceeds the exact
// value by less than 1e-15 relative. The same for zCDP and pure filters,
// whose Spent() is Σxᵢ rounded up.
func TestFilterSpentRoundedUp(t *testing.T) {
	for _, n := range []Notion{NotionGDP, NotionZCDP, NotionPure} {
		f, err := NewFilter(n, 1000)
		if err != nil {
			t.Fatal(err)
		}
		exact := new(big.Rat)
		x := 0.0123456789
		for i := 0; i < 200; i++ {
			x = math.Mod(x*1.618033988749895+0.0710678, 0.9) + 1e-3
			if err := f.Spend(x); err != nil {
				t.Fatal(err)
			}
			r := new(big.Rat).SetFloat64(x)
			if n == NotionGDP {
				r.Mul(r, r)
			}
			exact.Add(exact, r)
			got := new(big.Rat).SetFloat64(f.Spent())
			ef, _ := exact.Float64()
			if n == NotionGDP {
				got.Mul(got, got)
			}
			if got.Cmp(exact) < 0 {
				t.Fatalf("%s step %d: Spent() = %v is below the exact spent (rounded down)", n, i, f.Spent())
			}
			if g, _ := got.Float64(); g > ef*(1+1e-15) {
				t.Fatalf("%s step %d: Spent() = %v, more than 1e-15 above the exact %v", n, i, f.Spent(), ef)
			}
		}
	}
}

// TestLaplaceScaleAndPureComposeExact pins the pure-DP helpers to exact
// values: LaplaceScale(Δ, ε) = Δ/ε (2 for Δ = 1, ε = 1/2; 1/2 for Δ = 2,
// ε = 4), rounded up where Δ/ε is not a float (b·ε ≥ Δ exactly for Δ = 1,
// ε = 3); PureCompose adds every component (the first included), rounded
// up: 1/2 + 1/4 + 1 = 7/4, and (1, 0) gives 1.
func TestLaplaceScaleAndPureComposeExact(t *testing.T) {
	for _, tc := range []struct{ d, eps, want float64 }{{1, 0.5, 2}, {2, 4, 0.5}, {3, 1.5, 2}} {
		if b, err := LaplaceScale(tc.d, tc.eps); err != nil || b != tc.want {
			t.Errorf("LaplaceScale(%v, %v) = %v, %v; want %v", tc.d, tc.eps, b, err, tc.want)
		}
	}
	b, err := LaplaceScale(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if p := new(big.Rat).Mul(new(big.Rat).SetFloat64(b), big.NewRat(3, 1)); p.Cmp(big.NewRat(1, 1)) < 0 || b > 1.0/3*(1+1e-15) {
		t.Errorf("LaplaceScale(1, 3) = %v: want the float just at or above 1/3", b)
	}
	for _, tc := range []struct {
		eps  []float64
		want float64
	}{{[]float64{0.5, 0.25, 1}, 1.75}, {[]float64{1, 0}, 1}, {[]float64{0, 1}, 1}, {[]float64{2}, 2}} {
		if got, err := PureCompose(tc.eps...); err != nil || got != tc.want {
			t.Errorf("PureCompose(%v) = %v, %v; want %v", tc.eps, got, err, tc.want)
		}
	}
	third := 1.0 / 3
	got, err := PureCompose(third, third, third)
	if err != nil {
		t.Fatal(err)
	}
	exact := new(big.Rat).Mul(new(big.Rat).SetFloat64(third), big.NewRat(3, 1))
	if new(big.Rat).SetFloat64(got).Cmp(exact) < 0 || got > 1+1e-15 {
		t.Errorf("PureCompose(1/3, 1/3, 1/3) = %v, want ≥ the exact sum %s and within 1e-15", got, exact.FloatString(20))
	}
}

// TestZCDPComposeAndGroupExact: zCDP composes additively, every component
// counted (ρ = 1/2 + 1/4 = 3/4; (1, 0) gives 1), and a group of k
// individuals costs k²ρ (Bun & Steinke 2016, Prop 27): ρ = 1/2, k = 3 gives
// 9/2 exactly; ρ = 0.1, k = 2 gives the float at or just above 0.4.
func TestZCDPComposeAndGroupExact(t *testing.T) {
	for _, tc := range []struct {
		rho  []float64
		want float64
	}{{[]float64{0.5, 0.25}, 0.75}, {[]float64{1, 0}, 1}, {[]float64{0.25, 0.25, 0.5}, 1}} {
		if got, err := ZCDPCompose(tc.rho...); err != nil || got != tc.want {
			t.Errorf("ZCDPCompose(%v) = %v, %v; want %v", tc.rho, got, err, tc.want)
		}
	}
	if got, err := ZCDPGroup(0.5, 3); err != nil || got != 4.5 {
		t.Errorf("ZCDPGroup(0.5, 3) = %v, %v; want 4.5", got, err)
	}
	got, err := ZCDPGroup(0.1, 2)
	if err != nil {
		t.Fatal(err)
	}
	exact := new(big.Rat).Mul(new(big.Rat).SetFloat64(0.1), big.NewRat(4, 1))
	if new(big.Rat).SetFloat64(got).Cmp(exact) < 0 || got > 0.4*(1+1e-15) {
		t.Errorf("ZCDPGroup(0.1, 2) = %v, want the float at or just above 4·0.1 = %s", got, exact.FloatString(20))
	}
}
