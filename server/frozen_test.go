package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// TestFrozenExperimentLeavesPolicyAlone kills "a frozen (exhausted)
// experiment still calls the policy's Select" (issue 14). Once the privacy
// filter has refused a step and on_exhausted is "freeze", decisions are
// drawn from the past ones (frozenArm) and the policy must not run: a
// Select on a private policy is a release the filter did not pay for (for
// ts-gaussian it would also advance its round counter). A ts-gaussian
// experiment with a tiny budget is driven decide→reward until the filter
// refuses; then 50 more decisions (with rewards, which a frozen decision's
// policy never learns from) must leave the policy's internal state
// byte-for-byte unchanged and count as frozen. Before the freeze the
// policy must have run exactly the decisions that were not frozen.
func TestFrozenExperimentLeavesPolicyAlone(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"frozen","arms":["a","b"],"policy":"ts-gaussian","horizon":1000,` +
		`"budget":{"mu":1.5,"delta":1e-6},"on_exhausted":"freeze"}`)
	path := "/v1/experiments/" + id
	get := func() map[string]any {
		t.Helper()
		code, m := ts.admin("GET", path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %v", path, code, m)
		}
		return m
	}
	exhausted := func(m map[string]any) bool {
		pr, _ := m["privacy"].(map[string]any)
		return pr["exhausted"] == true
	}
	policyState := func(m map[string]any) []byte {
		t.Helper()
		in, _ := m["internal"].(map[string]any)
		st, ok := in["policy_state"]
		if !ok || st == nil {
			t.Fatalf("GET %s as admin has no internal.policy_state: %v", path, m)
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	step := 0
	decide := func() {
		t.Helper()
		step++
		ev := fmt.Sprint("e", step)
		code, d := ts.admin("POST", path+"/decisions", `{"event_id":"`+ev+`"}`)
		if code != 200 {
			t.Fatalf("decision %d: %d %v", step, code, d)
		}
		if code, m := ts.admin("POST", path+"/rewards", `{"event_id":"`+ev+`","reward":`+fmt.Sprint(step%2)+`}`); code != 202 {
			t.Fatalf("reward %d: %d %v", step, code, m)
		}
	}
	for !exhausted(get()) {
		if step >= 200 {
			t.Fatal("the filter never refused within 200 decisions: make the budget smaller")
		}
		decide()
	}
	g := get()
	before := policyState(g)
	frozen0 := g["frozen_decisions"].(float64)
	if frozen0 < 1 {
		t.Fatalf("exhausted, but no frozen decision yet: %v", g)
	}
	var snap struct {
		State struct {
			Rounds int `json:"rounds"`
		} `json:"state"`
	}
	if err := json.Unmarshal(before, &snap); err != nil {
		t.Fatal(err)
	}
	if want := int(g["decisions"].(float64) - frozen0); snap.State.Rounds != want {
		t.Errorf("the policy ran %d rounds, want %d (the decisions that were not frozen)", snap.State.Rounds, want)
	}
	t.Logf("exhausted after %d decisions (%v frozen); policy state %s", step, frozen0, before)

	for range 50 {
		decide()
	}
	g = get()
	if after := policyState(g); !bytes.Equal(after, before) {
		t.Errorf("50 frozen decisions changed the policy state (the policy ran on an exhausted budget):\nbefore %s\nafter  %s", before, after)
	}
	if got := g["frozen_decisions"].(float64); got != frozen0+50 {
		t.Errorf("frozen_decisions = %v, want %v", got, frozen0+50)
	}
}
