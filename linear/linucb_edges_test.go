package linear

import (
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// TestLinearOptionEnds: the option checks of LinUCB/LinTS and of the
// MT-LinUCB/LinTS baselines at their closed ends (accepted) and just past
// them (refused with the range named); a disjoint update of arm K panics.
func TestLinearOptionEnds(t *testing.T) {
	if err := checkLinear("x", 2, 1, 1, true); err != nil {
		t.Errorf("disjoint with K = 1: %v", err)
	}
	if err := checkLinear("x", 2, 0, 1, true); err == nil || !strings.Contains(err.Error(), "K = 0 to be ≥ 1") {
		t.Errorf("disjoint with K = 0: %v", err)
	}
	ok := MTLinOptions{Dim: 200, Horizon: 10, Epsilon0: 1e-6, Lambda: 1}
	if err := checkMTLin("x", ok); err != nil {
		t.Errorf("d = 200, ε0 = 1e-6: %v", err)
	}
	bad := ok
	bad.Dim = 201
	if err := checkMTLin("x", bad); err == nil || !strings.Contains(err.Error(), "outside [1, 200]") {
		t.Errorf("d = 201: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "arm 3 outside [0, 3)") {
				t.Errorf("disjoint update of arm 3 of 3: panic %v, want one naming the range", r)
			}
		}()
		armIndex("x", true, 3, 3)
	}()
	if linucbOptions(bandit.Setting{Dim: 2, K: 3}, bandit.Params{"disjoint": 1}).Disjoint != true {
		t.Error("linucb: disjoint = 1 must select the per-arm models")
	}
}
