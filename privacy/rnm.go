package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// Report-Noisy-Max (docs/accountant.md §1.5, [OU] App C; Dwork & Roth 2014 §3.3)
// releases only argmax_i (f_i + Z_i) of K scores with independent noises Z_i.
// How much a neighbouring input may move the scores decides its cost:
//
//   - OneScore: a neighbour moves one score f_j, by at most its sensitivity
//     s_j, and leaves the others. This is the bandit case: one round's reward
//     enters one arm's statistic (docs/privacy-model.md), and it is why [OU] App C can
//     read a Thompson-sampling round as an RNM.
//   - AllScores: every score may move, each f_i by at most s_i.
//
// Laplace RNM, Z_i ~ Lap(b). Fix the other noises z_{−i}; arm i wins on D iff
// z_i > t := max_{j≠i}(f_j + z_j) − f_i. Under OneScore t moves by at most s
// (s = max_j s_j): if f_i drops by ≤ s, or one f_j rises by ≤ s, i still wins
// on D' whenever z_i > t + s, and P(Lap(b) > t + s) ≥ e^{−s/b} P(Lap(b) > t).
// Swapping D and D' bounds the ratio both ways, so the release is (s/b)-DP.
// Under AllScores f_i may drop while f_j rises: t moves by ≤ 2s, hence
// (2s/b)-DP. This is Dwork & Roth's Claim 3.9 (monotone queries: Δ/b) and its
// general form (2Δ/b); [OU] App C; docs/accountant.md §1.5: "ε-DP here only because neighbours
// differ in one coordinate; in general use 2s/ε". The bound is tight: with
// K = 2 and a large gap the probability of the losing arm moves by e^{±s/b}
// (TestLaplaceRNMExact, by quadrature).
//
// Heterogeneous Gaussian RNM, Z_i ~ N(0, σ_i²). The noisy vector f + Z is the
// Gaussian mechanism on f/σ (whitened): under OneScore its whitened
// sensitivity is max_j s_j/σ_j, under AllScores ‖(s_i/σ_i)_i‖₂, so it is
// μ-GDP with that μ (Dong, Roth & Su 2022, Thm 2.7) and the argmax is
// post-processing. docs/accountant.md §1.5 ([OU] App C): "Account it as max_i(s_i/σ_i)-GDP". The
// OneScore value is what a TS round costs ([OU] Alg 1; docs/gaussian-ts.md §1.3: s = 1/(n+1),
// σ = 1/sqrt(n+1), μ = 1/sqrt(n+1) ≤ 1/√2), and it is exact for K = 2 when
// the other score's noise vanishes (docs/reproduction-decisions.md A5; TestGaussianRNMExact).
// [OU] Thm 6/7 and Corollary 1 claim less and are wrong (docs/reproduction-decisions.md A5): never
// use them.

// RNMNeighbours says which scores a neighbouring input may move.
type RNMNeighbours int

const (
	// OneScore: one score moves, by at most its sensitivity (the bandit
	// case, docs/privacy-model.md).
	OneScore RNMNeighbours = iota + 1
	// AllScores: every score may move, each by at most its sensitivity.
	AllScores
)

func (n RNMNeighbours) String() string {
	switch n {
	case OneScore:
		return "one score moves"
	case AllScores:
		return "all scores move"
	}
	return fmt.Sprintf("RNMNeighbours(%d)", int(n))
}

// laplaceRNMSensitivity is the threshold shift of Laplace RNM: s when one
// score moves, 2s when all may (×2 is exact in binary floating point).
func laplaceRNMSensitivity(sensitivity float64, n RNMNeighbours) (float64, error) {
	if err := checkSensitivity(sensitivity); err != nil {
		return 0, err
	}
	switch n {
	case OneScore:
		return sensitivity, nil
	case AllScores:
		return 2 * sensitivity, nil
	}
	return 0, fmt.Errorf("%w: RNM neighbours %d is neither OneScore nor AllScores", ErrInvalid, int(n))
}

// LaplaceRNMEpsilon returns the ε of Laplace Report-Noisy-Max with noise
// scale b > 0 on scores of sensitivity s > 0: s/b when one score moves, 2s/b
// when all may, rounded up (LaplaceEpsilon of the threshold shift).
func LaplaceRNMEpsilon(sensitivity, scale float64, n RNMNeighbours) (float64, error) {
	shift, err := laplaceRNMSensitivity(sensitivity, n)
	if err != nil {
		return 0, err
	}
	return LaplaceEpsilon(shift, scale)
}

// LaplaceRNMScale returns the smallest float64 scale b at which Laplace
// Report-Noisy-Max on scores of sensitivity s > 0 is ε-DP: s/ε when one score
// moves, 2s/ε when all may, rounded up so that LaplaceRNMEpsilon(s, b) ≤ ε
// (LaplaceScale of the threshold shift).
func LaplaceRNMScale(sensitivity, eps float64, n RNMNeighbours) (float64, error) {
	shift, err := laplaceRNMSensitivity(sensitivity, n)
	if err != nil {
		return 0, err
	}
	return LaplaceScale(shift, eps)
}

// GaussianRNMMu returns the μ of heterogeneous Gaussian Report-Noisy-Max:
// score i has sensitivity sens[i] > 0 and noise N(0, sigma[i]²), sigma[i] > 0.
// It is max_i sens[i]/sigma[i] when one score moves and the Euclidean norm of
// (sens[i]/sigma[i])_i when all may, rounded up (an upper bound on the exact
// value, never below it).
func GaussianRNMMu(sens, sigma []float64, n RNMNeighbours) (float64, error) {
	if n != OneScore && n != AllScores {
		return 0, fmt.Errorf("%w: RNM neighbours %d is neither OneScore nor AllScores", ErrInvalid, int(n))
	}
	if len(sens) == 0 || len(sens) != len(sigma) {
		return 0, fmt.Errorf("%w: RNM needs one sensitivity and one σ per score (got %d and %d)", ErrInvalid, len(sens), len(sigma))
	}
	ratios := make([]*big.Rat, len(sens))
	for i, s := range sens {
		if err := checkSensitivity(s); err != nil {
			return 0, fmt.Errorf("score %d: %w", i, err)
		}
		if !(sigma[i] > 0) || math.IsInf(sigma[i], 1) {
			return 0, fmt.Errorf("%w: score %d: σ = %v must be a finite number > 0", ErrInvalid, i, sigma[i])
		}
		ratios[i] = new(big.Rat).Quo(ratOf(s), ratOf(sigma[i]))
	}
	if n == OneScore {
		m := ratios[0]
		for _, r := range ratios[1:] {
			if r.Cmp(m) > 0 {
				m = r
			}
		}
		return floatUp(m), nil
	}
	// ‖·‖₂ rounded up: the exact sum of squares, then a square root that
	// is raised until its square is at least the sum.
	sum := new(big.Rat)
	for _, r := range ratios {
		sum.Add(sum, new(big.Rat).Mul(r, r))
	}
	return sqrtUp(sum), nil
}
