// Package postgres is the PostgreSQL store of the decision service
// (`dpbandit serve --db postgres://...`), for deployments that keep their
// data in a PostgreSQL server. It runs the same SQL as the embedded SQLite
// store (package sqldb, through pgx's database/sql driver) and passes the
// same conformance suite (storetest).
//
// Durability: every Commit is one transaction with synchronous_commit=on
// (set on each connection), so it returns after the server has flushed its
// WAL. One serving process per database (per schema): Open takes a session
// advisory lock and refuses a second process, because two servers would
// each run the experiments' policies and ledgers on their own.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/internal/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on PostgreSQL.
type Store struct {
	sqldb.DB
	lock *sql.Conn // holds the advisory lock for the store's lifetime (nil: reader)
}

var _ store.Store = (*Store)(nil)

// dialect is PostgreSQL's: $n placeholders, and the creation order from the
// identity column.
var dialect = sqldb.Dialect{
	Dollar:           true,
	IsUnique:         isUnique,
	InsertExperiment: "INSERT INTO experiments (id, name, config, created_at) VALUES ($1, $2, $3, $4)",
}

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// Options tune Open.
type Options struct {
	// LockWait is how long Open waits for the one-server lock (default
	// 10 s): after a crash, PostgreSQL notices the dead session within
	// moments and frees the lock.
	LockWait time.Duration
}

// Open connects to the database at dsn (a postgres:// URL or key=value
// string; a search_path parameter selects a schema), takes the one-server
// lock and applies the migrations.
func Open(ctx context.Context, dsn string) (*Store, error) { return OpenWith(ctx, dsn, Options{}) }

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	if o.LockWait <= 0 {
		o.LockWait = 10 * time.Second
	}
	db, err := connect(dsn, false)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres store: connecting: %w", err)
	}
	var schema string
	deadline := time.Now().Add(o.LockWait)
	for {
		var ok bool
		err = conn.QueryRowContext(ctx, "SELECT current_schema(), pg_try_advisory_lock(hashtextextended('dpbandit:' || current_schema(), 0))").Scan(&schema, &ok)
		if err != nil || ok {
			break
		}
		if time.Now().After(deadline) {
			err = fmt.Errorf("another dpbandit serve is using schema %q of this database: run one server per database (or give each its own search_path)", schema)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{DB: sqldb.DB{W: db, R: db, D: dialect}, lock: conn}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return s, nil
}

// OpenReader connects to a store's database for reading only, beside the
// server that has it open (no lock, no migrations): every transaction is
// read-only, so a write through it fails. For inspection and tools.
func OpenReader(ctx context.Context, dsn string) (*Store, error) {
	db, err := connect(dsn, true)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return &Store{DB: sqldb.DB{W: db, R: db, D: dialect}}, nil
}

func connect(dsn string, readOnly bool) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	cfg.RuntimeParams["synchronous_commit"] = "on"
	cfg.RuntimeParams["application_name"] = "dpbandit"
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(9) // one holds the lock
	db.SetMaxIdleConns(9)
	return db, nil
}

// migrate applies the embedded migrations newer than the schema's version,
// each in its own transaction (the lock keeps other servers out).
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.W.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS dpbandit_schema (version INTEGER NOT NULL)"); err != nil {
		return err
	}
	var have int
	if err := s.W.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM dpbandit_schema").Scan(&have); err != nil {
		return err
	}
	return s.Migrate(ctx, migrations, have, func(ctx context.Context, tx *sql.Tx, v int) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO dpbandit_schema (version) VALUES ($1)", v)
		return err
	})
}

// Close implements store.Store: it releases the lock and the connections.
func (s *Store) Close() error {
	if s.lock != nil {
		s.lock.ExecContext(context.Background(), "SELECT pg_advisory_unlock_all()")
		s.lock.Close()
		s.lock = nil
	}
	return s.W.Close()
}

// Settings returns the server's synchronous_commit (as seen by the store's
// connections) and fsync settings, for tests and diagnostics.
func (s *Store) Settings(ctx context.Context) (synchronousCommit, fsync string, err error) {
	err = s.R.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit'), current_setting('fsync')").Scan(&synchronousCommit, &fsync)
	return
}
