package linear

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// TestDPSVDDimensionBounds: the feature dimension may be anything in
// [1, n_items], both ends included (one item, one dimension; as many
// dimensions as items), and the result has that many columns.
func TestDPSVDDimensionBounds(t *testing.T) {
	for _, c := range []struct {
		items, dim int
		rows       []RatingRow
	}{
		{1, 1, []RatingRow{{Items: []int{0}, Values: []float64{1}}, {Items: []int{0}, Values: []float64{0.5}}}},
		{3, 3, []RatingRow{{Items: []int{0, 2}, Values: []float64{1, 2}}, {Items: []int{1}, Values: []float64{3}}}},
	} {
		res, err := DPSVD(c.items, c.rows, DPSVDOptions{Dim: c.dim, Sigma: 1, Rand: rand.New(rand.NewPCG(1, 1))})
		if err != nil {
			t.Errorf("n_items = %d, d = %d: %v", c.items, c.dim, err)
			continue
		}
		if len(res.Features) != c.items || len(res.Features[0]) != c.dim {
			t.Errorf("n_items = %d, d = %d: features %d×%d", c.items, c.dim, len(res.Features), len(res.Features[0]))
		}
	}
}

// TestDPSVDSecondMoment: DP-SVD releases C = (1/n)Σ_u x̃_u x̃_uᵀ + noise, x̃_u
// the user's rating vector scaled into the unit ball (the clipping that
// bounds the sensitivity). With a negligible σ its eigenvalues are C's.
// Three users with one rating each (3 clipped to 1, ½ kept, −2 clipped to
// −1) contribute diag(1, ¼, 1); a fourth with ratings (0.6, 0.8) of norm 1
// adds an outer product whose cross term 0.48 couples items 0 and 2. Over
// the 4 users C = [[1 + 0.36, 0, 0.48], [0, 0.25, 0], [0.48, 0, 1 + 0.64]]/4.
func TestDPSVDSecondMoment(t *testing.T) {
	rows := []RatingRow{
		{Items: []int{0}, Values: []float64{3}},
		{Items: []int{1}, Values: []float64{0.5}},
		{Items: []int{2}, Values: []float64{-2}},
		{Items: []int{2, 0}, Values: []float64{0.8, 0.6}},
	}
	res, err := DPSVD(3, rows, DPSVDOptions{Dim: 3, Sigma: 1e-13, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	// The 2×2 block [[1.36, 0.48], [0.48, 1.64]]/4 has eigenvalues
	// (3 ± √(0.28² + 4·0.48²))/8 = (3 ± 1)/8.
	want := []float64{0.5, 0.25, 0.0625}
	for i, w := range want {
		if math.Abs(res.Eigenvalues[i]-w) > 1e-11 {
			t.Errorf("eigenvalues %v, want %v (the clipped second moment)", res.Eigenvalues, want)
			break
		}
	}
}

// TestDPSVDNoiseScale: with all ratings 0 the one released entry of a
// one-item C is pure noise N(0, σ²), and the PSD projection keeps
// max(0, ·): its mean over 4,000 seeds is σ/√(2π) within 5%.
func TestDPSVDNoiseScale(t *testing.T) {
	const sigma, n = 0.7, 4000
	rows := []RatingRow{{Items: []int{0}, Values: []float64{0}}}
	var sum float64
	for s := range n {
		res, err := DPSVD(1, rows, DPSVDOptions{Dim: 1, Sigma: sigma, Rand: rand.New(rand.NewPCG(uint64(s), 9))})
		if err != nil {
			t.Fatal(err)
		}
		sum += res.Eigenvalues[0]
	}
	want := sigma / math.Sqrt(2*math.Pi)
	if got := sum / n; math.Abs(got-want) > 0.05*want {
		t.Errorf("mean of max(0, noise) = %v, want σ/√(2π) = %v", got, want)
	}
}

// TestDPSVDReportValues pins DPSVDReport's numbers to their formulas: on the
// grid, ρ = (Δ₂ + √m·g)²/(2σ²) over the m = n(n+1)/2 released entries of an
// n-item upper triangle (Δ₂ = √2/n_users, g the grid step); the paper's
// ([ADA] §6.3) ρ = (1/n_users)²/(2σ²) with continuous noise.
func TestDPSVDReportValues(t *testing.T) {
	const users, items, sigma = 10, 3, 0.8
	d2 := math.Sqrt2 / users
	g, err := gridStep(sigma)
	if err != nil {
		t.Fatal(err)
	}
	want := (d2 + math.Sqrt(6)*g) * (d2 + math.Sqrt(6)*g) / (2 * sigma * sigma)
	if got := DPSVDReport(users, items, sigma, true).Certified.Value; got < want || got > want*(1+1e-9) {
		t.Errorf("grid ρ = %v, want (Δ₂ + √6·g)²/(2σ²) = %v", got, want)
	}
	r := DPSVDReport(users, items, sigma, false)
	if want := 0.01 / (2 * sigma * sigma); r.Paper == nil || math.Abs(r.Paper.Value-want) > 1e-15*want {
		t.Errorf("paper value %+v, want ρ = (1/n_users)²/(2σ²) = %v", r.Paper, want)
	}
	if s, err := DPSVDSigma(1, 1, bandit.Target{Epsilon: 1, Delta: 1e-5}, false); err != nil || !(s > 0) {
		t.Errorf("one user, one item: σ = %v, %v; want a σ", s, err)
	}
}

// TestDPSVDSigmaTargets: the target's open ends are refused with the values
// named, and a grid σ calibrated to (ε, δ) reports a ρ no larger than the
// target's BS16 ρ over all n(n+1)/2 released entries, and within 1e-12 of it.
func TestDPSVDSigmaTargets(t *testing.T) {
	for _, tg := range []bandit.Target{{Epsilon: 0, Delta: 1e-5}, {Epsilon: 1, Delta: 0}, {Epsilon: 1, Delta: 1}} {
		if s, err := DPSVDSigma(10, 3, tg, false); err == nil || !strings.Contains(err.Error(), "δ in (0, 1)") {
			t.Errorf("target %+v: σ = %v, err = %v; want refused", tg, s, err)
		}
	}
	for _, items := range []int{1, 3, 8} {
		s, err := DPSVDSigma(10, items, bandit.Target{Epsilon: 1, Delta: 1e-5}, true)
		if err != nil {
			t.Fatal(err)
		}
		rho, err := privacy.ZCDPRhoBS(1, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		// Never above the target, and tight: the grid term (Δ + √m·g)² is
		// solved for exactly, so only rounding separates the two (3e-14 here);
		// a calibration that counted the m = n(n+1)/2 released entries
		// wrongly would be off by 1e-11 or more.
		if got := DPSVDReport(10, items, s, true).Certified.Value; got > rho || got < rho*(1-1e-12) {
			t.Errorf("%d items: grid σ = %v reports ρ = %v, want in [ρ(1 − 1e-12), ρ] with the target ρ = %v", items, s, got, rho)
		}
	}
}
