package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/sqlite"
	"github.com/dpbandit/dpbandit/store/storetest"
)

func TestConformance(t *testing.T) {
	paths := map[store.Store]string{}
	open := func(t *testing.T, path string) store.Store {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		paths[s] = path
		return s
	}
	storetest.Run(t,
		func(t *testing.T) store.Store { return open(t, filepath.Join(t.TempDir(), "db.sqlite")) },
		func(t *testing.T, s store.Store) store.Store {
			p := paths[s]
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, p)
		})
}

func TestOpenRefusesMemory(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file::memory:"} {
		if s, err := sqlite.Open(context.Background(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded; the service needs a durable file", p)
		}
	}
}

func TestPragmas(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mode, sync, err := s.Pragmas(context.Background())
	if err != nil || mode != "wal" || sync != 2 {
		t.Errorf("journal_mode = %q, synchronous = %d, %v; want wal, 2 (FULL)", mode, sync, err)
	}
}

// A database written by schema version 2 (reward values NOT NULL) keeps
// every reward through migration 3, whose rebuilt table allows a purged
// (NULL) value.
func TestMigrationToNullableRewardValues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"0001_init.sql", "0002_propensity.sql"} {
		body, err := os.ReadFile(filepath.Join("migrations", f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, q := range []string{
		"PRAGMA user_version = 2",
		`INSERT INTO experiments VALUES ('e1', 'n', X'7B7D', 0, 1)`,
		`INSERT INTO decisions (experiment, seq, event_id, arm, frozen, created_at) VALUES ('e1', 1, 'a', 0, 0, 0), ('e1', 2, 'b', 1, 0, 0)`,
		`INSERT INTO rewards VALUES ('e1', 1, 'a', 0.25, 0, 0), ('e1', 2, 'b', 1, 1, 0)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("migrating to version 3: %v", err)
	}
	defer s.Close()
	if r, err := s.Reward(ctx, "e1", "b"); err != nil || r.Value != 1 || !r.Default || r.Seq != 2 || r.Purged {
		t.Errorf("reward b after the migration: %+v, %v", r, err)
	}
	if n, err := s.PurgeRewards(ctx, "e1", 0, 1); err != nil || n != 1 {
		t.Fatalf("purge after the migration: %d, %v", n, err)
	}
	if r, _ := s.Reward(ctx, "e1", "a"); !r.Purged {
		t.Errorf("reward a not purged: %+v", r)
	}
	if err := s.CreateExperiment(ctx, store.Experiment{ID: "e2", Name: "n", Config: []byte("{}")}, store.State{Policy: []byte("p"), Engine: []byte("e")}); err != nil {
		t.Errorf("the migrated schema refuses a new experiment: %v", err)
	}
	if err := s.Commit(ctx, &store.Batch{Rewards: []store.Reward{{Experiment: "e1", EventID: "a", Seq: 3, Value: 0}}}); err == nil {
		t.Error("the unique event index was lost in the rebuild: a second reward for event a was stored")
	}
}

// One store per database file: a second Open in the same process is
// refused at once (the lock belongs to the open lock file, not to the
// process), with an error wrapping store.ErrLocked that names the holder;
// the first store keeps working; Close frees the lock. A reader opens
// beside the store and cannot write.
func TestSecondOpenRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var ex store.Exclusive = a
	t0 := time.Now()
	b, err := sqlite.Open(ctx, path)
	if err == nil {
		b.Close()
		t.Fatal("a second store opened the same database file")
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("the refusal took %v; it must not wait", d)
	}
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("second Open: %v; want an error wrapping store.ErrLocked", err)
	}
	for _, want := range []string{path, fmt.Sprintf("pid %d", os.Getpid()), path + ".lock", "already open in this process"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("second Open: %q does not name %q", err, want)
		}
	}
	if err := a.CreateExperiment(ctx, store.Experiment{ID: "e1", Name: "n", Config: []byte("{}")}, store.State{Policy: []byte("p"), Engine: []byte("e")}); err != nil {
		t.Fatalf("the first store after the refused Open: %v", err)
	}
	if err := a.Commit(ctx, &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: "d1", Seq: 1}}}); err != nil {
		t.Fatalf("the first store after the refused Open: %v", err)
	}
	r, err := sqlite.OpenReader(ctx, path)
	if err != nil {
		t.Fatalf("OpenReader beside the store: %v", err)
	}
	if d, err := r.Decision(ctx, "e1", "d1"); err != nil || d.Seq != 1 {
		t.Errorf("reader: %+v, %v", d, err)
	}
	if err := r.SetMeta(ctx, "x", []byte("y")); err == nil {
		t.Error("a write through the reader succeeded")
	}
	if err := r.Close(); err != nil {
		t.Errorf("reader Close: %v", err)
	}
	select {
	case <-ex.Lost():
		t.Error("Lost closed: a file lock is never lost")
	default:
	}
	if ex.LostErr() != nil {
		t.Errorf("LostErr = %v", ex.LostErr())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if d, err := c.Decision(ctx, "e1", "d1"); err != nil || d.Seq != 1 {
		t.Errorf("after reopen: %+v, %v", d, err)
	}
	c.Close()
	if _, err := sqlite.OpenReader(ctx, filepath.Join(t.TempDir(), "missing.sqlite")); err == nil {
		t.Error("OpenReader of a missing file succeeded")
	}
}

// holdEnv makes this test binary a helper that holds a store open: see
// TestHoldHelper.
const holdEnv = "DPBANDIT_SQLITE_TEST_HOLD"

// TestHoldHelper is not a test: run with $DPBANDIT_SQLITE_TEST_HOLD set, it
// opens that database, prints "ready" and holds it until stdin closes.
func TestHoldHelper(t *testing.T) {
	path := os.Getenv(holdEnv)
	if path == "" {
		t.Skip("the helper process of TestOpenLockedByAnotherProcess")
	}
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	os.Exit(0)
}

// Another process that has the database open: Open is refused at once,
// naming its pid; once it is killed (SIGKILL: no Close), the OS has freed
// the lock and Open succeeds.
func TestOpenLockedByAnotherProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldHelper$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	s, err := sqlite.Open(ctx, path)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded while another process has the database open")
	}
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("Open: %v; want an error wrapping store.ErrLocked", err)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", cmd.Process.Pid), "in use by another", path + ".lock", "stop it first"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open: %q does not name %q", err, want)
		}
	}
	t.Logf("refused: %v", err)
	cmd.Process.Kill()
	cmd.Wait()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	s.Close()
}
