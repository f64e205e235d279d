package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
	} else if !strings.Contains(err.Error(), "another dpbandit serve") {
		t.Errorf("second Open: %v", err)
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
