package privacy

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestBS16RoundedSafe checks that the BS16 closed forms land on the safe
// side of the mpmath oracle (T4), not merely within 1e-12 of it: ε at or
// above it, ρ at or below it (docs/accountant.md pitfall 2). An independent review
// found them evaluated without a rounding allowance.
func TestBS16RoundedSafe(t *testing.T) {
	raw, err := os.ReadFile("testdata/oracles.json")
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		T4 struct {
			Rho []struct {
				Eps   float64 `json:"eps"`
				Delta float64 `json:"delta"`
				RhoBS float64 `json:"rho_bs"`
			} `json:"rho_from_eps_delta"`
			Eps []struct {
				Rho   float64 `json:"rho"`
				Delta float64 `json:"delta"`
				EpsBS float64 `json:"eps_bs"`
			} `json:"eps_from_rho_delta"`
		} `json:"T4"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.T4.Rho) == 0 || len(o.T4.Eps) == 0 {
		t.Fatal("oracles.json has no T4 BS16 rows")
	}
	for _, r := range o.T4.Rho {
		got, err := ZCDPRhoBS(r.Eps, r.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if got > r.RhoBS || !relClose(got, r.RhoBS, 1e-12) {
			t.Errorf("ρ_BS(%v, %v) = %.17g, oracle %.17g: must be ≤ it and within 1e-12", r.Eps, r.Delta, got, r.RhoBS)
		}
	}
	for _, r := range o.T4.Eps {
		got, err := ZCDPEpsilonBS(r.Rho, r.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if got < r.EpsBS || !relClose(got, r.EpsBS, 1e-12) {
			t.Errorf("ε_BS(%v, %v) = %.17g, oracle %.17g: must be ≥ it and within 1e-12", r.Rho, r.Delta, got, r.EpsBS)
		}
	}
}

func relClose(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }
