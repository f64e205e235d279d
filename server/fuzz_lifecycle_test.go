package server

import (
	"strings"
	"testing"
)

// FuzzLifecycle drives the real handler stack through create → decide →
// reward → restart → decide with arbitrary bodies, on a fresh SQLite store
// each time: no input may panic the server, its writer or its restore, no
// client error may be a 5xx, and whatever was stored must load again (a
// stored experiment the restart cannot load would be listed unavailable).
// In the reward body, "$EV" stands for the first event id the decision
// returned, so that rewards reach real decisions.
//
// The seed corpus (below and testdata/fuzz/FuzzLifecycle) runs in every
// `go test`; `go test ./server -run XXX -fuzz FuzzLifecycle` explores.
func FuzzLifecycle(f *testing.F) {
	for _, s := range [][3]string{
		// Item 1 of issue 10: this range used to be accepted and its reward
		// crashed every restart.
		{`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null,"reward_range":[-1e308,1e308]}`, `{}`, `{"event_id":"$EV","reward":1e308}`},
		{`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null,"reward_range":[-8e307,8e307]}`, `{}`, `{"event_id":"$EV","reward":8e307}`},
		{`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null,"reward_range":[-8e307,8e307]}`, `{}`, `{"event_id":"$EV","reward":-8e307}`},
		{`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null,"reward_range":[0,5e-324]}`, `{}`, `{"event_id":"$EV","reward":5e-324}`},
		{`{"name":"x","arms":["a","b","c"],"policy":"mts-gaussian","horizon":1000,"budget":{"epsilon":1,"delta":1e-6}}`, `{"count":3}`, `{"event_id":"$EV","reward":1}`},
		{`{"name":"x","arms":["a","b"],"policy":"dp-ts-ucb","horizon":1000,"budget":{"epsilon":2,"delta":1e-6}}`, `{"event_id":"e"}`, `{"rewards":[{"event_id":"$EV","reward":0.5}]}`},
		{`{"name":"x","arms":["a","b"],"policy":"adaprivate-ts","horizon":1000,"dim":3,"budget":{"epsilon":2,"delta":1e-6}}`, `{"candidates":[[1,0,0],[0,1e300,0]]}`, `{"event_id":"$EV","reward":1}`},
		{`{"name":"x","arms":["a","b"],"policy":"lints","horizon":100,"dim":2,"budget":null,"feature_norm":1e-300}`, `{"candidates":[[1e300,1e300],[-1e300,5e-324]]}`, `{"event_id":"$EV","reward":0}`},
		{`{"name":"x","arms":["a","b"],"policy":"beta-ts","horizon":100,"budget":null,"default_reward":0,"reward_wait":"1s"}`, `{"propensity":true}`, `{"event_id":"$EV","reward":1}`},
		{`{"name":"\u0000","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`, `{}`, `{}`},
		{`{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":10,"budget":{"mu":1e308,"delta":1e-6}}`, `{}`, `{}`},
		{`{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":10,"budget":{"epsilon":5e307,"delta":1e-6}}`, `{}`, `{}`},
		{`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`, `{"event_id":"` + strings.Repeat("z", 128) + `","count":2}`, `{"event_id":"$EV.1","reward":1}`},
		{`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`, `[]`, `[{"event_id":"$EV","reward":1}]`},
		{`{"name":"x","arms":["a"],"policy":"ts-gaussian","horizon":100,"budget":{"epsilon":1000,"delta":0.999999}}`, `{"count":1000}`, `{"event_id":"$EV","reward":1}`},
		{`{`, `{`, `{`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, spec, decide, reward []byte) {
		ts := newTS(t)
		code, m := ts.admin("POST", "/v1/experiments", string(spec))
		check5xx(t, "create", spec, code, m)
		if code != 201 {
			return
		}
		id := m["id"].(string)
		path := "/v1/experiments/" + id
		code, m = ts.admin("POST", path+"/decisions", string(decide))
		check5xx(t, "decide", decide, code, m)
		ev := "none"
		if e, ok := m["event_id"].(string); ok {
			ev = e
		} else if ds, ok := m["decisions"].([]any); ok && len(ds) > 0 {
			ev, _ = ds[0].(map[string]any)["event_id"].(string)
		}
		rb := strings.ReplaceAll(string(reward), "$EV", ev)
		code, m = ts.admin("POST", path+"/rewards", rb)
		check5xx(t, "reward", []byte(rb), code, m)

		ts.restart()
		code, m = ts.admin("GET", path, "")
		if code != 200 {
			t.Fatalf("after a restart the experiment created by %q does not load: %d %v", spec, code, m)
		}
		code, m = ts.admin("POST", path+"/decisions", string(decide))
		check5xx(t, "decide after the restart", decide, code, m)
	})
}

// check5xx fails on a 5xx (a client error must be a 4xx that says what to
// change) and on an error without a useful message.
func check5xx(t *testing.T, what string, body []byte, code int, m map[string]any) {
	t.Helper()
	if code >= 500 {
		t.Fatalf("%s %q: %d %v", what, body, code, m)
	}
	if code >= 400 {
		if c, msg := errOf(m); c == "" || len(msg) < 15 {
			t.Fatalf("%s %q: %d without a useful JSON error: %v", what, body, code, m)
		}
	}
}
