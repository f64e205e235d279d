// Package sqlite is the embedded store of the decision service: one SQLite
// file (modernc.org/sqlite, pure Go, no cgo) in WAL mode with
// synchronous=FULL, so a committed transaction is fsynced and survives a
// crash or power loss. Migrations are embedded and applied on Open.
//
// Writes go through one connection (SQLite has one writer anyway); reads use
// a separate pool and never wait for the writer (WAL). Commit is meant to be
// called by one writer goroutine that groups many events into one
// transaction (group commit): a durable single-row commit costs one fsync
// (≈ 0.2 ms here), a batched row a few microseconds.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/internal/sqldb"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite implementation of store.Store: the shared SQL of
// sqldb on one writer connection and a read pool.
type Store struct {
	sqldb.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared multi-row INSERTs on W, by SQL text
}

var _ store.Store = (*Store)(nil)

// dialect is SQLite's: ?n placeholders, and the creation order computed in
// the (IMMEDIATE, so serialised) transaction.
var dialect = sqldb.Dialect{
	IsUnique:         isUnique,
	InsertExperiment: "INSERT INTO experiments (id, name, config, created_at, ord) VALUES ($1, $2, $3, $4, (SELECT COALESCE(MAX(ord), 0) + 1 FROM experiments))",
}

// Open opens (creating if needed) the database file at path and applies the
// migrations. path ":memory:" is refused: the service needs durability (use
// a file in t.TempDir() in tests).
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite store: give a file path for the database (got %q)", path)
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(ON)", "temp_store(MEMORY)", "cache_size(-65536)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s := &Store{DB: sqldb.DB{W: w, D: dialect}}
	s.Prepared = s.stmt
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	rq := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "query_only(1)"} {
		rq.Add("_pragma", p)
	}
	r, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	s.R = r
	return s, nil
}

// migrate applies the embedded migrations whose number exceeds the
// database's user_version, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	var have int
	if err := s.W.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	return s.Migrate(ctx, migrations, have, func(ctx context.Context, tx *sql.Tx, v int) error {
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
		return err
	})
}

// Close closes both connection pools.
func (s *Store) Close() error {
	s.mu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.mu.Unlock()
	return errors.Join(s.R.Close(), s.W.Close())
}

// Commit implements store.Store: one IMMEDIATE transaction, fsynced on
// commit (synchronous=FULL). The INSERTs it needs are prepared first,
// outside the transaction (the write pool's one connection is then held by
// it), and reused by later commits: they spare every group commit the SQL
// parsing (at most 64 sizes per table are ever prepared).
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	if err := s.prepare(ctx, sqldb.DecisionsInsert, sqldb.DecisionsCols, len(b.Decisions)); err != nil {
		return err
	}
	if err := s.prepare(ctx, sqldb.RewardsInsert, sqldb.RewardsCols, len(b.Rewards)); err != nil {
		return err
	}
	return s.DB.Commit(ctx, b)
}

func (s *Store) prepare(ctx context.Context, table string, cols, n int) error {
	for _, rows := range []int{min(n, sqldb.RowsPerInsert), n % sqldb.RowsPerInsert} {
		if rows == 0 {
			continue
		}
		q := s.InsertSQL(table, cols, rows)
		if s.stmt(q) != nil {
			continue
		}
		st, err := s.W.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		s.mu.Lock()
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts[q] = st
		s.mu.Unlock()
	}
	return nil
}

// stmt is the statement prepare made for q, or nil.
func (s *Store) stmt(q string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stmts[q]
}

func isUnique(err error) bool {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3lib.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Pragmas returns the writer connection's journal mode and synchronous
// level (2 = FULL), for tests and diagnostics.
func (s *Store) Pragmas(ctx context.Context) (journal string, synchronous int, err error) {
	if err = s.W.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
		return
	}
	err = s.W.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous)
	return
}
