package privacy

import (
	"fmt"
	"math"
)

// RDPCurve is a Rényi-DP guarantee on a grid of orders: the mechanism is
// (Orders[i], Epsilons[i])-RDP for every i (Mironov 2017). Curves of
// mechanisms run in sequence add order by order (Compose). Orders must be > 1.
type RDPCurve struct {
	Orders   []float64 `json:"orders"`
	Epsilons []float64 `json:"epsilons"`
}

// RDPConversion is the (ε, δ) statement obtained from an RDP curve.
type RDPConversion struct {
	Epsilon float64 `json:"epsilon"`
	Order   float64 `json:"order"`  // the Rényi order at which the minimum was attained
	Method  string  `json:"method"` // MethodImproved or MethodClassic
	// AtEdge reports that the optimal order is the smallest or largest order of
	// the grid, so a wider grid might give a smaller ε (docs/accountant.md pitfall 3).
	AtEdge bool `json:"at_edge"`
	// Warning explains AtEdge in one sentence (empty when the optimum is
	// interior).
	Warning string `json:"warning,omitempty"`
}

// Validate checks that the curve is well formed.
func (c RDPCurve) Validate() error {
	if len(c.Orders) == 0 || len(c.Orders) != len(c.Epsilons) {
		return fmt.Errorf("%w: RDP curve needs equal, non-zero numbers of orders and epsilons (got %d and %d)",
			ErrInvalid, len(c.Orders), len(c.Epsilons))
	}
	for i, a := range c.Orders {
		if !(a > 1) || math.IsInf(a, 1) {
			return fmt.Errorf("%w: RDP order %v at position %d must be a finite number > 1", ErrInvalid, a, i)
		}
		if !(c.Epsilons[i] >= 0) {
			return fmt.Errorf("%w: RDP ε(α=%v) = %v must be ≥ 0", ErrInvalid, a, c.Epsilons[i])
		}
	}
	return nil
}

// EpsilonClassic applies Mironov 2017 Prop 3: ε = min_α ε(α) + ln(1/δ)/(α−1).
func (c RDPCurve) EpsilonClassic(delta float64) (RDPConversion, error) {
	return c.convert(delta, MethodClassic, func(a, e, lnDelta float64) (float64, float64) {
		t := -lnDelta / (a - 1)
		return e + t, e + t
	})
}

// EpsilonImproved applies Balle et al. 2020 Thm 21 (≡ CKS20 Prop 12):
//
//	ε = min_α ε(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1).
//
// It is never larger than the classic conversion at the same order, because
// ln(1−1/α) − ln α/(α−1) < 0 for every α > 1. docs/accountant.md §2.3.
//
// ln(1−1/α) is computed as ln((α−1)/α) for α ≤ 2, where α−1 is exact
// (Sterbenz), so its error is about 2⁻⁵³ absolute; Log1p(−1/α) would carry
// the rounding of 1/α (2⁻⁵³ absolute) into 1−1/α ≈ α−1, a relative error
// 2⁻⁵³/(α−1) that the 2⁻⁵⁰ allowance no longer covers for α−1 below about
// 0.005 (the result could then fall below the exact ε).
func (c RDPCurve) EpsilonImproved(delta float64) (RDPConversion, error) {
	return c.convert(delta, MethodImproved, func(a, e, lnDelta float64) (float64, float64) {
		t1 := math.Log1p(-1 / a)
		if a <= 2 {
			t1 = math.Log((a - 1) / a)
		}
		t2 := -(lnDelta + math.Log(a)) / (a - 1)
		return e + t1 + t2, e + math.Abs(t1) + math.Abs(t2) + math.Abs(lnDelta)/(a-1)
	})
}

// Epsilon returns the better (smaller) of the two valid conversions.
func (c RDPCurve) Epsilon(delta float64) (RDPConversion, error) {
	imp, err := c.EpsilonImproved(delta)
	if err != nil {
		return RDPConversion{}, err
	}
	cls, err := c.EpsilonClassic(delta)
	if err != nil {
		return RDPConversion{}, err
	}
	if cls.Epsilon < imp.Epsilon {
		return cls, nil
	}
	return imp, nil
}

// convert minimises f over the grid. f returns the converted ε at one order
// and the magnitude of the terms it added; 8 ulps of that magnitude are added
// to the result so that the rounding of the conversion can only raise ε.
func (c RDPCurve) convert(delta float64, method string, f func(a, e, lnDelta float64) (float64, float64)) (RDPConversion, error) {
	if err := c.Validate(); err != nil {
		return RDPConversion{}, err
	}
	if err := checkDelta(delta); err != nil {
		return RDPConversion{}, err
	}
	lnDelta := logSub(delta)
	best := RDPConversion{Epsilon: math.Inf(1), Method: method, Order: math.NaN()}
	minA, maxA := math.Inf(1), math.Inf(-1)
	for i, a := range c.Orders {
		minA, maxA = math.Min(minA, a), math.Max(maxA, a)
		if c.Epsilons[i] == 0 {
			// D_α = 0: the output distributions are identical, so the
			// mechanism is (0, 0)-DP (the conversions would only give their
			// δ-dependent floor).
			return RDPConversion{Epsilon: 0, Order: a, Method: method}, nil
		}
		e, mag := f(a, c.Epsilons[i], lnDelta)
		e += mag * 0x1p-50
		if e < best.Epsilon {
			best.Epsilon, best.Order = e, a
		}
	}
	if best.Epsilon < 0 {
		best.Epsilon = 0
	}
	best.AtEdge = len(c.Orders) > 1 && (best.Order == minA || best.Order == maxA)
	if best.AtEdge {
		side := "smallest"
		if best.Order == maxA {
			side = "largest"
		}
		best.Warning = fmt.Sprintf("the optimal Rényi order %v is the %s order of the grid; "+
			"a wider grid may give a smaller ε (docs/accountant.md pitfall 3)", best.Order, side)
	}
	return best, nil
}

// Compose adds other to c order by order. Both curves must be on the same
// grid of orders.
func (c RDPCurve) Compose(other RDPCurve) (RDPCurve, error) {
	if len(c.Orders) != len(other.Orders) {
		return RDPCurve{}, fmt.Errorf("%w: cannot compose RDP curves on different order grids (%d vs %d orders)",
			ErrInvalid, len(c.Orders), len(other.Orders))
	}
	out := RDPCurve{Orders: append([]float64(nil), c.Orders...), Epsilons: make([]float64, len(c.Orders))}
	for i := range c.Orders {
		if c.Orders[i] != other.Orders[i] {
			return RDPCurve{}, fmt.Errorf("%w: RDP order grids differ at position %d (%v vs %v)",
				ErrInvalid, i, c.Orders[i], other.Orders[i])
		}
		out.Epsilons[i] = c.Epsilons[i] + other.Epsilons[i]
	}
	return out, nil
}

// Scale returns the curve of n-fold self-composition (ε(α) multiplied by n).
func (c RDPCurve) Scale(n float64) RDPCurve {
	out := RDPCurve{Orders: append([]float64(nil), c.Orders...), Epsilons: make([]float64, len(c.Orders))}
	for i, e := range c.Epsilons {
		out.Epsilons[i] = n * e
	}
	return out
}
