package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/repro"
	"github.com/dpbandit/dpbandit/sim"
)

// tree returns every regular file under dir (relative path → content).
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference directory is empty", what)
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: %s missing", what, name)
		} else if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs (%d vs %d bytes)", what, name, len(g), len(w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: extra file %s", what, name)
		}
	}
}

// TestParse: the parse-only entry point accepts valid command lines
// (including --help) and rejects bad flags, values, specs, shards and
// reproduction names, without running anything.
func TestParse(t *testing.T) {
	dir := t.TempDir()
	good := [][]string{
		{"simulate", "--env", "bernoulli:0.9,0.5", "--horizon", "1e9", "--runs", "1000", "--policy", "ts-gaussian", "--shard", "7/8", "--out", filepath.Join(dir, "never")},
		{"reproduce", "ada-synthetic", "--shard", "0/4", "--out", filepath.Join(dir, "r")},
		{"reproduce", "--list"},
		{"merge", dir, dir, "--out", filepath.Join(dir, "m")},
		{"simulate", "--help"},
		{"version"},
	}
	for _, args := range good {
		if err := Parse(args); err != nil {
			t.Errorf("Parse(%q) = %v, want nil", args, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); !os.IsNotExist(err) {
		t.Fatal("Parse ran the simulation")
	}
	bad := [][]string{
		{},
		{"simulate", "--env", "bernoulli:0.9,0.5", "--horizon", "100", "--policy", "ts-gaussian", "--out", dir, "--bogus"},
		{"simulate", "--env", "bernoulli:0.9,1.5", "--horizon", "100", "--policy", "ts-gaussian", "--out", dir},
		{"simulate", "--env", "bernoulli:0.9,0.5", "--horizon", "100", "--policy", "no-such-policy", "--out", dir},
		{"simulate", "--env", "bernoulli:0.9,0.5", "--policy", "ts-gaussian", "--out", dir},
		{"simulate", "--env", "bernoulli:0.9,0.5", "--horizon", "100", "--policy", "ts-gaussian", "--shard", "8/8", "--out", dir},
		{"simulate", "--env", "bernoulli:0.9,0.5", "--horizon", "100", "--policy", "ts-gaussian"},
		{"reproduce", "no-such-reproduction", "--out", dir},
		{"reproduce", "all", "--shard", "1/2", "--out", dir},
		{"merge", filepath.Join(dir, "missing"), "--out", dir},
		{"serve", "--log-level", "loud"},
	}
	for _, args := range bad {
		if err := Parse(args); err == nil {
			t.Errorf("Parse(%q) = nil, want an error", args)
		}
	}
}

// TestSimulateResumeInProcess: a simulate run killed (injected: its
// context cancelled) after 3 cells exits 1 with the 3 cells saved; the same
// command again resumes them and writes the directory of an uninterrupted
// run byte for byte, without .cells.
func TestSimulateResumeInProcess(t *testing.T) {
	base := t.TempDir()
	args := func(out string) []string {
		return []string{"simulate", "--env", "bernoulli:0.75,0.625,0.5,0.375,0.25", "--horizon", "5000", "--runs", "4",
			"--policy", "ts-gaussian", "--policy", "mts-gaussian:b=10,c=5", "--workers", "1", "--out", out}
	}
	whole := filepath.Join(base, "whole")
	if code, _, errs := runCLI(args(whole)...); code != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", code, errs)
	}
	out := filepath.Join(base, "resumed")
	interruptAfter = 3
	code, _, errs := runCLI(args(out)...)
	interruptAfter = 0
	if code != 1 || !strings.Contains(errs, "rerun the same command to resume") {
		t.Fatalf("interrupted run: exit %d, want 1 with a resume hint: %s", code, errs)
	}
	cells, _ := filepath.Glob(filepath.Join(out, sim.CellsDir, "*", "e*-r*.json"))
	if len(cells) != 3 {
		t.Fatalf("%d cells saved, want 3", len(cells))
	}
	code, _, errs = runCLI(args(out)...)
	if code != 0 || !strings.Contains(errs, "resumed: 3 of 8 cells") {
		t.Fatalf("rerun: exit %d, want 0 and 3 of 8 cells resumed: %s", code, errs)
	}
	sameFiles(t, "resumed vs uninterrupted", tree(t, out), tree(t, whole))

	// --no-resume discards saved cells: interrupt again, rerun fresh.
	again := filepath.Join(base, "fresh")
	interruptAfter = 2
	runCLI(args(again)...)
	interruptAfter = 0
	code, _, errs = runCLI(append(args(again), "--no-resume")...)
	if code != 0 || strings.Contains(errs, "resumed") {
		t.Fatalf("--no-resume: exit %d and it resumed: %s", code, errs)
	}
	sameFiles(t, "--no-resume vs uninterrupted", tree(t, again), tree(t, whole))

	// A changed configuration (another seed) never takes the cells a killed
	// run left, and removes them once its outputs are written.
	stale := filepath.Join(base, "stale")
	interruptAfter = 3
	runCLI(args(stale)...)
	interruptAfter = 0
	code, _, errs = runCLI(append(args(stale), "--seed", "2")...)
	if code != 0 || strings.Contains(errs, "resumed") {
		t.Fatalf("another seed: exit %d and it resumed: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(stale, sim.CellsDir)); !os.IsNotExist(err) {
		t.Fatalf("%s left after a complete run: %v", sim.CellsDir, err)
	}
}

// TestReproduceShardMergeCLI: `dpbandit reproduce ada-ablation --quick`
// run as 3 shards (--shard i/3) and combined by `dpbandit merge` writes the
// unsharded run's directory byte for byte: checks.json, README.md (with the
// clock fixed: its runtimes are the only time-dependent bytes), results.md,
// the figures and sweeps/. ada-ablation's table stage reads the sweeps, so
// the shards leave it to the merge.
func TestReproduceShardMergeCLI(t *testing.T) {
	reproNow = func() time.Time { return time.Unix(0, 0) }
	defer func() { reproNow = nil }()
	base := t.TempDir()
	out := filepath.Join(base, "e14")
	single := filepath.Join(base, "single")
	if code, _, errs := runCLI("reproduce", "ada-ablation", "--quick", "--workers", "2", "--out", out); code != 0 {
		t.Fatalf("unsharded: exit %d: %s", code, errs)
	}
	// The README records the command with its --out: merge into the same path.
	if err := os.Rename(out, single); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for i := range 3 {
		dir := filepath.Join(base, "part"+string(rune('0'+i)))
		code, _, errs := runCLI("reproduce", "ada-ablation", "--quick", "--workers", "2", "--shard", string(rune('0'+i))+"/3", "--out", dir)
		if code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, repro.ShardFile)); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		parts = append(parts, dir)
	}
	code, _, errs := runCLI(append(append([]string{"merge"}, parts...), "--workers", "2", "--out", out)...)
	if code != 0 || !strings.Contains(errs, "merged 3 shards of ada-ablation") {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	sameFiles(t, "merged shards vs unsharded", tree(t, out), tree(t, single))

	// Mixing a sweep shard with reproduction shards is refused (exit 2).
	sweep := filepath.Join(base, "sweep0")
	if code, _, errs := runCLI("simulate", "--env", "bernoulli:0.9,0.5", "--horizon", "100", "--runs", "2",
		"--policy", "ts-gaussian", "--shard", "0/2", "--out", sweep); code != 0 {
		t.Fatalf("sweep shard: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("merge", parts[0], sweep, "--out", filepath.Join(base, "mixed")); code != 2 {
		t.Fatalf("mixed merge: exit %d, want 2: %s", code, errs)
	}
}
