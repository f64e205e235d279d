package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/sqlite"
	"github.com/dpbandit/dpbandit/store/storetest"
)

// The one-server lock, with real `dpbandit serve` processes. Two servers on
// one database would each run the experiments' policies and ledgers on
// their own: the second would answer decisions it never logs, and whichever
// wrote last would roll the other's privacy ledger back.

// TestLockSQLiteSecondServer: a second `dpbandit serve` on the SQLite file
// that a first one serves exits at once, non-zero, saying which process
// holds the database; the first keeps serving.
func TestLockSQLiteSecondServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	p := start(t, db)
	id := create(t, p, map[string]any{"name": "one", "arms": []string{"a", "b", "c"}, "policy": "mts-gaussian", "horizon": 10000,
		"budget": map[string]any{"epsilon": 1, "delta": 1e-6}})

	addr := freePort(t)
	cmd := exec.Command(binary(t), "serve", "--addr", addr, "--db", db)
	cmd.Env = append(os.Environ(), "DPBANDIT_ADMIN_KEY="+adminKey)
	errb := &lockedBuf{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()
	t0 := time.Now()
	var werr error
wait:
	for {
		select {
		case werr = <-done:
			done <- werr
			break wait
		case <-time.After(20 * time.Millisecond):
		}
		if r, err := http.Get("http://" + addr + "/healthz"); err == nil {
			r.Body.Close()
			t.Fatalf("a second dpbandit serve started on the database a first one serves (it answers %d on /healthz)", r.StatusCode)
		}
		if time.Since(t0) > 5*time.Second {
			t.Fatalf("the second dpbandit serve did not exit within 5 s:\n%s", errb.String())
		}
	}
	t.Logf("the second server exited after %v: %v\n%s", time.Since(t0).Round(time.Millisecond), werr, errb.String())
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() == 0 {
		t.Errorf("the second server exited with %v; want a non-zero status", werr)
	}
	msg := errb.String()
	for _, want := range []string{"is in use by another dpbandit serve", fmt.Sprintf("pid %d", p.cmd.Process.Pid), db + ".lock", "stop it first"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the second server's message does not say %q:\n%s", want, msg)
		}
	}

	// The first one serves on, and logs what it serves.
	code, d := decideOne(t, p, adminKey, id, nil)
	if code != 200 {
		t.Fatalf("decide on the first server: %d %v", code, d)
	}
	if code, m := rewardOne(t, p, adminKey, id, str(d, "event_id"), 1); code != 202 {
		t.Fatalf("reward on the first server: %d %v", code, m)
	}
	r, err := sqlite.OpenReader(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if rw, err := r.Reward(context.Background(), id, str(d, "event_id")); err != nil || rw.Value != 1 {
		t.Errorf("the first server's reward is not stored: %+v, %v", rw, err)
	}
	p.stop()
}

// storedSpent reads the privacy spent of the experiment's durable ledger
// (the reservation the store holds: a restart resumes from it) with a
// reader beside the server.
func storedSpent(t *testing.T, dsn, id string) float64 {
	t.Helper()
	r, err := postgres.OpenReader(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st, err := r.LoadState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var eng struct {
		Ledger *struct {
			Reserved struct {
				Spent *float64 `json:"spent"`
			} `json:"reserved"`
		} `json:"ledger"`
	}
	if err := json.Unmarshal(st.Engine, &eng); err != nil || eng.Ledger == nil || eng.Ledger.Reserved.Spent == nil {
		t.Fatalf("stored engine state without a ledger's spent (%v): %s", err, st.Engine)
	}
	return *eng.Ledger.Reserved.Spent
}

// TestLockPostgresLostLock: the session that holds a real server's lock on
// PostgreSQL is terminated (as an administrator, an idle-session timeout or
// a network cut would end it). The server must stop within 2 s, non-zero,
// without writing; a second server then takes the database over; and the
// stored privacy ledger never goes back, even after both have stopped.
func TestLockPostgresLostLock(t *testing.T) {
	dsn := storetest.PostgresSchema(t)
	p := start(t, dsn)
	id := create(t, p, map[string]any{"name": "lease", "arms": []string{"a", "b", "c"}, "policy": "mts-gaussian", "horizon": 10000,
		"budget": map[string]any{"epsilon": 1, "delta": 1e-6}})
	work := func(p *proc, n int) float64 {
		t.Helper()
		for i := 0; i < n; i++ {
			code, d := decideOne(t, p, adminKey, id, nil)
			if code != 200 {
				t.Fatalf("decide: %d %v", code, d)
			}
			if code, m := rewardOne(t, p, adminKey, id, str(d, "event_id"), float64(i%2)); code != 202 {
				t.Fatalf("reward: %d %v", code, m)
			}
		}
		_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
		return spentOf(g)
	}
	spentA := work(p, 40)
	stored := []float64{storedSpent(t, dsn, id)}
	if spentA <= 0 || stored[0] < spentA {
		t.Fatalf("server A spent %v; stored ledger %v: want 0 < spent ≤ stored", spentA, stored[0])
	}

	pid := storetest.TerminatePostgresLock(t, dsn)
	t0 := time.Now()
	aRunning := true
	select {
	case err := <-p.done:
		p.done <- err
		aRunning = false
		t.Logf("server A exited %v after its lock session %d was terminated: %v", time.Since(t0).Round(time.Millisecond), pid, err)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("server A exited with %v; want a non-zero status", err)
		}
		if msg := p.errs.String(); !strings.Contains(msg, "lost the database lock: stopping; another server may own this database now") ||
			!strings.Contains(msg, `"level":"ERROR"`) {
			t.Errorf("server A's log does not say it lost the lock at ERROR:\n%s", msg)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("server A still runs 2 s after its lock session %d was terminated", pid)
	}
	stored = append(stored, storedSpent(t, dsn, id))

	// Server B takes the database over and spends more.
	q := start(t, dsn)
	if aRunning {
		// Two servers serve one database now.
		if r, err := http.Get(p.url + "/healthz"); err == nil {
			r.Body.Close()
			t.Errorf("server A still serves (/healthz: %d) while server B owns the database", r.StatusCode)
		}
	}
	_, g := call(t, "GET", q.url+"/v1/experiments/"+id, adminKey, nil)
	if s := spentOf(g); s < spentA {
		t.Errorf("server B resumed with spent %v < %v that server A had spent", s, spentA)
	}
	spentB := work(q, 40)
	stored = append(stored, storedSpent(t, dsn, id))
	q.stop()
	stored = append(stored, storedSpent(t, dsn, id))
	if aRunning {
		// Whichever stops last writes its ledger last: a clean stop
		// writes the ledger as the server has it.
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			p.done <- err
		case <-time.After(30 * time.Second):
		}
		stored = append(stored, storedSpent(t, dsn, id))
	}
	// The stored ledger is a reservation: a clean stop gives its unused part
	// back, down to the exact spent, but it never falls below what any
	// server has spent (then a restart would spend that budget again).
	t.Logf("spent: A %v, B %v; stored ledger's spent over time: %v", spentA, spentB, stored)
	if stored[1] < stored[0] {
		t.Errorf("the stored ledger's spent went back from %v to %v after server A lost its lock", stored[0], stored[1])
	}
	for i, s := range stored {
		floor := spentA
		if i >= 2 {
			floor = spentB
		}
		if s < floor {
			t.Errorf("the stored ledger's spent %v (step %d of %v) is below the %v already spent: the privacy ledger was rolled back", s, i, stored, floor)
		}
	}
}
