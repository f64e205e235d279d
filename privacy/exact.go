package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// Exact arithmetic on float64 parameters. Every finite float64 is an integer
// multiple of 2⁻¹⁰⁷⁴ and its square a multiple of 2⁻²¹⁴⁸, so sums of
// parameters and of their squares are held exactly as fixed-point integers
// with scale 2^fixedBits and rounded once, in the safe direction. The filters
// use this to refuse exactly the first step that would exceed their budget,
// and the composition functions to round the composed parameter up
// (docs/accountant.md pitfall 2, docs/privacy-model.md rule 1). Integer additions keep a Spend at
// well under a microsecond (big.Rat would normalise by a GCD every time).

// fixedBits is the fixed-point scale: x·2^fixedBits is an integer for every
// float64 x and every square of one (2·1126 < 2400 covers the 53-bit
// mantissa of the smallest subnormal).
const fixedBits = 2400

// fixedPrec is a big.Float precision that holds every fixed value exactly
// (squares of float64 are below 2^2048, so values stay below 2^4448 after
// scaling, even summed 2^100 times).
const fixedPrec = fixedBits + 2048 + 160

// fixedOf returns x·2^fixedBits. x must be finite and ≥ 0.
func fixedOf(x float64) *big.Int { return fixedInto(new(big.Int), x, false) }

// fixedSquare returns x²·2^fixedBits exactly.
func fixedSquare(x float64) *big.Int { return fixedInto(new(big.Int), x, true) }

// fixedInto sets z to x·2^fixedBits (or x²·2^fixedBits) and returns z.
func fixedInto(z *big.Int, x float64, square bool) *big.Int {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		panic(fmt.Sprintf("privacy: fixed-point value of %v", x))
	}
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [½, 1)
	z.SetInt64(int64(frac * (1 << 53)))
	if square {
		z.Mul(z, z)
		return shift(z, 2*(exp-53)+fixedBits)
	}
	return shift(z, exp-53+fixedBits)
}

func shift(m *big.Int, s int) *big.Int {
	if s >= 0 {
		return m.Lsh(m, uint(s))
	}
	// Only trailing zero bits are dropped (see fixedBits); check it.
	if m.TrailingZeroBits() < uint(-s) && m.Sign() != 0 {
		panic("privacy: fixed-point scale too small")
	}
	return m.Rsh(m, uint(-s))
}

// fixedFloat returns v·2^−fixedBits as an exact big.Float.
func fixedFloat(v *big.Int) *big.Float {
	f := new(big.Float).SetPrec(fixedPrec).SetInt(v)
	return f.SetMantExp(f, -fixedBits)
}

// fixedUp returns the smallest float64 ≥ v·2^−fixedBits (+Inf beyond range).
func fixedUp(v *big.Int) float64 {
	f, acc := fixedFloat(v).Float64()
	if acc == big.Below {
		return math.Nextafter(f, math.Inf(1))
	}
	return f
}

// fixedDown returns the largest float64 ≤ v·2^−fixedBits.
func fixedDown(v *big.Int) float64 {
	f, acc := fixedFloat(v).Float64()
	if acc == big.Above {
		return math.Nextafter(f, math.Inf(-1))
	}
	if math.IsInf(f, 1) {
		return math.MaxFloat64
	}
	return f
}

// fixedSqrtUp returns the smallest float64 s ≥ 0 with s² ≥ v·2^−fixedBits.
// The start is the square root to 128 bits (within an ulp), so each
// correction loop takes at most a couple of steps; they are bounded by
// maxUlpSteps, and if the bound were ever hit the result is moved to the
// safe side (+Inf) rather than returned unverified.
func fixedSqrtUp(v *big.Int) float64 {
	s := sqrtNear(fixedFloat(v))
	for i := 0; i < maxUlpSteps && s > 0 && !math.IsInf(s, 1) && fixedSquare(math.Nextafter(s, 0)).Cmp(v) >= 0; i++ {
		s = math.Nextafter(s, 0)
	}
	for i := 0; !math.IsInf(s, 1) && fixedSquare(s).Cmp(v) < 0; i++ {
		if i == maxUlpSteps {
			return math.Inf(1)
		}
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// fixedSqrtDown returns the largest float64 s ≥ 0 with s² ≤ v·2^−fixedBits
// (bounded like fixedSqrtUp; the safe side is 0).
func fixedSqrtDown(v *big.Int) float64 {
	s := sqrtNear(fixedFloat(v))
	for i := 0; s > 0 && fixedSquare(s).Cmp(v) > 0; i++ {
		if i == maxUlpSteps {
			return 0
		}
		s = math.Nextafter(s, 0)
	}
	for range maxUlpSteps {
		if math.IsInf(s, 1) {
			break
		}
		n := math.Nextafter(s, math.Inf(1))
		if math.IsInf(n, 1) || fixedSquare(n).Cmp(v) > 0 {
			break
		}
		s = n
	}
	return s
}

// maxUlpSteps bounds the ulp-by-ulp corrections after a square root that is
// already within about one ulp.
const maxUlpSteps = 64

// sqrtNear returns the float64 nearest to √x rounded from 128 bits (within
// an ulp of √x), for any x ≥ 0, including values far below the float64
// range such as squares of subnormals (math.Sqrt of x rounded to float64
// first would start billions of ulps away there).
func sqrtNear(x *big.Float) float64 {
	s, _ := new(big.Float).SetPrec(128).Sqrt(x).Float64()
	return s
}

// fixedRatString writes v·2^−fixedBits as a reduced rational "p/q".
func fixedRatString(v *big.Int) string {
	d := new(big.Int).Lsh(big.NewInt(1), fixedBits)
	return new(big.Rat).SetFrac(v, d).RatString()
}

// fixedParseRat parses a rational "p/q" (or an integer or decimal) that is an
// exact multiple of 2^−fixedBits, as written by fixedRatString.
func fixedParseRat(s string) (*big.Int, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a rational number", s)
	}
	num := new(big.Int).Lsh(r.Num(), fixedBits)
	q, rem := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		return nil, fmt.Errorf("%q is not a multiple of 2^-%d", s, fixedBits)
	}
	return q, nil
}

// ratOf returns x as an exact rational. x must be finite.
func ratOf(x float64) *big.Rat {
	r := new(big.Rat).SetFloat64(x)
	if r == nil {
		panic("privacy: ratOf of a non-finite value")
	}
	return r
}

// ratSquare returns x² exactly.
func ratSquare(x float64) *big.Rat {
	r := ratOf(x)
	return r.Mul(r, r)
}

// floatUp returns the smallest float64 ≥ r (+Inf if r exceeds the float64
// range).
func floatUp(r *big.Rat) float64 {
	f, exact := r.Float64()
	if exact {
		return f
	}
	if !math.IsInf(f, 0) && ratOf(f).Cmp(r) < 0 {
		return math.Nextafter(f, math.Inf(1))
	}
	return f
}

// sqrtUp returns the smallest float64 s ≥ 0 with s² ≥ r (r ≥ 0), or +Inf
// when that exceeds the float64 range (bounded like fixedSqrtUp).
func sqrtUp(r *big.Rat) float64 {
	s := sqrtNear(new(big.Float).SetPrec(256).SetRat(r))
	for i := 0; i < maxUlpSteps && s > 0 && !math.IsInf(s, 1) && ratSquare(math.Nextafter(s, 0)).Cmp(r) >= 0; i++ {
		s = math.Nextafter(s, 0)
	}
	for i := 0; !math.IsInf(s, 1) && ratSquare(s).Cmp(r) < 0; i++ {
		if i == maxUlpSteps {
			return math.Inf(1)
		}
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}
