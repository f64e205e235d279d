package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// getLog reads GET /v1/experiments/{id}/log?query as key: the status, the
// lines (decoded), the error body (non-200) and the Content-Type.
func (ts *tsrv) getLog(id, query, key string) (int, []map[string]any, map[string]any, string) {
	ts.t.Helper()
	r := httptest.NewRequest("GET", "/v1/experiments/"+id+"/log", nil)
	r.URL.RawQuery = query
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	ts.s.Handler().ServeHTTP(w, r)
	ct := w.Header().Get("Content-Type")
	if w.Code != 200 {
		var m map[string]any
		json.Unmarshal(w.Body.Bytes(), &m)
		return w.Code, nil, m, ct
	}
	if !w.Flushed {
		ts.t.Errorf("GET log?%s was not flushed while streaming", query)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(w.Body.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			ts.t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	return w.Code, lines, nil, ct
}

// waitLogged waits until n decisions of id are logged (committed).
func (ts *tsrv) waitLogged(id string, n int) {
	ts.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, m := ts.admin("GET", "/v1/experiments/"+id, "")
		if got, _ := m["logged_decisions"].(float64); int(got) >= n {
			return
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("decisions of %s not logged: %v", id, m["logged_decisions"])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func seqs(lines []map[string]any) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		out[i] = int(l["seq"].(float64))
	}
	return out
}

func seqRange(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestLogBetaTS: a non-private experiment whose propensities are released
// when asked for: rows in seq order with their arms, propensities where
// released (marked where not), rewards joined, the cursor resumes exactly
// after, limit bounds the lines.
func TestLogBetaTS(t *testing.T) {
	ts := newTS(t)
	arms := []string{"red", "green", "blue"}
	id := ts.create(`{"name":"x","arms":["red","green","blue"],"policy":"beta-ts","horizon":1000,"budget":null}`)
	decided := map[string]map[string]any{}
	for i := range 10 {
		ev := fmt.Sprint("e", i)
		code, d := ts.admin("POST", "/v1/experiments/"+id+"/decisions", fmt.Sprintf(`{"event_id":%q,"propensity":%v}`, ev, i%2 == 0))
		if code != 200 {
			t.Fatalf("decide %s: %d %v", ev, code, d)
		}
		decided[ev] = d
	}
	rewards := map[string]float64{"e1": 0.7, "e2": 1, "e5": 0}
	for ev, v := range rewards {
		if code, m := ts.admin("POST", "/v1/experiments/"+id+"/rewards", fmt.Sprintf(`{"event_id":%q,"reward":%v}`, ev, v)); code != 202 {
			t.Fatalf("reward %s: %d %v", ev, code, m)
		}
	}
	ts.waitLogged(id, 10)
	t0 := time.Now().Add(-time.Minute)

	code, lines, m, ct := ts.getLog(id, "", testAdmin)
	if code != 200 || ct != "application/x-ndjson" {
		t.Fatalf("GET log: %d %q %v", code, ct, m)
	}
	if fmt.Sprint(seqs(lines)) != fmt.Sprint(seqRange(1, 10)) {
		t.Fatalf("log seqs = %v, want 1..10", seqs(lines))
	}
	for i, l := range lines {
		ev := fmt.Sprint("e", i)
		d := decided[ev]
		if l["event_id"] != ev || l["arm"] != d["arm"] || arms[int(l["arm_index"].(float64))] != l["arm"] {
			t.Errorf("line %d = %v; decision was %v", i, l, d)
		}
		if tm, err := time.Parse(time.RFC3339Nano, l["time"].(string)); err != nil || tm.Before(t0) || tm.After(time.Now()) || !strings.HasSuffix(l["time"].(string), "Z") {
			t.Errorf("line %d time %v: %v", i, l["time"], err)
		}
		if _, has := l["features"]; has {
			t.Errorf("line %d of a K-armed experiment has features: %v", i, l)
		}
		if i%2 == 0 {
			if l["propensity_released"] != true || l["propensity"] != d["propensity"] || l["propensity_draws"] == nil {
				t.Errorf("line %d = %v; want the released propensity %v", i, l, d["propensity"])
			}
		} else if l["propensity_released"] != false || l["propensity"] != nil || l["propensity_draws"] != nil {
			t.Errorf("line %d = %v; want propensity_released false and no propensity", i, l)
		}
		if v, ok := rewards[ev]; ok {
			if l["reward"] != v || l["reward_time"] == nil || l["default_reward"] != nil || l["reward_purged"] != nil {
				t.Errorf("line %d = %v; want reward %v with its time", i, l, v)
			}
		} else if l["reward"] != nil || l["reward_time"] != nil {
			t.Errorf("line %d = %v; want no reward", i, l)
		}
	}

	for _, c := range []struct{ q, want string }{
		{"cursor=4", fmt.Sprint(seqRange(5, 10))},
		{"limit=3", "[1 2 3]"},
		{"cursor=4&limit=2", "[5 6]"},
		{"cursor=9&limit=5", "[10]"},
		{"cursor=10", "[]"},
		{"cursor=1000000", "[]"},
		{"cursor=0&limit=1000000000", fmt.Sprint(seqRange(1, 10))},
	} {
		code, lines, m, _ := ts.getLog(id, c.q, testAdmin)
		if code != 200 || fmt.Sprint(seqs(lines)) != c.want {
			t.Errorf("GET log?%s: %d %v %v; want seqs %s", c.q, code, seqs(lines), m, c.want)
		}
	}

	// Archiving deletes the reward values: the log then marks them purged.
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/archive", ""); code != 200 {
		t.Fatalf("archive: %d %v", code, m)
	}
	_, lines, _, _ = ts.getLog(id, "", testAdmin)
	for i, l := range lines {
		_, rewarded := rewards[fmt.Sprint("e", i)]
		if rewarded != (l["reward_purged"] == true) || l["reward"] != nil || rewarded != (l["reward_time"] != nil) {
			t.Errorf("archived, line %d = %v; want reward_purged with its time and no value iff rewarded", i, l)
		}
	}
}

// TestLogPrivateAndContextual: a private policy whose propensities are not
// released (every line marked), and a contextual one whose lines carry the
// chosen candidate as scaled by the service.
func TestLogPrivateAndContextual(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"p","arms":["a","b"],"policy":"mts-gaussian","horizon":1000,"budget":{"epsilon":1,"delta":1e-6}}`)
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"propensity":true}`); code != 400 {
		t.Fatalf("mts-gaussian with propensity: %d %v; want 400", code, m)
	}
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"count":5,"event_id":"b"}`); code != 200 {
		t.Fatalf("decide: %d %v", code, m)
	}
	ts.admin("POST", "/v1/experiments/"+id+"/rewards", `{"event_id":"b.3","reward":0.25}`)
	ts.waitLogged(id, 5)
	code, lines, m, _ := ts.getLog(id, "", testAdmin)
	if code != 200 || len(lines) != 5 {
		t.Fatalf("GET log: %d %v %v", code, lines, m)
	}
	for i, l := range lines {
		if l["event_id"] != fmt.Sprint("b.", i) || l["propensity_released"] != false || l["propensity"] != nil || (i == 3) != (l["reward"] == 0.25) {
			t.Errorf("line %d = %v", i, l)
		}
	}

	cid := ts.create(`{"name":"c","arms":["a","b"],"policy":"lints","horizon":100,"budget":null,"dim":2}`)
	_, x := ts.admin("GET", "/v1/experiments/"+cid, "")
	fn := x["feature_norm"].(float64)
	cands := [][]float64{{3, 4}, {0.1, -0.2}}
	code, d := ts.admin("POST", "/v1/experiments/"+cid+"/decisions", `{"event_id":"c1","candidates":[[3,4],[0.1,-0.2]],"propensity":true}`)
	if code != 200 {
		t.Fatalf("contextual decide: %d %v", code, d)
	}
	ts.waitLogged(cid, 1)
	_, lines, _, _ = ts.getLog(cid, "", testAdmin)
	if len(lines) != 1 {
		t.Fatalf("contextual log: %v", lines)
	}
	l := lines[0]
	c := cands[int(l["arm_index"].(float64))]
	scale := math.Max(fn, math.Hypot(c[0], c[1]))
	f, _ := l["features"].([]any)
	if l["arm"] != d["arm"] || len(f) != 2 || math.Abs(f[0].(float64)-c[0]/scale) > 1e-12 || math.Abs(f[1].(float64)-c[1]/scale) > 1e-12 {
		t.Errorf("contextual line %v; want the chosen candidate %v scaled by 1/%v", l, c, scale)
	}
	if l["propensity_released"] != true || l["propensity"] != d["propensity"] {
		t.Errorf("contextual line %v; want the released propensity %v", l, d["propensity"])
	}
}

// TestLogPages: a log longer than one store page streams whole, in order.
func TestLogPages(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":100000,"budget":null}`)
	n := logPage + 1500
	for i := 0; i < n; i += maxCount {
		if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", fmt.Sprintf(`{"count":%d}`, min(maxCount, n-i))); code != 200 {
			t.Fatalf("decide: %d %v", code, m)
		}
	}
	ts.waitLogged(id, n)
	for _, c := range []struct {
		q        string
		from, to int
	}{{"", 1, n}, {"cursor=10", 11, n}, {fmt.Sprint("limit=", logPage+7), 1, logPage + 7}, {fmt.Sprint("cursor=3&limit=", logPage), 4, logPage + 3}} {
		code, lines, m, _ := ts.getLog(id, c.q, testAdmin)
		s := seqs(lines)
		if code != 200 || len(s) != c.to-c.from+1 || s[0] != c.from || s[len(s)-1] != c.to {
			t.Fatalf("GET log?%s: %d, %d lines %v; want seqs %d..%d", c.q, code, len(s), m, c.from, c.to)
		}
		for i := range s {
			if s[i] != c.from+i {
				t.Fatalf("GET log?%s: line %d has seq %d", c.q, i, s[i])
			}
		}
	}
}

// TestLogAccess: the log holds raw rewards: admin key only; bad parameters
// are 400s that name them.
func TestLogAccess(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ucb1","horizon":100,"budget":null}`)
	_, k := ts.admin("POST", "/v1/keys", fmt.Sprintf(`{"experiments":[%q]}`, id))
	ck, _ := k["key"].(string)
	if ck == "" {
		t.Fatalf("create key: %v", k)
	}
	code, _, m, _ := ts.getLog(id, "", ck)
	if c, msg := errOf(m); code != 403 || c != "forbidden" || !strings.Contains(msg, "admin key") || !strings.Contains(msg, "raw rewards") {
		t.Errorf("client key: %d %v; want 403 saying the log needs the admin key", code, m)
	}
	if code, _, m, _ := ts.getLog(id, "", ""); code != 401 {
		t.Errorf("no key: %d %v", code, m)
	}
	if code, _, m, _ := ts.getLog("exp_nope", "", testAdmin); code != 404 {
		t.Errorf("unknown experiment: %d %v", code, m)
	}
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/log", ""); code != 405 {
		t.Errorf("POST log: %d %v", code, m)
	}
	for _, c := range []struct{ q, code, word string }{
		{"cursor=-1", "invalid_cursor", "cursor"},
		{"cursor=abc", "invalid_cursor", "cursor"},
		{"cursor=1.5", "invalid_cursor", "cursor"},
		{"cursor=9223372036854775808", "invalid_cursor", "cursor"},
		{"cursor=", "invalid_cursor", "cursor"},
		{"limit=0", "invalid_limit", "limit"},
		{"limit=-3", "invalid_limit", "limit"},
		{"limit=1000000001", "invalid_limit", "limit"},
		{"limit=x", "invalid_limit", "limit"},
		{"cursor=1&cursor=2", "invalid_request", "cursor"},
		{"curser=3", "invalid_request", "curser"},
	} {
		code, _, m, _ := ts.getLog(id, c.q, testAdmin)
		if ec, msg := errOf(m); code != 400 || ec != c.code || !strings.Contains(msg, c.word) {
			t.Errorf("GET log?%s: %d %v; want 400 %s naming %s", c.q, code, m, c.code, c.word)
		}
	}
}

// FuzzLogQuery: no query string panics the log or gets a 5xx; a 200 is
// JSON lines in increasing seq order after the cursor.
func FuzzLogQuery(f *testing.F) {
	ts := newTS(f)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"beta-ts","horizon":100,"budget":null}`)
	ts.admin("POST", "/v1/experiments/"+id+"/decisions", `{"count":20,"propensity":true}`)
	ts.waitLogged(id, 20)
	for _, s := range []string{"", "cursor=3", "limit=2", "cursor=5&limit=5", "cursor=-1", "limit=0", "cursor=%zz", "a=b&&c", "cursor=1e3", ";", "limit=99999999999999999999", "cursor=+4", "cursor=%204"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/v1/experiments/"+id+"/log", nil)
		r.URL.RawQuery = q
		r.Header.Set("Authorization", "Bearer "+testAdmin)
		w := httptest.NewRecorder()
		ts.s.Handler().ServeHTTP(w, r)
		switch w.Code {
		case 200:
			last := -1.0
			for _, line := range bytes.Split(bytes.TrimSuffix(w.Body.Bytes(), []byte("\n")), []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("?%s: line %q: %v", q, line, err)
				}
				s, _ := m["seq"].(float64)
				if s <= last || s < 1 || s > 20 {
					t.Fatalf("?%s: seq %v after %v", q, s, last)
				}
				last = s
			}
		case 400:
			var m map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
				t.Fatalf("?%s: 400 body %q", q, w.Body.String())
			}
			if c, msg := errOf(m); c == "" || msg == "" {
				t.Fatalf("?%s: 400 without code and message: %v", q, m)
			}
		default:
			t.Fatalf("?%s: status %d %s", q, w.Code, w.Body.String())
		}
	})
}
