package linear

import (
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// Privacy reports and noise calibration of the AdaPrivate family ([ADA]
// Thm 6, Eqs. 2.6–2.8, 3.6, §6.1; [ADA]; docs/linear.md §1.11; docs/reproduction-decisions.md A12, A14, A15).
//
// Four mechanisms, by option:
//
//	event-level, continuous noise   certified μ-GDP, μ = 1/σ;  paper ρ = 1/(2σ²)-zCDP (valid)
//	amp (Poisson rate q)            certified exact subsampled-Gaussian RDP curve; paper Eq. 3.6 (INVALID, A12)
//	grid (secure discrete noise)    certified ρ = (Δ + √d·g)²/(2σ²)-zCDP; no paper value
//	user-level clipping (C)         certified ρ = Δ_u²/(2σ²)-zCDP, Δ_u = 2C or C; paper C²/(2σ²) (INVALID, A15)
//
// The derivations are in the Derivation strings below and in the AdaPrivate
// doc comment.

// AmpOrders returns the Rényi orders of [ADA] §3.2 and of docs/linear.md §1.11's
// σ_amp rule: {2, …, 6, 8, 16, 32, 64}. A fresh slice is returned.
func AmpOrders() []float64 { return []float64{2, 3, 4, 5, 6, 8, 16, 32, 64} }

// Eq36RDP returns the right-hand side of [ADA] Eq. 3.6 at integer order
// α ≥ 2:
//
//	(1/(α−1))·ln(1 + C(α,2)·2q²/σ² + Σ_{j=3..α} C(α,j)·(2q²)^{j/2}/σ^j).
//
// It is shown as the paper's value of AdaPrivate-TS-Amp and is NOT a valid
// RDP bound: it drops the exp((j²−j)/(2σ²)) factors of the exact formula
// (docs/reproduction-decisions.md A12; at q = 0.3, σ = 1, α = 8 it gives 0.372 where the exact
// value is 2.63). Never calibrate with it. The sum is evaluated in log space.
func Eq36RDP(q, sigma float64, alpha int) float64 {
	if alpha < 2 {
		panic(fmt.Sprintf("linear: Eq36RDP order %d, want an integer ≥ 2", alpha))
	}
	if q == 0 {
		return 0
	}
	lr := math.Log(math.Sqrt2 * q / sigma) // ln((2q²)^{1/2}/σ)
	lg := func(n float64) float64 { v, _ := math.Lgamma(n + 1); return v }
	a := float64(alpha)
	m := 0.0 // j = 0 term: ln 1
	terms := make([]float64, 0, alpha)
	terms = append(terms, 0)
	for j := 2; j <= alpha; j++ {
		fj := float64(j)
		t := lg(a) - lg(fj) - lg(a-fj) + fj*lr
		terms = append(terms, t)
		m = max(m, t)
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	return (m + math.Log(s)) / (a - 1)
}

// eq36Curve is Eq36RDP on AmpOrders.
func eq36Curve(q, sigma float64) privacy.RDPCurve {
	orders := AmpOrders()
	eps := make([]float64, len(orders))
	for i, a := range orders {
		eps[i] = Eq36RDP(q, sigma, int(a))
	}
	return privacy.RDPCurve{Orders: orders, Epsilons: eps}
}

// adaUserSensitivity returns the user-level L2 sensitivity of the whole run
// of batch sums: 2C for clipping around 0, C for clipping around the public
// centre (see AdaPrivate, "User-level clipping").
func adaUserSensitivity(o AdaPrivateOptions) float64 {
	if o.ClipCentre {
		return o.UserClip
	}
	return 2 * o.UserClip
}

// adaSensitivity is the L2 sensitivity the noise is calibrated to: 1 at
// event level, adaUserSensitivity at user level.
func adaSensitivity(o AdaPrivateOptions) float64 {
	if o.UserClip > 0 {
		return adaUserSensitivity(o)
	}
	return 1
}

// gridStep returns the grid step g of noise.GridGaussian at noise σ.
func gridStep(sigma float64) (float64, error) {
	m, err := noise.NewGridGaussian(noise.GridGaussianOptions{Sigma: sigma, Sensitivity: 1})
	if err != nil {
		return 0, err
	}
	return m.Granularity(), nil
}

// gridRho returns the certified ρ of one snapped discrete-Gaussian release
// of a d-vector with L2 sensitivity Δ at noise σ: (Δ + √d·g)²/(2σ²), rounded
// up.
func gridRho(delta float64, d int, sigma float64) (float64, error) {
	g, err := gridStep(sigma)
	if err != nil {
		return 0, err
	}
	sd := roundUpRel(math.Sqrt(float64(d)))
	num := delta + sd*g
	return roundUpRel(num * num / (2 * sigma * sigma)), nil
}

// adaPrivateReport states the privacy of an AdaPrivate policy with options o
// (validated by the caller). It does not depend on the horizon or on the
// rounds played: batches compose in parallel (A14) and a trailing partial
// batch is never released.
func adaPrivateReport(o AdaPrivateOptions) (privacy.Report, error) {
	name := o.name()
	sigma := o.Sigma
	mech := fmt.Sprintf("%s (B = %d, σ = %.6g", name, o.BatchSize, sigma)
	switch {
	case o.Amp > 0:
		mech += fmt.Sprintf(", Poisson rate q = %g", o.Amp)
	case o.UserClip > 0:
		mech += fmt.Sprintf(", user clip C = %g", o.UserClip)
	}
	if o.Grid {
		mech += ", discrete Gaussian on a grid"
	}
	mech += ")"
	conds := "Under docs/reproduction-decisions.md A14's conditions (the action of the changed round is the same in both worlds; the batch schedule " +
		"is data-independent; actions inside a batch read only earlier releases, b changing only at batch boundaries; " +
		"features and the prior θ0 are public; subsampling coins are secret), every release other than the one holding the " +
		"changed record has the same conditional distribution given the history in both worlds, so the releases compose in " +
		"parallel: the run costs one release, not the sum. The transcript is post-processing of the releases; a trailing " +
		"partial batch is never released. "
	r := privacy.Report{Mechanism: mech, Neighbouring: publicFeatures}
	switch {
	case o.Amp > 0:
		q := o.Amp
		cert, err := privacy.SubsampledGaussianCurve(q, sigma, nil)
		if err != nil {
			return privacy.Report{}, fmt.Errorf("%s: %w", name, err)
		}
		paper := eq36Curve(q, sigma)
		r.Certified = privacy.Guarantee{Notion: privacy.NotionRDP, Curve: &cert}
		r.Paper = &privacy.Guarantee{Notion: privacy.NotionRDP, Curve: &paper}
		r.PaperValid = false
		r.Derivation = "Certified: the exact Rényi-DP curve of one Poisson-subsampled Gaussian step with rate q and noise " +
			"multiplier σ (Mironov, Talwar & Zhang 2019; docs/accountant.md §2.2), on the default orders, converted by the better of the " +
			"classic and Balle et al. 2020 conversions. Batch k releases Σ Z_t r_t x_t + N(0, σ²I_d) with secret coins " +
			"Z_t ~ Bern(q); the 1/q rescaling into b is post-processing. The formula is stated for add/remove; for the " +
			"substitution of one round, along the shared feature direction, the worst pair of rewards is (1, 0), where it " +
			"holds exactly (docs/reproduction-decisions.md A12). " + conds +
			"Paper: [ADA] Eq. 3.6 on orders {2..6, 8, 16, 32, 64}; NOT a valid bound: it drops the exp((j²−j)/(2σ²)) factors " +
			"of the higher-order terms (docs/reproduction-decisions.md A12: at q = .3, σ = 1, α = 8 it gives 0.372 against the exact 2.63), so it " +
			"is shown for reference only and never used to calibrate (Riyazat & Ukwatta, AdaPrivate-TS; docs/linear.md §1.11 σ_amp uses the exact formula)."
	case o.Grid:
		delta := adaSensitivity(o)
		rho, err := gridRho(delta, o.Dim, sigma)
		if err != nil {
			return privacy.Report{}, fmt.Errorf("%s: %w", name, err)
		}
		g, _ := gridStep(sigma)
		r.Certified = privacy.Guarantee{Notion: privacy.NotionZCDP, Value: rho}
		what := "one round's record replaced changes the batch sum by ≤ Δ = 1 (‖r x‖ ≤ 1 with x clipped to the unit ball)"
		if o.UserClip > 0 {
			r.Neighbouring = userLevel
			what = fmt.Sprintf("with user-level clipping across the stream the batch sums move by ≤ Δ = %g in total (see the "+
				"user-level derivation of AdaPrivate; the Rényi filter of Feldman & Zrnic 2021 composes the batches)", delta)
		}
		r.Derivation = fmt.Sprintf("Certified ρ-zCDP with ρ = (Δ + √d·g)²/(2σ²), d = %d, g = %g: %s. Each coordinate of "+
			"the batch sum is snapped to the grid gℤ and gets independent discrete Gaussian noise N_ℤ(0, (σ/g)²) "+
			"(noise.GridGaussian: CKS20 Alg 3, exact, from a secure source in serving). Snapping moves every coordinate by "+
			"≤ g/2, so the integer vectors of neighbouring streams differ by ≤ (Δ + √d·g)/g in L2 norm; the Rényi "+
			"divergence of independent coordinates adds, and each coordinate's is ≤ α·Δᵢ²/(2(σ/g)²) (CKS20 Thm 4), which "+
			"gives the formula. %sNo paper value: [ADA] analyses continuous noise; the snapping costs the factor "+
			"(1 + √d·g/Δ)², with g ≤ 2⁻³⁹σ.", o.Dim, g, what, conds)
	case o.UserClip > 0:
		du := adaUserSensitivity(o)
		r.Neighbouring = userLevel
		r.Certified = privacy.Guarantee{Notion: privacy.NotionZCDP, Value: roundUpRel(du * du / (2 * sigma * sigma))}
		r.Paper = &privacy.Guarantee{Notion: privacy.NotionZCDP, Value: o.UserClip * o.UserClip / (2 * sigma * sigma)}
		r.PaperValid = false
		centre := "around 0, so Δ_u = 2C by Minkowski's inequality: sqrt(Σ_k‖ĉ_k − ĉ′_k‖²) ≤ sqrt(Σ_k‖ĉ_k‖²) + sqrt(Σ_k‖ĉ′_k‖²) ≤ 2C"
		if o.ClipCentre {
			centre = "around the public centre m_k = ½Σx_t (features and actions are public) with radius C/2, so both worlds' " +
				"ĉ_k − m_k lie in balls of total squared radius (C/2)² and Δ_u = C"
		}
		r.Derivation = fmt.Sprintf("Certified ρ-zCDP at the user level, ρ = Δ_u²/(2σ²) with Δ_u = %g. Each user's "+
			"per-batch contribution c_k = Σ r_t x_t over the user's rounds in batch k is clipped to the user's remaining "+
			"radius, so that Σ_k ‖ĉ_k‖² ≤ C² over the whole stream (clipping across the stream, docs/reproduction-decisions.md A15), %s. Replacing "+
			"all rewards of one user changes batch k's sum by ĉ_k − ĉ′_k only (other users' clipped contributions are equal "+
			"given the history). Given the history, batch k is a Gaussian mechanism of Rényi divergence α‖ĉ_k − ĉ′_k‖²/(2σ²) "+
			"at every order α; these sum to ≤ αΔ_u²/(2σ²) on every history, so by the Rényi filter (Feldman & Zrnic 2021; "+
			"docs/accountant.md §2.6) the run is ρ-zCDP however many batches the user spans. Paper: [ADA] §6.1, σ = C/sqrt(2ρ_user), "+
			"i.e. ρ = C²/(2σ²); NOT valid: it clips per batch, so a user in m_u batches costs m_u·ρ (docs/reproduction-decisions.md A15), and "+
			"replacing a user moves a 0-centred clipped sum by up to 2C, not C. Group privacy of the event-level mechanism "+
			"(k²ρ for k rounds per user, BS16 Prop 1.9) is the alternative without clipping.", du, centre)
	default:
		mu := roundUpRel(1 / sigma)
		r.Certified = privacy.Guarantee{Notion: privacy.NotionGDP, Value: mu}
		r.Paper = &privacy.Guarantee{Notion: privacy.NotionZCDP, Value: 1 / (2 * sigma * sigma)}
		r.PaperValid = true
		r.Derivation = "Certified μ-GDP with μ = Δ₂/σ = 1/σ. Batch k releases s_k + N(0, σ²I_d), s_k = Σ_{t∈k} r_t x_t with " +
			"r_t ∈ [0, 1] and ‖x_t‖ ≤ 1 (clipped): replacing the record of one round τ changes only s_{k(τ)}, by " +
			"(r_τ − r′_τ)x_τ of norm ≤ 1, so that release is a Gaussian mechanism with Δ₂ = 1, which is exactly (1/σ)-GDP " +
			"(Dong, Roth & Su 2022). " + conds + "In f-DP terms the composition theorem (Dong et al. Thm 3.2) multiplies G_μ " +
			"by the identity trade-off of every unchanged release, so the run is μ-GDP. Paper: [ADA] Thm 6 (Lemmas 1–3), " +
			"ρ = 1/(2σ²)-zCDP; valid (μ-GDP implies μ²/2-zCDP) but looser once converted: calibrated with BS16 (Eq. 2.8) it " +
			"gives exactly the target ε, and the certified GDP value gives less."
	}
	return r, nil
}

// userLevel is the neighbouring relation of user-level AdaPrivate.
const userLevel = "user-level: every reward of one user replaced; which rounds belong to which user is public, " +
	"like the features (Riyazat & Ukwatta, AdaPrivate-TS; docs/linear.md §1.11; docs/reproduction-decisions.md A15)"

// adaReleaseCost is the guarantee of one release on its own, in the
// certified notion: the whole run's guarantee, since releases compose in
// parallel.
func adaReleaseCost(r privacy.Report) privacy.Guarantee { return r.Certified }

// adaZeroCost is a zero cost in the certified notion of r.
func adaZeroCost(r privacy.Report) privacy.Guarantee {
	g := privacy.Guarantee{Notion: r.Certified.Notion}
	if r.Certified.Curve != nil {
		c := privacy.RDPCurve{Orders: append([]float64(nil), r.Certified.Curve.Orders...),
			Epsilons: make([]float64, len(r.Certified.Curve.Orders))}
		g.Curve = &c
	}
	return g
}

// ---------------------------------------------------------------------------
// Calibration.

// AdaPrivateSigma returns the batch noise σ (standard deviation added to each
// coordinate of the batch sum, before the 1/q rescaling with Amp) with which
// an AdaPrivate policy configured as o (o.Sigma is ignored) meets the target t.
//
// Basis "paper" (the default) follows the paper's procedure with the
// project's valid formulas: ρ = ρ_BS(ε, δ) from BS16 ([ADA] Eq. 2.8) and
// σ = Δ/sqrt(2ρ) (Alg 1 lines 1–2); with Amp, docs/linear.md §1.11's rule (the exact
// subsampled-Gaussian RDP, orders AmpOrders, classic conversion), never
// Eq. 3.6. At δ = 1e-5 it gives docs/linear.md §1.11's tables (σ = 4.901 at ε = 1;
// σ_amp = 2.593 at ε = 1, q = 0.3). Basis "certified" makes the certified
// value meet the target exactly: σ = 1/GDPMu(ε, δ) at event level (3.7306 at
// ε = 1, δ = 1e-5), the RDP-calibrated σ on the default orders with the
// better conversion with Amp, and ρ = ZCDPRho(ε, δ) (CKS20) for the zCDP
// mechanisms (grid, user level). Δ is 1 at event level and the user-level
// sensitivity (2C, or C when clipping around the centre) otherwise; on a grid
// σ also covers the snapping term √d·g. A target μ-GDP is converted to ε at
// t.Delta first, except for the certified event-level σ = 1/μ.
//
// The returned σ is rounded up so that the calibrated report, as stated,
// never exceeds the target. Every search is bounded (privacy.GDPMu,
// ZCDPRho and SubsampledGaussianSigma bound theirs; the grid fixed point
// takes at most 8 steps and the ulp nudges at most 257, each checked): a
// finite ε > 0 up to MaxFloat64 returns at once, with σ down to about
// 5e-155 at ε = MaxFloat64, or with an error where no σ can be formed
// (e.g. a subnormal ε on the paper basis, where ρ_BS underflows to 0).
func AdaPrivateSigma(o AdaPrivateOptions, t bandit.Target) (float64, error) {
	name := o.name()
	o.Sigma = 1 // validate the rest of the options
	if err := checkAdaPrivate(o); err != nil {
		return 0, err
	}
	basis := t.Basis
	switch basis {
	case "":
		basis = bandit.BasisPaper
	case bandit.BasisPaper, bandit.BasisCertified:
	default:
		return 0, fmt.Errorf("%s: calibration basis %q: must be %q or %q", name, t.Basis, bandit.BasisPaper, bandit.BasisCertified)
	}
	certified := basis == bandit.BasisCertified
	if !(t.Delta > 0 && t.Delta < 1) {
		if !(t.Mu > 0 && certified && o.Amp == 0 && !o.Grid && o.UserClip == 0) {
			return 0, fmt.Errorf("%s: privacy target: delta = %v must lie in (0, 1)", name, t.Delta)
		}
	}
	eps := t.Epsilon
	if t.Mu != 0 {
		if !(t.Mu > 0) || math.IsInf(t.Mu, 1) {
			return 0, fmt.Errorf("%s: privacy target: gdp μ = %v must be finite and > 0", name, t.Mu)
		}
		if certified && o.Amp == 0 && !o.Grid && o.UserClip == 0 {
			return sigmaForGDP(t.Mu)
		}
		e, err := privacy.GDPEpsilon(t.Mu, t.Delta)
		if err != nil {
			return 0, fmt.Errorf("%s: privacy target (μ=%v, δ=%v): %w", name, t.Mu, t.Delta, err)
		}
		eps = e
	}
	if !(eps > 0) || math.IsInf(eps, 1) {
		return 0, fmt.Errorf("%s: privacy target: epsilon = %v must be finite and > 0 (or give gdp=μ)", name, eps)
	}
	wrap := func(err error) error {
		return fmt.Errorf("%s: calibrating to (ε=%v, δ=%v): %w", name, eps, t.Delta, err)
	}
	if o.Amp > 0 {
		var opts *privacy.SGMOptions // certified: default orders, better conversion (the report's accounting)
		if !certified {
			opts = &privacy.SGMOptions{Orders: AmpOrders(), Method: privacy.MethodClassic}
		}
		s, _, err := privacy.SubsampledGaussianSigma(o.Amp, 1, eps, t.Delta, opts)
		if err != nil {
			return 0, wrap(err)
		}
		return s, nil
	}
	if certified && !o.Grid && o.UserClip == 0 {
		mu, err := privacy.GDPMu(eps, t.Delta)
		if err != nil {
			return 0, wrap(err)
		}
		return sigmaForGDP(mu)
	}
	var rho float64
	var err error
	if certified {
		rho, _, err = privacy.ZCDPRho(eps, t.Delta)
	} else {
		rho, err = privacy.ZCDPRhoBS(eps, t.Delta)
	}
	if err != nil {
		return 0, wrap(err)
	}
	delta := adaSensitivity(o)
	if o.Grid {
		s, err := sigmaForGridRho(delta, o.Dim, rho)
		if err != nil {
			return 0, wrap(err)
		}
		return s, nil
	}
	s, err := privacy.GaussianSigmaForRho(rho, delta)
	if err != nil {
		return 0, wrap(err)
	}
	if o.UserClip > 0 { // the certified report rounds ρ up: keep it ≤ the target
		ok := func(s float64) bool { return roundUpRel(delta*delta/(2*s*s)) <= rho }
		if s = nudgeUp(s, ok); !ok(s) {
			return 0, wrap(fmt.Errorf("no user-level noise σ near %v reports ρ ≤ %v", s, rho))
		}
	}
	return s, nil
}

// sigmaForGDP returns the smallest σ (up to a few ulps) whose reported
// certified μ = roundUpRel(1/σ) is ≤ mu.
func sigmaForGDP(mu float64) (float64, error) {
	s, err := privacy.GaussianSigmaForMu(mu, 1)
	if err != nil {
		return 0, err
	}
	ok := func(s float64) bool { return roundUpRel(1/s) <= mu }
	if s = nudgeUp(s, ok); !ok(s) {
		return 0, fmt.Errorf("no noise σ near %v reports μ = 1/σ ≤ %v", s, mu)
	}
	return s, nil
}

// sigmaForGridRho returns a σ whose gridRho is ≤ rho: the fixed point of
// σ = (Δ + √d·g(σ))/sqrt(2ρ), which g's step function reaches in a few
// iterations because g(σ) only grows with σ.
func sigmaForGridRho(delta float64, d int, rho float64) (float64, error) {
	s, err := privacy.GaussianSigmaForRho(rho, delta)
	if err != nil {
		return 0, err
	}
	for range 8 {
		g, err := gridStep(s)
		if err != nil {
			return 0, err
		}
		next, err := privacy.GaussianSigmaForRho(rho, delta+roundUpRel(math.Sqrt(float64(d)))*g)
		if err != nil {
			return 0, err
		}
		if next <= s {
			break
		}
		s = next
	}
	ok := func(s float64) bool {
		r, err := gridRho(delta, d, s)
		return err == nil && r <= rho
	}
	s = nudgeUp(s, ok)
	if !ok(s) {
		return 0, fmt.Errorf("no grid noise σ found for ρ = %v", rho)
	}
	return s, nil
}

// nudgeUp returns s, or s increased by a few ulps, so that ok holds (ok is
// monotone: once true it stays true for larger s). It takes at most 257
// steps and may return an s for which ok is still false (never seen for
// a valid σ, but a caller that needs ok must check it).
func nudgeUp(s float64, ok func(float64) bool) float64 {
	if ok(s) {
		return s
	}
	s += s * 0x1p-46
	for i := 0; i < 256 && !ok(s); i++ {
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}
