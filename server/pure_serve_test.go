package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestPureEpochPoliciesServed runs each pure-DP epoch policy that keeps
// noisy epoch statistics (Lazy-DP-TS, Anytime-Lazy-UCB, AdaP-UCB, DP-SE)
// through the service with the budget ε = 1, δ = 1e-6, horizon 10,000 and
// 3 arms: it is calibrated to ε = 1 on the certified basis and runs with
// grid = 1 (the secure discrete Laplace); the filter is charged the whole
// ε at the first decision and never more; after a restart the policy's
// state (its kept noisy values included) is exactly as before, and the
// decisions go on with the spent ε unchanged. Rewards are Bernoulli
// 0.75/0.51/0.26 from a seeded PCG. DP-SE runs with β = 0.5 so that its
// first epoch (R_1 = 497 pulls per arm) ends, and releases its means,
// before the restart.
func TestPureEpochPoliciesServed(t *testing.T) {
	for _, policy := range []string{"lazy-dp-ts", "anytime-lazy-ucb", "adap-ucb", "dp-se"} {
		t.Run(policy, func(t *testing.T) { testPureEpochServed(t, policy) })
	}
}

func testPureEpochServed(t *testing.T, policy string) {
	ts := newTS(t)
	extra, first, total := "", 300, 600 // decisions before the restart, in all
	if policy == "dp-se" {
		extra, first, total = `,"params":{"beta":0.5}`, 1500, 1600
	}
	code, c := ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b","c"],"policy":"`+policy+
		`","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}`+extra+`}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, c)
	}
	id := c["id"].(string)
	path := "/v1/experiments/" + id
	params, _ := c["params"].(map[string]any)
	if params["epsilon"] != 1.0 || params["grid"] != 1.0 {
		t.Errorf("params %v: want epsilon = 1 (calibrated on the certified basis) and grid = 1", params)
	}
	if w, _ := c["warning"].(string); c["accounting"] != AccountFilter || strings.Contains(w, "pays for only") {
		t.Errorf("accounting %v, warning %q: want a filter and a budget that pays for every decision", c["accounting"], w)
	}
	if d := fmt.Sprint(c["privacy"].(map[string]any)["derivation"]); !strings.Contains(d, "snapped discrete Laplace") ||
		!strings.Contains(d, "ε-DP (event-level) for the whole reward stream") {
		t.Errorf("the privacy statement does not state the guarantee and the grid noise in words: %q", d)
	}

	rng := rand.New(rand.NewPCG(2024, 11))
	means := map[string]float64{"a": 0.75, "b": 0.51, "c": 0.26}
	n := 0 // decisions and rewards so far
	spent := func() (float64, bool) {
		t.Helper()
		_, m := ts.admin("GET", path, "")
		pv := m["privacy"].(map[string]any)
		return pv["spent"].(map[string]any)["epsilon"].(float64), pv["exhausted"].(bool)
	}
	step := func() {
		t.Helper()
		ev := fmt.Sprint("e", n)
		code, d := ts.admin("POST", path+"/decisions", `{"event_id":"`+ev+`"}`)
		if code != 200 {
			t.Fatalf("decision %d: %d %v", n+1, code, d)
		}
		arm, _ := d["arm"].(string)
		mean, ok := means[arm]
		if !ok {
			t.Fatalf("decision %d: arm %v", n+1, d)
		}
		x := 0
		if rng.Float64() < mean {
			x = 1
		}
		if code, m := ts.admin("POST", path+"/rewards", fmt.Sprintf(`{"event_id":"%s","reward":%d}`, ev, x)); code != 202 {
			t.Fatalf("reward %d: %d %v", n+1, code, m)
		}
		n++
	}
	// state waits until every reward is applied and returns the policy's
	// state and the applied count.
	state := func() string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, m := ts.admin("GET", path, "")
			in := m["internal"].(map[string]any)
			if int(in["rewards_applied_seq"].(float64)) == n {
				b, _ := json.Marshal(in["policy_state"])
				return string(b)
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s only %v of %d rewards are applied", in["rewards_applied_seq"], n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	step()
	if s, ex := spent(); s != 1 || ex {
		t.Fatalf("after the first decision: spent ε = %v (exhausted %v), want exactly the budget 1", s, ex)
	}
	for n < first {
		step()
		if n%50 == 0 {
			if s, ex := spent(); s != 1 || ex {
				t.Fatalf("after %d decisions: spent ε = %v (exhausted %v), want 1", n, s, ex)
			}
		}
	}
	before := state()
	var st struct {
		State struct {
			Meter struct {
				Charged bool `json:"charged"`
			} `json:"meter"`
			Mu    []float64 `json:"mu"`
			Noisy []float64 `json:"noisy"`
		} `json:"state"`
		Options struct {
			Grid    bool
			Epsilon float64
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(before), &st); err != nil {
		t.Fatalf("policy state %s: %v", before, err)
	}
	if !st.State.Meter.Charged || !st.Options.Grid || st.Options.Epsilon != 1 {
		t.Errorf("policy state: charged %v, grid %v, ε %v; want true, true, 1", st.State.Meter.Charged, st.Options.Grid, st.Options.Epsilon)
	}
	kept := st.State.Mu
	if policy == "dp-se" {
		kept = st.State.Noisy
	}
	if len(kept) != 3 || kept[0] == 0 || kept[1] == 0 || kept[2] == 0 {
		t.Errorf("policy state has not released a mean of every arm before the restart: %s", before)
	}

	ts.restart()
	if after := state(); after != before {
		t.Fatalf("the policy state changed across the restart (a kept value redrawn?):\nbefore %s\nafter  %s", before, after)
	}
	if s, ex := spent(); s != 1 || ex {
		t.Fatalf("after the restart: spent ε = %v (exhausted %v), want 1 and not exhausted", s, ex)
	}
	for n < total {
		step()
	}
	state()
	_, m := ts.admin("GET", path, "")
	if s, ex := spent(); s != 1 || ex || m["decisions"] != float64(total) || m["frozen_decisions"] != 0.0 {
		t.Errorf("after %d decisions across a restart: spent ε = %v, exhausted %v, decisions %v, frozen %v; want 1, false, %d, 0",
			total, s, ex, m["decisions"], m["frozen_decisions"], total)
	}
}
