package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/store"
)

// Regression tests for issue 10: inputs and stored records that crashed,
// hung or over-spent the service, each found by attacking it.

const testAdmin = "hostile-admin-key-0123456789"

// tsrv is an in-process server on a SQLite file that can be restarted.
type tsrv struct {
	t    testing.TB
	path string
	st   store.Store
	s    *Server
	logs *bytes.Buffer
}

func newTS(t testing.TB) *tsrv {
	ts := &tsrv{t: t, path: filepath.Join(t.TempDir(), "db.sqlite")}
	ts.open()
	t.Cleanup(ts.close)
	return ts
}

func (ts *tsrv) open() {
	ts.t.Helper()
	st, err := openSQLite(ts.path)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.logs = &bytes.Buffer{}
	s, _, err := New(context.Background(), Options{Store: st, AdminKey: testAdmin,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: ts.logs}, nil)), MetricsToken: "metrics-token-0123456789"})
	if err != nil {
		st.Close()
		ts.t.Fatal(err)
	}
	ts.st, ts.s = st, s
}

func (ts *tsrv) close() {
	if ts.s != nil {
		ts.s.Close()
		ts.st.Close()
		ts.s = nil
	}
}

func (ts *tsrv) restart() { ts.close(); ts.open() }

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// do runs one request through the whole handler stack as key.
func (ts *tsrv) do(method, path, key, body string) (int, map[string]any) {
	ts.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	ts.s.Handler().ServeHTTP(w, r)
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		m = map[string]any{"_raw": w.Body.String()}
	}
	return w.Code, m
}

func (ts *tsrv) admin(method, path, body string) (int, map[string]any) {
	ts.t.Helper()
	return ts.do(method, path, testAdmin, body)
}

func errOf(m map[string]any) (code, msg string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(string)
	msg, _ = e["message"].(string)
	return
}

func (ts *tsrv) create(body string) string {
	ts.t.Helper()
	code, m := ts.admin("POST", "/v1/experiments", body)
	if code != 201 {
		ts.t.Fatalf("create %s: %d %v", body, code, m)
	}
	return m["id"].(string)
}

// TestHugeRewardRange: item 1. [-1e308, 1e308] has an infinite width; it
// used to be accepted, and a reward of 1e308 then scaled to ∞/∞ = NaN.
func TestHugeRewardRange(t *testing.T) {
	ts := newTS(t)
	for _, r := range []string{`[-1e308, 1e308]`, `[-1.7976931348623157e308, 1e300]`, `[0, 0]`, `[1, -1]`} {
		code, m := ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null,"reward_range":`+r+`}`)
		if c, msg := errOf(m); code != 400 || c != "invalid_experiment" || !strings.Contains(msg, "reward_range") {
			t.Errorf("reward_range %s: %d %v, want a 400 naming reward_range", r, code, m)
		}
	}
	// The widest range allowed still scales every reward into [0, 1].
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null,"reward_range":[-8e307, 8e307]}`)
	_, d := ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"event_id":"e1"}`)
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/rewards", `{"event_id":"e1","reward":8e307}`); code != 202 {
		t.Fatalf("reward at the top of the range: %d %v (decision %v)", code, m, d)
	}
}

// TestQuarantinedReward: item 1's exact sequence, with the configuration
// check bypassed (a database written before it existed): the reward that
// cannot be applied is answered with a clear error, kept, counted and
// logged; the writer does not panic, the experiment keeps serving, and a
// restart (which replays the reward) neither panics nor refuses to start.
func TestQuarantinedReward(t *testing.T) {
	ts := newTS(t)
	cfg, _ := mustConfig(t, createRequest{Name: "x", Arms: []string{"a", "b"}, Policy: "ucb1", Horizon: 100})
	cfg.RewardRange = [2]float64{-1e308, 1e308}
	raw, _ := json.Marshal(cfg)
	if _, err := ts.s.eng.create(context.Background(), cfg, raw); err != nil {
		t.Fatal(err)
	}
	id := cfg.ID
	ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"event_id":"e1"}`)
	code, m := ts.admin("POST", "/v1/experiments/"+id+"/rewards", `{"event_id":"e1","reward":1e308}`)
	// The handler's own check refuses it first (it does not scale).
	if c, _ := errOf(m); code != 400 || c != "reward_out_of_range" {
		t.Fatalf("reward 1e308: %d %v, want 400 reward_out_of_range", code, m)
	}
	// A stored record the handler never saw (written by an older server):
	// the engine path, as the writer applies it. The writer then stops (as
	// if killed) right after that commit, before the state with the reward
	// applied is written, so the restart must replay it.
	x := ts.s.eng.get(id)
	release := make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	ts.s.eng.w.hook = func() {
		x.mu.Lock()
		a := x.appliedSeq
		x.mu.Unlock()
		if armed.Load() && a >= 1 {
			<-release
		}
	}
	ctx := context.Background()
	_, err := ts.s.eng.reward(ctx, x, "e1", 1e308)
	var qe quarantineError
	if !asErr(err, &qe) {
		t.Fatalf("engine reward 1e308: %v, want a quarantine error", err)
	}
	if got := counterValue(t, ts.s, `dpbandit_quarantined_total{kind="reward"}`); got != 1 {
		t.Errorf("quarantined metric = %v, want 1", got)
	}
	if !strings.Contains(ts.logs.String(), "reward quarantined") || !strings.Contains(ts.logs.String(), "event=e1") {
		t.Errorf("the quarantine is not logged with its event id:\n%s", ts.logs)
	}
	ts.s.eng.w.abort.Store(true)
	armed.Store(false)
	close(release)
	ts.s.eng.crash()
	ts.st.Close()
	ts.s = nil
	ts.open()
	if s, _ := ts.st.LoadState(ctx, id); s.AppliedSeq >= s.RewardSeq {
		t.Errorf("the test did not exercise the replay: durable state applied through %d of %d rewards", s.AppliedSeq, s.RewardSeq)
	}
	if got := counterValue(t, ts.s, `dpbandit_quarantined_total{kind="reward"}`); got < 1 {
		t.Errorf("after the restart: quarantined metric = %v, want ≥ 1 (the replayed reward)", got)
	}
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"event_id":"e2"}`); code != 200 {
		t.Fatalf("decision after the restart: %d %v", code, m)
	}
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/rewards", `{"event_id":"e2","reward":0}`); code != 202 {
		t.Fatalf("reward after the restart: %d %v", code, m)
	}
	if code, m := ts.admin("GET", "/v1/experiments/"+id, ""); code != 200 || m["rewards"].(float64) != 2 {
		t.Fatalf("experiment after the restart: %d %v", code, m["rewards"])
	}
}

// TestUnloadableExperiment: a stored policy state that cannot be restored
// takes only its own experiment out (listed unavailable, 503 on use,
// deletable), never the server or the other experiments.
func TestUnloadableExperiment(t *testing.T) {
	ts := newTS(t)
	good := ts.create(`{"name":"good","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`)
	bad := ts.create(`{"name":"bad","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`)
	ts.close()
	st, err := openSQLite(ts.path)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := st.LoadState(context.Background(), bad)
	if err != nil {
		t.Fatal(err)
	}
	s0.Policy, s0.Version = []byte(`{"counts":"not an array"`), s0.Version+1
	if err := st.Commit(context.Background(), &store.Batch{States: map[string]store.State{bad: s0}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ts.open()
	if code, m := ts.admin("POST", "/v1/experiments/"+good+"/decisions", ``); code != 200 {
		t.Fatalf("the good experiment: %d %v", code, m)
	}
	code, m := ts.admin("POST", "/v1/experiments/"+bad+"/decisions", ``)
	if c, _ := errOf(m); code != 503 || c != "experiment_unavailable" {
		t.Fatalf("the bad experiment: %d %v, want 503 experiment_unavailable", code, m)
	}
	_, m = ts.admin("GET", "/v1/experiments", "")
	found := false
	for _, e := range m["experiments"].([]any) {
		e := e.(map[string]any)
		if e["id"] == bad {
			found = e["status"] == "unavailable" && strings.Contains(e["reason"].(string), "restoring the policy state")
		}
	}
	if !found {
		t.Errorf("the bad experiment is not listed as unavailable with its reason: %v", m)
	}
	if got := counterValue(t, ts.s, `dpbandit_quarantined_total{kind="experiment"}`); got != 1 {
		t.Errorf("quarantined experiments = %v, want 1", got)
	}
	if code, m := ts.admin("DELETE", "/v1/experiments/"+bad, ""); code != 200 {
		t.Fatalf("deleting the bad experiment: %d %v", code, m)
	}
	ts.restart()
	if code, _ := ts.admin("GET", "/v1/experiments/"+bad, ""); code != 404 {
		t.Errorf("deleted experiment after a restart: %d, want 404", code)
	}
}

// TestBudgetBounds: item 5, {"budget": {"mu": 1e308}} was a 500 (JSON
// encoding of +Inf), and ε ≥ 5e307 hung calibration (item 4).
func TestBudgetBounds(t *testing.T) {
	ts := newTS(t)
	for _, b := range []string{`{"mu":1e308,"delta":1e-6}`, `{"epsilon":5e307,"delta":1e-6}`, `{"epsilon":1e308,"delta":1e-6}`, `{"mu":101,"delta":1e-6}`, `{"epsilon":1001,"delta":1e-6}`} {
		done := make(chan struct{})
		var code int
		var m map[string]any
		go func() {
			defer close(done)
			code, m = ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":1000,"budget":`+b+`}`)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("budget %s: no answer in 10 s", b)
		}
		if c, msg := errOf(m); code != 400 || c == "" || !strings.Contains(msg, "budget.") {
			t.Errorf("budget %s: %d %v, want a 400 naming the budget field", b, code, m)
		}
	}
}

// TestTextValidation: item 5, a NUL in a name was a 500 on PostgreSQL;
// lengths count characters, not bytes, as the contract says.
func TestTextValidation(t *testing.T) {
	ts := newTS(t)
	for _, c := range []struct{ name, arm string }{{"a\u0000b", "x"}, {"ok", "x\u0000"}, {"tab\there", "x"}, {"   ", "x"}, {strings.Repeat("é", 201), "x"}} {
		name, _ := json.Marshal(c.name)
		arm, _ := json.Marshal(c.arm)
		code, m := ts.admin("POST", "/v1/experiments", `{"name":`+string(name)+`,"arms":[`+string(arm)+`,"y"],"policy":"ucb1","horizon":10,"budget":null}`)
		if code != 400 {
			t.Errorf("name %q arm %q: %d %v, want 400", c.name, c.arm, code, m)
		}
	}
	// 200 two-byte characters (400 bytes) is within the 200-character limit.
	ts.create(`{"name":"` + strings.Repeat("é", 200) + `","arms":["` + strings.Repeat("ü", 200) + `","y"],"policy":"ucb1","horizon":10,"budget":null}`)
}

// TestBatchEventIDs: item 6, a 128-character event id with count 2 gave
// ids of 130 characters, which the reward endpoint refused, after the
// budget was charged.
func TestBatchEventIDs(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":100000,"budget":{"epsilon":1000,"delta":1e-6}}`)
	spent := func() float64 {
		_, m := ts.admin("GET", "/v1/experiments/"+id, "")
		return m["privacy"].(map[string]any)["spent"].(map[string]any)["mu"].(float64)
	}
	before := spent()
	code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"event_id":"`+strings.Repeat("z", 128)+`","count":2}`)
	if c, msg := errOf(m); code != 400 || c != "invalid_event_id" || !strings.Contains(msg, "126") {
		t.Fatalf("128-character id, count 2: %d %v, want a 400 saying 126 characters", code, m)
	}
	if spent() != before {
		t.Errorf("the refused batch charged the budget: %v → %v", before, spent())
	}
	base := strings.Repeat("z", 125)
	code, m = ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"event_id":"`+base+`","count":11}`)
	if code != 200 {
		t.Fatalf("125-character id, count 11: %d %v", code, m)
	}
	for _, ev := range []string{base + ".0", base + ".10"} {
		if code, m := ts.admin("POST", "/v1/experiments/"+id+"/rewards", `{"event_id":"`+ev+`","reward":1}`); code != 202 {
			t.Errorf("reward for %s: %d %v", ev, code, m)
		}
	}
}

// TestErrorMessagesNameTheField: item 7.
func TestErrorMessagesNameTheField(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`)
	for _, c := range []struct{ path, body, want string }{
		{"/v1/experiments", `{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":10,"budget":{"epsilon":1e309,"delta":1e-6}}`, "budget.epsilon: 1e309 is beyond the range"},
		{"/v1/experiments", `1e309`, `not a number; send {"name": "…"`},
		{"/v1/experiments/" + id + "/rewards", `[{"event_id":"e","reward":1}]`, `not an array; send {"event_id": "…", "reward": VALUE}, or for several rewards {"rewards": [`},
		{"/v1/experiments/" + id + "/rewards", `{"rewards":[{"event_id":"e","reward":1e999}]}`, "rewards.reward: 1e999 is beyond the range"},
		{"/v1/experiments/" + id + "/decisions", `{"count":1e400}`, "count must be an integer, not 1e400"},
		{"/v1/experiments/" + id + "/decisions", `"x"`, "not a string; send {} for one decision"},
	} {
		code, m := ts.admin("POST", c.path, c.body)
		if _, msg := errOf(m); code != 400 || !strings.Contains(msg, c.want) {
			t.Errorf("%s %s: %d %q, want a 400 containing %q", c.path, c.body, code, msg, c.want)
		}
	}
}

// TestUnaffordableBudget: a ts-gaussian experiment at ε = 1 was created
// (201) though its second decision exhausted the budget.
func TestUnaffordableBudget(t *testing.T) {
	ts := newTS(t)
	code, m := ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b","c"],"policy":"ts-gaussian","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}}`)
	if c, msg := errOf(m); code != 400 || c != "invalid_experiment" || !strings.Contains(msg, "pays for only 1 decision(s)") {
		t.Fatalf("ts-gaussian at ε = 1: %d %v, want a 400 saying the budget pays for 1 decision", code, m)
	}
	// A budget for a few decisions is created, with a warning in words.
	code, m = ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b","c"],"policy":"ts-gaussian","horizon":10000,"budget":{"epsilon":10,"delta":1e-6}}`)
	if w, _ := m["warning"].(string); code != 201 || !strings.Contains(w, "of the 10000 planned decisions") {
		t.Fatalf("ts-gaussian at ε = 10: %d %v, want 201 with a warning", code, m)
	}
	// The same budget runs M-TS, calibrated to it, without a warning about
	// what the budget pays for (TestAutoPolicy checks the other warning,
	// that at this budget M-TS plays close to uniformly).
	code, m = ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b","c"],"policy":"mts-gaussian","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}}`)
	if w, _ := m["warning"].(string); code != 201 || strings.Contains(w, "pays for only") {
		t.Fatalf("mts-gaussian at ε = 1: %d %v, want 201 without an affordability warning", code, m)
	}
}

func asErr[T error](err error, target *T) bool {
	for err != nil {
		if e, ok := err.(T); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// counterValue reads one series from an authorised scrape.
func counterValue(t testing.TB, s *Server, series string) float64 {
	t.Helper()
	r := httptest.NewRequest("GET", "/metrics", nil)
	r.Header.Set("Authorization", "Bearer "+testAdmin)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	for line := range strings.SplitSeq(w.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			json.Unmarshal([]byte(v), &f)
			return f
		}
	}
	return 0
}

// TestLifecycle: revoke a key; stop, archive and delete an experiment, each
// durable across a restart, with what happens to decisions, rewards and the
// recorded privacy spent.
func TestLifecycle(t *testing.T) {
	ts := newTS(t)
	ctx := context.Background()
	id := ts.create(`{"name":"x","arms":["a","b","c"],"policy":"mts-gaussian","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}}`)
	other := ts.create(`{"name":"y","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`)
	path := "/v1/experiments/" + id
	_, k := ts.admin("POST", "/v1/keys", `{"experiments":["`+id+`","`+other+`"]}`)
	key, kid := k["key"].(string), k["id"].(string)
	for i := range 4 {
		ev := fmt.Sprint("e", i)
		if code, m := ts.do("POST", path+"/decisions", key, `{"event_id":"`+ev+`"}`); code != 200 {
			t.Fatalf("decide: %d %v", code, m)
		}
	}
	if code, m := ts.do("POST", path+"/rewards", key, `{"event_id":"e0","reward":1}`); code != 202 {
		t.Fatalf("reward: %d %v", code, m)
	}

	// Revoking a key: it stops authenticating at once, and for good.
	if code, m := ts.do("DELETE", "/v1/keys/"+kid, key, ""); code != 403 {
		t.Errorf("a client key revoking itself: %d %v, want 403", code, m)
	}
	if code, m := ts.admin("DELETE", "/v1/keys/"+kid, ""); code != 200 {
		t.Fatalf("revoke: %d %v", code, m)
	}
	if code, _ := ts.do("POST", path+"/decisions", key, ``); code != 401 {
		t.Errorf("revoked key: %d, want 401", code)
	}
	if code, _ := ts.admin("DELETE", "/v1/keys/"+kid, ""); code != 404 {
		t.Errorf("revoking twice: %d, want 404", code)
	}
	_, m := ts.admin("GET", "/v1/keys", "")
	if strings.Contains(fmt.Sprint(m), kid) || strings.Contains(fmt.Sprint(m), key) {
		t.Errorf("the revoked key is still listed: %v", m)
	}

	// Stop: no decisions; rewards for past decisions still count; the
	// privacy spent stays recorded.
	spent := func() float64 {
		_, m := ts.admin("GET", path, "")
		return m["privacy"].(map[string]any)["spent"].(map[string]any)["mu"].(float64)
	}
	before := spent()
	if code, m := ts.admin("POST", path+"/stop", ""); code != 200 || m["status"] != "stopped" {
		t.Fatalf("stop: %d %v", code, m)
	}
	if code, m := ts.admin("POST", path+"/decisions", ``); code != 409 || m["error"].(map[string]any)["code"] != "experiment_stopped" {
		t.Errorf("decision on a stopped experiment: %d %v, want 409 experiment_stopped", code, m)
	}
	if code, m := ts.admin("POST", path+"/decisions", `{"event_id":"e1"}`); code != 200 {
		t.Errorf("a repeated event id on a stopped experiment returns its decision: %d %v", code, m)
	}
	if code, m := ts.admin("POST", path+"/rewards", `{"event_id":"e1","reward":0}`); code != 202 {
		t.Errorf("reward on a stopped experiment: %d %v", code, m)
	}
	ts.restart()
	if code, m := ts.admin("POST", path+"/decisions", ``); code != 409 {
		t.Errorf("after a restart the experiment is not stopped: %d %v", code, m)
	}
	if after := spent(); after < before {
		t.Errorf("spent went from %v to %v", before, after)
	}

	// Archive: read-only, and the reward values are deleted now.
	if code, m := ts.admin("POST", path+"/archive", ""); code != 200 || m["status"] != "archived" {
		t.Fatalf("archive: %d %v", code, m)
	}
	if code, m := ts.admin("POST", path+"/rewards", `{"event_id":"e2","reward":1}`); code != 409 || m["error"].(map[string]any)["code"] != "experiment_archived" {
		t.Errorf("reward on an archived experiment: %d %v, want 409 experiment_archived", code, m)
	}
	for _, ev := range []string{"e0", "e1"} {
		r, err := ts.st.Reward(ctx, id, ev)
		if err != nil || !r.Purged {
			t.Errorf("archived: reward %s is %+v (%v), want its value deleted", ev, r, err)
		}
	}
	if code, _ := ts.admin("POST", path+"/stop", ""); code != 200 {
		t.Errorf("stopping an archived experiment: %d, want 200 (it stays archived)", code)
	}
	ts.restart()
	_, m = ts.admin("GET", path, "")
	if m["status"] != "archived" || m["rewards"].(float64) != 2 {
		t.Errorf("after a restart: status %v rewards %v, want archived with its 2 rewards", m["status"], m["rewards"])
	}

	// Delete: gone from the store and from every key's scope.
	_, k = ts.admin("POST", "/v1/keys", `{"experiments":["`+id+`","`+other+`"]}`)
	key = k["key"].(string)
	if code, m := ts.admin("DELETE", path, ""); code != 200 {
		t.Fatalf("delete: %d %v", code, m)
	}
	if code, _ := ts.admin("GET", path, ""); code != 404 {
		t.Errorf("GET after delete: %d, want 404", code)
	}
	if code, _ := ts.do("POST", path+"/decisions", key, ``); code != 403 {
		t.Errorf("the key still has the deleted experiment in scope: %d, want 403", code)
	}
	if code, _ := ts.do("POST", "/v1/experiments/"+other+"/decisions", key, ``); code != 200 {
		t.Errorf("the key lost its other experiment: %d", code)
	}
	if _, err := ts.st.Decision(ctx, id, "e0"); err == nil {
		t.Error("a decision of the deleted experiment is still stored")
	}
	ts.restart()
	if code, _ := ts.admin("GET", path, ""); code != 404 {
		t.Errorf("GET after delete and restart: %d, want 404", code)
	}
	if code, _ := ts.admin("DELETE", path, ""); code != 404 {
		t.Errorf("deleting twice: %d, want 404", code)
	}
}

// TestFailedAuthLimited: wrong keys from one address are answered 401 for
// a burst, then 429; a valid key from the same address still passes, and
// another address is not affected.
func TestFailedAuthLimited(t *testing.T) {
	ts := newTS(t)
	req := func(addr, key string) int {
		r := httptest.NewRequest("GET", "/v1/experiments", nil)
		r.RemoteAddr = addr
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		ts.s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	for i := range failBurst {
		if c := req("192.0.2.1:1234", "wrong-key-0123456789"); c != 401 {
			t.Fatalf("failure %d: %d, want 401", i, c)
		}
	}
	if c := req("192.0.2.1:999", "wrong-key-0123456789"); c != 429 {
		t.Errorf("failure %d from the same address: %d, want 429", failBurst+1, c)
	}
	if c := req("192.0.2.1:999", testAdmin); c != 200 {
		t.Errorf("the admin key from the limited address: %d, want 200", c)
	}
	if c := req("198.51.100.7:1", "wrong-key-0123456789"); c != 401 {
		t.Errorf("another address: %d, want 401", c)
	}
}

// TestAdminKeyReplacementLogged: --admin-key on a database with another
// admin key replaces it (the recovery path), and says so.
func TestAdminKeyReplacementLogged(t *testing.T) {
	ts := newTS(t)
	ts.close()
	st, err := openSQLite(ts.path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s, _, err := New(context.Background(), Options{Store: st, AdminKey: "another-admin-key-0123456789", Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	st.Close()
	if !strings.Contains(buf.String(), "replaces the admin key stored in the database") {
		t.Errorf("replacing the admin key was not logged:\n%s", buf.String())
	}
	ts.open() // with testAdmin again: the key given wins
	if code, _ := ts.admin("GET", "/v1/experiments", ""); code != 200 {
		t.Errorf("the admin key given at start does not work: %d", code)
	}
}

// failingStore fails every Commit once fail is set, as a store that lost
// its lock does.
type failingStore struct {
	store.Store
	fail atomic.Bool
}

func (f *failingStore) Commit(ctx context.Context, b *store.Batch) error {
	if f.fail.Load() {
		return fmt.Errorf("test: %w", store.ErrLockLost)
	}
	return f.Store.Commit(ctx, b)
}

// TestCloseGivesUpFailingCommits: a graceful stop whose final commits keep
// failing used to retry forever, so the server never exited.
func TestCloseGivesUpFailingCommits(t *testing.T) {
	st, err := openSQLite(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := &failingStore{Store: st}
	var logs bytes.Buffer
	s, _, err := New(context.Background(), Options{Store: fs, AdminKey: testAdmin, Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := &tsrv{t: t, s: s}
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`)
	fs.fail.Store(true)
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{}`); code != 200 {
		t.Fatalf("decide: %d %v", code, m)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return in 10 s while every commit fails")
	}
	if n := strings.Count(logs.String(), "group commit failed"); n > 10 {
		t.Errorf("%d commit failures logged; the writer must back off", n)
	}
	if !strings.Contains(logs.String(), "giving up the final commits") {
		t.Errorf("giving up is not logged:\n%s", logs.String())
	}
}

// TestAutoPolicy: "policy": "auto" runs the recommender and says what it
// chose and why; a policy the recommender expects to play close to
// uniformly at its budget is created with a warning naming a better one.
func TestAutoPolicy(t *testing.T) {
	ts := newTS(t)
	code, m := ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b","c"],"policy":"auto","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}}`)
	chosen, _ := m["chosen"].(string)
	if code != 201 || m["policy"] == "auto" || !strings.Contains(chosen, "chosen by \"auto\"") || !strings.Contains(chosen, m["policy"].(string)) {
		t.Fatalf("auto: %d %v", code, m)
	}
	t.Logf("auto chose %s: %s", m["policy"], chosen)
	for _, body := range []string{
		`{"name":"x","arms":["a","b"],"policy":"auto","horizon":100,"budget":null}`,
		`{"name":"x","arms":["a","b"],"policy":"auto","horizon":100,"dim":2,"budget":{"epsilon":1,"delta":1e-6}}`,
		`{"name":"x","arms":["a","b"],"policy":"auto","horizon":100,"budget":{"epsilon":1,"delta":1e-6},"params":{"c":1}}`,
	} {
		if code, m := ts.admin("POST", "/v1/experiments", body); code != 400 {
			t.Errorf("%s: %d %v, want 400", body, code, m)
		}
	}
	code, m = ts.admin("POST", "/v1/experiments", `{"name":"x","arms":["a","b","c"],"policy":"mts-gaussian","horizon":10000,"budget":{"epsilon":1,"delta":1e-6}}`)
	w, _ := m["warning"].(string)
	if code != 201 || !strings.Contains(w, "close to uniformly") || !strings.Contains(w, "consider") {
		t.Errorf("mts-gaussian at ε = 1 over 10^4 decisions: %d, warning %q; want a warning that it plays close to uniformly", code, w)
	}
}

// TestReportStaysLive: issue 14's second suspected bug. The experiment view
// showed the report computed at creation; once M-TS ran a Thompson round
// with pre-pull rewards outstanding its own report moved to the larger
// "lagged" bound, and the API kept the smaller value.
func TestReportStaysLive(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":1000,"budget":{"mu":5,"delta":1e-6},"params":{"b":2}}`)
	certified := func() float64 {
		_, m := ts.admin("GET", "/v1/experiments/"+id, "")
		return m["privacy"].(map[string]any)["report"].(map[string]any)["certified"].(map[string]any)["value"].(float64)
	}
	at0 := certified()
	// The 4 pre-pull decisions, one reward, then a Thompson round while an
	// arm holds 1 < b applied rewards.
	for i := range 4 {
		ts.admin("POST", "/v1/experiments/"+id+"/decisions", fmt.Sprintf(`{"event_id":"p%d"}`, i))
	}
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/rewards", `{"event_id":"p0","reward":1}`); code != 202 {
		t.Fatalf("reward: %d %v", code, m)
	}
	ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"event_id":"t0"}`)
	x := ts.s.eng.get(id)
	x.mu.Lock()
	want, err := x.pol.(bandit.Private).Privacy().At(1e-6)
	x.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := certified(); got != want.Certified.Value || !(got > at0) {
		t.Errorf("certified in the view = %v, the policy's own report says %v (at creation %v): the view must show the live, larger lagged bound", got, want.Certified.Value, at0)
	}
}
