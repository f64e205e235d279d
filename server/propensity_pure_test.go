package server

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPurePropensityServed: the served pure-DP epoch policies state their
// propensities (issue 11), from released state only: Lazy-DP-TS (Monte
// Carlo after its initial pulls) and AdaP-UCB (exact), with the budget
// ε = 1, δ = 1e-6, horizon 10,000 and 3 arms. Each decision asked with
// propensity gets a probability in [0, 1] (1 for the initial pulls and for
// every exact one), the filter is charged ε once and no more, and after a
// restart a repeated event id returns the stored propensity.
func TestPurePropensityServed(t *testing.T) {
	for _, policy := range []string{"lazy-dp-ts", "adap-ucb"} {
		t.Run(policy, func(t *testing.T) {
			ts := newTS(t)
			id := ts.create(`{"name":"x","arms":["a","b","c"],"policy":"` + policy +
				`","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}}`)
			path := "/v1/experiments/" + id
			rng := rand.New(rand.NewPCG(2025, 11))
			means := map[string]float64{"a": 0.26, "b": 0.51, "c": 0.75}
			exact := policy == "adap-ucb"
			for i := range 60 {
				ev := fmt.Sprint("e", i)
				code, d := ts.admin("POST", path+"/decisions", `{"event_id":"`+ev+`","propensity":true}`)
				if code != 200 {
					t.Fatalf("decision %d: %d %v", i, code, d)
				}
				p, ok := d["propensity"].(float64)
				if !ok || p < 0 || p > 1 {
					t.Fatalf("decision %d: propensity %v in %v, want a probability", i, d["propensity"], d)
				}
				draws, has := d["propensity_draws"]
				switch {
				case i < 3: // the initial pulls, in arm order: certain
					if p != 1 || has || d["arm"] != []string{"a", "b", "c"}[i] {
						t.Errorf("initial decision %d: %v, want arm %d with exact propensity 1", i, d, i)
					}
				case exact:
					if p != 1 || has {
						t.Errorf("decision %d: %v, want exact propensity 1 (a deterministic rule)", i, d)
					}
				default:
					if draws != float64(propensityDraws) {
						t.Errorf("decision %d: propensity_draws %v, want %d", i, draws, propensityDraws)
					}
				}
				x := 0
				if rng.Float64() < means[d["arm"].(string)] {
					x = 1
				}
				if code, m := ts.admin("POST", path+"/rewards", fmt.Sprintf(`{"event_id":"%s","reward":%d}`, ev, x)); code != 202 {
					t.Fatalf("reward %d: %d %v", i, code, m)
				}
			}
			code, d := ts.admin("POST", path+"/decisions", `{"event_id":"p1","propensity":true}`)
			if code != 200 {
				t.Fatalf("decision p1: %d %v", code, d)
			}
			first, ok := d["propensity"].(float64)
			if !ok || first < 0 || first > 1 {
				t.Fatalf("decision p1: propensity %v", d["propensity"])
			}
			spent := func() float64 {
				t.Helper()
				_, m := ts.admin("GET", path, "")
				return m["privacy"].(map[string]any)["spent"].(map[string]any)["epsilon"].(float64)
			}
			if s := spent(); s != 1 {
				t.Errorf("spent ε = %v after 61 decisions with propensities, want 1 (charged once)", s)
			}
			ts.restart()
			_, again := ts.admin("POST", path+"/decisions", `{"event_id":"p1"}`)
			if again["arm"] != d["arm"] || again["propensity"] != d["propensity"] || again["propensity_draws"] != d["propensity_draws"] {
				t.Errorf("repeated event id after a restart: %v, first answer %v", again, d)
			}
			if s := spent(); s != 1 {
				t.Errorf("spent ε = %v after the restart, want 1", s)
			}
		})
	}
}
