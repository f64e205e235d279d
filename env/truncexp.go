package env

import (
	"math"
	"math/rand/v2"
)

// TruncExp is an environment whose arm a draws from the exponential
// distribution with rate λ_a truncated to [0,1], with density
// λ e^{−λx}/(1 − e^{−λ}) on [0,1] ([OU] §5.2, docs/reproductions.md E2). The mean is
//
//	μ(λ) = 1/λ − e^{−λ}/(1 − e^{−λ}) = 1/λ − 1/(e^λ − 1),
//
// decreasing in λ from 1/2 (λ → 0) to 0 (λ → ∞). Construct it with
// [NewTruncExp].
type TruncExp struct {
	rates []float64
	c     []float64 // c_a = 1 − e^{−λ_a}, computed as −expm1(−λ_a)
	means []float64
	best  float64
}

// NewTruncExp returns a truncated-exponential environment with the given
// rates, each finite and > 0. The slice is copied. The error wraps
// [ErrSpec] and names the first bad rate and its position.
func NewTruncExp(rates []float64) (*TruncExp, error) {
	if err := checkArms("truncexp", len(rates)); err != nil {
		return nil, err
	}
	if err := checkPositive("truncexp rate", rates); err != nil {
		return nil, err
	}
	k := len(rates)
	e := &TruncExp{
		rates: clone(rates),
		c:     make([]float64, k),
		means: make([]float64, k),
	}
	for a, l := range rates {
		e.c[a] = -math.Expm1(-l)
		e.means[a] = TruncExpMean(l)
	}
	e.best = maxOf(e.means)
	return e, nil
}

// TruncExpMean returns the mean 1/λ − 1/(e^λ − 1) of the exponential
// distribution with rate λ > 0 truncated to [0,1]. For λ < 0.01 it uses
// the series 1/2 − λ/12 + λ³/720 − λ⁵/30240 + λ⁷/1209600 (from the
// Bernoulli-number expansion of x/(e^x − 1)), whose truncation error is
// below 1e-20 there, to avoid the cancellation of the closed form; above,
// the closed form's absolute error is below 1e-13 (the tests check both
// branches against mpmath).
func TruncExpMean(lambda float64) float64 {
	if lambda < 0.01 {
		l2 := lambda * lambda
		return 0.5 - lambda*(1.0/12-l2*(1.0/720-l2*(1.0/30240-l2/1209600)))
	}
	return 1/lambda - 1/math.Expm1(lambda)
}

// Rates returns a copy of the arm rates λ_a.
func (e *TruncExp) Rates() []float64 { return clone(e.rates) }

// K returns the number of arms.
func (e *TruncExp) K() int { return len(e.rates) }

// Means returns a copy of the arm means μ(λ_a).
func (e *TruncExp) Means() []float64 { return clone(e.means) }

// Best returns the largest mean (that of the smallest rate).
func (e *TruncExp) Best() float64 { return e.best }

// tinyRate is the rate below which Pull uses the expansion of the quantile
// in λ: U·(1 − e^{−λ}) would underflow for λ near the smallest normal
// float64, and the expansion is exact to rounding well before that.
const tinyRate = 1e-8

// Pull returns the inverse CDF at U, −ln(1 − U(1 − e^{−λ}))/λ, computed as
// −log1p(−U·c)/λ and clamped to 1 against rounding. For λ < 1e-8 it returns
// the expansion U − λU(1−U)/2, whose error O(λ²) is below 1e-16 there.
func (e *TruncExp) Pull(arm int, r *rand.Rand) float64 {
	l, c := e.rates[arm], e.c[arm]
	u := uniform(r)
	if l < tinyRate {
		return u - 0.5*l*u*(1-u)
	}
	return min(-math.Log1p(-u*c)/l, 1)
}

// Name returns "truncexp:λ_1,…,λ_K".
func (e *TruncExp) Name() string { return "truncexp:" + joinFloats(e.rates) }
