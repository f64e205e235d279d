package noise

import (
	"math"
	"math/big"
)

// Grid snapping shared by [GridLaplace] and [GridGaussian].
//
// Mironov (2012) shows that adding floating-point noise to a real value leaks
// the value through the low-order bits of the sum; his remedy ("snapping") is
// to make the released value a function of a value on a coarse power-of-two
// grid. Google's differential-privacy library (go/noise/laplace_noise.go)
// applies it without any floating-point noise at all: it rounds the input to
// the nearest multiple of a granularity g = 2^⌈log₂(scale/2⁴⁰)⌉ and adds g
// times an integer noise drawn exactly. We do the same, with the integer
// noise from CKS20's exact samplers and all sums in exact integer arithmetic.
//
// Why the rounding must be paid for: with m(x) = round(x/g), neighbouring
// inputs with |x − x′| ≤ Δ give |m(x) − m(x′)| ≤ Δ/g + 1 = (Δ + g)/g, so the
// integer query m has sensitivity (Δ + g)/g, not Δ/g (docs/accountant.md, pitfall
// 11: "add the grid step to the sensitivity").

// granularityBits is the 40 of g = 2^⌈log₂(scale/2⁴⁰)⌉: the grid is at most
// 2⁻³⁹ of the noise scale, so snapping costs a relative 2⁻³⁹ of sensitivity
// per unit of scale/Δ and is invisible in the utility.
const granularityBits = 40

// minScale is the smallest noise scale accepted: scale/2⁴⁰ must be a normal
// float64 (≥ 2⁻¹⁰²²), so that the grid step is exact and x/g is computed
// without subnormal rounding.
const minScale = 0x1p-982

// granularity returns g = the smallest power of two ≥ scale/2⁴⁰ and its
// exponent e (g = 2^e), for a finite scale ≥ minScale.
func granularity(scale float64) (g float64, e int) {
	s := math.Ldexp(scale, -granularityBits) // exact: the result is normal
	frac, exp := math.Frexp(s)               // s = frac·2^exp, frac ∈ [½, 1)
	if frac == 0.5 {
		exp-- // s is a power of two
	}
	return math.Ldexp(1, exp), exp
}

// snapIndex sets z to round(x/2^e) (half away from zero) and returns z. x
// must be finite; the computation is exact.
func snapIndex(z *big.Int, x float64, e int) *big.Int {
	v := math.Ldexp(x, -e) // exact unless it overflows or underflows
	if math.Abs(v) < 0x1p62 {
		// An underflowed v is below 2⁻¹⁰²² and rounds to 0 either way.
		return z.SetInt64(int64(math.Round(v)))
	}
	// |x/g| ≥ 2⁶² > 2⁵³, so x/g is an integer: convert it exactly.
	f := new(big.Float).SetFloat64(x)
	f.SetMantExp(f, -e)
	f.Int(z)
	return z
}

// gridValue returns the float64 nearest to k·2^e (one correct rounding, ±Inf
// on overflow). It is a function of k alone, so releasing it is
// post-processing of k.
func gridValue(k *big.Int, e int) float64 {
	if k.IsInt64() {
		if i := k.Int64(); i > -1<<53 && i < 1<<53 {
			return math.Ldexp(float64(i), e) // exact (no underflow: 2^e is normal)
		}
	}
	f := new(big.Float).SetInt(k) // exact: the precision grows to fit k
	f.SetMantExp(f, e)
	v, _ := f.Float64()
	return v
}
