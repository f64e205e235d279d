package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/repro"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

func TestReproduceList(t *testing.T) {
	code, out, errs := runCLI("reproduce", "--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, n := range repro.Names() {
		if !strings.Contains(out, n) {
			t.Errorf("--list does not show %s:\n%s", n, out)
		}
	}
}

func TestReproduceUsage(t *testing.T) {
	for _, args := range [][]string{
		{"reproduce"},
		{"reproduce", "ou2024-bernoulli"},
		{"reproduce", "nope", "--out", t.TempDir()},
		{"reproduce", "ou2024-bernoulli", "--out", t.TempDir(), "--runs", "0"},
		{"reproduce", "ou2024-bernoulli", "--out", t.TempDir(), "--horizon", "1.5"},
	} {
		if code, _, errs := runCLI(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errs)
		}
	}
}

// TestReproduceClosedForm runs the closed-form reproduction (E3): every
// check resolves as docs/reproduction-decisions.md says, so the exit code is 0.
func TestReproduceClosedForm(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI("reproduce", "ou2024-privacy-curves", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var f struct {
		Checks []repro.Check `json:"checks"`
	}
	b, err := os.ReadFile(filepath.Join(dir, repro.ChecksFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Checks) == 0 {
		t.Fatal("no checks")
	}
	for _, c := range f.Checks {
		if c.Pass == c.ExpectedToFail {
			t.Errorf("%s: pass = %v, expected_to_fail = %v", c.ID, c.Pass, c.ExpectedToFail)
		}
	}
	for _, fn := range []string{"fig1_mts_privacy.svg", "fig1_mts_privacy.png", "fig4_ts_privacy.svg", "fig4_ts_privacy.png", repro.ReadmeFile} {
		if _, err := os.Stat(filepath.Join(dir, fn)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(errs, "E3.A5-thm7") {
		t.Errorf("stderr does not show the checks:\n%s", errs)
	}
}

// TestReproduceFailingCheck runs E10 at a horizon far too short for private
// bandits to learn at ε = 0.1: the saturation check fails, the exit code is
// 1, and the files are still written.
func TestReproduceFailingCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small sweep")
	}
	dir := t.TempDir()
	code, _, errs := runCLI("reproduce", "mt2015-mab", "--out", dir, "--horizon", "2000", "--runs", "2", "--workers", "2")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	if !strings.Contains(errs, "E10.saturates") {
		t.Errorf("stderr does not name the failing check:\n%s", errs)
	}
	for _, fn := range []string{repro.ChecksFile, repro.ReadmeFile, "fig1_mt_private.png"} {
		if _, err := os.Stat(filepath.Join(dir, fn)); err != nil {
			t.Error(err)
		}
	}
}
