package linear

import (
	"math"
	"testing"
)

// TestEq36ClosedForms pins Eq36RDP (the paper's Eq. 3.6 bound,
// ε(α) = ln(1 + Σ_{j=2}^{α} C(α,j)(√2·q/σ)^j)/(α − 1)) at the orders where the
// sum is short enough to write out: α = 2 has the single term 2q²/σ², and
// α = 3 adds C(3,3)(√2q/σ)³. A sum that stopped before j = α would give 0 at
// α = 2. (The log-space sum is good to about 1e-13 here, not 1 ulp.)
func TestEq36ClosedForms(t *testing.T) {
	for _, c := range []struct{ q, sigma float64 }{{0.3, 1}, {0.01, 0.5}, {0.9, 3}} {
		r := math.Sqrt2 * c.q / c.sigma
		want2 := math.Log1p(r * r)
		want3 := math.Log1p(3*r*r+r*r*r) / 2
		if got := Eq36RDP(c.q, c.sigma, 2); math.Abs(got-want2) > 1e-12*want2 {
			t.Errorf("Eq36RDP(q=%v, σ=%v, α=2) = %.17g, want ln(1 + 2q²/σ²) = %.17g", c.q, c.sigma, got, want2)
		}
		if got := Eq36RDP(c.q, c.sigma, 3); math.Abs(got-want3) > 1e-12*want3 {
			t.Errorf("Eq36RDP(q=%v, σ=%v, α=3) = %.17g, want %.17g", c.q, c.sigma, got, want3)
		}
	}
}
