package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/storetest"
)

// FuzzReplicaRequests drives the replica-mode handlers (two in-process
// replicas on one PostgreSQL schema) with arbitrary create, decide and
// reward bodies; the decision goes to one replica and the reward to the
// other. No input may panic a replica or get a 5xx, and every error must be
// JSON with a code and a useful message. "$EV" in the reward body stands
// for the event id the decision returned. Skipped without PostgreSQL (as
// every PostgreSQL test, unless CI=true). The seed corpus runs in every
// `go test`; `go test ./server -run XXX -fuzz FuzzReplicaRequests` explores.
func FuzzReplicaRequests(f *testing.F) {
	for _, s := range [][3]string{
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":1000,"budget":{"mu":1,"delta":1e-6}}`, `{}`, `{"event_id":"$EV","reward":1}`},
		{`{"name":"x","arms":["a","b"],"policy":"gaussian-ts","horizon":1000,"budget":{"epsilon":1,"delta":1e-6},"on_exhausted":"stop"}`, `{"count":5}`, `{"rewards":[{"event_id":"$EV","reward":0.5},{"event_id":"nope","reward":1}]}`},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":10,"budget":{"mu":1e308,"delta":1e-6}}`, `{"event_id":"e1"}`, `{"event_id":"$EV","reward":2}`},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":10,"budget":{"mu":1,"delta":1e-6},"default_reward":0}`, `{}`, `{}`},
		{`{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":10,"budget":{"mu":1,"delta":1e-6}}`, `{}`, `{}`},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":100,"budget":{"mu":1,"delta":1e-6}}`, `{"candidates":[[1]],"propensity":true}`, `{"event_id":"$EV","reward":NaN}`},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":100,"budget":{"mu":1,"delta":1e-6}}`, `{"count":0}`, `[{"event_id":"$EV","reward":1}]`},
		{`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":100,"budget":{"mu":1,"delta":1e-6}}`, `{"event_id":"` + strings.Repeat("z", 128) + `","count":2}`, `{"event_id":"$EV","reward":0}`},
		{`{`, `{`, `{`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	dsn := storetest.PostgresSchema(f)
	ctx := context.Background()
	var hs [2]http.Handler
	for i := range hs {
		st, err := postgres.OpenReplica(ctx, dsn, postgres.Options{Watch: -1})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { st.Close() })
		rp, err := NewReplica(ctx, ReplicaOptions{Store: st, AdminKey: "fuzz-admin-key-0123456789", Lease: 400 * time.Millisecond, Poll: 20 * time.Millisecond})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { rp.Close() })
		hs[i] = rp.Handler()
	}
	do := func(h http.Handler, method, path, body string) (int, map[string]any) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer fuzz-admin-key-0123456789")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		raw, _ := io.ReadAll(w.Result().Body)
		var m map[string]any
		json.Unmarshal(raw, &m)
		return w.Code, m
	}
	f.Fuzz(func(t *testing.T, spec, decide, reward []byte) {
		code, m := do(hs[0], "POST", "/v1/experiments", string(spec))
		check5xx(t, "create", spec, code, m)
		if code != 201 {
			return
		}
		id, _ := m["id"].(string)
		path := "/v1/experiments/" + id
		code, m = do(hs[0], "POST", path+"/decisions", string(decide))
		check5xx(t, "decide", decide, code, m)
		ev := "none"
		if e, ok := m["event_id"].(string); ok {
			ev = e
		} else if ds, ok := m["decisions"].([]any); ok && len(ds) > 0 {
			ev, _ = ds[0].(map[string]any)["event_id"].(string)
		}
		rb := strings.ReplaceAll(string(reward), "$EV", ev)
		code, m = do(hs[1], "POST", path+"/rewards", rb)
		check5xx(t, "reward", []byte(rb), code, m)
		code, m = do(hs[1], "GET", path, "")
		if code != 200 {
			t.Fatalf("the other replica does not serve the experiment created by %q: %d %v", spec, code, m)
		}
		if s, b := m["budget_row"].(map[string]any)["spent"].(float64), m["budget_row"].(map[string]any)["budget"].(float64); s > b {
			t.Fatalf("spent %v > budget %v", s, b)
		}
	})
}
