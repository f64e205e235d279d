package deploy_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestSimulateResumesAfterSIGKILL starts `dpbandit simulate` as a child
// process, SIGKILLs it once it has saved at least 2 of its 10 cells (and
// before it finished them all), reruns the same command, and checks that
// the rerun reports taking the saved cells and that its output directory is
// byte for byte that of an uninterrupted run (.cells removed).
func TestSimulateResumesAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := binary(t)
	root := t.TempDir()
	args := func(out string) []string {
		return []string{"simulate", "--env", "bernoulli:0.75,0.625,0.5,0.375,0.25", "--horizon", "1e6", "--runs", "5",
			"--policy", "ts-gaussian", "--policy", "mts-gaussian:b=10,c=5", "--workers", "1", "--out", out}
	}
	const cells = 10
	out := filepath.Join(root, "killed")
	cellGlob := filepath.Join(out, ".cells", "*", "e*-r*.json")

	cmd := exec.Command(bin, args(out)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	saved := 0
	for saved < 2 {
		select {
		case err := <-done:
			t.Fatalf("simulate ended (%v) before it could be killed with 2 cells saved; make the sweep longer\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		m, _ := filepath.Glob(cellGlob)
		saved = len(m)
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no 2 cells saved in 2 minutes\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("simulate ended with %v, not killed by SIGKILL", err)
	}
	m, _ := filepath.Glob(cellGlob)
	saved = len(m)
	if saved < 2 || saved >= cells {
		t.Fatalf("%d of %d cells saved when killed, want at least 2 and not all", saved, cells)
	}

	stderr.Reset()
	re := exec.Command(bin, args(out)...)
	re.Stderr = &stderr
	if err := re.Run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`resumed: ` + strconv.Itoa(saved) + ` of 10 cells`).Match(stderr.Bytes()) {
		t.Errorf("the rerun does not report resuming the %d saved cells:\n%s", saved, stderr.String())
	}

	whole := filepath.Join(root, "whole")
	stderr.Reset()
	ref := exec.Command(bin, args(whole)...)
	ref.Stderr = &stderr
	if err := ref.Run(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, stderr.String())
	}
	got, want := files(t, out), files(t, whole)
	if len(want) != 6 { // summary, curves, runs, manifest, regret.svg, regret.png
		t.Fatalf("the uninterrupted run wrote %d files, want 6", len(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s differs between the killed-and-resumed run and the uninterrupted one", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the resumed run left %d files, the uninterrupted %d (.cells not removed?)", len(got), len(want))
	}
}
