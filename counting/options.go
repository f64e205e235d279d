package counting

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Errors. Every error returned by this package wraps one of them.
var (
	// ErrInvalid is wrapped by errors about an option or argument out of its
	// valid range; the message names the field and the range.
	ErrInvalid = errors.New("counting: invalid option")
	// ErrFull is wrapped by the error of an Add beyond the capacity.
	ErrFull = errors.New("counting: counter is full")
	// ErrRange is wrapped by the error of an Add whose value lies outside
	// the declared interval [Lower, Lower+Sensitivity] (docs/privacy-model.md rule 6).
	ErrRange = errors.New("counting: value out of range")
)

// MaxCapacity is the largest capacity a counter accepts (2⁶², so L ≤ 63).
const MaxCapacity = 1 << 62

// safety is the factor by which a computed noise scale is enlarged, and a
// privacy parameter computed from a scale (ρ, μ) is enlarged, so that the
// few float64 roundings in b = LΔ/ε, σ = Δ√(L/(2ρ)), ρ = LΔ²/(2σ²) can never
// make the certified value smaller than the true one (docs/privacy-model.md rule 1). It
// is 2⁻⁵⁰ ≈ 8.9e-16 relative (4–8 ulps), invisible in any figure.
const safety = 1 + 0x1p-50

// LaplaceOptions configure a counter with Laplace node noise ([NewLaplace]).
// The zero value of Sensitivity means 1 and of Lower means 0, so leaves lie
// in [0, 1] by default.
type LaplaceOptions struct {
	// Capacity is T, the number of leaves the counter accepts, in
	// [1, MaxCapacity]. Size it for the horizon: a per-arm count is unknown
	// in advance (docs/accountant.md pitfall 9).
	Capacity int `json:"capacity"`
	// Epsilon is the pure-DP ε of the whole output stream, in (0, +Inf).
	Epsilon float64 `json:"epsilon"`
	// Sensitivity is Δ > 0, the width of the interval a leaf lies in, which
	// is the most one leaf moves when one round's entry is replaced
	// (event-level substitution, docs/privacy-model.md). Default 1.
	Sensitivity float64 `json:"sensitivity,omitempty"`
	// Lower is the lower end of the leaf interval [Lower, Lower+Δ]: 0 for
	// rewards in [0, 1], −1 with Δ = 2 for a product of features in [−1, 1].
	Lower float64 `json:"lower,omitempty"`
	// GLS selects Honaker's streaming GLS estimate of each prefix sum
	// (post-processing, no privacy cost; about 30% lower mean variance,
	// docs/accountant.md T9). It draws every node, about two draws per leaf instead
	// of one.
	GLS bool `json:"gls,omitempty"`
}

// GaussianOptions configure a counter with Gaussian node noise
// ([NewGaussian]). Exactly one of Rho, Mu and Sigma must be set (> 0); the
// others must be zero. The zero value of Sensitivity means 1.
type GaussianOptions struct {
	// Capacity is T, in [1, MaxCapacity]; see [LaplaceOptions.Capacity].
	Capacity int `json:"capacity"`
	// Rho is the zCDP ρ of the whole output stream, in (0, +Inf); the node
	// σ is Δ·√(L/(2ρ)).
	Rho float64 `json:"rho,omitempty"`
	// Mu is the GDP μ of the whole output stream, in (0, +Inf); the node σ
	// is √L·Δ/μ.
	Mu float64 `json:"mu,omitempty"`
	// Sigma is the node noise standard deviation σ, in (0, +Inf); the
	// guarantee follows from it.
	Sigma float64 `json:"sigma,omitempty"`
	// Sensitivity is Δ > 0; see [LaplaceOptions.Sensitivity]. Default 1.
	Sensitivity float64 `json:"sensitivity,omitempty"`
	// Lower is the lower end of the leaf interval; see
	// [LaplaceOptions.Lower].
	Lower float64 `json:"lower,omitempty"`
	// GLS selects Honaker's streaming GLS estimate; see
	// [LaplaceOptions.GLS].
	GLS bool `json:"gls,omitempty"`
}

// Levels returns L = ⌊log₂T⌋ + 1 = ⌈log₂(T+1)⌉, the number of tree levels of
// a counter of capacity T and the largest number of released nodes one leaf
// lies in (docs/accountant.md §2.5, pitfall 9: 21 at T = 2²⁰, not 20). It panics if
// T < 1.
func Levels(capacity int) int {
	if capacity < 1 {
		panic(fmt.Sprintf("counting: Levels(%d) needs a capacity ≥ 1", capacity))
	}
	return bits.Len(uint(capacity))
}

// ScaleForEpsilon returns the Laplace node scale b = LΔ/ε that makes a
// counter of capacity T with leaf sensitivity Δ ε-DP, enlarged by a few ulps
// so that float rounding cannot under-noise.
func ScaleForEpsilon(capacity int, sensitivity, eps float64) (float64, error) {
	if err := checkTree(capacity, sensitivity, 0); err != nil {
		return 0, err
	}
	if err := checkPositive("Epsilon", eps); err != nil {
		return 0, err
	}
	return float64(Levels(capacity)) * sensitivity / eps * safety, nil
}

// SigmaForRho returns the Gaussian node σ = Δ·√(L/(2ρ)) that makes a counter
// of capacity T with leaf sensitivity Δ ρ-zCDP (enlarged by a few ulps).
func SigmaForRho(capacity int, sensitivity, rho float64) (float64, error) {
	if err := checkTree(capacity, sensitivity, 0); err != nil {
		return 0, err
	}
	if err := checkPositive("Rho", rho); err != nil {
		return 0, err
	}
	return sensitivity * math.Sqrt(float64(Levels(capacity))/(2*rho)) * safety, nil
}

// SigmaForMu returns the Gaussian node σ = √L·Δ/μ that makes a counter of
// capacity T with leaf sensitivity Δ μ-GDP (enlarged by a few ulps).
func SigmaForMu(capacity int, sensitivity, mu float64) (float64, error) {
	if err := checkTree(capacity, sensitivity, 0); err != nil {
		return 0, err
	}
	if err := checkPositive("Mu", mu); err != nil {
		return 0, err
	}
	return math.Sqrt(float64(Levels(capacity))) * sensitivity / mu * safety, nil
}

func (o LaplaceOptions) withDefaults() LaplaceOptions {
	if o.Sensitivity == 0 {
		o.Sensitivity = 1
	}
	return o
}

func (o GaussianOptions) withDefaults() GaussianOptions {
	if o.Sensitivity == 0 {
		o.Sensitivity = 1
	}
	return o
}

// checkTree validates the options shared by both mechanisms (after
// defaults).
func checkTree(capacity int, sensitivity, lower float64) error {
	if capacity < 1 || capacity > MaxCapacity {
		return fmt.Errorf("%w: Capacity = %d, must be in [1, 2^62]", ErrInvalid, capacity)
	}
	if err := checkPositive("Sensitivity", sensitivity); err != nil {
		return err
	}
	if math.IsNaN(lower) || math.IsInf(lower, 0) || math.IsInf(lower+sensitivity, 0) {
		return fmt.Errorf("%w: Lower = %v, must be finite with Lower+Sensitivity finite", ErrInvalid, lower)
	}
	// Every node sum must stay finite (a grid mechanism refuses ±Inf).
	if m := float64(capacity) * max(math.Abs(lower), math.Abs(lower+sensitivity)); m > 1e300 {
		return fmt.Errorf("%w: Capacity·max(|Lower|, |Lower+Sensitivity|) = %v, must be ≤ 1e300", ErrInvalid, m)
	}
	return nil
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return fmt.Errorf("%w: %s = %v, must be in (0, +Inf)", ErrInvalid, name, v)
	}
	return nil
}
