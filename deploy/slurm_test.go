package deploy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/internal/cli"
)

// recorder is a stand-in for the dpbandit binary that appends its
// arguments, NUL-separated and ended by a record separator, to $DPB_LOG.
const recorder = `#!/bin/sh
for a in "$@"; do printf '%s\0' "$a" >> "$DPB_LOG"; done
printf '\036\0' >> "$DPB_LOG"
`

// fakeSrun runs its command, as srun does inside an allocation.
const fakeSrun = `#!/bin/sh
exec "$@"
`

// fakeSbatch records its arguments (one call per line) to $SBATCH_LOG and
// prints a job id as --parsable does ("id;cluster").
const fakeSbatch = `#!/bin/sh
n=0
[ -f "$SBATCH_LOG" ] && n=$(wc -l < "$SBATCH_LOG")
echo "$*" >> "$SBATCH_LOG"
echo "$((1000 + n));testcluster"
`

// slurmEnv writes the stand-ins into a directory and returns the
// environment to run a script with.
func slurmEnv(t *testing.T, extra ...string) (env []string, dpbLog, sbatchLog string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"dpbandit-recorder": recorder, "srun": fakeSrun, "sbatch": fakeSbatch} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dpbLog, sbatchLog = filepath.Join(dir, "dpbandit.log"), filepath.Join(dir, "sbatch.log")
	env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "DPBANDIT="+filepath.Join(dir, "dpbandit-recorder"),
		"DPB_LOG="+dpbLog, "SBATCH_LOG="+sbatchLog, "RESULTS="+filepath.Join(dir, "results"))
	return append(env, extra...), dpbLog, sbatchLog
}

func runScript(t *testing.T, env []string, script string) string {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", abs)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash %s: %v\n%s", script, err, out)
	}
	return string(out)
}

// recorded returns the dpbandit command lines the recorder logged.
func recorded(t *testing.T, log string) [][]string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur []string
	for _, a := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		if a == "\x1e" {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, a)
	}
	return out
}

var arrayDirective = regexp.MustCompile(`(?m)^#SBATCH --array=(\d+)-(\d+)$`)

// TestSlurmScripts runs the scripts of slurm/ with bash, srun and sbatch
// replaced by stand-ins and dpbandit by a recorder: sweep.sbatch for every
// task of its --array, merge.sbatch, and submit.sh. Every dpbandit command
// line they run is accepted by the CLI's parser; task i runs --shard i/N
// with N the array's size into its own directory; the merge lists exactly
// those directories; submit.sh queues the merge with
// --dependency=afterok on the array's job id.
func TestSlurmScripts(t *testing.T) {
	sweep, merge, submit := filepath.Join("slurm", "sweep.sbatch"), filepath.Join("slurm", "merge.sbatch"), filepath.Join("slurm", "submit.sh")
	for _, s := range []string{sweep, merge, submit} {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Fatalf("bash -n %s: %v\n%s", s, err, out)
		}
	}
	b, err := os.ReadFile(sweep)
	if err != nil {
		t.Fatal(err)
	}
	m := arrayDirective.FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no #SBATCH --array=A-B", sweep)
	}
	lo, _ := strconv.Atoi(string(m[1]))
	hi, _ := strconv.Atoi(string(m[2]))
	if lo != 0 {
		t.Fatalf("%s: the array starts at %d; --shard is 0-based", sweep, lo)
	}
	n := hi - lo + 1

	env, dpbLog, sbatchLog := slurmEnv(t)
	results := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "RESULTS="); ok {
			results = v
		}
	}
	var outs []string
	for i := lo; i <= hi; i++ {
		runScript(t, append(slices.Clone(env), "SLURM_ARRAY_TASK_ID="+strconv.Itoa(i), "SLURM_CPUS_PER_TASK=2"), sweep)
	}
	lines := recorded(t, dpbLog)
	if len(lines) != n {
		t.Fatalf("%d dpbandit runs for %d array tasks", len(lines), n)
	}
	for i, args := range lines {
		if err := cli.Parse(args); err != nil {
			t.Errorf("task %d: dpbandit %s: %v", i, strings.Join(args, " "), err)
		}
		if sh, _ := flagValue(args, "shard"); sh != strconv.Itoa(i)+"/"+strconv.Itoa(n) {
			t.Errorf("task %d runs --shard %s, want %d/%d", i, sh, i, n)
		}
		o, _ := flagValue(args, "out")
		if slices.Contains(outs, o) || !strings.HasPrefix(o, results+"/") {
			t.Errorf("task %d writes to %s: shared with another task or outside $RESULTS", i, o)
		}
		outs = append(outs, o)
		if err := os.MkdirAll(o, 0o755); err != nil { // what the task would have written
			t.Fatal(err)
		}
	}

	if err := os.Remove(dpbLog); err != nil {
		t.Fatal(err)
	}
	runScript(t, env, merge)
	ml := recorded(t, dpbLog)
	if len(ml) != 1 || ml[0][0] != "merge" {
		t.Fatalf("merge.sbatch ran %v, want one dpbandit merge", ml)
	}
	if err := cli.Parse(ml[0]); err != nil {
		t.Errorf("dpbandit %s: %v", strings.Join(ml[0], " "), err)
	}
	var dirs []string
	for _, a := range ml[0][1:] {
		if a == "--out" {
			break
		}
		dirs = append(dirs, a)
	}
	if !slices.Equal(dirs, outs) {
		t.Errorf("merge lists %v, the array wrote %v", dirs, outs)
	}

	out := runScript(t, env, submit)
	calls, err := os.ReadFile(sbatchLog)
	if err != nil {
		t.Fatal(err)
	}
	sb := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(sb) != 2 || !strings.HasSuffix(sb[0], "sweep.sbatch") || !strings.HasSuffix(sb[1], "merge.sbatch") {
		t.Fatalf("submit.sh called sbatch as %q, want sweep.sbatch then merge.sbatch", sb)
	}
	if !strings.Contains(sb[1], "--dependency=afterok:1000 ") {
		t.Errorf("the merge is queued as %q, not after the array (job 1000) succeeds", sb[1])
	}
	if !bytes.Contains([]byte(out), []byte("job array 1000")) {
		t.Errorf("submit.sh printed %q", out)
	}
}
