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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/store"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite implementation of store.Store.
type Store struct {
	w *sql.DB // one connection: all writes
	r *sql.DB // read pool

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared multi-row INSERTs on w, by SQL text
}

var _ store.Store = (*Store)(nil)

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
	s := &Store{w: w}
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
	s.r = r
	return s, nil
}

// migrate applies the embedded migrations whose number exceeds the
// database's user_version, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	var have int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	for i, name := range names {
		v := i + 1
		if v <= have {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	if have > len(names) {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade dpbandit", have, len(names))
	}
	return nil
}

// Close closes both connection pools.
func (s *Store) Close() error {
	s.mu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.mu.Unlock()
	return errors.Join(s.r.Close(), s.w.Close())
}

// prepare makes sure the INSERTs that insertRows needs for n rows into
// table (cols columns each) are prepared on the write connection: the
// full-size one and the one for the remainder. It must run outside a
// transaction: the write pool has one connection, which a transaction holds.
// Prepared once, they spare every later group commit the SQL parsing (at most
// 64 sizes per table are ever prepared).
func (s *Store) prepare(ctx context.Context, table string, cols, n int) error {
	for _, rows := range []int{min(n, rowsPerInsert), n % rowsPerInsert} {
		if rows == 0 {
			continue
		}
		q := insertSQL(table, cols, rows)
		s.mu.Lock()
		have := s.stmts[q] != nil
		s.mu.Unlock()
		if have {
			continue
		}
		st, err := s.w.PrepareContext(ctx, q)
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

func ms(t time.Time) int64     { return t.UnixMilli() }
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
func notFound(what string) error { return fmt.Errorf("%s: %w", what, store.ErrNotFound) }
func conflict(what string) error { return fmt.Errorf("%s: %w", what, store.ErrConflict) }
func isUnique(err error) bool {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3lib.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.r.QueryRowContext(ctx, "SELECT value FROM meta WHERE name = ?", name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("setting " + name)
	}
	return v, err
}

// SetMeta implements store.Store.
func (s *Store) SetMeta(ctx context.Context, name string, value []byte) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, value)
	return err
}

// CreateKey implements store.Store.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	exps, err := json.Marshal(nonNil(k.Experiments))
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO api_keys (id, hash, role, experiments, created_at) VALUES (?, ?, ?, ?, ?)",
		k.ID, k.Hash, string(k.Role), string(exps), ms(k.CreatedAt))
	if isUnique(err) {
		return conflict("api key " + k.ID)
	}
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Keys implements store.Store.
func (s *Store) Keys(ctx context.Context) ([]store.Key, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id, hash, role, experiments, created_at FROM api_keys ORDER BY created_at, id")
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
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, "INSERT INTO experiments (id, name, config, created_at, ord) VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(ord), 0) + 1 FROM experiments))",
		e.ID, e.Name, e.Config, ms(e.CreatedAt))
	if isUnique(err) {
		return conflict("experiment " + e.ID)
	}
	if err != nil {
		return err
	}
	if err := putState(ctx, tx, e.ID, st); err != nil {
		return err
	}
	return tx.Commit()
}

func putState(ctx context.Context, tx *sql.Tx, id string, st store.State) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO states (experiment, policy, engine, decision_seq, reward_seq, applied_seq, version)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (experiment) DO UPDATE SET policy = excluded.policy, engine = excluded.engine,
		decision_seq = excluded.decision_seq, reward_seq = excluded.reward_seq, applied_seq = excluded.applied_seq, version = excluded.version`,
		id, nonNilBytes(st.Policy), nonNilBytes(st.Engine), st.DecisionSeq, st.RewardSeq, st.AppliedSeq, st.Version)
	return err
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

const expCols = "id, name, config, created_at"

func scanExp(sc interface{ Scan(...any) error }) (store.Experiment, error) {
	var e store.Experiment
	var at int64
	err := sc.Scan(&e.ID, &e.Name, &e.Config, &at)
	e.CreatedAt = fromMS(at)
	return e, err
}

// Experiments implements store.Store.
func (s *Store) Experiments(ctx context.Context) ([]store.Experiment, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+expCols+" FROM experiments ORDER BY ord")
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
	e, err := scanExp(s.r.QueryRowContext(ctx, "SELECT "+expCols+" FROM experiments WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, notFound("experiment " + id)
	}
	return e, err
}

// LoadState implements store.Store.
func (s *Store) LoadState(ctx context.Context, id string) (store.State, error) {
	var st store.State
	err := s.r.QueryRowContext(ctx, "SELECT policy, engine, decision_seq, reward_seq, applied_seq, version FROM states WHERE experiment = ?", id).
		Scan(&st.Policy, &st.Engine, &st.DecisionSeq, &st.RewardSeq, &st.AppliedSeq, &st.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return st, notFound("state of experiment " + id)
	}
	return st, err
}

// Decision implements store.Store.
func (s *Store) Decision(ctx context.Context, exp, ev string) (store.Decision, error) {
	d := store.Decision{Experiment: exp, EventID: ev}
	var frozen, at int64
	var feat []byte
	var prop sql.NullFloat64
	var draws sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT seq, arm, frozen, created_at, features, propensity, propensity_draws FROM decisions WHERE experiment = ? AND event_id = ?", exp, ev).
		Scan(&d.Seq, &d.Arm, &frozen, &at, &feat, &prop, &draws)
	if errors.Is(err, sql.ErrNoRows) {
		return d, notFound("decision " + ev)
	}
	if err != nil {
		return d, err
	}
	d.Frozen, d.CreatedAt = frozen != 0, fromMS(at)
	if prop.Valid {
		d.Propensity, d.PropensityDraws = &prop.Float64, int(draws.Int64)
	}
	d.Features, err = store.DecodeFeatures(feat)
	return d, err
}

// Reward implements store.Store.
func (s *Store) Reward(ctx context.Context, exp, ev string) (store.Reward, error) {
	r := store.Reward{Experiment: exp, EventID: ev}
	var def, at int64
	var v sql.NullFloat64
	err := s.r.QueryRowContext(ctx, "SELECT seq, value, is_default, created_at FROM rewards WHERE experiment = ? AND event_id = ?", exp, ev).
		Scan(&r.Seq, &v, &def, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("reward " + ev)
	}
	r.Value, r.Purged = v.Float64, !v.Valid
	r.Default, r.CreatedAt = def != 0, fromMS(at)
	return r, err
}

// PurgeRewards implements store.Store (one fsynced transaction).
func (s *Store) PurgeRewards(ctx context.Context, exp string, after, upTo int64) (int64, error) {
	if upTo <= after {
		return 0, nil
	}
	res, err := s.w.ExecContext(ctx, "UPDATE rewards SET value = NULL WHERE experiment = ? AND seq > ? AND seq <= ? AND value IS NOT NULL", exp, after, upTo)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RewardsAfter implements store.Store.
func (s *Store) RewardsAfter(ctx context.Context, exp string, after int64) ([]store.JoinedReward, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.event_id, r.seq, r.value, r.is_default, r.created_at, d.arm, d.frozen, d.features
		FROM rewards r JOIN decisions d ON d.experiment = r.experiment AND d.event_id = r.event_id
		WHERE r.experiment = ? AND r.seq > ? ORDER BY r.seq`, exp, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.JoinedReward
	for rows.Next() {
		j := store.JoinedReward{Reward: store.Reward{Experiment: exp}}
		var def, at, frozen int64
		var feat []byte
		var v sql.NullFloat64
		if err := rows.Scan(&j.EventID, &j.Seq, &v, &def, &at, &j.Arm, &frozen, &feat); err != nil {
			return nil, err
		}
		j.Value, j.Purged = v.Float64, !v.Valid
		j.Default, j.CreatedAt, j.Frozen = def != 0, fromMS(at), frozen != 0
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
	rows, err := s.r.QueryContext(ctx, `SELECT d.event_id, d.seq, d.arm, d.frozen, d.created_at,
		EXISTS (SELECT 1 FROM rewards r WHERE r.experiment = d.experiment AND r.event_id = d.event_id)
		FROM decisions d WHERE d.experiment = ? AND d.seq > ? AND d.created_at <= ? ORDER BY d.seq LIMIT ?`,
		exp, afterSeq, ms(before), limit*4)
	if err != nil {
		return nil, afterSeq, err
	}
	defer rows.Close()
	var out []store.Decision
	mark := afterSeq
	for rows.Next() {
		d := store.Decision{Experiment: exp}
		var frozen, at, has int64
		if err := rows.Scan(&d.EventID, &d.Seq, &d.Arm, &frozen, &at, &has); err != nil {
			return nil, afterSeq, err
		}
		d.Frozen, d.CreatedAt = frozen != 0, fromMS(at)
		if has == 0 {
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
	err := s.r.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM decisions WHERE experiment = ?), (SELECT COUNT(*) FROM rewards WHERE experiment = ?)`, exp, exp).Scan(&d, &r)
	return d, r, err
}

// The tables and columns the group commit appends to.
const (
	decisionsInsert = "decisions (experiment, seq, event_id, arm, frozen, created_at, features, propensity, propensity_draws)"
	decisionsCols   = 9
	rewardsInsert   = "rewards (experiment, seq, event_id, value, is_default, created_at)"
	rewardsCols     = 6
)

// Commit implements store.Store: one IMMEDIATE transaction, fsynced on
// commit (synchronous=FULL).
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	if b.Empty() {
		return nil
	}
	if err := s.prepare(ctx, decisionsInsert, decisionsCols, len(b.Decisions)); err != nil {
		return err
	}
	if err := s.prepare(ctx, rewardsInsert, rewardsCols, len(b.Rewards)); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
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
	for id := range exps {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM experiments WHERE id = ?", id).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return notFound("experiment " + id)
			}
			return err
		}
	}
	if err := s.insertRows(ctx, tx, decisionsInsert, decisionsCols, len(b.Decisions), func(i int, a []any) {
		d := &b.Decisions[i]
		a[0], a[1], a[2], a[3], a[4], a[5], a[6] = d.Experiment, d.Seq, d.EventID, d.Arm, boolInt(d.Frozen), ms(d.CreatedAt), encodeFloats(d.Features)
		a[7], a[8] = nil, nil
		if d.Propensity != nil {
			a[7], a[8] = *d.Propensity, d.PropensityDraws
		}
	}); err != nil {
		if isUnique(err) {
			return conflict("a decision event id or seq of this batch is stored already")
		}
		return err
	}
	if err := s.insertRows(ctx, tx, rewardsInsert, rewardsCols, len(b.Rewards), func(i int, a []any) {
		r := &b.Rewards[i]
		a[0], a[1], a[2], a[3], a[4], a[5] = r.Experiment, r.Seq, r.EventID, r.Value, boolInt(r.Default), ms(r.CreatedAt)
	}); err != nil {
		if isUnique(err) {
			return conflict("a reward event id or seq of this batch is stored already")
		}
		return err
	}
	for id, st := range b.States {
		if err := putState(ctx, tx, id, st); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Pragmas returns the writer connection's journal mode and synchronous
// level (2 = FULL), for tests and diagnostics.
func (s *Store) Pragmas(ctx context.Context) (journal string, synchronous int, err error) {
	if err = s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
		return
	}
	err = s.w.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous)
	return
}

// rowsPerInsert is how many rows one INSERT statement carries: one
// statement per row costs more in database/sql and the driver than SQLite's
// own work.
const rowsPerInsert = 64

// insertRows inserts n rows of cols columns into table (with its column
// list) in multi-row INSERT statements; fill sets row i's arguments.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, table string, cols, n int, fill func(i int, a []any)) error {
	args := make([]any, 0, cols*rowsPerInsert)
	for i := 0; i < n; i += rowsPerInsert {
		m := min(rowsPerInsert, n-i)
		args = args[:cols*m]
		for j := 0; j < m; j++ {
			fill(i+j, args[cols*j:cols*(j+1)])
		}
		q := insertSQL(table, cols, m)
		s.mu.Lock()
		st := s.stmts[q]
		s.mu.Unlock()
		var err error
		if st != nil {
			// One connection: the statement prepared on it (by prepare,
			// before the transaction) is reused, not re-prepared.
			_, err = tx.StmtContext(ctx, st).ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, q, args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func insertSQL(table string, cols, rows int) string {
	row := "(" + strings.Repeat("?,", cols-1) + "?)"
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" VALUES ")
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// encodeFloats is the features argument: NULL for none.
func encodeFloats(x []float64) any {
	if x == nil {
		return nil
	}
	return store.EncodeFeatures(x)
}
