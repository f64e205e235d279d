package linear

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDGSLambdaMinRefreshSchedule: DGS-LinUCB's certified λ_min(A) bound
// (its noise scale is 1/λ_min) is refreshed after each of the first 64
// updates and then every 64th, so right after update s on that schedule it
// is at least the bound certified on the current A.
func TestDGSLambdaMinRefreshSchedule(t *testing.T) {
	const d = 3
	p, err := NewDGSLinUCB(DGSLinUCBOptions{Dim: d, Horizon: 1000, Rho: 1, Lambda: 1, Alpha: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, d)
	check := map[int]bool{1: true, 10: true, 63: true, 64: true, 128: true, 192: true}
	for s := 1; s <= 192; s++ {
		var n float64
		for i := range x {
			x[i] = r.NormFloat64()
			n += x[i] * x[i]
		}
		for i := range x {
			x[i] /= math.Sqrt(n)
		}
		p.Update(x, 0.5)
		if check[s] {
			if now := newBLEig(d).lowerBound(p.a, 1); p.lamLow < now {
				t.Errorf("after update %d: λ_min bound %v, below the %v certified on the current A (not refreshed)", s, p.lamLow, now)
			}
		}
	}
	if !(p.lamLow > 1) {
		t.Errorf("λ_min bound %v never rose above the floor λ = 1", p.lamLow)
	}
}
