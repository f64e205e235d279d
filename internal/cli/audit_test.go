package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runAudit(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(append([]string{"audit"}, args...), &o, &e)
	return o.String(), e.String(), code
}

// TestAuditCatchesHalvedNoise: `dpbandit audit --json` on the planted bug
// (a Gaussian release with half the noise and the full certificate) reports
// a lower bound above the certified μ = 1/√2, flags it as violated, writes
// the SVG plot and shows progress on stderr.
func TestAuditCatchesHalvedNoise(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "audit.svg")
	out, errs, code := runAudit(t, "--policy", "gaussian-release:noise=0.5", "--runs", "5000", "--workers", "2",
		"--plot", plot, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Param      string  `json:"param"`
		LowerBound float64 `json:"lower_bound"`
		Certified  float64 `json:"certified"`
		Violated   bool    `json:"violated"`
		TotalRuns  int     `json:"total_runs"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Param != "mu" || !r.Violated || !(r.LowerBound > r.Certified) || r.TotalRuns != 20000 {
		t.Errorf("result %+v: want mu, violated, lower > certified, 20000 runs", r)
	}
	if !strings.Contains(errs, "audit: evaluation 10000/10000 runs") {
		t.Errorf("no progress on stderr: %q", errs)
	}
	b, err := os.ReadFile(plot)
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("plot: %v, %d bytes", err, len(b))
	}
}

// TestAuditText: the text form of a sound policy's audit names the bound,
// the certificate, the ratio, the runs and the event, and no violation.
func TestAuditText(t *testing.T) {
	out, errs, code := runAudit(t, "--policy", "ts-gaussian", "--arms", "2", "--horizon", "6", "--runs", "600")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"lower bound μ", "certified μ", "ratio", "event", "runs", "consistent with the certificate"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestAuditBadInput: hostile flags exit 2 with one line naming the flag.
func TestAuditBadInput(t *testing.T) {
	cases := [][]string{
		{"--policy", "ts-gaussian", "--arms", "0", "--horizon", "5"},
		{"--policy", "ts-gaussian", "--arms", "2", "--horizon", "1"},
		{"--policy", "ts-gaussian", "--arms", "2", "--horizon", "5", "--runs", "0"},
		{"--policy", "ts-gaussian", "--arms", "2", "--horizon", "5", "--confidence", "1"},
		{"--policy", "ts-gaussian", "--arms", "2", "--horizon", "5", "--delta", "0"},
		{"--policy", "ts-gaussian", "--arms", "2", "--horizon", "5", "--max-time", "0s"},
		{"--policy", "ucb1", "--arms", "2", "--horizon", "5"},
		{"--policy", "adaprivate-ts", "--arms", "2", "--horizon", "5"},
		{"--policy", "gaussian-release:noise=-1"},
		{"--policy", "ts-gaussian", "--arms", "2", "--horizon", "5", "--budget", "epsilon=-1,delta=1e-6"},
	}
	wants := []string{"--arms", "--horizon", "--runs", "--confidence", "--delta", "--max-time", "no privacy guarantee", "--dim", "noise", "budget"}
	for i, args := range cases {
		_, errs, code := runAudit(t, args...)
		if code != 2 || !strings.Contains(errs, wants[i]) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", args, code, errs, wants[i])
		}
	}
}
