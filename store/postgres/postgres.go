// Package postgres is the PostgreSQL store of the decision service
// (`dpbandit serve --db postgres://...`), for deployments that keep their
// data in a PostgreSQL server. It implements the same contract as the
// embedded SQLite store and passes the same conformance suite (storetest).
//
// Durability: every Commit is one transaction with synchronous_commit=on
// (set on each connection), so it returns after the server has flushed its
// WAL. One serving process per database (per schema): Open takes a session
// advisory lock and refuses a second process, because two servers would
// each run the experiments' policies and ledgers on their own.
package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dpbandit/dpbandit/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
	lock *pgxpool.Conn // holds the advisory lock for the store's lifetime
}

var _ store.Store = (*Store)(nil)

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
	pool, err := connect(ctx, dsn, false)
	if err != nil {
		return nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: connecting: %w", err)
	}
	var schema string
	deadline := time.Now().Add(o.LockWait)
	for {
		var ok bool
		err = conn.QueryRow(ctx, "SELECT current_schema(), pg_try_advisory_lock(hashtextextended('dpbandit:' || current_schema(), 0))").Scan(&schema, &ok)
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
		conn.Release()
		pool.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{pool: pool, lock: conn}
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
	pool, err := connect(ctx, dsn, true)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return &Store{pool: pool}, nil
}

func connect(ctx context.Context, dsn string, readOnly bool) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	cfg.ConnConfig.RuntimeParams["application_name"] = "dpbandit"
	if readOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	cfg.MaxConns = 9 // one holds the lock
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return pool, nil
}

// migrate applies the embedded migrations newer than the schema's version,
// each in its own transaction (the lock keeps other servers out).
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS dpbandit_schema (version INTEGER NOT NULL)"); err != nil {
		return err
	}
	var have int
	if err := s.pool.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM dpbandit_schema").Scan(&have); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	if have > len(names) {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade dpbandit", have, len(names))
	}
	for i, name := range names {
		v := i + 1
		if v <= have {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			// The simple protocol runs a file of several statements.
			if _, err := tx.Conn().PgConn().Exec(ctx, string(body)).ReadAll(); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
			_, err := tx.Exec(ctx, "INSERT INTO dpbandit_schema (version) VALUES ($1)", v)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Close implements store.Store: it releases the lock and the connections.
func (s *Store) Close() error {
	if s.lock != nil {
		s.lock.Exec(context.Background(), "SELECT pg_advisory_unlock_all()")
		s.lock.Release()
		s.lock = nil
	}
	s.pool.Close()
	return nil
}

// Settings returns the server's synchronous_commit (as seen by the store's
// connections) and fsync settings, for tests and diagnostics.
func (s *Store) Settings(ctx context.Context) (synchronousCommit, fsync string, err error) {
	err = s.pool.QueryRow(ctx, "SELECT current_setting('synchronous_commit'), current_setting('fsync')").Scan(&synchronousCommit, &fsync)
	return
}

func ms(t time.Time) int64       { return t.UnixMilli() }
func fromMS(v int64) time.Time   { return time.UnixMilli(v).UTC() }
func notFound(what string) error { return fmt.Errorf("%s: %w", what, store.ErrNotFound) }
func conflict(what string) error { return fmt.Errorf("%s: %w", what, store.ErrConflict) }

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT value FROM meta WHERE name = $1", name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("setting " + name)
	}
	return v, err
}

// SetMeta implements store.Store.
func (s *Store) SetMeta(ctx context.Context, name string, value []byte) error {
	_, err := s.pool.Exec(ctx, "INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, nonNilBytes(value))
	return err
}

// CreateKey implements store.Store.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	exps, err := json.Marshal(nonNil(k.Experiments))
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, "INSERT INTO api_keys (id, hash, role, experiments, created_at) VALUES ($1, $2, $3, $4, $5)",
		k.ID, k.Hash, string(k.Role), string(exps), ms(k.CreatedAt))
	if isUnique(err) {
		return conflict("api key " + k.ID)
	}
	return err
}

// Keys implements store.Store.
func (s *Store) Keys(ctx context.Context) ([]store.Key, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, hash, role, experiments, created_at FROM api_keys ORDER BY created_at, id COLLATE "C"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Key
	for rows.Next() {
		var k store.Key
		var role, exps string
		var at int64
		if err := rows.Scan(&k.ID, &k.Hash, &role, &exps, &at); err != nil {
			return nil, err
		}
		k.Role, k.CreatedAt = store.Role(role), fromMS(at)
		if err := json.Unmarshal([]byte(exps), &k.Experiments); err != nil {
			return nil, fmt.Errorf("api key %s: experiments: %w", k.ID, err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// CreateExperiment implements store.Store.
func (s *Store) CreateExperiment(ctx context.Context, e store.Experiment, st store.State) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO experiments (id, name, config, created_at) VALUES ($1, $2, $3, $4)",
			e.ID, e.Name, nonNilBytes(e.Config), ms(e.CreatedAt))
		if isUnique(err) {
			return conflict("experiment " + e.ID)
		}
		if err != nil {
			return err
		}
		return putState(ctx, tx, e.ID, st)
	})
}

func putState(ctx context.Context, tx pgx.Tx, id string, st store.State) error {
	_, err := tx.Exec(ctx, `INSERT INTO states (experiment, policy, engine, decision_seq, reward_seq, applied_seq, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (experiment) DO UPDATE SET policy = excluded.policy, engine = excluded.engine,
		decision_seq = excluded.decision_seq, reward_seq = excluded.reward_seq, applied_seq = excluded.applied_seq, version = excluded.version`,
		id, nonNilBytes(st.Policy), nonNilBytes(st.Engine), st.DecisionSeq, st.RewardSeq, st.AppliedSeq, st.Version)
	return err
}

const expCols = "id, name, config, created_at"

func scanExp(row pgx.Row) (store.Experiment, error) {
	var e store.Experiment
	var at int64
	err := row.Scan(&e.ID, &e.Name, &e.Config, &at)
	e.CreatedAt = fromMS(at)
	return e, err
}

// Experiments implements store.Store.
func (s *Store) Experiments(ctx context.Context) ([]store.Experiment, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+expCols+" FROM experiments ORDER BY ord")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Experiment
	for rows.Next() {
		e, err := scanExp(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Experiment implements store.Store.
func (s *Store) Experiment(ctx context.Context, id string) (store.Experiment, error) {
	e, err := scanExp(s.pool.QueryRow(ctx, "SELECT "+expCols+" FROM experiments WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, notFound("experiment " + id)
	}
	return e, err
}

// LoadState implements store.Store.
func (s *Store) LoadState(ctx context.Context, id string) (store.State, error) {
	var st store.State
	err := s.pool.QueryRow(ctx, "SELECT policy, engine, decision_seq, reward_seq, applied_seq, version FROM states WHERE experiment = $1", id).
		Scan(&st.Policy, &st.Engine, &st.DecisionSeq, &st.RewardSeq, &st.AppliedSeq, &st.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, notFound("state of experiment " + id)
	}
	return st, err
}

// Decision implements store.Store.
func (s *Store) Decision(ctx context.Context, exp, ev string) (store.Decision, error) {
	d := store.Decision{Experiment: exp, EventID: ev}
	var at int64
	var feat []byte
	var prop *float64
	var draws *int32
	err := s.pool.QueryRow(ctx, "SELECT seq, arm, frozen, created_at, features, propensity, propensity_draws FROM decisions WHERE experiment = $1 AND event_id = $2", exp, ev).
		Scan(&d.Seq, &d.Arm, &d.Frozen, &at, &feat, &prop, &draws)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, notFound("decision " + ev)
	}
	if err != nil {
		return d, err
	}
	d.CreatedAt = fromMS(at)
	if prop != nil {
		d.Propensity = prop
		if draws != nil {
			d.PropensityDraws = int(*draws)
		}
	}
	d.Features, err = store.DecodeFeatures(feat)
	return d, err
}

// Reward implements store.Store.
func (s *Store) Reward(ctx context.Context, exp, ev string) (store.Reward, error) {
	r := store.Reward{Experiment: exp, EventID: ev}
	var at int64
	var v *float64
	err := s.pool.QueryRow(ctx, "SELECT seq, value, is_default, created_at FROM rewards WHERE experiment = $1 AND event_id = $2", exp, ev).
		Scan(&r.Seq, &v, &r.Default, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, notFound("reward " + ev)
	}
	if v != nil {
		r.Value = *v
	}
	r.Purged, r.CreatedAt = v == nil, fromMS(at)
	return r, err
}

// PurgeRewards implements store.Store (one durable statement).
func (s *Store) PurgeRewards(ctx context.Context, exp string, after, upTo int64) (int64, error) {
	if upTo <= after {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, "UPDATE rewards SET value = NULL WHERE experiment = $1 AND seq > $2 AND seq <= $3 AND value IS NOT NULL", exp, after, upTo)
	return tag.RowsAffected(), err
}

// RewardsAfter implements store.Store.
func (s *Store) RewardsAfter(ctx context.Context, exp string, after int64) ([]store.JoinedReward, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.event_id, r.seq, r.value, r.is_default, r.created_at, d.arm, d.frozen, d.features
		FROM rewards r JOIN decisions d ON d.experiment = r.experiment AND d.event_id = r.event_id
		WHERE r.experiment = $1 AND r.seq > $2 ORDER BY r.seq`, exp, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.JoinedReward
	for rows.Next() {
		j := store.JoinedReward{Reward: store.Reward{Experiment: exp}}
		var at int64
		var feat []byte
		var v *float64
		if err := rows.Scan(&j.EventID, &j.Seq, &v, &j.Default, &at, &j.Arm, &j.Frozen, &feat); err != nil {
			return nil, err
		}
		if v != nil {
			j.Value = *v
		}
		j.Purged, j.CreatedAt = v == nil, fromMS(at)
		if j.Features, err = store.DecodeFeatures(feat); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Unrewarded implements store.Store.
func (s *Store) Unrewarded(ctx context.Context, exp string, afterSeq int64, before time.Time, limit int) ([]store.Decision, int64, error) {
	if limit < 1 {
		limit = 1
	}
	rows, err := s.pool.Query(ctx, `SELECT d.event_id, d.seq, d.arm, d.frozen, d.created_at,
		EXISTS (SELECT 1 FROM rewards r WHERE r.experiment = d.experiment AND r.event_id = d.event_id)
		FROM decisions d WHERE d.experiment = $1 AND d.seq > $2 AND d.created_at <= $3 ORDER BY d.seq LIMIT $4`,
		exp, afterSeq, ms(before), limit*4)
	if err != nil {
		return nil, afterSeq, err
	}
	defer rows.Close()
	var out []store.Decision
	mark := afterSeq
	for rows.Next() {
		d := store.Decision{Experiment: exp}
		var at int64
		var has bool
		if err := rows.Scan(&d.EventID, &d.Seq, &d.Arm, &d.Frozen, &at, &has); err != nil {
			return nil, afterSeq, err
		}
		d.CreatedAt = fromMS(at)
		if !has {
			if len(out) == limit {
				break
			}
			out = append(out, d)
		}
		mark = d.Seq
	}
	return out, mark, rows.Err()
}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context, exp string) (int64, int64, error) {
	var d, r int64
	err := s.pool.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM decisions WHERE experiment = $1), (SELECT COUNT(*) FROM rewards WHERE experiment = $1)`, exp).Scan(&d, &r)
	return d, r, err
}

// Commit implements store.Store: one transaction (synchronous_commit=on),
// with the decisions and rewards sent by COPY.
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	if b.Empty() {
		return nil
	}
	exps := map[string]bool{}
	for id := range b.States {
		exps[id] = true
	}
	for _, d := range b.Decisions {
		exps[d.Experiment] = true
	}
	for _, r := range b.Rewards {
		exps[r.Experiment] = true
	}
	ids := make([]string, 0, len(exps))
	for id := range exps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT id FROM experiments WHERE id = ANY($1)", ids)
		if err != nil {
			return err
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(found) != len(ids) {
			for _, id := range ids {
				if !slices.Contains(found, id) {
					return notFound("experiment " + id)
				}
			}
		}
		if len(b.Decisions) > 0 {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"decisions"},
				[]string{"experiment", "seq", "event_id", "arm", "frozen", "created_at", "features", "propensity", "propensity_draws"},
				pgx.CopyFromSlice(len(b.Decisions), func(i int) ([]any, error) {
					d := &b.Decisions[i]
					var draws any
					if d.Propensity != nil {
						draws = int32(d.PropensityDraws)
					}
					return []any{d.Experiment, d.Seq, d.EventID, int32(d.Arm), d.Frozen, ms(d.CreatedAt), store.EncodeFeatures(d.Features), d.Propensity, draws}, nil
				}))
			if isUnique(err) {
				return conflict("a decision event id or seq of this batch is stored already")
			}
			if err != nil {
				return err
			}
		}
		if len(b.Rewards) > 0 {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"rewards"},
				[]string{"experiment", "seq", "event_id", "value", "is_default", "created_at"},
				pgx.CopyFromSlice(len(b.Rewards), func(i int) ([]any, error) {
					r := &b.Rewards[i]
					return []any{r.Experiment, r.Seq, r.EventID, r.Value, r.Default, ms(r.CreatedAt)}, nil
				}))
			if isUnique(err) {
				return conflict("a reward event id or seq of this batch is stored already")
			}
			if err != nil {
				return err
			}
		}
		for _, id := range slices.Sorted(func(yield func(string) bool) {
			for id := range b.States {
				if !yield(id) {
					return
				}
			}
		}) {
			if err := putState(ctx, tx, id, b.States[id]); err != nil {
				return err
			}
		}
		return nil
	})
}
