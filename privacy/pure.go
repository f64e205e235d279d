package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// Pure ε-differential privacy (δ = 0). docs/accountant.md §2.2.
//
// The Laplace mechanism adds Lap(b) noise to a query with L1 sensitivity Δ
// and is (Δ/b)-DP (Dwork, McSherry, Nissim & Smith 2006). Mechanisms run in
// sequence add their ε's (basic composition); with a budget fixed up front
// this holds under fully adaptive composition too (Rogers, Roth, Ullman &
// Vadhan 2016; docs/accountant.md §2.6, theorem 1; see NewPureFilter). For RDP
// accounting of pure mechanisms see LaplaceRDP and PureRDP.

// LaplaceEpsilon returns ε = Δ/b for the Laplace mechanism with L1
// sensitivity Δ > 0 and scale b > 0, rounded up.
func LaplaceEpsilon(sensitivity, scale float64) (float64, error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !(scale > 0) {
		return 0, fmt.Errorf("%w: Laplace scale b = %v must be > 0", ErrInvalid, scale)
	}
	if math.IsInf(scale, 1) {
		return 0, nil
	}
	r := ratOf(sensitivity)
	return floatUp(r.Quo(r, ratOf(scale))), nil
}

// LaplaceScale returns the Laplace scale b = Δ/ε that makes a query with L1
// sensitivity Δ > 0 ε-DP, rounded up (so Δ/b ≤ ε holds exactly).
func LaplaceScale(sensitivity, eps float64) (float64, error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if !(eps > 0) {
		return 0, fmt.Errorf("%w: ε = %v must be > 0 for a Laplace mechanism", ErrInvalid, eps)
	}
	if math.IsInf(eps, 1) {
		return 0, nil
	}
	r := ratOf(sensitivity)
	return floatUp(r.Quo(r, ratOf(eps))), nil
}

// PureCompose returns Σεᵢ, the basic composition of pure-DP mechanisms. The
// sum is formed exactly and rounded up.
func PureCompose(eps ...float64) (float64, error) {
	s := new(big.Int)
	for i, e := range eps {
		if err := checkEps(e); err != nil {
			return 0, fmt.Errorf("component %d: %w", i, err)
		}
		if math.IsInf(e, 1) {
			return e, nil
		}
		s.Add(s, fixedOf(e))
	}
	return fixedUp(s), nil
}

func checkSensitivity(d float64) error {
	if !(d > 0) || math.IsInf(d, 1) {
		return fmt.Errorf("%w: sensitivity Δ = %v must be a finite number > 0", ErrInvalid, d)
	}
	return nil
}
