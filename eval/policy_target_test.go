package eval

import (
	"math"
	"testing"
)

// A deterministic index rule is exact (a point mass on UCB1's first unseen
// arm); Thompson sampling is Monte Carlo, with its stated standard error.
func TestPolicyTarget(t *testing.T) {
	l := uniformLog(100, []float64{0.5, 0.5, 0.5, 0.5}, 0, 1)
	d, info, err := PolicyTarget(l, "ucb1", 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if info.Draws != 0 || info.SE != 0 || d.At(7, 0, 0) != 1 || d.At(7, 1, 0) != 0 {
		t.Errorf("ucb1: draws %d, se %v, π %v", info.Draws, info.SE, d.Values)
	}
	if err := d.checkPolicy(l, "ucb1"); err != nil {
		t.Error(err)
	}
	d, info, err = PolicyTarget(l, "beta-ts", 4000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if info.Draws != 4000 || math.Abs(info.SE-0.5/math.Sqrt(4000)) > 1e-15 {
		t.Errorf("beta-ts: draws %d, se %v", info.Draws, info.SE)
	}
	// The untrained Beta(1,1) posteriors are exchangeable: 1/4 each,
	// within 4 standard errors.
	for a := range 4 {
		if p := d.At(0, a, 0); math.Abs(p-0.25) > 4*info.SE {
			t.Errorf("beta-ts: π(%d) = %v", a, p)
		}
	}
	if err := d.checkPolicy(l, "beta-ts"); err != nil {
		t.Error(err)
	}
	if _, _, err := PolicyTarget(l, "linucb", 10, 1); err == nil {
		t.Error("contextual policy accepted")
	}
	if _, _, err := PolicyTarget(l, "ucb1", 0, 1); err == nil {
		t.Error("0 draws accepted")
	}
	if ok, err := Learns("ucb1:width=1"); !ok || err != nil {
		t.Errorf("Learns(ucb1) = %v, %v", ok, err)
	}
	if _, err := Learns("nope"); err == nil {
		t.Error("unknown policy: no error")
	}
}
