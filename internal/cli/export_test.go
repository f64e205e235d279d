package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logLines is a stand-in decision log of a contextual experiment (dim 2):
// one evaluable row, then one of each kind that is skipped, a frozen
// evaluable row, and a Monte Carlo propensity of 0 (skipped).
var logLines = []string{
	`{"seq":1,"event_id":"a","time":"2026-01-02T03:04:05.006Z","arm":"x","arm_index":1,"features":[0.6,0.8],"propensity":0.25,"propensity_draws":0,"propensity_released":true,"reward":1.5,"reward_time":"2026-01-02T03:04:06.000Z"}`,
	`{"seq":2,"event_id":"b","time":"2026-01-02T03:04:05.007Z","arm":"w","arm_index":0,"features":[0,1],"propensity":0.5,"propensity_draws":0,"propensity_released":true}`,
	`{"seq":3,"event_id":"c","time":"2026-01-02T03:04:05.008Z","arm":"w","arm_index":0,"features":[0,1],"propensity":0.5,"propensity_draws":0,"propensity_released":true,"reward_time":"2026-01-02T03:04:06.000Z","reward_purged":true}`,
	`{"seq":4,"event_id":"d","time":"2026-01-02T03:04:05.009Z","arm":"w","arm_index":0,"features":[1,0],"propensity_released":false,"reward":0,"reward_time":"2026-01-02T03:04:06.000Z"}`,
	`{"seq":5,"event_id":"e","time":"2026-01-02T03:04:05.010Z","arm":"x","arm_index":1,"frozen":true,"features":[-0.1,1e-9],"propensity":1,"propensity_draws":0,"propensity_released":true,"reward":0,"reward_time":"2026-01-02T03:04:06.000Z","default_reward":true}`,
	`{"seq":6,"event_id":"f","time":"2026-01-02T03:04:05.011Z","arm":"w","arm_index":0,"features":[0,1],"propensity":0,"propensity_draws":4096,"propensity_released":true,"reward":1,"reward_time":"2026-01-02T03:04:06.000Z"}`,
}

// logStandIn serves lines as the log of exp_1 to the key "admin-key", then
// tail (an error line, or a cut connection when tail is "cut").
func logStandIn(t *testing.T, lines []string, tail string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer admin-key" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(403)
			w.Write([]byte(`{"error":{"code":"forbidden","message":"reading the decision log needs the admin key"}}`))
			return
		}
		if r.URL.Path != "/v1/experiments/exp_1/log" || r.URL.RawQuery != "" {
			w.WriteHeader(404)
			w.Write([]byte(`{"error":{"code":"not_found","message":"no experiment"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			w.Write([]byte(l + "\n"))
		}
		switch tail {
		case "cut":
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "":
		default:
			w.Write([]byte(tail + "\n"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestExportCSV(t *testing.T) {
	t.Setenv("DPBANDIT_KEY", "admin-key")
	srv := logStandIn(t, logLines, "")
	out := filepath.Join(t.TempDir(), "log.csv")
	code, stdout, stderr := run(t, "export", "--url", srv.URL, "--experiment", "exp_1", "--format", "csv", "--out", out)
	if code != 0 || stdout != "" {
		t.Fatalf("export: %d %q %s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(out)
	want := `action,reward,pscore,context_0,context_1,timestamp,event_id
1,1.5,0.25,0.6,0.8,2026-01-02T03:04:05.006Z,a
1,0,1,-0.1,1e-09,2026-01-02T03:04:05.010Z,e
`
	if string(b) != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b, want)
	}
	for _, s := range []string{"wrote 2 rows to " + out, "1 without a reward yet", "1 whose reward value was deleted", "1 without a released propensity", "1 whose propensity is a Monte Carlo estimate of 0", "through seq 6"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr %q lacks %q", stderr, s)
		}
	}
}

func TestExportJSONL(t *testing.T) {
	srv := logStandIn(t, logLines, "")
	code, stdout, stderr := run(t, "export", "--url", srv.URL, "--key", "admin-key", "--experiment", "exp_1")
	if code != 0 || stdout != strings.Join(logLines, "\n")+"\n" || !strings.Contains(stderr, "wrote 6 lines to standard output") {
		t.Errorf("export jsonl: %d\n%s\n%s", code, stdout, stderr)
	}
	// An empty log: an empty file, and a CSV with its header only.
	empty := logStandIn(t, nil, "")
	if code, stdout, _ := run(t, "export", "--url", empty.URL, "--key", "admin-key", "--experiment", "exp_1", "--format", "csv"); code != 0 || stdout != "action,reward,pscore,timestamp,event_id\n" {
		t.Errorf("empty CSV: %d %q", code, stdout)
	}
}

func TestExportErrors(t *testing.T) {
	t.Setenv("DPBANDIT_KEY", "")
	srv := logStandIn(t, logLines[:2], `{"error":{"code":"internal","message":"reading the decision log from the store failed after seq 2"}}`)
	if code, _, stderr := run(t, "export", "--url", srv.URL, "--experiment", "exp_1"); code != 2 || !strings.Contains(stderr, "--key is required") {
		t.Errorf("no key: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "export", "--url", srv.URL, "--key", "client", "--experiment", "exp_1"); code != 1 || !strings.Contains(stderr, "admin key") || !strings.Contains(stderr, "403") {
		t.Errorf("client key: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "export", "--url", srv.URL, "--key", "admin-key", "--experiment", "exp_1", "--format", "xml"); code != 2 || !strings.Contains(stderr, "format") {
		t.Errorf("--format xml: %d %s", code, stderr)
	}
	// A failure midway: what was read is written, and the cursor to resume
	// is named.
	out := filepath.Join(t.TempDir(), "log.jsonl")
	code, _, stderr := run(t, "export", "--url", srv.URL, "--key", "admin-key", "--experiment", "exp_1", "--out", out)
	b, _ := os.ReadFile(out)
	if code != 1 || !strings.Contains(stderr, "continues after seq 2") || !strings.Contains(stderr, "store failed") || string(b) != logLines[0]+"\n"+logLines[1]+"\n" {
		t.Errorf("error line: %d %s\nfile: %s", code, stderr, b)
	}
	cut := logStandIn(t, logLines[:3], "cut")
	code, _, stderr = run(t, "export", "--url", cut.URL, "--key", "admin-key", "--experiment", "exp_1", "--out", out, "--format", "csv")
	if code != 1 || !strings.Contains(stderr, "continues after seq 3") || !strings.Contains(stderr, "wrote 1 rows") {
		t.Errorf("cut stream: %d %s", code, stderr)
	}
}
