package privacy

import (
	"math"
	"math/big"
)

// Arbitrary-precision oracles shared by the tests: math/big values at
// bigPrec bits, computed without any of the float64 code under test.

const bigPrec = 320

func bigF(x float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }
func bigNew() *big.Float        { return new(big.Float).SetPrec(bigPrec) }

// bigHalfLn2Pi is ½ ln(2π) to 100 digits.
var bigHalfLn2Pi, _ = bigNew().SetString("0.918938533204672741780329736405617639861397473637783412817151540482765695927260397694743298635954197622")

// relToExact returns (got − exact)/exact for an exact value given as a
// decimal string, computed at bigPrec bits so that no float64 rounding of the
// oracle interferes: its sign says whether got is above or below. ok is
// false when exact does not parse.
func relToExact(got float64, exact string) (rel float64, ok bool) {
	e, ok := bigNew().SetString(exact)
	if !ok {
		return 0, false
	}
	rel, _ = bigNew().Quo(bigNew().Sub(bigF(got), e), e).Float64()
	return rel, true
}

// bigAtanh2 returns 2·atanh(z) = 2 Σ z^(2k+1)/(2k+1) for |z| ≤ 1/3.
func bigAtanh2(z *big.Float) *big.Float {
	z2 := bigNew().Mul(z, z)
	term := bigNew().Set(z)
	sum := bigNew().Set(z)
	eps := bigF(0x1p-330)
	for k := 1; k < 500; k++ {
		term.Mul(term, z2)
		q := bigNew().Quo(term, bigF(float64(2*k+1)))
		sum.Add(sum, q)
		if bigNew().Abs(q).Cmp(eps) < 0 {
			break
		}
	}
	return sum.Mul(sum, bigF(2))
}

// bigLn2Val is ln 2 = 2 atanh(1/3).
var bigLn2Val = bigAtanh2(bigNew().Quo(bigF(1), bigF(3)))

func bigLn2() *big.Float { return bigNew().Set(bigLn2Val) }

// bigLog returns ln x for x > 0 to about 310 bits: x = m·2^e with m in
// [1/2, 1), ln m = 2 atanh((m−1)/(m+1)).
func bigLog(x *big.Float) *big.Float {
	m := bigNew()
	e := x.MantExp(m)
	z := bigNew().Quo(bigNew().Sub(m, bigF(1)), bigNew().Add(m, bigF(1)))
	r := bigAtanh2(z)
	return r.Add(r, bigNew().Mul(bigF(float64(e)), bigLn2()))
}

// bigExp returns e^x to about 310 bits: x = k ln 2 + r, |r| ≤ ln 2 / 2,
// then Taylor's series.
func bigExp(x *big.Float) *big.Float {
	ln2 := bigLn2()
	kf, _ := bigNew().Quo(x, ln2).Float64()
	k := math.Round(kf)
	r := bigNew().Sub(x, bigNew().Mul(bigF(k), ln2))
	sum, term := bigF(1), bigF(1)
	eps := bigF(0x1p-330)
	for n := 1; n < 500; n++ {
		term.Mul(term, r)
		term.Quo(term, bigF(float64(n)))
		sum.Add(sum, term)
		if bigNew().Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}
