package server_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2EExport: `dpbandit export` against a real `dpbandit serve`: the
// JSONL has every logged decision, the CSV the rewarded ones with a
// released propensity, and stderr counts what was skipped.
func TestE2EExport(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	id := create(t, p, map[string]any{"name": "export", "arms": []string{"a", "b", "c"}, "policy": "beta-ts", "horizon": 1000, "budget": nil})
	type dec struct {
		arm  string
		prop float64
	}
	decided := map[string]dec{}
	for i := range 12 {
		ev := fmt.Sprint("u", i)
		code, m := decideOne(t, p, adminKey, id, map[string]any{"event_id": ev, "propensity": i%3 != 0})
		if code != 200 {
			t.Fatalf("decide: %d %v", code, m)
		}
		pr, _ := m["propensity"].(float64)
		decided[ev] = dec{str(m, "arm"), pr}
	}
	// u0..u7 rewarded (u0, u3, u6 without propensity); u8..u11 not.
	for i := range 8 {
		if code, m := rewardOne(t, p, adminKey, id, fmt.Sprint("u", i), float64(i)/10); code != 202 {
			t.Fatalf("reward: %d %v", code, m)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, m := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		if num(m, "logged_decisions") == 12 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not logged: %v", m["logged_decisions"])
		}
		time.Sleep(10 * time.Millisecond)
	}

	export := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(binary(t), append([]string{"export", "--url", p.url, "--experiment", id}, args...)...)
		cmd.Env = append(os.Environ(), "DPBANDIT_KEY="+adminKey)
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("dpbandit export %v: %v\n%s", args, err, se.String())
		}
		return so.String(), se.String()
	}

	dir := t.TempDir()
	_, stderr := export("--format", "csv", "--out", filepath.Join(dir, "log.csv"))
	f, err := os.Open(filepath.Join(dir, "log.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "action,reward,pscore,timestamp,event_id" {
		t.Fatalf("CSV header %v", recs)
	}
	var evs []string
	for _, r := range recs[1:] {
		ev := r[4]
		evs = append(evs, ev)
		d := decided[ev]
		i, _ := strconv.Atoi(strings.TrimPrefix(ev, "u"))
		arm := []string{"a", "b", "c"}[exportAtoi(t, r[0])]
		if arm != d.arm || r[1] != strconv.FormatFloat(float64(i)/10, 'g', -1, 64) || r[2] != strconv.FormatFloat(d.prop, 'g', -1, 64) {
			t.Errorf("CSV row %v; decided %+v, rewarded %v", r, d, float64(i)/10)
		}
		if _, err := time.Parse(time.RFC3339Nano, r[3]); err != nil {
			t.Errorf("timestamp %q: %v", r[3], err)
		}
	}
	if fmt.Sprint(evs) != "[u1 u2 u4 u5 u7]" {
		t.Errorf("CSV rows for %v, want [u1 u2 u4 u5 u7] (rewarded, with a released propensity, in order)", evs)
	}
	for _, s := range []string{"wrote 5 rows", "4 without a reward yet", "0 whose reward value was deleted", "3 without a released propensity"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("export stderr %q lacks %q", stderr, s)
		}
	}

	// JSONL to stdout: every decision, in order.
	stdout, stderr := export()
	var n int
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		n++
		if num(l, "seq") != float64(n) || str(l, "event_id") != fmt.Sprint("u", n-1) {
			t.Errorf("line %d: %v", n, l)
		}
	}
	if n != 12 || !strings.Contains(stderr, "wrote 12 lines") {
		t.Errorf("JSONL: %d lines, stderr %q", n, stderr)
	}

	// The endpoint over a real connection: streamed as JSON lines, resumed
	// by the cursor; a client key is refused.
	resp, err := http.Get(p.url + "/v1/experiments/" + id + "/log?cursor=10")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("no key: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", p.url+"/v1/experiments/"+id+"/log?cursor=10", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []float64
	jd := json.NewDecoder(resp.Body)
	for jd.More() {
		var l map[string]any
		if err := jd.Decode(&l); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, num(l, "seq"))
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "application/x-ndjson" || fmt.Sprint(seqs) != "[11 12]" {
		t.Errorf("GET log?cursor=10: %q %v", resp.Header.Get("Content-Type"), seqs)
	}
	_, k := call(t, "POST", p.url+"/v1/keys", adminKey, map[string]any{"experiments": []string{id}})
	if code, m := call(t, "GET", p.url+"/v1/experiments/"+id+"/log", str(k, "key"), nil); code != 403 {
		t.Errorf("client key: %d %v", code, m)
	}
}

func exportAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
