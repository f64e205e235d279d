package server_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dpclient "github.com/dpbandit/dpbandit/client"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/store/storetest"
)

func create(t testing.TB, p *proc, body map[string]any) string {
	t.Helper()
	code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, body)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	return str(m, "id")
}

func decideOne(t testing.TB, p *proc, key, id string, body any) (int, map[string]any) {
	t.Helper()
	return call(t, "POST", p.url+"/v1/experiments/"+id+"/decisions", key, body)
}

func rewardOne(t testing.TB, p *proc, key, id, ev string, v float64) (int, map[string]any) {
	t.Helper()
	return call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", key, map[string]any{"event_id": ev, "reward": v})
}

func TestE2EContract(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	arms := []string{"red", "green", "blue"}
	id := create(t, p, map[string]any{"name": "colours", "arms": arms, "policy": "mts-gaussian", "horizon": 10000,
		"budget": map[string]any{"epsilon": 1, "delta": 1e-6}, "reward_range": []float64{0, 10}})

	t.Run("create response", func(t *testing.T) {
		code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": "x", "arms": arms, "policy": "dp-ts-ucb",
			"horizon": 5000, "budget": map[string]any{"mu": 3, "delta": 1e-6}})
		if code != 201 || str(m, "policy") != "dp-ts-ucb" || m["params"] == nil {
			t.Fatalf("create dp-ts-ucb: %d %v", code, m)
		}
		pr := m["privacy"].(map[string]any)
		if c := pr["certified"].(map[string]any); c["notion"] != "gdp" || !(num(c, "value") > 0 && num(c, "value") <= 3*(1+1e-9)) {
			t.Errorf("calibrated certified guarantee = %v, want μ in (0, 3]", c)
		}
		if !strings.Contains(str(m, "guarantee"), "1e-06)-DP for each user's reward") {
			t.Errorf("guarantee words = %q", str(m, "guarantee"))
		}
	})

	t.Run("decide", func(t *testing.T) {
		code, m := decideOne(t, p, adminKey, id, nil)
		if code != 200 || !strings.HasPrefix(str(m, "event_id"), "ev_") || !contains(arms, str(m, "arm")) {
			t.Fatalf("decide without body: %d %v", code, m)
		}
		if len(m) != 2 {
			t.Errorf("a decision carries only event_id and arm, got %v", m)
		}
		code, m1 := decideOne(t, p, adminKey, id, map[string]any{"event_id": "user-1"})
		_, m2 := decideOne(t, p, adminKey, id, map[string]any{"event_id": "user-1"})
		if code != 200 || str(m1, "arm") != str(m2, "arm") || str(m1, "event_id") != "user-1" {
			t.Errorf("repeated event id: %v then %v", m1, m2)
		}
		code, b := decideOne(t, p, adminKey, id, map[string]any{"count": 5, "event_id": "batch-1"})
		ds, _ := b["decisions"].([]any)
		if code != 200 || len(ds) != 5 {
			t.Fatalf("batch: %d %v", code, b)
		}
		_, b2 := decideOne(t, p, adminKey, id, map[string]any{"count": 5, "event_id": "batch-1"})
		if fmt.Sprint(b2["decisions"]) != fmt.Sprint(ds) {
			t.Errorf("repeated batch differs: %v vs %v", b2["decisions"], ds)
		}
		if str(ds[3].(map[string]any), "event_id") != "batch-1.3" {
			t.Errorf("batch event ids: %v", ds)
		}
	})

	t.Run("rewards", func(t *testing.T) {
		_, d := decideOne(t, p, adminKey, id, map[string]any{"event_id": "r-1"})
		_ = d
		if code, m := rewardOne(t, p, adminKey, id, "r-1", 7.5); code != 202 || str(m, "status") != "accepted" {
			t.Fatalf("reward: %d %v", code, m)
		}
		if code, m := rewardOne(t, p, adminKey, id, "r-1", 7.5); code != 202 || str(m, "status") != "duplicate" {
			t.Errorf("same reward again: %d %v", code, m)
		}
		code, m := rewardOne(t, p, adminKey, id, "r-1", 3)
		if c, msg := errMsg(t, m); code != 409 || c != "reward_conflict" || !strings.Contains(msg, "7.5") {
			t.Errorf("different reward: %d %v", code, m)
		}
		code, m = rewardOne(t, p, adminKey, id, "r-1", 11)
		if _, msg := errMsg(t, m); code != 400 || !strings.Contains(msg, "[0, 10]") {
			t.Errorf("out of range: %d %v", code, m)
		}
		code, m = rewardOne(t, p, adminKey, id, "never-decided", 1)
		if c, _ := errMsg(t, m); code != 404 || c != "unknown_event" {
			t.Errorf("unknown event: %d %v", code, m)
		}
		// batch
		_, b := decideOne(t, p, adminKey, id, map[string]any{"count": 3, "event_id": "rb"})
		_ = b
		code, m = call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"rewards": []any{
			map[string]any{"event_id": "rb.0", "reward": 1}, map[string]any{"event_id": "rb.1", "reward": 2}, map[string]any{"event_id": "rb.2", "reward": 3}}})
		if code != 202 || len(m["results"].([]any)) != 3 {
			t.Fatalf("batch rewards: %d %v", code, m)
		}
		code, m = call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"rewards": []any{
			map[string]any{"event_id": "rb.0", "reward": 1}, map[string]any{"event_id": "rb.1", "reward": 9}}})
		if code != 409 || m["results"] == nil {
			t.Errorf("batch with a conflict: %d %v", code, m)
		}
		code, m = call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"rewards": []any{
			map[string]any{"event_id": "rb.0", "reward": 1}, map[string]any{"event_id": "rb.1", "reward": 99}}})
		if _, msg := errMsg(t, m); code != 400 || !strings.Contains(msg, "rewards[1].reward") {
			t.Errorf("batch with an out-of-range reward: %d %v", code, m)
		}
	})

	t.Run("read", func(t *testing.T) {
		code, m := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		if code != 200 {
			t.Fatalf("get: %d %v", code, m)
		}
		pr := m["privacy"].(map[string]any)
		for _, k := range []string{"budget", "spent", "remaining", "exhausted", "notion"} {
			if _, ok := pr[k]; !ok {
				t.Errorf("privacy lacks %q: %v", k, pr)
			}
		}
		if num(m, "rewards") != 4 || num(m, "decisions") != 11 {
			t.Errorf("counts: decisions %v rewards %v", m["decisions"], m["rewards"])
		}
		in := m["internal"].(map[string]any)
		if !strings.HasPrefix(str(in, "label"), "internal, not private") {
			t.Errorf("internal label = %q", str(in, "label"))
		}
		code, l := call(t, "GET", p.url+"/v1/experiments", adminKey, nil)
		if code != 200 || len(l["experiments"].([]any)) != 2 {
			t.Errorf("list: %d %v", code, l)
		}
		code, m = call(t, "GET", p.url+"/v1/experiments/exp_nope", adminKey, nil)
		if c, _ := errMsg(t, m); code != 404 || c != "not_found" {
			t.Errorf("unknown experiment: %d %v", code, m)
		}
	})

	t.Run("invalid create", func(t *testing.T) {
		for name, tc := range map[string]struct {
			body map[string]any
			want string
		}{
			"unknown policy":       {map[string]any{"name": "x", "arms": arms, "policy": "nope", "horizon": 10}, "the service runs: adap-ucb, adaprivate-ts"},
			"non-private budget":   {map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 10, "budget": map[string]any{"epsilon": 1, "delta": 1e-6}}, "budget\": null"},
			"private no budget":    {map[string]any{"name": "x", "arms": arms, "policy": "ts-gaussian", "horizon": 10}, "needs a budget"},
			"duplicate arms":       {map[string]any{"name": "x", "arms": []string{"a", "a"}, "policy": "ucb1", "horizon": 10, "budget": nil}, "twice"},
			"unknown field":        {map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 10, "colour": 1}, "colour"},
			"bad on_exhausted":     {map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 10, "on_exhausted": "panic"}, "on_exhausted"},
			"default out of range": {map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 10, "default_reward": 3}, "default_reward"},
			"bad reward_wait":      {map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 10, "reward_wait": "soon"}, "reward_wait"},
			"bad horizon":          {map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 0}, "horizon"},
		} {
			code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, tc.body)
			if code != 400 {
				t.Errorf("%s: status %d, want 400: %v", name, code, m)
				continue
			}
			if _, msg := errMsg(t, m); !strings.Contains(msg, tc.want) {
				t.Errorf("%s: message %q does not mention %q", name, msg, tc.want)
			}
		}
		code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, `{"name": "x", `)
		if _, msg := errMsg(t, m); code != 400 || !strings.Contains(msg, "JSON") {
			t.Errorf("truncated JSON: %d %v", code, m)
		}
	})

	t.Run("not private", func(t *testing.T) {
		code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": "np", "arms": arms, "policy": "ucb1", "horizon": 100, "budget": nil})
		if code != 201 || m["private"] != false || !strings.Contains(str(m, "guarantee"), "not private") || !strings.Contains(str(m, "note"), "not private") {
			t.Fatalf("ucb1: %d %v", code, m)
		}
		_, g := call(t, "GET", p.url+"/v1/experiments/"+str(m, "id"), adminKey, nil)
		pr := g["privacy"].(map[string]any)
		if pr["notion"] != "none" || !strings.Contains(str(pr, "statement"), "not private") {
			t.Errorf("ucb1 privacy: %v", pr)
		}
	})

	t.Run("service", func(t *testing.T) {
		code, m := call(t, "GET", p.url+"/healthz", "", nil)
		if code != 200 || m["status"] != "ok" {
			t.Errorf("healthz: %d %v", code, m)
		}
		// Without a credential: process-level series only, no experiment id.
		code, m = call(t, "GET", p.url+"/metrics", "", nil)
		raw := str(m, "_raw")
		if code != 200 || !strings.Contains(raw, "dpbandit_http_request_duration_seconds_bucket") || !strings.Contains(raw, "go_goroutines") {
			t.Errorf("public metrics: %d, lack the process-level series", code)
		}
		for _, s := range []string{id, "dpbandit_decisions_total", "dpbandit_privacy_spent"} {
			if strings.Contains(raw, s) {
				t.Errorf("unauthenticated metrics show %s", s)
			}
		}
		// With the admin key: the per-experiment series too.
		code, m = call(t, "GET", p.url+"/metrics", adminKey, nil)
		raw = str(m, "_raw")
		for _, s := range []string{"dpbandit_http_request_duration_seconds_bucket", "dpbandit_decisions_total{experiment=\"" + id,
			"dpbandit_rewards_total", "dpbandit_privacy_spent{", "dpbandit_privacy_budget{"} {
			if !strings.Contains(raw, s) {
				t.Errorf("admin metrics lack %s", s)
			}
		}
		// A wrong credential is a 401, not the public series.
		if code, _ = call(t, "GET", p.url+"/metrics", "not-the-metrics-token", nil); code != 401 {
			t.Errorf("metrics with a wrong credential: %d, want 401", code)
		}
		code, m = call(t, "GET", p.url+"/", "", nil)
		if code != 200 || !strings.Contains(strings.ToLower(str(m, "_raw")), "<html") {
			t.Errorf("dashboard: %d", code)
		}
		code, m = call(t, "PUT", p.url+"/v1/experiments/"+id, adminKey, nil)
		if c, _ := errMsg(t, m); code != 405 || c != "method_not_allowed" {
			t.Errorf("PUT: %d %v", code, m)
		}
		code, m = call(t, "GET", p.url+"/v1/nothing", adminKey, nil)
		if code != 404 {
			t.Errorf("unknown route: %d %v", code, m)
		}
		big := `{"event_id": "` + strings.Repeat("a", 2<<20) + `"}`
		code, m = call(t, "POST", p.url+"/v1/experiments/"+id+"/decisions", adminKey, big)
		if c, _ := errMsg(t, m); code != 413 || c != "body_too_large" {
			t.Errorf("huge body: %d %v", code, m)
		}
	})
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func TestE2EAuth(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	arms := []string{"a", "b"}
	mk := func() string {
		return create(t, p, map[string]any{"name": "e", "arms": arms, "policy": "ucb1", "horizon": 100, "budget": nil})
	}
	id1, id2 := mk(), mk()
	code, k := call(t, "POST", p.url+"/v1/keys", adminKey, map[string]any{"experiments": []string{id1}})
	if code != 201 || !strings.HasPrefix(str(k, "key"), "dpb_") {
		t.Fatalf("create key: %d %v", code, k)
	}
	ck := str(k, "key")
	for name, tc := range map[string]struct {
		method, path, key string
		body              any
		want              int
	}{
		"no key":                {"POST", "/v1/experiments/" + id1 + "/decisions", "", nil, 401},
		"wrong key":             {"POST", "/v1/experiments/" + id1 + "/decisions", "dpb_wrong", nil, 401},
		"client decides":        {"POST", "/v1/experiments/" + id1 + "/decisions", ck, nil, 200},
		"client other exp":      {"POST", "/v1/experiments/" + id2 + "/decisions", ck, nil, 403},
		"client reward other":   {"POST", "/v1/experiments/" + id2 + "/rewards", ck, map[string]any{"event_id": "x", "reward": 1}, 403},
		"client reads own":      {"GET", "/v1/experiments/" + id1, ck, nil, 403},
		"client reads other":    {"GET", "/v1/experiments/" + id2, ck, nil, 403},
		"client lists":          {"GET", "/v1/experiments", ck, nil, 403},
		"client creates":        {"POST", "/v1/experiments", ck, map[string]any{"name": "x", "arms": arms, "policy": "ucb1", "horizon": 10}, 403},
		"client creates keys":   {"POST", "/v1/keys", ck, map[string]any{"experiments": []string{id2}}, 403},
		"client unknown exp":    {"POST", "/v1/experiments/exp_zzz/decisions", ck, nil, 403},
		"admin lists keys":      {"GET", "/v1/keys", adminKey, nil, 200},
		"key for unknown exp":   {"POST", "/v1/keys", adminKey, map[string]any{"experiments": []string{"exp_zzz"}}, 404},
		"key without scope":     {"POST", "/v1/keys", adminKey, map[string]any{"experiments": []string{}}, 400},
		"malformed auth header": {"GET", "/v1/experiments", "", nil, 401},
	} {
		code, m := call(t, tc.method, p.url+tc.path, tc.key, tc.body)
		if code != tc.want {
			t.Errorf("%s: status %d, want %d: %v", name, code, tc.want, m)
		}
		if code >= 400 {
			errMsg(t, m)
		}
	}
	// The client key decides and rewards on its experiment.
	_, d := decideOne(t, p, ck, id1, map[string]any{"event_id": "c-1"})
	if code, m := rewardOne(t, p, ck, id1, "c-1", 1); code != 202 {
		t.Errorf("client reward: %d %v", code, m)
	}
	if len(d) != 2 {
		t.Errorf("client decision has more than event_id and arm: %v", d)
	}
	// A stored reward is raw data: a client key's 409 does not state it (the
	// admin's does, for the data owner).
	_, d2 := decideOne(t, p, adminKey, id1, map[string]any{"event_id": "c-2"})
	rewardOne(t, p, adminKey, id1, str(d2, "event_id"), 0.75)
	code, m := rewardOne(t, p, ck, id1, "c-2", 0.25)
	if c, msg := errMsg(t, m); code != 409 || c != "reward_conflict" || strings.Contains(msg, "0.75") || !strings.Contains(msg, "0.25") {
		t.Errorf("client key's conflict: %d %v; want a 409 that names the posted 0.25 but not the stored 0.75", code, m)
	}
	if code, m := rewardOne(t, p, adminKey, id1, "c-2", 0.25); code != 409 || !strings.Contains(fmt.Sprint(m), "0.75") {
		t.Errorf("admin's conflict: %d %v; want the stored 0.75 named", code, m)
	}
	// Keys survive a restart; only hashes are stored.
	p.stop()
	p = start(t, p.db)
	if code, m := decideOne(t, p, ck, id1, nil); code != 200 {
		t.Errorf("client key after restart: %d %v", code, m)
	}
	_, ks := call(t, "GET", p.url+"/v1/keys", adminKey, nil)
	if strings.Contains(fmt.Sprint(ks), ck) {
		t.Error("GET /v1/keys reveals a key")
	}
}

func TestE2EGeneratedAdminKey(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	p := start(t, db, "--no-key")
	var key string
	for i := 0; i < 100 && key == ""; i++ {
		for _, f := range strings.Fields(p.errs.String()) {
			if strings.HasPrefix(f, "dpb_") {
				key = f
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if key == "" || !strings.Contains(p.errs.String(), "ADMIN KEY") {
		t.Fatalf("no generated admin key on stderr:\n%s", p.errs.String())
	}
	if code, m := call(t, "GET", p.url+"/v1/experiments", key, nil); code != 200 {
		t.Fatalf("generated key: %d %v", code, m)
	}
	p.stop()
	p = start(t, db, "--no-key")
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(p.errs.String(), "dpb_") {
		t.Error("the admin key was printed again on the second start")
	}
	if code, _ := call(t, "GET", p.url+"/v1/experiments", key, nil); code != 200 {
		t.Errorf("stored admin key not accepted after restart: %d", code)
	}
}

// TestE2EExhaustion checks that a tiny budget freezes or stops the
// experiment at exactly the step its filter refuses, by replaying the
// filter independently: the test drives decide→reward sequentially, so the
// TS-Gaussian state (and its NextCost = 1/sqrt(min n + 1)) is known.
func TestE2EExhaustion(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	arms := []string{"a", "b", "c"}
	for _, rule := range []string{"stop", "freeze"} {
		t.Run(rule, func(t *testing.T) {
			mu := 1.7
			id := create(t, p, map[string]any{"name": "tiny", "arms": arms, "policy": "ts-gaussian", "horizon": 100,
				"budget": map[string]any{"mu": mu, "delta": 1e-6}, "on_exhausted": rule})
			f, _ := privacy.NewGDPFilter(mu)
			pulls := make([]int, len(arms))
			want := 0 // the first step the filter refuses
			var spentAt float64
			for step := 1; step <= 60; step++ {
				if want == 0 {
					m := 0
					for _, n := range pulls {
						if n >= 1 && (m == 0 || n < m) {
							m = n
						}
					}
					cost := 0.0
					if m > 0 {
						cost = 1 / math.Sqrt(float64(m+1))
					}
					if f.Spend(cost) != nil {
						want = step
						spentAt = f.Spent()
					}
				}
				code, d := decideOne(t, p, adminKey, id, map[string]any{"event_id": fmt.Sprint("s", step)})
				if want != 0 && rule == "stop" {
					if c, msg := errMsg(t, d); code != 409 || c != "budget_exhausted" || !strings.Contains(msg, "stop") {
						t.Fatalf("step %d after exhaustion at %d: %d %v", step, want, code, d)
					}
					continue
				}
				if code != 200 {
					t.Fatalf("step %d: %d %v (filter refuses at %d)", step, code, d, want)
				}
				if want == 0 {
					arm := indexOf(arms, str(d, "arm"))
					if c, m := rewardOne(t, p, adminKey, id, fmt.Sprint("s", step), 1); c != 202 {
						t.Fatalf("reward: %d %v", c, m)
					}
					pulls[arm]++
				}
			}
			if want == 0 {
				t.Fatal("the replayed filter never refused: make the budget smaller")
			}
			_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
			pr := g["privacy"].(map[string]any)
			if pr["exhausted"] != true || int(num(pr, "exhausted_at")) != want {
				t.Errorf("exhausted_at = %v, want %d (the step the filter refuses): %v", pr["exhausted_at"], want, pr)
			}
			if got := num(pr, "spent", "mu"); math.Abs(got-spentAt) > 1e-12 {
				t.Errorf("spent μ = %v, want %v", got, spentAt)
			}
			wantDecisions := want - 1
			if rule == "freeze" {
				wantDecisions = 60
				if int(num(g, "frozen_decisions")) != 60-want+1 {
					t.Errorf("frozen decisions = %v, want %d", g["frozen_decisions"], 60-want+1)
				}
			}
			if int(num(g, "decisions")) != wantDecisions {
				t.Errorf("decisions = %v, want %d", g["decisions"], wantDecisions)
			}
		})
	}
	t.Run("simulation-only policies are refused", func(t *testing.T) {
		// docs/privacy-model.md rule 4: the private linear baselines keep values with
		// float noise from the simulation samplers, so the service refuses
		// them with a message that names what it does run.
		code, c := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": "h", "arms": arms,
			"policy": "jdp-linucb", "horizon": 40, "dim": 2, "budget": map[string]any{"epsilon": 1, "delta": 1e-6}})
		msg := fmt.Sprint(c)
		if code != 400 || !strings.Contains(msg, "simulation only") || !strings.Contains(msg, "ts-gaussian") {
			t.Errorf("create jdp-linucb: %d %v; want 400 naming the served policies", code, c)
		}
	})
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// TestE2ERestart checks that a restart restores every policy state, the
// ledger and the counts exactly (graceful stop), and that a SIGKILL never
// lowers the privacy spent.
func TestE2ERestart(t *testing.T) { testRestart(t, filepath.Join(t.TempDir(), "db.sqlite")) }

// TestE2ERestartPostgres is TestE2ERestart with `--db postgres://...`.
func TestE2ERestartPostgres(t *testing.T) { testRestart(t, storetest.PostgresSchema(t)) }

func testRestart(t *testing.T, db string) {
	p := start(t, db)
	arms := []string{"a", "b", "c", "d"}
	ids := map[string]string{}
	for _, pol := range []string{"mts-gaussian", "dp-ts-ucb", "gaussian-ts", "ts-gaussian", "beta-ts"} {
		body := map[string]any{"name": pol, "arms": arms, "policy": pol, "horizon": 2000, "budget": map[string]any{"mu": 3, "delta": 1e-6}}
		if pol == "beta-ts" {
			body["budget"] = nil
		}
		ids[pol] = create(t, p, body)
	}
	for i := 0; i < 60; i++ {
		for _, id := range ids {
			_, d := decideOne(t, p, adminKey, id, nil)
			if i%3 != 0 {
				rewardOne(t, p, adminKey, id, str(d, "event_id"), float64(i%2))
			}
		}
	}
	before := map[string]map[string]any{}
	for pol, id := range ids {
		_, before[pol] = call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	}
	p.stop()
	p = start(t, db)
	for pol, id := range ids {
		_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		b := before[pol]
		for _, k := range []string{"decisions", "rewards", "arm_decisions"} {
			if fmt.Sprint(g[k]) != fmt.Sprint(b[k]) {
				t.Errorf("%s: %s = %v after restart, %v before", pol, k, g[k], b[k])
			}
		}
		if fmt.Sprint(g["internal"].(map[string]any)["policy_state"]) != fmt.Sprint(b["internal"].(map[string]any)["policy_state"]) {
			t.Errorf("%s: policy state differs after a graceful restart:\n%v\n%v", pol, g["internal"].(map[string]any)["policy_state"], b["internal"].(map[string]any)["policy_state"])
		}
		if fmt.Sprint(g["privacy"].(map[string]any)["spent"]) != fmt.Sprint(b["privacy"].(map[string]any)["spent"]) {
			t.Errorf("%s: spent %v after a graceful restart, %v before", pol, g["privacy"].(map[string]any)["spent"], b["privacy"].(map[string]any)["spent"])
		}
	}
	// SIGKILL: spent never decreases, counts equal the logs.
	for _, id := range ids {
		for i := 0; i < 30; i++ {
			_, d := decideOne(t, p, adminKey, id, nil)
			rewardOne(t, p, adminKey, id, str(d, "event_id"), 1)
		}
	}
	spent := map[string]float64{}
	for pol, id := range ids {
		_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		spent[pol] = spentOf(g)
	}
	p.kill()
	p = start(t, db)
	for pol, id := range ids {
		_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		if s := spentOf(g); s < spent[pol] {
			t.Errorf("%s: spent %v after SIGKILL < %v before", pol, s, spent[pol])
		}
		if num(g, "rewards") != 40+30 {
			t.Errorf("%s: rewards = %v after SIGKILL, want %d (every acknowledged reward)", pol, g["rewards"], 40+30)
		}
	}
}

// spentOf returns the privacy spent in the filter's parameter.
func spentOf(g map[string]any) float64 {
	pr, _ := g["privacy"].(map[string]any)
	for _, k := range []string{"mu", "rho", "epsilon"} {
		if v := num(pr, "spent", k); v >= 0 && (k != "epsilon" || pr["accounting"] == "filter") {
			return v
		}
	}
	return 0
}

func TestE2EDefaultReward(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	id := create(t, p, map[string]any{"name": "d", "arms": []string{"a", "b"}, "policy": "ucb1", "horizon": 100, "budget": nil,
		"reward_wait": "1s", "default_reward": 0.25})
	for i := 0; i < 3; i++ {
		decideOne(t, p, adminKey, id, map[string]any{"event_id": fmt.Sprint("w", i)})
	}
	rewardOne(t, p, adminKey, id, "w0", 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		if num(g, "rewards") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("default rewards not applied: %v", g["rewards"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, m := rewardOne(t, p, adminKey, id, "w1", 1); code != 409 || !strings.Contains(fmt.Sprint(m), "default reward") {
		t.Errorf("late different reward: %d %v", code, m)
	}
	if code, m := rewardOne(t, p, adminKey, id, "w2", 0.25); code != 202 {
		t.Errorf("late reward equal to the default: %d %v", code, m)
	}
	if code, m := rewardOne(t, p, adminKey, id, "w0", 1); code != 202 {
		t.Errorf("the client's reward again: %d %v", code, m)
	}
}

// TestE2EConcurrent hammers one experiment from many goroutines (the race
// detector runs on the binary when the test runs with -race).
func TestE2EConcurrent(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	id := create(t, p, map[string]any{"name": "c", "arms": []string{"a", "b", "c"}, "policy": "mts-gaussian", "horizon": 100000,
		"budget": map[string]any{"epsilon": 3, "delta": 1e-6}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := 0
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := 0; i < 40; i++ {
				code, d := decideOne(t, p, adminKey, id, nil)
				if code != 200 {
					t.Errorf("decide: %d %v", code, d)
					return
				}
				if c, _ := rewardOne(t, p, adminKey, id, str(d, "event_id"), 1); c == 202 {
					mu.Lock()
					acked++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	if num(g, "decisions") != 640 || num(g, "rewards") != float64(acked) || acked != 640 {
		t.Errorf("decisions %v rewards %v acked %d", g["decisions"], g["rewards"], acked)
	}
	p.stop()
}

func TestE2ERateLimit(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"), "--rate-limit", "2")
	limited := false
	for i := 0; i < 20 && !limited; i++ {
		code, m := call(t, "GET", p.url+"/v1/experiments", adminKey, nil)
		if code == 429 {
			if c, _ := errMsg(t, m); c != "rate_limited" {
				t.Errorf("429 with code %q", c)
			}
			limited = true
		}
	}
	if !limited {
		t.Error("no 429 after 20 quick requests with --rate-limit 2")
	}
}

func TestE2EContextual(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	p := start(t, db)
	arms := []string{"x", "y", "z"}
	code, c := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": "ctx", "arms": arms, "policy": "adaprivate-ts",
		"horizon": 10000, "budget": map[string]any{"epsilon": 2, "delta": 1e-6}, "dim": 2, "feature_norm": 2})
	if code != 201 {
		t.Fatalf("create adaprivate-ts: %d %v", code, c)
	}
	id := str(c, "id")
	if code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": "ctx", "arms": arms, "policy": "lints", "horizon": 100}); code != 400 || !strings.Contains(fmt.Sprint(m), "dim") {
		t.Errorf("contextual without dim: %d %v", code, m)
	}
	cands := [][]float64{{1, 0}, {0, 1}, {3, 4}}
	for name, tc := range map[string]struct {
		body any
		want string
	}{
		"no candidates": {map[string]any{}, "one feature vector per arm"},
		"too few":       {map[string]any{"candidates": cands[:2]}, "one feature vector per arm"},
		"wrong dim":     {map[string]any{"candidates": [][]float64{{1}, {0, 1}, {1, 1}}}, "dim is 2"},
	} {
		code, m := decideOne(t, p, adminKey, id, tc.body)
		if _, msg := errMsg(t, m); code != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v", name, code, m)
		}
	}
	for i := 0; i < 50; i++ {
		code, d := decideOne(t, p, adminKey, id, map[string]any{"candidates": cands})
		if code != 200 || !contains(arms, str(d, "arm")) {
			t.Fatalf("decide: %d %v", code, d)
		}
		if code, m := rewardOne(t, p, adminKey, id, str(d, "event_id"), float64(i%2)); code != 202 {
			t.Fatalf("reward: %d %v", code, m)
		}
	}
	code, b := decideOne(t, p, adminKey, id, map[string]any{"candidates": cands, "count": 4})
	if code != 200 || len(b["decisions"].([]any)) != 4 {
		t.Errorf("contextual batch: %d %v", code, b)
	}
	_, before := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	p.stop()
	p = start(t, db)
	_, after := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	if fmt.Sprint(after["internal"].(map[string]any)["policy_state"]) != fmt.Sprint(before["internal"].(map[string]any)["policy_state"]) || after["rewards"] != before["rewards"] {
		t.Error("contextual policy state or counts changed across a restart")
	}
}

// TestE2EGoClientContextual drives the real service through the Go client:
// the spec's dim, feature_norm and durable_decisions reach the service, and
// GetExperiment reads them back with contextual set.
func TestE2EGoClientContextual(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	c, err := dpclient.New(p.url, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	yes := true
	exp, err := c.CreateExperiment(ctx, dpclient.ExperimentSpec{Name: "ctx", Arms: []string{"a", "b"}, Policy: "lints",
		Horizon: 1000, Dim: 3, FeatureNorm: 2, DurableDecisions: &yes})
	if err != nil {
		t.Fatal(err)
	}
	cands := [][]float64{{1, 0, 0}, {0, 1, 1}}
	for i := range 20 {
		d, err := c.Decide(ctx, exp.ID, dpclient.DecideRequest{Candidates: cands})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Reward(ctx, exp.ID, d.EventID, float64(i%2)); err != nil {
			t.Fatal(err)
		}
	}
	req := dpclient.DecideRequest{EventID: "page-7", Candidates: cands}
	batch, err := c.DecideMany(ctx, exp.ID, 4, req)
	if err != nil || len(batch) != 4 || batch[3].EventID != "page-7.3" {
		t.Fatalf("DecideMany: %v %+v", err, batch)
	}
	again, err := c.DecideMany(ctx, exp.ID, 4, req)
	if err != nil || fmt.Sprint(again) != fmt.Sprint(batch) {
		t.Errorf("repeated DecideMany: %v %+v, want the same decisions %+v", err, again, batch)
	}
	if _, err := c.Decide(ctx, exp.ID, dpclient.DecideRequest{Candidates: [][]float64{{1, 0}, {0, 1}}}); dpclient.StatusOf(err) != 400 {
		t.Errorf("candidates of the wrong dim: %v, want a 400", err)
	}
	st, err := c.GetExperiment(ctx, exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Contextual || st.Dim != 3 || st.FeatureNorm != 2 || !st.DurableDecisions || st.Decisions != 24 || st.Rewards != 20 {
		t.Errorf("experiment: contextual %v dim %d feature_norm %v durable %v decisions %d rewards %d; want true 3 2 true 24 20",
			st.Contextual, st.Dim, st.FeatureNorm, st.DurableDecisions, st.Decisions, st.Rewards)
	}
	if _, err := c.CreateExperiment(ctx, dpclient.ExperimentSpec{Name: "k", Arms: []string{"a", "b"}, Policy: "ucb1", Horizon: 10, Dim: 3}); dpclient.StatusOf(err) != 400 {
		t.Errorf("dim on a K-armed policy: %v, want a 400", err)
	}
}

// TestE2EPropensity: decisions carry the probability with which their arm
// was chosen when asked, only where that is DP (post-processing of released
// state, or a non-private policy); a repeated event id, also after a
// restart, returns the propensity of the first answer; after exhaustion the
// frozen decisions carry their exact share of the released ones.
func TestE2EPropensity(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	p := start(t, db)
	arms := []string{"a", "b", "c"}
	prop := map[string]any{"propensity": true}
	checkProb := func(t *testing.T, d map[string]any, exact bool) float64 {
		t.Helper()
		v, ok := d["propensity"].(float64)
		if !ok || v <= 0 || v > 1 {
			t.Fatalf("propensity %v in %v: want a probability of the chosen arm in (0, 1]", d["propensity"], d)
		}
		if draws, has := d["propensity_draws"]; exact == has || (!exact && draws != float64(4096)) {
			t.Fatalf("propensity_draws = %v in %v (exact: %v)", draws, d, exact)
		}
		return v
	}

	// Beta TS (not private): Monte Carlo estimates; a repeat returns the first.
	beta := create(t, p, map[string]any{"name": "beta", "arms": arms, "policy": "beta-ts", "horizon": 1000, "budget": nil})
	for i := range 30 {
		_, d := decideOne(t, p, adminKey, beta, nil)
		rewardOne(t, p, adminKey, beta, str(d, "event_id"), float64(i%2))
	}
	code, d := decideOne(t, p, adminKey, beta, map[string]any{"propensity": true, "event_id": "p1"})
	if code != 200 {
		t.Fatalf("decide with propensity: %d %v", code, d)
	}
	first := checkProb(t, d, false)
	if _, again := decideOne(t, p, adminKey, beta, map[string]any{"event_id": "p1"}); again["arm"] != d["arm"] || again["propensity"] != first {
		t.Errorf("repeated event id: %v, first answer %v", again, d)
	}
	if _, plain := decideOne(t, p, adminKey, beta, nil); plain["propensity"] != nil {
		t.Errorf("a decision without propensity asked has one: %v", plain)
	}
	_, b := decideOne(t, p, adminKey, beta, map[string]any{"propensity": true, "count": 3})
	for _, x := range b["decisions"].([]any) {
		checkProb(t, x.(map[string]any), false)
	}

	// UCB1 (not private, deterministic): its round-robin start is certain.
	ucb := create(t, p, map[string]any{"name": "ucb", "arms": arms, "policy": "ucb1", "horizon": 1000, "budget": nil})
	if _, d := decideOne(t, p, adminKey, ucb, prop); checkProb(t, d, true) != 1 || d["arm"] != "a" {
		t.Errorf("ucb1's first decision: %v, want arm a with propensity 1", d)
	}

	// TS-Gaussian's probabilities come from raw reward sums: refused.
	ts := create(t, p, map[string]any{"name": "ts", "arms": arms, "policy": "ts-gaussian", "horizon": 1000, "budget": map[string]any{"mu": 2, "delta": 1e-6}})
	code, e := decideOne(t, p, adminKey, ts, prop)
	if c, msg := errMsg(t, e); code != 400 || c != "propensity_unavailable" || !strings.Contains(msg, "not differentially private") || !strings.Contains(msg, "adaprivate-ts") {
		t.Errorf("ts-gaussian with propensity: %d %v", code, e)
	}

	// AdaPrivate-TS/UCB: from the released snapshot; TS estimated, UCB exact
	// (its forced exploration spreads a known share over the candidates).
	cands := map[string]any{"candidates": [][]float64{{1, 0}, {0, 1}, {0.6, 0.8}}, "propensity": true}
	for _, pol := range []string{"adaprivate-ts", "adaprivate-ucb"} {
		code, c := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": pol, "arms": arms, "policy": pol,
			"horizon": 1000, "budget": map[string]any{"epsilon": 1, "delta": 1e-6}, "dim": 2})
		if code != 201 {
			t.Fatalf("create %s: %d %v", pol, code, c)
		}
		ada := str(c, "id")
		for i := range 20 {
			code, d := decideOne(t, p, adminKey, ada, cands)
			if code != 200 {
				t.Fatalf("%s decision %d: %d %v", pol, i, code, d)
			}
			checkProb(t, d, pol == "adaprivate-ucb")
			rewardOne(t, p, adminKey, ada, str(d, "event_id"), float64(i%2))
		}
	}

	// A restart: the repeated event id reads the stored propensity.
	p.stop()
	p = start(t, db)
	if _, again := decideOne(t, p, adminKey, beta, map[string]any{"event_id": "p1"}); again["arm"] != d["arm"] || again["propensity"] != first {
		t.Errorf("repeated event id after a restart: %v, first answer %v", again, d)
	}
}

// TestE2ELoadtest runs `dpbandit loadtest` against `dpbandit serve` (both
// the real binary; built with -race when the tests run with -race, as in
// .ci/run): every request succeeds, and the server stops cleanly, which a
// race-enabled binary does not do after a detected data race (exit 66).
func TestE2ELoadtest(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	id := create(t, p, map[string]any{"name": "load", "arms": []string{"a", "b", "c", "d", "e"}, "policy": "mts-gaussian",
		"horizon": 100000000, "budget": map[string]any{"mu": 3, "delta": 1e-6}})
	out, err := exec.Command(binary(t), "loadtest", "--url", p.url, "--key", adminKey, "--experiment", id,
		"--duration", "1s", "--concurrency", "16", "--mode", "all").CombinedOutput()
	if err != nil {
		t.Fatalf("loadtest: %v\n%s", err, out)
	}
	for _, mode := range []string{"decide: ", "reward: ", "decide+reward: "} {
		if !strings.Contains(string(out), mode) {
			t.Errorf("loadtest output has no %q line:\n%s", mode, out)
		}
	}
	if strings.Count(string(out), " 0 errors") != 3 {
		t.Errorf("loadtest reported errors:\n%s", out)
	}
	p.stop()
	if strings.Contains(p.errs.String(), "DATA RACE") {
		t.Fatalf("data race in dpbandit serve under load:\n%s", p.errs.String())
	}
}

// TestE2ERewardRetention: with reward_retention "0s" a reward's value is
// deleted at the first sweep after the policy state that includes it is
// durable; the event keeps its reward (counts, a restart and the policy are
// unaffected) and a repeat gets 409 reward_purged. The default keeps it.
func TestE2ERewardRetention(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	p := start(t, db)
	arms := []string{"a", "b"}
	if code, m := call(t, "POST", p.url+"/v1/experiments", adminKey, map[string]any{"name": "r", "arms": arms, "policy": "ucb1",
		"horizon": 100, "budget": nil, "reward_retention": "-1s"}); code != 400 || !strings.Contains(fmt.Sprint(m), "reward_retention") {
		t.Errorf("negative retention: %d %v", code, m)
	}
	gone := create(t, p, map[string]any{"name": "gone", "arms": arms, "policy": "beta-ts", "horizon": 100, "budget": nil, "reward_retention": "0s"})
	kept := create(t, p, map[string]any{"name": "kept", "arms": arms, "policy": "beta-ts", "horizon": 100, "budget": nil})
	for _, id := range []string{gone, kept} {
		for i := range 5 {
			ev := fmt.Sprint("e", i)
			decideOne(t, p, adminKey, id, map[string]any{"event_id": ev})
			if code, m := rewardOne(t, p, adminKey, id, ev, float64(i%2)); code != 202 {
				t.Fatalf("reward: %d %v", code, m)
			}
		}
	}
	_, g := call(t, "GET", p.url+"/v1/experiments/"+kept, adminKey, nil)
	if g["reward_retention"] != "24h0m0s" {
		t.Errorf("default reward_retention = %v, want 24h0m0s", g["reward_retention"])
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, m := rewardOne(t, p, adminKey, gone, "e1", 1)
		if code == 409 {
			if c, msg := errMsg(t, m); c != "reward_purged" || !strings.Contains(msg, "reward_retention") {
				t.Fatalf("409 for a purged reward: %v", m)
			}
			break
		}
		if code != 202 || time.Now().After(deadline) {
			t.Fatalf("repeat of a reward past retention 0s: %d %v (want 202 duplicate until purged, then 409 reward_purged)", code, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, m := rewardOne(t, p, adminKey, kept, "e1", 1); code != 202 || fmt.Sprint(m["status"]) != "duplicate" {
		t.Errorf("repeat with the default retention: %d %v, want 202 duplicate", code, m)
	}
	_, before := call(t, "GET", p.url+"/v1/experiments/"+gone, adminKey, nil)
	p.stop()
	p = start(t, db)
	_, after := call(t, "GET", p.url+"/v1/experiments/"+gone, adminKey, nil)
	if after["rewards"] != float64(5) || fmt.Sprint(after["internal"].(map[string]any)["policy_state"]) != fmt.Sprint(before["internal"].(map[string]any)["policy_state"]) {
		t.Errorf("after a restart: rewards %v, policy state changed: %v", after["rewards"], after["internal"].(map[string]any)["policy_state"])
	}
	if code, m := rewardOne(t, p, adminKey, gone, "e3", 1); code != 409 {
		t.Errorf("purged reward after a restart: %d %v", code, m)
	}
	// New rewards after the restart are purged too.
	decideOne(t, p, adminKey, gone, map[string]any{"event_id": "late"})
	rewardOne(t, p, adminKey, gone, "late", 1)
	deadline = time.Now().Add(10 * time.Second)
	for {
		code, m := rewardOne(t, p, adminKey, gone, "late", 1)
		if code == 409 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a reward after the restart was never purged: %d %v", code, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
