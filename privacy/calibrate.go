package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// Noise calibration: the smallest Gaussian noise for a target (ε, δ).
// docs/accountant.md §2.1 (analytic Gaussian), §2.4 (zCDP), §2.2–2.3 (subsampled
// Gaussian). Every σ returned is rounded up, so the mechanism it defines
// meets the target exactly or with room to spare (docs/privacy-model.md rule 1).

// GaussianSigmaGDP returns the smallest noise standard deviation σ with which
// the Gaussian mechanism on a query of L2 sensitivity Δ is (ε, δ)-DP, and the
// GDP parameter μ = GDPMu(ε, δ) it achieves. The conversion is exact (the
// analytic Gaussian mechanism, Balle & Wang 2018 Alg 1; Dong, Roth & Su 2022),
// so σ = Δ/μ is optimal; μ is rounded down and σ up. The classical
// σ = Δ√(2 ln(1.25/δ))/ε is 30–60% larger and invalid for ε ≥ 1 (T3).
// ε must be finite and > 0 (every such ε is in reach, see GDPMu); a σ beyond
// the float64 range (huge Δ with tiny ε, δ) is an ErrInvalid error.
func GaussianSigmaGDP(eps, delta, sensitivity float64) (sigma, mu float64, err error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, 0, err
	}
	if err := checkTargetEps(eps); err != nil {
		return 0, 0, err
	}
	if mu, err = GDPMu(eps, delta); err != nil {
		return 0, 0, err
	}
	sigma = sigmaForMu(sensitivity, mu)
	if math.IsInf(sigma, 1) {
		return 0, 0, fmt.Errorf("%w: target (ε = %v, δ = %v) with sensitivity Δ = %v needs σ = Δ/μ = %v/%v, beyond the float64 range",
			ErrInvalid, eps, delta, sensitivity, sensitivity, mu)
	}
	return sigma, mu, nil
}

// GaussianSigmaZCDP returns the smallest σ with which the Gaussian mechanism
// (L2 sensitivity Δ) is ρ-zCDP for the largest ρ that implies (ε, δ)-DP under
// the tighter zCDP conversion (ZCDPRho: CKS20), and that ρ. σ = Δ/√(2ρ)
// (BS16 Prop 1.6), rounded up. Use this when the mechanism's guarantee will be
// composed in zCDP with non-Gaussian parts; for a Gaussian mechanism alone,
// GaussianSigmaGDP gives less noise (T4). A ρ that underflows to 0 (ε near
// the smallest subnormal) or a σ beyond the float64 range is an ErrInvalid
// error.
func GaussianSigmaZCDP(eps, delta, sensitivity float64) (sigma, rho float64, method string, err error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, 0, "", err
	}
	if err := checkTargetEps(eps); err != nil {
		return 0, 0, "", err
	}
	if rho, method, err = ZCDPRho(eps, delta); err != nil {
		return 0, 0, "", err
	}
	if !(rho > 0) {
		return 0, 0, "", fmt.Errorf("%w: target (ε = %v, δ = %v) allows no ρ > 0 representable in float64 (ρ ≈ ε²/(4 ln(1/δ)) underflows)",
			ErrInvalid, eps, delta)
	}
	sigma = sigmaForRho(sensitivity, rho)
	if math.IsInf(sigma, 1) {
		return 0, 0, "", fmt.Errorf("%w: target (ε = %v, δ = %v) with sensitivity Δ = %v needs σ = Δ/√(2ρ) with ρ = %v, beyond the float64 range",
			ErrInvalid, eps, delta, sensitivity, rho)
	}
	return sigma, rho, method, nil
}

// GaussianSigmaClassic returns the classical calibration
// σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1), rounded up. It is
// valid only for ε < 1 and returns an error otherwise; even there it adds
// 30–60% more noise than GaussianSigmaGDP (docs/accountant.md T3, pitfall 5). It is
// provided to reproduce papers that use it, not to calibrate.
func GaussianSigmaClassic(eps, delta, sensitivity float64) (float64, error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !(eps > 0 && eps < 1) {
		return 0, fmt.Errorf("%w: the classical Gaussian calibration needs 0 < ε < 1 (Dwork–Roth Thm A.1), got ε = %v; "+
			"use GaussianSigmaGDP", ErrInvalid, eps)
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	return roundUp(sensitivity*math.Sqrt(2*math.Log(1.25/delta))/eps, 8), nil
}

// GaussianSigmaForMu returns σ = Δ/μ rounded up: the noise that makes a query
// of L2 sensitivity Δ μ-GDP.
func GaussianSigmaForMu(mu, sensitivity float64) (float64, error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !(mu > 0) {
		return 0, fmt.Errorf("%w: GDP parameter μ = %v must be > 0 to calibrate noise", ErrInvalid, mu)
	}
	return sigmaForMu(sensitivity, mu), nil
}

// GaussianSigmaForRho returns σ = Δ/√(2ρ) rounded up: the noise that makes a
// query of L2 sensitivity Δ ρ-zCDP.
func GaussianSigmaForRho(rho, sensitivity float64) (float64, error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !(rho > 0) {
		return 0, fmt.Errorf("%w: zCDP parameter ρ = %v must be > 0 to calibrate noise", ErrInvalid, rho)
	}
	return sigmaForRho(sensitivity, rho), nil
}

// sigmaForMu returns the smallest float64 σ with Δ/σ ≤ μ, i.e. σ·μ ≥ Δ.
func sigmaForMu(d, mu float64) float64 {
	if math.IsInf(mu, 1) {
		return 0
	}
	r := ratOf(d)
	return floatUp(r.Quo(r, ratOf(mu)))
}

// sigmaForRho returns the smallest float64 σ with Δ²/(2σ²) ≤ ρ, i.e.
// σ² ≥ Δ²/(2ρ).
func sigmaForRho(d, rho float64) float64 {
	if math.IsInf(rho, 1) {
		return 0
	}
	r := ratSquare(d)
	r.Quo(r, new(big.Rat).Mul(big.NewRat(2, 1), ratOf(rho)))
	return sqrtUp(r)
}

// SGMOptions selects the accounting used to calibrate or evaluate the
// Poisson-subsampled Gaussian.
type SGMOptions struct {
	// Orders is the grid of Rényi orders (DefaultOrders when nil).
	Orders []float64
	// Method is "" for the better of the two conversions (the default),
	// MethodClassic for Mironov's Prop 3 only (as in docs/linear.md §1.11 ([ADA]) σ_amp), or
	// MethodImproved for Balle et al. 2020 Thm 21 only.
	Method string
}

func (o *SGMOptions) orders() []float64 {
	if o == nil || o.Orders == nil {
		return DefaultOrders()
	}
	return o.Orders
}

func (o *SGMOptions) convert(c RDPCurve, delta float64) (RDPConversion, error) {
	method := ""
	if o != nil {
		method = o.Method
	}
	switch method {
	case "":
		return c.Epsilon(delta)
	case MethodClassic:
		return c.EpsilonClassic(delta)
	case MethodImproved:
		return c.EpsilonImproved(delta)
	}
	return RDPConversion{}, fmt.Errorf("%w: RDP conversion %q is not one of \"\", %q, %q",
		ErrInvalid, method, MethodClassic, MethodImproved)
}

// SubsampledGaussianSigma returns the smallest noise multiplier σ (noise
// standard deviation ÷ L2 sensitivity) such that `steps` compositions of the
// Poisson-subsampled Gaussian with rate q convert, under the RDP accounting of
// opts (nil: DefaultOrders and the better conversion), to ε or less at δ.
// It also returns the conversion at that σ.
//
// ε(σ) decreases in σ; σ is bracketed by doubling and bisected to float64
// resolution, and the upper end of the final bracket (a σ whose ε has been
// checked to be ≤ the target) is returned. The target must exceed the floor
// the order grid allows as σ → ∞ (about ln(1/δ)/(α_max−1)); the error names
// it otherwise. q = 0 or steps = 0 need no noise (σ = 0). Cost: about 60
// curve evaluations. The searches are bounded: at most about 1000 doublings
// (no σ ≤ 1e300 reaching ε is an ErrInvalid error) or halvings (a σ below
// 1e-300 that meets ε is returned as is), then at most 2100 bisection steps;
// a σ whose curve or conversion cannot be evaluated counts as not meeting ε.
func SubsampledGaussianSigma(q float64, steps int, eps, delta float64, opts *SGMOptions) (float64, RDPConversion, error) {
	if err := checkRate(q); err != nil {
		return 0, RDPConversion{}, err
	}
	if steps < 0 {
		return 0, RDPConversion{}, fmt.Errorf("%w: number of steps T = %d must be ≥ 0", ErrInvalid, steps)
	}
	if err := checkTargetEps(eps); err != nil {
		return 0, RDPConversion{}, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, RDPConversion{}, err
	}
	orders := opts.orders()
	// The floor: the conversion of an RDP curve that tends to 0 (σ → ∞).
	zero, err := curveOf(orders, func(float64) float64 { return math.SmallestNonzeroFloat64 })
	if err != nil {
		return 0, RDPConversion{}, err
	}
	floor, err := opts.convert(zero, delta)
	if err != nil {
		return 0, RDPConversion{}, err
	}
	if q == 0 || steps == 0 {
		return 0, RDPConversion{Epsilon: 0, Order: floor.Order, Method: floor.Method}, nil
	}
	if eps <= floor.Epsilon {
		return 0, RDPConversion{}, fmt.Errorf("%w: target ε = %v is unreachable at δ = %v on this order grid: "+
			"even infinite noise gives ε = %v (largest order %v); raise ε or add larger orders",
			ErrInvalid, eps, delta, floor.Epsilon, floor.Order)
	}
	eval := func(sigma float64) (RDPConversion, error) {
		c, err := SubsampledGaussianCurve(q, sigma, orders)
		if err != nil {
			return RDPConversion{}, err
		}
		return opts.convert(c.Scale(float64(steps)), delta)
	}
	// ok is false where the curve or its conversion cannot be formed (or is
	// NaN): a σ is accepted only with a checked ε ≤ target.
	ok := func(sigma float64) bool {
		conv, err := eval(sigma)
		return err == nil && conv.Epsilon <= eps
	}
	lo, hi := 0.5, 1.0
	if ok(hi) {
		for ok(lo) { // at most ~1000 halvings: it stops below 1e-300
			if lo < 1e-300 {
				conv, _ := eval(lo) // checked by ok
				return lo, conv, nil
			}
			hi, lo = lo, lo/2
		}
	} else {
		lo = hi
		for !ok(hi) { // at most ~1000 doublings: it stops above 1e300
			if hi > 1e300 {
				return 0, RDPConversion{}, fmt.Errorf("%w: no noise multiplier σ ≤ 1e300 reaches ε = %v at δ = %v "+
					"(q = %v, T = %d)", ErrInvalid, eps, delta, q, steps)
			}
			lo, hi = hi, 2*hi
		}
	}
	for range 2100 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	conv, err := eval(hi) // checked by ok
	return hi, conv, err
}

func checkTargetEps(eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("%w: target ε = %v must be a finite number > 0", ErrInvalid, eps)
	}
	return nil
}
