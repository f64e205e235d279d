// Package sqlite is the embedded store of the decision service: one SQLite
// file (modernc.org/sqlite, pure Go, no cgo) in WAL mode with
// synchronous=FULL, so a committed transaction is fsynced and survives a
// crash or power loss. Migrations are embedded and applied on Open.
//
// Writes go through one connection (SQLite has one writer anyway); reads use
// a separate pool and never wait for the writer (WAL). One store per
// database file: Open holds an exclusive OS lock on PATH.lock until Close
// and refuses a second Open (store.ErrLocked), in this process or another;
// OpenReader opens beside it for reading. Commit is meant to be
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
	"os"
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
	flock *fileLock            // the one-store lock (nil: a reader, or closed)
	lost  chan struct{}        // never closed: an OS file lock is not lost
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Exclusive = (*Store)(nil)
)

// dialect is SQLite's: ?n placeholders, and the creation order computed in
// the (IMMEDIATE, so serialised) transaction.
var dialect = sqldb.Dialect{
	IsUnique:         isUnique,
	InsertExperiment: "INSERT INTO experiments (id, name, config, created_at, ord) VALUES ($1, $2, $3, $4, (SELECT COALESCE(MAX(ord), 0) + 1 FROM experiments))",
}

// Open opens (creating if needed) the database file at path, takes its
// exclusive lock (the file PATH.lock beside it, held until Close) and
// applies the migrations. While another store, in any process, has the
// database open, Open fails at once with an error that wraps
// store.ErrLocked and names the holder's pid. path ":memory:" is refused:
// the service needs durability (use a file in t.TempDir() in tests).
func Open(ctx context.Context, path string) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	fl, err := lockDB(path)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, path)
	if err != nil {
		fl.release()
		return nil, err
	}
	s.flock = fl
	return s, nil
}

func checkPath(path string) error {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return fmt.Errorf("sqlite store: give a file path for the database (got %q)", path)
	}
	return nil
}

func open(ctx context.Context, path string) (*Store, error) {
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
	s := &Store{DB: sqldb.DB{W: w, D: dialect}, lost: make(chan struct{})}
	s.Prepared = s.stmt
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	r, err := openRead(path)
	if err != nil {
		w.Close()
		return nil, err
	}
	s.R = r
	return s, nil
}

// openRead opens the read pool: query_only connections.
func openRead(path string) (*sql.DB, error) {
	rq := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "query_only(1)"} {
		rq.Add("_pragma", p)
	}
	r, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+rq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	return r, nil
}

// OpenReader opens an existing database for reading only, beside the store
// (the server) that has it open: no lock, no migrations, and every write
// through it fails (query_only). For inspection, tools and tests.
func OpenReader(ctx context.Context, path string) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	r, err := openRead(path)
	if err != nil {
		return nil, err
	}
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	return &Store{DB: sqldb.DB{W: r, R: r, D: dialect}, lost: make(chan struct{})}, nil
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

// Close closes both connection pools, then releases the database's lock.
func (s *Store) Close() error {
	s.mu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	fl := s.flock
	s.flock = nil
	s.mu.Unlock()
	err := errors.Join(s.R.Close(), s.W.Close())
	return errors.Join(err, fl.release())
}

// Lost implements store.Exclusive: the channel is never closed (an OS file
// lock is held until Close or the process ends; it cannot be taken away).
func (s *Store) Lost() <-chan struct{} { return s.lost }

// LostErr implements store.Exclusive: always nil.
func (s *Store) LostErr() error { return nil }

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
