package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/storetest"
)

func TestConformance(t *testing.T) {
	dsns := map[store.Store]string{}
	open := func(t *testing.T, dsn string) store.Store {
		s, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		dsns[s] = dsn
		return s
	}
	storetest.Run(t,
		func(t *testing.T) store.Store { return open(t, storetest.PostgresSchema(t)) },
		func(t *testing.T, s store.Store) store.Store {
			d := dsns[s]
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, d)
		})
}

// One server per schema: a second Open is refused (after waiting for the
// lock) with a message that says why, and succeeds once the first store is
// closed. A reader opens beside the server and cannot write.
func TestOneServerPerSchema(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	a, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := postgres.OpenWith(ctx, dsn, postgres.Options{LockWait: 300 * time.Millisecond}); err == nil {
		b.Close()
		t.Fatal("a second store opened the same schema")
	} else if !strings.Contains(err.Error(), "another dpbandit serve") || !errors.Is(err, store.ErrLocked) {
		t.Errorf("second Open: %v; want a message naming another dpbandit serve, wrapping store.ErrLocked", err)
	}
	r, err := postgres.OpenReader(ctx, dsn)
	if err != nil {
		t.Fatalf("OpenReader beside the server: %v", err)
	}
	if _, err := r.Experiments(ctx); err != nil {
		t.Errorf("reader: %v", err)
	}
	if err := r.SetMeta(ctx, "x", []byte("y")); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write through the reader: %v; want a read-only error", err)
	}
	r.Close()
	a.Close()
	b, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	b.Close()
}

// Commits are durable when they return: synchronous_commit is on for the
// store's connections whatever the server's default.
func TestSynchronousCommit(t *testing.T) {
	s, err := postgres.Open(context.Background(), storetest.PostgresSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc, fsync, err := s.Settings(context.Background())
	if err != nil || sc != "on" {
		t.Errorf("synchronous_commit = %q, %v; want on", sc, err)
	}
	t.Logf("server fsync = %s", fsync)
}

// lostFixture opens store A on a fresh schema with experiment e1 (one
// decision committed) and returns it with its DSN.
func lostFixture(t *testing.T, o postgres.Options) (*postgres.Store, string) {
	t.Helper()
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	a, err := postgres.OpenWith(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := a.CreateExperiment(ctx, store.Experiment{ID: "e1", Name: "n", Config: []byte("{}"), CreatedAt: now},
		store.State{Policy: []byte("p0"), Engine: []byte(`{"ledger":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateExperiment(ctx, store.Experiment{ID: "e2", Name: "n", Config: []byte("{}"), CreatedAt: now},
		store.State{Policy: []byte("p0"), Engine: []byte("e0")}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateKey(ctx, store.Key{ID: "k1", Hash: make([]byte, 32), Role: store.RoleClient, Experiments: []string{"e1"}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: "d1", Seq: 1, CreatedAt: now}},
		Rewards: []store.Reward{{Experiment: "e1", EventID: "d1", Seq: 1, Value: 1, CreatedAt: now}},
		States:  map[string]store.State{"e1": {Policy: []byte("p1"), Engine: []byte(`{"ledger":2}`), DecisionSeq: 1, RewardSeq: 1, Version: 1}}}
	if err := a.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	return a, dsn
}

// checkNoWriteLands makes every kind of write through a, which has lost its
// lock to b: each fails with store.ErrLockLost, and b (the new owner) finds
// none of them.
func checkNoWriteLands(t *testing.T, a, b *postgres.Store) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	late := &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: "d2", Seq: 2, CreatedAt: now}},
		States: map[string]store.State{"e1": {Policy: []byte("rolled back"), Engine: []byte(`{"ledger":0}`), DecisionSeq: 2, Version: 2}}}
	_, purgeErr := a.PurgeRewards(ctx, "e1", 0, 1)
	for what, err := range map[string]error{
		"Commit":           a.Commit(ctx, late),
		"SetMeta":          a.SetMeta(ctx, "admin", []byte("x")),
		"CreateKey":        a.CreateKey(ctx, store.Key{ID: "k2", Hash: []byte("01234567890123456789012345678901"), Role: store.RoleAdmin, CreatedAt: now}),
		"DeleteKey":        a.DeleteKey(ctx, "k1"),
		"CreateExperiment": a.CreateExperiment(ctx, store.Experiment{ID: "e3", Name: "n", Config: []byte("{}"), CreatedAt: now}, store.State{}),
		"DeleteExperiment": a.DeleteExperiment(ctx, "e2"),
		"PurgeRewards":     purgeErr,
	} {
		if !errors.Is(err, store.ErrLockLost) {
			t.Errorf("%s through the store that lost its lock: err = %v, want store.ErrLockLost", what, err)
		}
	}
	st, err := b.LoadState(ctx, "e1")
	if err != nil || string(st.Policy) != "p1" || string(st.Engine) != `{"ledger":2}` || st.Version != 1 {
		t.Errorf("state of e1 after the lost store's commit = %+v, %v; want the last one it wrote with the lock (p1, version 1)", st, err)
	}
	if nd, _, _ := b.Counts(ctx, "e1"); nd != 1 {
		t.Errorf("decisions of e1 = %d; the lost store's decision landed", nd)
	}
	if _, err := b.Meta(ctx, "admin"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the lost store's SetMeta landed: %v", err)
	}
	if ks, _ := b.Keys(ctx); len(ks) != 1 || ks[0].ID != "k1" {
		t.Errorf("keys = %+v; want k1 alone", ks)
	}
	if es, _ := b.Experiments(ctx); len(es) != 2 {
		t.Errorf("experiments = %+v; want e1 and e2", es)
	}
	if r, err := b.Reward(ctx, "e1", "d1"); err != nil || r.Purged {
		t.Errorf("the lost store's purge landed: %+v, %v", r, err)
	}
	// The new owner writes.
	if err := b.Commit(ctx, late); err != nil {
		t.Errorf("the new owner's commit: %v", err)
	}
}

// The fence alone (no watch): A's lock session is terminated, B takes the
// lock, and every write of A fails inside its transaction with
// ErrLockLost; none lands. Then A's Lost is closed (the fence found it).
func TestLockLostFence(t *testing.T) {
	ctx := context.Background()
	a, dsn := lostFixture(t, postgres.Options{Watch: -1})
	storetest.TerminatePostgresLock(t, dsn)
	b, err := postgres.OpenWith(ctx, dsn, postgres.Options{Watch: -1})
	if err != nil {
		t.Fatalf("B could not take the freed lock: %v", err)
	}
	defer b.Close()
	checkNoWriteLands(t, a, b)
	select {
	case <-a.Lost():
		if !errors.Is(a.LostErr(), store.ErrLockLost) || !strings.Contains(a.LostErr().Error(), "another server took this schema over") {
			t.Errorf("LostErr = %v", a.LostErr())
		}
	default:
		t.Error("A's fence refused its writes but Lost is not closed")
	}
	select {
	case <-b.Lost():
		t.Errorf("B lost its lock: %v", b.LostErr())
	default:
	}
}

// The watch: once A's lock session is terminated, A's Lost closes within a
// second and A refuses every write at once, even before another server
// takes the lock; after B has taken it, A's writes still fail and none
// lands.
func TestLockLostWatch(t *testing.T) {
	ctx := context.Background()
	a, dsn := lostFixture(t, postgres.Options{})
	select {
	case <-a.Lost():
		t.Fatalf("Lost closed while the lock is held: %v", a.LostErr())
	case <-time.After(600 * time.Millisecond): // a few watches
	}
	storetest.TerminatePostgresLock(t, dsn)
	t0 := time.Now()
	select {
	case <-a.Lost():
		t.Logf("lost after %v: %v", time.Since(t0), a.LostErr())
	case <-time.After(time.Second):
		t.Fatal("A's Lost did not close within 1 s of its lock session's end")
	}
	if err := a.LostErr(); !errors.Is(err, store.ErrLockLost) {
		t.Errorf("LostErr = %v, want store.ErrLockLost", err)
	}
	if err := a.SetMeta(ctx, "admin", []byte("x")); !errors.Is(err, store.ErrLockLost) {
		t.Errorf("a write after the loss, before any takeover: err = %v, want store.ErrLockLost", err)
	}
	b, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("B could not take the freed lock: %v", err)
	}
	defer b.Close()
	checkNoWriteLands(t, a, b)
}

// The lease token moves with each Open, and a schema at version 1 (before
// the lease) migrates to it: its first Open takes the lease in migration 2.
func TestLeaseMigration(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{string(v1), "CREATE TABLE dpbandit_schema (version INTEGER NOT NULL)", "INSERT INTO dpbandit_schema VALUES (1)",
		`INSERT INTO experiments (id, name, config, created_at) VALUES ('e1', 'n', '\x7b7d', 0)`,
		`INSERT INTO states VALUES ('e1', '\x70', '\x65', 0, 0, 0, 0)`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	token := func() (tok int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, "SELECT token FROM dpbandit_lease").Scan(&tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for want := int64(1); want <= 2; want++ {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("open %d: %v", want, err)
		}
		if got := token(); got != want {
			t.Errorf("lease token after open %d = %d", want, got)
		}
		if err := s.Commit(ctx, &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: fmt.Sprint("d", want), Seq: want}}}); err != nil {
			t.Errorf("commit after open %d: %v", want, err)
		}
		s.Close()
	}
}
