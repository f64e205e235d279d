// Package postgres is the PostgreSQL store of the decision service
// (`dpbandit serve --db postgres://...`), for deployments that keep their
// data in a PostgreSQL server. It runs the same SQL as the embedded SQLite
// store (package sqldb, through pgx's database/sql driver) and passes the
// same conformance suite (storetest).
//
// Durability: every Commit is one transaction with synchronous_commit=on
// (set on each connection), so it returns after the server has flushed its
// WAL. One serving process per database (per schema): Open takes a session
// advisory lock and refuses a second process (store.ErrLocked), because two
// servers would each run the experiments' policies and ledgers on their own.
//
// The lock lives in one database session, which can end while the process
// carries on (pg_terminate_backend, a network cut, an idle-session timeout):
// then a second server could take the lock while the first one still
// writes through its pool's other connections, and whichever wrote last
// would roll the other's privacy ledger back. Two guards keep that from
// happening (the store then implements store.Exclusive):
//
//   - a fence in every write transaction: Open, once it holds the lock,
//     increments the lease token (table dpbandit_lease) and keeps it; every
//     write transaction first reads the token FOR SHARE and aborts with
//     store.ErrLockLost unless it is still its own. A server that takes the
//     lock over increments the token (waiting for the old server's write
//     transactions in flight), so no later write of the old one can land;
//   - a watch on the lock's session (every 250 ms): when it has ended, or
//     the token has moved, Lost is closed and every write is refused at
//     once, before it starts a transaction.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
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

	token  atomic.Int64 // this store's lease token (0: not yet taken)
	holder string       // this process, as written into the lease

	lost     chan struct{} // closed when the lock is found lost
	lostOnce sync.Once
	lostErr  atomic.Pointer[error]

	stopWatch context.CancelFunc // stops the watch (nil: none)
	watchDone chan struct{}
	closing   atomic.Bool
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Exclusive = (*Store)(nil)
)

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
	// Watch is how often the store checks that the lock's session is alive
	// and the lease still its own (default 250 ms; negative: never, for
	// tests of the fence alone).
	Watch time.Duration
}

// watchTimeout bounds one check of the lock's session. A check that runs
// out closes the connection (pgx cancels by closing), and so ends the
// session and frees the lock: the lock is then lost indeed.
const watchTimeout = 3 * time.Second

// Open connects to the database at dsn (a postgres:// URL or key=value
// string; a search_path parameter selects a schema), takes the one-server
// lock and applies the migrations.
func Open(ctx context.Context, dsn string) (*Store, error) { return OpenWith(ctx, dsn, Options{}) }

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	db, conn, err := connectLocked(ctx, dsn, &o, "postgres store", "pg_try_advisory_lock", func(schema string) string {
		return fmt.Sprintf("another dpbandit serve is using schema %q of this database (waited %v for its lock): run one server per database (or give each its own search_path)", schema, o.LockWait)
	})
	if err != nil {
		return nil, err
	}
	s := &Store{DB: sqldb.DB{W: db, R: db, D: dialect}, lock: conn, lost: make(chan struct{}), holder: holderName()}
	s.Guard, s.Fence = s.guard, s.fence
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if o.Watch > 0 {
		wctx, cancel := context.WithCancel(context.Background())
		s.stopWatch, s.watchDone = cancel, make(chan struct{})
		go s.watch(wctx, o.Watch)
	}
	return s, nil
}

// holderName describes this process for the lease row.
func holderName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s, started %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
}

// leaseVersion is the schema version that creates dpbandit_lease.
const leaseVersion = 2

// takeLease increments the lease token and keeps it (run while holding
// the advisory lock: in its own statement, or in migration 2's
// transaction). Its UPDATE waits for the write transactions of a previous
// holder that are in flight (they hold the row FOR SHARE); once it commits,
// none of that holder's later writes can land.
func (s *Store) takeLease(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var tok int64
	if err := q.QueryRowContext(ctx, "UPDATE dpbandit_lease SET token = token + 1, holder = $1 WHERE id = 1 RETURNING token", s.holder).Scan(&tok); err != nil {
		return fmt.Errorf("taking the one-server lease: %w", err)
	}
	s.token.Store(tok)
	return nil
}

// guard refuses a write at once when the lock is known lost.
func (s *Store) guard() error {
	if p := s.lostErr.Load(); p != nil {
		return *p
	}
	return nil
}

// fence runs first in every write transaction: the lease token must still
// be this store's (read FOR SHARE, so that a takeover's increment waits for
// this transaction, and this transaction for an increment in flight).
func (s *Store) fence(ctx context.Context, tx *sql.Tx) error {
	if err := s.guard(); err != nil {
		return err
	}
	mine := s.token.Load()
	if mine == 0 {
		// Bootstrap: the migrations up to the one that creates the lease
		// run under the advisory lock alone.
		return nil
	}
	var tok int64
	var holder string
	if err := tx.QueryRowContext(ctx, "SELECT token, holder FROM dpbandit_lease WHERE id = 1 FOR SHARE").Scan(&tok, &holder); err != nil {
		return fmt.Errorf("postgres store: checking the one-server lease: %w", err)
	}
	if tok != mine {
		return s.markLost(fmt.Errorf("postgres store: another server took this schema over (lease token %d, held by %s; this store's token is %d): %w",
			tok, holder, mine, store.ErrLockLost))
	}
	return nil
}

// markLost records err (the first one) and closes Lost; it returns the
// recorded error.
func (s *Store) markLost(err error) error {
	s.lostOnce.Do(func() {
		s.lostErr.Store(&err)
		close(s.lost)
	})
	return *s.lostErr.Load()
}

// Lost implements store.Exclusive: closed once the store finds its lock
// lost (the lock's session ended, or another server took the lease).
func (s *Store) Lost() <-chan struct{} { return s.lost }

// LostErr implements store.Exclusive: why the lock was lost (wrapping
// store.ErrLockLost), or nil.
func (s *Store) LostErr() error {
	if p := s.lostErr.Load(); p != nil {
		return *p
	}
	return nil
}

// watch checks every interval, on the lock's own connection, that its
// session is alive and still holds the advisory lock, and that the lease
// token is still this store's. The first failure marks the lock lost.
func (s *Store) watch(ctx context.Context, every time.Duration) {
	defer close(s.watchDone)
	t := time.NewTicker(every)
	defer t.Stop()
	mine := s.token.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.lost:
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, watchTimeout)
		var held bool
		var tok int64
		var holder string
		err := s.lock.QueryRowContext(cctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted),
			token, holder FROM dpbandit_lease WHERE id = 1`).Scan(&held, &tok, &holder)
		cancel()
		if ctx.Err() != nil || s.closing.Load() {
			return // Close: not a loss
		}
		switch {
		case err != nil:
			s.markLost(fmt.Errorf("postgres store: the database session that held this server's lock is gone (%v): %w", err, store.ErrLockLost))
		case !held:
			s.markLost(fmt.Errorf("postgres store: the database session no longer holds this server's advisory lock: %w", store.ErrLockLost))
		case tok != mine:
			s.markLost(fmt.Errorf("postgres store: another server took this schema over (lease token %d, held by %s; this store's token is %d): %w",
				tok, holder, mine, store.ErrLockLost))
		default:
			continue
		}
		return
	}
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
	return &Store{DB: sqldb.DB{W: db, R: db, D: dialect}, lost: make(chan struct{})}, nil
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

// migrate takes the lease and applies the embedded migrations newer than
// the schema's version, each in its own transaction (the lock keeps other
// servers out, and the lease fences each migration once it exists). On a
// schema older than the lease, migration 2 takes it in its transaction.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.W.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS dpbandit_schema (version INTEGER NOT NULL)"); err != nil {
		return err
	}
	var have int
	if err := s.W.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM dpbandit_schema").Scan(&have); err != nil {
		return err
	}
	if have >= leaseVersion {
		if err := s.takeLease(ctx, s.W); err != nil {
			return err
		}
	}
	return s.Migrate(ctx, migrations, have, func(ctx context.Context, tx *sql.Tx, v int) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO dpbandit_schema (version) VALUES ($1)", v); err != nil {
			return err
		}
		if v == leaseVersion {
			return s.takeLease(ctx, tx)
		}
		return nil
	})
}

// Close implements store.Store: it releases the lock and the connections.
func (s *Store) Close() error {
	s.closing.Store(true)
	if s.stopWatch != nil {
		s.stopWatch()
		<-s.watchDone
		s.stopWatch = nil
	}
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

// connectLocked applies o's defaults, connects to dsn and takes the
// schema's advisory lock on a dedicated connection with lockFn
// (pg_try_advisory_lock, or its _shared form for replicas), retrying every
// 100 ms until o.LockWait; busy words the error when another process holds
// the lock (it then wraps store.ErrLocked). what prefixes the errors.
func connectLocked(ctx context.Context, dsn string, o *Options, what, lockFn string, busy func(schema string) string) (*sql.DB, *sql.Conn, error) {
	if o.LockWait <= 0 {
		o.LockWait = 10 * time.Second
	}
	if o.Watch == 0 {
		o.Watch = 250 * time.Millisecond
	}
	db, err := connect(dsn, false)
	if err != nil {
		return nil, nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%s: connecting: %w", what, err)
	}
	var schema string
	deadline := time.Now().Add(o.LockWait)
	for {
		var ok bool
		err = conn.QueryRowContext(ctx, "SELECT current_schema(), "+lockFn+"(hashtextextended('dpbandit:' || current_schema(), 0))").Scan(&schema, &ok)
		if err != nil || ok {
			break
		}
		if time.Now().After(deadline) {
			err = fmt.Errorf("%s: %w", busy(schema), store.ErrLocked)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		conn.Close()
		db.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return db, conn, nil
}
