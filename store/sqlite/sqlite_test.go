package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

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
