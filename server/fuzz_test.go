package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Fuzz tests on every JSON body. Each runs the whole handler (auth, size
// limit, validation, engine) in process: no input may panic or produce a
// 5xx, and every 4xx must be a JSON error whose message says what to change.
// The seed corpus runs in a normal `go test`; `go test -fuzz FuzzDecide` and
// friends explore further.

type fuzzEnv struct {
	s   *Server
	exp string
}

var (
	fuzzOnce sync.Once
	fuzzE    *fuzzEnv
)

func env(t testing.TB) *fuzzEnv {
	fuzzOnce.Do(func() {
		dir, err := os.MkdirTemp(TestTempRoot, "fuzz-")
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := New(context.Background(), Options{Store: openStoreNoCleanup(t, filepath.Join(dir, "db.sqlite")), AdminKey: "fuzz-admin-key-123456"})
		if err != nil {
			t.Fatal(err)
		}
		fuzzE = &fuzzEnv{s: s}
		rec := fuzzE.do("POST", "/v1/experiments", `{"name":"f","arms":["a","b","c"],"policy":"mts-gaussian","horizon":100000,"budget":{"mu":2,"delta":1e-6},"reward_range":[0,10]}`)
		var m map[string]any
		json.Unmarshal(rec.Body.Bytes(), &m)
		fuzzE.exp, _ = m["id"].(string)
		if fuzzE.exp == "" {
			t.Fatalf("create: %s", rec.Body)
		}
		for _, ev := range []string{"e1", "e2", "e3"} {
			fuzzE.do("POST", "/v1/experiments/"+fuzzE.exp+"/decisions", `{"event_id":"`+ev+`"}`)
		}
	})
	if fuzzE == nil {
		t.Fatal("fuzz environment failed")
	}
	return fuzzE
}

func (f *fuzzEnv) do(method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer fuzz-admin-key-123456")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(w, r)
	return w
}

func checkResponse(t *testing.T, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 {
		var m struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m.Error.Code == "" || len(m.Error.Message) < 15 {
			t.Fatalf("body %q: status %d without a useful JSON error: %s", body, rec.Code, rec.Body)
		}
	}
}

// specRejects reports whether the OpenAPI document rejects the body.
func (f *fuzzEnv) specRejects(path string, body []byte) bool {
	r := httptest.NewRequest("POST", path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if len(bytes.TrimSpace(body)) > 0 && decodeSyntax(body) != nil {
		return true
	}
	return f.s.spec.check(r, body) != nil
}

func FuzzCreateExperiment(f *testing.F) {
	for _, s := range []string{
		`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"budget":null}`,
		`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":10,"budget":{"epsilon":1,"delta":1e-6}}`,
		`{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":1000,"budget":{"mu":1,"delta":1e-6},"params":{"b":3}}`,
		`{"name":"x","arms":["a","b"],"policy":"dp-se","horizon":1000,"budget":{"epsilon":2,"delta":1e-6},"reward_wait":"1h","default_reward":0}`,
		`{"name":"x","arms":[],"policy":"ucb1","horizon":10}`, `{"name":"x","arms":["a"],"policy":"ucb1","horizon":-1}`,
		`{"arms":"a"}`, `[]`, `null`, `{`, `{"name":1}`, `{"name":"x","arms":["a"],"policy":"ucb1","horizon":1e300}`,
		`{"name":"x","arms":["a","b"],"policy":"mts-gaussian","horizon":100,"budget":{"epsilon":1e-300,"delta":0.5}}`,
		`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"reward_range":[1,0]}`, "",
		`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"reward_retention":"0s"}`, `{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"reward_retention":"9000h"}`,
		`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":10,"reward_retention":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := env(t)
		rec := e.do("POST", "/v1/experiments", string(body))
		checkResponse(t, body, rec)
	})
}

func FuzzDecide(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"event_id":"e1"}`, `{"count":3}`, `{"count":0}`, `{"count":1001}`, `{"event_id":"x","count":2}`,
		`{"event_id":""}`, `{"event_id":"a b"}`, `{"candidates":[[1,2]]}`, `{"count":"3"}`, `{"count":2.5}`, `{"x":1}`, `[1]`, `{"event_id":null}`,
		`{"event_id":"` + strings.Repeat("z", 129) + `"}`, `{} {}`, `{"count":1e400}`,
		`{"propensity":true}`, `{"propensity":"yes"}`, `{"propensity":null,"count":2}`, `{"propensity":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := env(t)
		path := "/v1/experiments/" + e.exp + "/decisions"
		rec := e.do("POST", path, string(body))
		checkResponse(t, body, rec)
		// The hand validation of the hot path enforces at least what the
		// OpenAPI document does.
		if rec.Code < 300 && e.specRejects(path, body) {
			t.Fatalf("body %q accepted (%d) but the OpenAPI document rejects it", body, rec.Code)
		}
	})
}

func FuzzReward(f *testing.F) {
	for _, s := range []string{`{"event_id":"e1","reward":1}`, `{"event_id":"e2","reward":11}`, `{"event_id":"e3","reward":-1}`,
		`{"event_id":"zz","reward":1}`, `{"rewards":[{"event_id":"e1","reward":1},{"event_id":"e2","reward":2}]}`, `{"rewards":[]}`,
		`{"rewards":[{"event_id":"e1"}]}`, `{"event_id":"e1"}`, `{"reward":1}`, `{"event_id":"e1","reward":"1"}`, `{"event_id":"e1","reward":1,"rewards":[]}`,
		`{}`, ``, `nul`, `{"event_id":"e1","reward":NaN}`, `{"event_id":"e3","reward":1e309}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := env(t)
		path := "/v1/experiments/" + e.exp + "/rewards"
		rec := e.do("POST", path, string(body))
		checkResponse(t, body, rec)
		if rec.Code < 300 && e.specRejects(path, body) {
			t.Fatalf("body %q accepted (%d) but the OpenAPI document rejects it", body, rec.Code)
		}
	})
}

func FuzzCreateKey(f *testing.F) {
	for _, s := range []string{`{"experiments":["exp_x"]}`, `{"experiments":[]}`, `{"experiments":"x"}`, `{}`, `{"experiments":[1]}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := env(t)
		checkResponse(t, body, e.do("POST", "/v1/keys", string(body)))
	})
}

func openStoreNoCleanup(t testing.TB, path string) *sqliteStore {
	s, err := openSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSpecValidation(t *testing.T) {
	e := env(t)
	for body, want := range map[string]string{
		`{"name":"x","arms":["a"],"policy":"ucb1"}`:                                "horizon",
		`{"name":"x","arms":["a"],"policy":"ucb1","horizon":1,"foo":1}`:            "foo",
		`{"name":"x","arms":["a"],"policy":"ucb1","horizon":"1"}`:                  "horizon",
		`{"name":"x","arms":["a"],"policy":"ucb1","horizon":1,"on_exhausted":"x"}`: "on_exhausted",
	} {
		rec := e.do("POST", "/v1/experiments", body)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: %d %s; want 400 naming %s", body, rec.Code, rec.Body, want)
		}
	}
}
