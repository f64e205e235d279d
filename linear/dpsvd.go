package linear

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// DPSVD builds private item features from a user×item rating matrix: the
// DP-SVD mechanism of [ADA] §6.3, with the replacement sensitivity of
// docs/reproduction-decisions.md A16. docs/linear.md §1.11 ([ADA]) "DP-SVD features".
//
// # Mechanism
//
//  1. Clip each user's row to unit L2 norm: r̃_u = r_u/max(1, ‖r_u‖).
//  2. Form the item covariance C = R̃ᵀR̃/n_users (n_items × n_items).
//  3. Add symmetric Gaussian noise: independent N(0, σ²) on every entry of
//     the upper triangle (diagonal included), mirrored below.
//  4. Project onto the PSD cone (negative eigenvalues set to 0) and return
//     the eigenvectors of the d largest eigenvalues: item j's feature is
//     (v_1[j], …, v_d[j]), of norm ≤ 1.
//
// The eigen-decomposition is gonum's mat.EigenSym, O(n_items³): a one-shot
// offline computation (cold path).
//
// # Privacy
//
// Neighbouring: one user's row replaced (n_users is public). Replacing a
// clipped row u by v changes C by (uuᵀ − vvᵀ)/n_users, and for ‖u‖, ‖v‖ ≤ 1
// ‖uuᵀ − vvᵀ‖_F² = ‖u‖⁴ + ‖v‖⁴ − 2(uᵀv)² ≤ 2; the released upper triangle
// (each off-diagonal entry once) has at most this norm too (its squared norm
// is (‖D‖_F² + Σ_i D_ii²)/2 ≤ (2 + 2)/2). So Δ₂ = √2/n_users (A16; [ADA]
// writes 1/n_users, the add/remove value) and the release is a Gaussian
// mechanism: certified μ-GDP with μ = Δ₂/σ. The paper's ρ = (1/n_users)²/(2σ²)
// is shown as invalid. The eigenvectors are post-processing. With Grid each
// entry is snapped and gets secure discrete Gaussian noise
// (noise.GridGaussian): certified ρ-zCDP with ρ = (Δ₂ + √m·g)²/(2σ²), m the
// number of released entries.
//
// Feature privacy composes with the reward privacy of the bandit that uses
// the features (ρ_f + ρ_r) unless the people involved are disjoint; disjoint
// data over the same people is not enough (A16). The caller accounts for it.
func DPSVD(nItems int, rows []RatingRow, opts DPSVDOptions) (*DPSVDResult, error) {
	const name = "dp-svd"
	n := len(rows)
	if n < 1 {
		return nil, fmt.Errorf("%s: no users (rows)", name)
	}
	if nItems < 1 || opts.Dim < 1 || opts.Dim > nItems {
		return nil, fmt.Errorf("%s: feature dimension d = %d must lie in [1, n_items = %d]", name, opts.Dim, nItems)
	}
	sigma := opts.Sigma
	if sigma == 0 {
		s, err := DPSVDSigma(n, nItems, bandit.Target{Epsilon: opts.Epsilon, Delta: opts.Delta, Basis: opts.Basis}, opts.Grid)
		if err != nil {
			return nil, err
		}
		sigma = s
	}
	if err := checkPositive(name, "sigma", sigma); err != nil {
		return nil, err
	}
	if !opts.Grid && opts.Rand == nil {
		return nil, fmt.Errorf("%s: Rand must not be nil without Grid", name)
	}
	m := nItems
	c := make([]float64, m*m) // upper triangle used
	for u, row := range rows {
		if len(row.Items) != len(row.Values) {
			return nil, fmt.Errorf("%s: user %d: %d items but %d values", name, u, len(row.Items), len(row.Values))
		}
		if !allFinite(row.Values) {
			return nil, fmt.Errorf("%s: user %d: non-finite rating", name, u)
		}
		for k, j := range row.Items {
			if j < 0 || j >= m || slices.Contains(row.Items[:k], j) {
				return nil, fmt.Errorf("%s: user %d: item %d outside [0, %d) or repeated", name, u, j, m)
			}
		}
		s := clipFactor(row.Values)
		s2 := s * s
		for a, ia := range row.Items {
			va := row.Values[a] * s2
			for b, ib := range row.Items {
				if ia <= ib {
					c[ia*m+ib] += va * row.Values[b]
				}
			}
		}
	}
	inv := 1 / float64(n)
	var grid *noise.GridGaussian
	if opts.Grid {
		g, err := noise.NewGridGaussian(noise.GridGaussianOptions{Sigma: sigma, Sensitivity: dpsvdSensitivity(n), Source: opts.GridSource})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		grid = g
	}
	for i := range m {
		for j := i; j < m; j++ {
			v := c[i*m+j] * inv
			if grid != nil {
				v = grid.Release(v)
			} else {
				v += sigma * opts.Rand.NormFloat64()
			}
			c[i*m+j], c[j*m+i] = v, v
		}
	}
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(m, c), true) {
		return nil, fmt.Errorf("%s: eigen-decomposition did not converge", name)
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	d := opts.Dim
	res := &DPSVDResult{Features: make([][]float64, m), Eigenvalues: make([]float64, d), Sigma: sigma,
		Report: DPSVDReport(n, nItems, sigma, opts.Grid)}
	for j := range res.Features {
		res.Features[j] = make([]float64, d)
	}
	for k := range d {
		col := m - 1 - k
		res.Eigenvalues[k] = max(vals[col], 0) // PSD projection
		for j := range m {
			res.Features[j][k] = vecs.At(j, col)
		}
	}
	return res, nil
}

// RatingRow is one user's ratings: Values[k] is the rating of item Items[k]
// (items distinct, in [0, n_items)); unlisted items are 0.
type RatingRow struct {
	Items  []int
	Values []float64
}

// DPSVDOptions configures DPSVD.
type DPSVDOptions struct {
	Dim int // number of features d, 1 ≤ d ≤ n_items
	// Sigma is the noise standard deviation on each released entry of C. 0:
	// calibrated by DPSVDSigma to (Epsilon, Delta) on Basis.
	Sigma   float64
	Epsilon float64 // ε_f ([ADA]: {1, 5, 10})
	Delta   float64 // δ (1e-5)
	Basis   string  // bandit.BasisPaper (default) or bandit.BasisCertified
	// Rand supplies the continuous noise (simulation); required unless Grid.
	Rand *rand.Rand
	// Grid uses the secure snapped discrete Gaussian on every entry;
	// GridSource nil reads crypto/rand.
	Grid       bool
	GridSource rand.Source
}

// DPSVDResult is the output of DPSVD.
type DPSVDResult struct {
	Features    [][]float64 // n_items × d; row j is item j's feature vector
	Eigenvalues []float64   // the d largest eigenvalues of the PSD-projected noisy C, descending
	Sigma       float64     // the noise standard deviation used
	Report      privacy.Report
}

// DPSVDDense is DPSVD on a dense n_users × n_items matrix (zeros are
// unrated).
func DPSVDDense(r [][]float64, opts DPSVDOptions) (*DPSVDResult, error) {
	if len(r) == 0 {
		return nil, fmt.Errorf("dp-svd: no users (rows)")
	}
	m := len(r[0])
	rows := make([]RatingRow, len(r))
	for u, row := range r {
		if len(row) != m {
			return nil, fmt.Errorf("dp-svd: row %d has %d items, row 0 has %d", u, len(row), m)
		}
		for j, v := range row {
			if v != 0 {
				rows[u].Items = append(rows[u].Items, j)
				rows[u].Values = append(rows[u].Values, v)
			}
		}
	}
	return DPSVD(m, rows, opts)
}

// dpsvdSensitivity is Δ₂ = √2/n_users (docs/reproduction-decisions.md A16), rounded up.
func dpsvdSensitivity(nUsers int) float64 { return roundUpRel(math.Sqrt2 / float64(nUsers)) }

// DPSVDReport states the privacy of DP-SVD with n_users rows, n_items items
// and noise σ (see DPSVD for the derivation).
func DPSVDReport(nUsers, nItems int, sigma float64, grid bool) privacy.Report {
	delta := dpsvdSensitivity(nUsers)
	r := privacy.Report{
		Mechanism:    fmt.Sprintf("dp-svd (n_users = %d, n_items = %d, σ = %.6g)", nUsers, nItems, sigma),
		Neighbouring: "user-level: one user's row of the rating matrix replaced; n_users public (docs/reproduction-decisions.md A16)",
	}
	if grid {
		m := nItems * (nItems + 1) / 2
		rho, err := gridRho(delta, m, sigma)
		if err != nil {
			rho = math.Inf(1)
		}
		r.Certified = privacy.Guarantee{Notion: privacy.NotionZCDP, Value: rho}
		r.Derivation = fmt.Sprintf("Certified ρ-zCDP, ρ = (Δ₂ + √m·g)²/(2σ²) with Δ₂ = √2/n_users and m = %d released entries: "+
			"replacing one clipped row moves the upper triangle of C by ≤ √2/n_users (A16); each entry is snapped to a grid "+
			"and gets independent discrete Gaussian noise (noise.GridGaussian, CKS20), the snapping costing √m·g; Rényi "+
			"divergences of independent coordinates add. No paper value for discrete noise; [ADA] §6.3 states Δ = 1/n_users, "+
			"which is the add/remove sensitivity (A16). Eigenvectors are post-processing.", m)
		return r
	}
	r.Certified = privacy.Guarantee{Notion: privacy.NotionGDP, Value: roundUpRel(delta / sigma)}
	pd := 1 / float64(nUsers)
	r.Paper = &privacy.Guarantee{Notion: privacy.NotionZCDP, Value: pd * pd / (2 * sigma * sigma)}
	r.PaperValid = false
	r.Derivation = "Certified μ-GDP with μ = Δ₂/σ, Δ₂ = √2/n_users: replacing one user's clipped row u by v changes " +
		"C = R̃ᵀR̃/n_users by (uuᵀ − vvᵀ)/n_users, and ‖uuᵀ − vvᵀ‖_F² = ‖u‖⁴ + ‖v‖⁴ − 2(uᵀv)² ≤ 2 for ‖u‖, ‖v‖ ≤ 1; " +
		"the released upper triangle has at most the same norm. The symmetric noise is a Gaussian mechanism on it " +
		"(exactly μ-GDP, Dong, Roth & Su 2022); PSD projection and eigenvectors are post-processing. Paper: [ADA] §6.3, " +
		"Δ = 1/n_users, i.e. ρ = (1/n_users)²/(2σ²)-zCDP: NOT valid under replacement, where the sensitivity is √2/n_users " +
		"(docs/reproduction-decisions.md A16; 1/n_users is the add/remove value). Feature and reward privacy compose (ρ_f + ρ_r) unless the " +
		"people are disjoint."
	return r
}

// DPSVDSigma returns the entry noise σ with which DP-SVD on n_users rows
// meets the target: on the paper basis σ = Δ₂/sqrt(2ρ_BS(ε, δ)) with the
// corrected Δ₂ = √2/n_users ([ADA]; docs/linear.md §1.11: σ_f = Δ/sqrt(2ρ_f)); on the
// certified basis σ = Δ₂/GDPMu(ε, δ) (or Δ₂/μ for a μ-GDP target). With grid
// the zCDP ρ (BS16 on the paper basis, CKS20 on the certified one) is met
// including the snapping term.
func DPSVDSigma(nUsers, nItems int, t bandit.Target, grid bool) (float64, error) {
	const name = "dp-svd"
	if nUsers < 1 || nItems < 1 {
		return 0, fmt.Errorf("%s: n_users = %d and n_items = %d must be ≥ 1", name, nUsers, nItems)
	}
	delta := dpsvdSensitivity(nUsers)
	certified := t.Basis == bandit.BasisCertified
	if t.Basis != "" && t.Basis != bandit.BasisPaper && !certified {
		return 0, fmt.Errorf("%s: calibration basis %q: must be %q or %q", name, t.Basis, bandit.BasisPaper, bandit.BasisCertified)
	}
	gdpSigma := func(mu float64) float64 {
		return nudgeUp(delta/mu, func(s float64) bool { return roundUpRel(delta/s) <= mu })
	}
	if t.Mu > 0 && certified && !grid {
		return gdpSigma(t.Mu), nil
	}
	eps := t.Epsilon
	if t.Mu > 0 {
		e, err := privacy.GDPEpsilon(t.Mu, t.Delta)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		eps = e
	}
	if !(eps > 0) || !(t.Delta > 0 && t.Delta < 1) {
		return 0, fmt.Errorf("%s: privacy target needs ε > 0 (or gdp μ) and δ in (0, 1): ε = %v, δ = %v", name, eps, t.Delta)
	}
	if certified && !grid {
		mu, err := privacy.GDPMu(eps, t.Delta)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return gdpSigma(mu), nil
	}
	var rho float64
	var err error
	if certified {
		rho, _, err = privacy.ZCDPRho(eps, t.Delta)
	} else {
		rho, err = privacy.ZCDPRhoBS(eps, t.Delta)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if grid {
		return sigmaForGridRho(delta, nItems*(nItems+1)/2, rho)
	}
	return privacy.GaussianSigmaForRho(rho, delta)
}
