package privacy

import (
	"fmt"
	"math"
)

// Rényi differential privacy of the basic mechanisms (Mironov 2017).
// docs/accountant.md §2.2.
//
// A mechanism is (α, ε)-RDP when D_α(M(x)‖M(x')) ≤ ε for neighbouring x, x'.
// Curves of mechanisms run in sequence add order by order (RDPCurve.Compose);
// the (ε, δ) statement is the minimum over the grid of the classic or the
// improved conversion (RDPCurve.Epsilon). The Poisson-subsampled Gaussian is
// in sgm.go.
//
// Rounding: the closed forms below are evaluated so that they carry no
// cancellation, and then rounded up by a few ulps (or exactly, for α/(2σ²)),
// so a reported ε(α) is never below the exact value for the given inputs.

// DefaultOrders returns the default grid of Rényi orders: the integers 2..64
// and 128, 256, 512, 1024. Integer orders are exact for the subsampled
// Gaussian. Heavy composition (ε in the hundreds) wants orders near 1 too: use
// FractionalOrders then (docs/accountant.md pitfall 3). A fresh slice is returned.
func DefaultOrders() []float64 {
	o := make([]float64, 0, 67)
	for a := 2; a <= 64; a++ {
		o = append(o, float64(a))
	}
	return append(o, 128, 256, 512, 1024)
}

// FractionalOrders returns dp_accounting's DEFAULT_RDP_ORDERS: 1.1, 1.2, …,
// 10.9 (step 0.1), the integers 11..63, and 128, 256, 512, 1024 (docs/accountant.md
// T6). A fresh slice is returned.
func FractionalOrders() []float64 {
	o := make([]float64, 0, 156)
	for x := 1; x < 100; x++ {
		o = append(o, float64(10+x)/10)
	}
	for a := 11; a <= 63; a++ {
		o = append(o, float64(a))
	}
	return append(o, 128, 256, 512, 1024)
}

// GaussianRDP returns the RDP ε(α) = α/(2σ²) of the Gaussian mechanism with
// noise multiplier σ (noise standard deviation ÷ L2 sensitivity), rounded up
// exactly. σ = 0 gives +Inf.
func GaussianRDP(sigma, alpha float64) (float64, error) {
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	if err := checkOrder(alpha); err != nil {
		return 0, err
	}
	return gaussianRDP(sigma, alpha), nil
}

func gaussianRDP(sigma, alpha float64) float64 {
	switch {
	case sigma == 0:
		return math.Inf(1)
	case math.IsInf(sigma, 1):
		return 0
	}
	r := ratOf(alpha)
	d := ratSquare(sigma)
	d.Add(d, d)
	return floatUp(r.Quo(r, d))
}

// GaussianCurve returns the Gaussian mechanism's RDP curve on the given
// orders (DefaultOrders when orders is nil).
func GaussianCurve(sigma float64, orders []float64) (RDPCurve, error) {
	if err := checkSigma(sigma); err != nil {
		return RDPCurve{}, err
	}
	return curveOf(orders, func(a float64) float64 { return gaussianRDP(sigma, a) })
}

// LaplaceRDP returns the RDP of the Laplace mechanism with scale b = Δ/εL
// (Mironov 2017 Prop 6):
//
//	ε(α) = ln[α/(2α−1)·e^{(α−1)εL} + (α−1)/(2α−1)·e^{−αεL}] / (α−1).
//
// For (α−1)εL < 1 it is evaluated as log1p of
// [α·g((α−1)εL) + (α−1)·g(−αεL)]/(2α−1) with g(x) = eˣ−1−x ≥ 0, which has no
// cancellation (the first-order terms cancel exactly); otherwise in log form.
// The result is ≤ εL and ≤ PureRDP(εL, α).
func LaplaceRDP(epsL, alpha float64) (float64, error) {
	if err := checkEps(epsL); err != nil {
		return 0, err
	}
	if err := checkOrder(alpha); err != nil {
		return 0, err
	}
	return laplaceRDP(epsL, alpha), nil
}

func laplaceRDP(e, a float64) float64 {
	switch {
	case e == 0:
		return 0
	case math.IsInf(e, 1):
		return e
	}
	var v float64
	if (a-1)*e < 1 {
		num := (a*expm1MinusX((a-1)*e) + (a-1)*expm1MinusX(-a*e)) / (2*a - 1)
		v = math.Log1p(num) / (a - 1)
	} else {
		v = (math.Log(a/(2*a-1)) + (a-1)*e + math.Log1p((a-1)/a*math.Exp(-(2*a-1)*e))) / (a - 1)
	}
	return math.Min(roundUp(v, 16), e)
}

// LaplaceCurve returns the Laplace mechanism's RDP curve (scale Δ/εL).
func LaplaceCurve(epsL float64, orders []float64) (RDPCurve, error) {
	if err := checkEps(epsL); err != nil {
		return RDPCurve{}, err
	}
	return curveOf(orders, func(a float64) float64 { return laplaceRDP(epsL, a) })
}

// PureRDP returns an RDP bound for any ε-DP mechanism: the RDP of randomized
// response, which every ε-DP mechanism post-processes (dp_accounting;
// docs/accountant.md §2.2):
//
//	ε(α) = ln[(e^{αε} + e^{(1−α)ε})/(1 + e^ε)] / (α−1).
//
// With y = (α−1)ε the argument of the logarithm is 1 + A′ where
// A′ = expm1(y)·(expm1(ε) − expm1(−y))/(1 + e^ε), a product of positive
// factors, so it is evaluated without cancellation (in log space when it would
// overflow). The result never exceeds ε.
func PureRDP(eps, alpha float64) (float64, error) {
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	if err := checkOrder(alpha); err != nil {
		return 0, err
	}
	return pureRDP(eps, alpha), nil
}

func pureRDP(e, a float64) float64 {
	switch {
	case e == 0:
		return 0
	case math.IsInf(e, 1):
		return e
	}
	y := (a - 1) * e
	// ln A′ = ln expm1(y) + ln(e^ε − e^{−y}) − ln(1 + e^ε)
	lnAm1 := logExpm1(y) + math.Log1p(-math.Exp(-y-e)) - math.Log1p(math.Exp(-e))
	return math.Min(roundUp(log1pExp(lnAm1)/(a-1), 16), e)
}

// logExpm1 returns ln(eˣ − 1) for x > 0.
func logExpm1(x float64) float64 {
	if x > 1 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// log1pExp returns ln(1 + eˣ).
func log1pExp(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// PureCurve returns the RDP curve of an ε-DP mechanism (PureRDP).
func PureCurve(eps float64, orders []float64) (RDPCurve, error) {
	if err := checkEps(eps); err != nil {
		return RDPCurve{}, err
	}
	return curveOf(orders, func(a float64) float64 { return pureRDP(eps, a) })
}

// ComposeCurves adds curves on one grid of orders (sequential composition,
// Mironov 2017 Prop 1). With no curves it returns an error.
func ComposeCurves(curves ...RDPCurve) (RDPCurve, error) {
	if len(curves) == 0 {
		return RDPCurve{}, fmt.Errorf("%w: ComposeCurves needs at least one curve", ErrInvalid)
	}
	out := curves[0].Scale(1)
	for _, c := range curves[1:] {
		var err error
		if out, err = out.Compose(c); err != nil {
			return RDPCurve{}, err
		}
	}
	return out, out.Validate()
}

// curveOf evaluates f on orders (DefaultOrders when nil).
func curveOf(orders []float64, f func(float64) float64) (RDPCurve, error) {
	if orders == nil {
		orders = DefaultOrders()
	}
	c := RDPCurve{Orders: append([]float64(nil), orders...), Epsilons: make([]float64, len(orders))}
	for i, a := range c.Orders {
		if err := checkOrder(a); err != nil {
			return RDPCurve{}, fmt.Errorf("order %d: %w", i, err)
		}
		c.Epsilons[i] = f(a)
	}
	return c, nil
}

// expm1MinusX returns eˣ − 1 − x without cancellation (Taylor series for
// |x| < ½, where the first term x²/2 dominates; direct form otherwise, where
// the relative cancellation is at most a factor 4).
func expm1MinusX(x float64) float64 {
	if math.Abs(x) >= 0.5 {
		return math.Expm1(x) - x
	}
	term := x * x / 2
	sum := term
	for k := 3; k < 40; k++ {
		term *= x / float64(k)
		sum += term
		if math.Abs(term) < 1e-18*sum {
			break
		}
	}
	return sum
}

// roundUp moves a finite x up by n ulps. It covers the rounding error of a
// closed form evaluated with a handful of correctly rounded or faithfully
// rounded (math.Log, math.Exp, …) operations.
func roundUp(x float64, n int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	for range n {
		x = math.Nextafter(x, math.Inf(1))
	}
	return x
}

// roundDown moves a finite x > 0 down by n ulps (not below 0): the safe
// direction for μ, ρ and σ⁻¹ (docs/accountant.md pitfall 2).
func roundDown(x float64, n int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	for range n {
		if x <= 0 {
			return 0
		}
		x = math.Nextafter(x, 0)
	}
	return x
}

func checkSigma(sigma float64) error {
	if !(sigma >= 0) {
		return fmt.Errorf("%w: noise multiplier σ = %v must be ≥ 0", ErrInvalid, sigma)
	}
	return nil
}

func checkOrder(alpha float64) error {
	if !(alpha > 1) || math.IsInf(alpha, 1) {
		return fmt.Errorf("%w: Rényi order α = %v must be a finite number > 1", ErrInvalid, alpha)
	}
	return nil
}
