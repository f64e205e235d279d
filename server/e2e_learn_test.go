package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// TestE2ELearnsAtEpsilonOne: issue 11's acceptance, over HTTP against the
// real binary. The README quickstart's experiment (3 arms, ε = 1,
// δ = 1e-6, horizon 10,000) with "policy": "auto" (the service runs the
// recommender and picks a pure-DP epoch policy), fed Bernoulli(0.26, 0.51,
// 0.75) rewards for 10,000 decisions (seeded: PCG(2026, 11)), plays the best
// arm in at least 80% of the last 2,000 decisions, never spends more than
// its budget, and after a SIGKILL halfway continues from the same released
// state (the kept noisy values are the ones it had before the kill).
func TestE2ELearnsAtEpsilonOne(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	p := start(t, db)
	arms := []string{"low", "mid", "high"}
	means := map[string]float64{"low": 0.26, "mid": 0.51, "high": 0.75}
	id := create(t, p, map[string]any{"name": "quickstart", "arms": arms, "policy": "auto", "horizon": 10000,
		"budget": map[string]any{"epsilon": 1, "delta": 1e-6}})
	_, exp := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	policy := str(exp, "policy")
	t.Logf("auto chose %s", policy)

	rng := rand.New(rand.NewPCG(2026, 11))
	const total, batch, tail = 10000, 20, 2000
	best := 0
	played := 0
	spent := func() float64 {
		_, m := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		return num(m, "privacy", "spent", "epsilon")
	}
	round := func(n int) {
		code, m := call(t, "POST", p.url+"/v1/experiments/"+id+"/decisions", adminKey, map[string]any{"count": n})
		if code != 200 {
			t.Fatalf("decisions: %d %v", code, m)
		}
		var rs []map[string]any
		for _, d := range m["decisions"].([]any) {
			d := d.(map[string]any)
			arm := d["arm"].(string)
			r := 0.0
			if rng.Float64() < means[arm] {
				r = 1
			}
			if played >= total-tail && arm == "high" {
				best++
			}
			played++
			rs = append(rs, map[string]any{"event_id": d["event_id"], "reward": r})
		}
		if code, m := call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"rewards": rs}); code != 202 {
			t.Fatalf("rewards: %d %v", code, m)
		}
	}
	for played < total/2 {
		round(batch)
	}
	if s := spent(); s > 1 {
		t.Fatalf("spent ε = %v > 1 after %d decisions", s, played)
	}
	before := released(t, p, id)

	// SIGKILL halfway; every reward so far was acknowledged (durable).
	p.kill()
	p = start(t, db)
	after := released(t, p, id)
	if !slices.Equal(before.Mu, after.Mu) || !slices.Equal(before.O, after.O) {
		t.Fatalf("the released state changed across the SIGKILL:\n before μ̃ %v O %v\n after  μ̃ %v O %v", before.Mu, before.O, after.Mu, after.O)
	}
	for played < total {
		round(batch)
	}
	s := spent()
	_, exp = call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	if num(exp, "frozen_decisions") != 0 || exp["privacy"].(map[string]any)["exhausted"] != false {
		t.Errorf("the experiment froze (frozen decisions %v, exhausted %v): the policy must keep deciding after its one charge, also after the restart",
			num(exp, "frozen_decisions"), exp["privacy"].(map[string]any)["exhausted"])
	}
	share := float64(best) / tail
	t.Logf("%s: best arm in %d of the last %d decisions (%.1f%%); spent ε = %v of 1", policy, best, tail, 100*share, s)
	if share < 0.8 {
		t.Errorf("%s played the best arm in %.1f%% of the last %d decisions, want ≥ 80%%", policy, 100*share, tail)
	}
	if s > 1 {
		t.Errorf("spent ε = %v > the budget 1", s)
	}
}

// releasedState is what an epoch policy has released: the kept noisy means
// and their epoch sizes.
type releasedState struct {
	Mu []float64 `json:"mu"`
	O  []int     `json:"o"`
}

// released reads the experiment's released state from its internal view.
func released(t *testing.T, p *proc, id string) releasedState {
	t.Helper()
	_, m := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	in, _ := m["internal"].(map[string]any)
	b, _ := json.Marshal(in["policy_state"])
	var st struct {
		State releasedState `json:"state"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.State.Mu) == 0 {
		t.Fatalf("policy state %s: %v (the test reads the epoch policies' released μ̃ and O)", fmt.Sprint(in["policy_state"]), err)
	}
	return st.State
}
