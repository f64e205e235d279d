package postgres

// Replica mode (`dpbandit serve --db postgres://... --replica`): any number
// of processes serve the same experiments of one schema. The protocol is in
// docs/replicas.md; this file is its storage half (store.Replicated).
//
// Exclusion between the modes: a replica holds the schema's advisory lock in
// SHARED mode for its lifetime, where a one-server store holds it
// exclusively, so replicas run beside each other but never beside a
// one-server store. Replicas do not take the one-server lease over: each
// reads its token once and fences every write on it (the same fence as
// the one-server store), so a one-server store that later takes the schema
// over (after every replica's session ended) makes every replica write fail
// with store.ErrLockLost.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/internal/sqldb"
)

// Replica is a store.Replicated on PostgreSQL.
type Replica struct {
	*Store
	id string
}

var (
	_ store.Replicated = (*Replica)(nil)
	_ store.Exclusive  = (*Replica)(nil)
)

// dbNowMS is the database clock in unix milliseconds.
const dbNowMS = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

// OpenReplica connects to the database at dsn as one replica of many: it
// takes the schema's advisory lock in shared mode (refusing, after
// o.LockWait, while a one-server store holds it: store.ErrLocked), applies
// the migrations under a second advisory lock that serialises replicas
// starting together, and watches its lock session as Open does.
func OpenReplica(ctx context.Context, dsn string, o Options) (*Replica, error) {
	db, conn, err := connectLocked(ctx, dsn, &o, "postgres replica store", "pg_try_advisory_lock_shared", func(schema string) string {
		return fmt.Sprintf("a dpbandit serve in one-server mode (without --replica) is using schema %q of this database (waited %v): stop it, or run every server of this schema with --replica", schema, o.LockWait)
	})
	if err != nil {
		return nil, err
	}
	var b [6]byte
	rand.Read(b[:])
	s := &Store{DB: sqldb.DB{W: db, R: db, D: dialect}, lock: conn, lost: make(chan struct{}), holder: holderName()}
	s.Guard, s.Fence = s.guard, s.fence
	r := &Replica{Store: s, id: fmt.Sprintf("%s/%s", s.holder, hex.EncodeToString(b[:]))}
	if err := r.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("postgres replica store: %w", err)
	}
	if o.Watch > 0 {
		wctx, cancel := context.WithCancel(context.Background())
		s.stopWatch, s.watchDone = cancel, make(chan struct{})
		go s.watch(wctx, o.Watch)
	}
	return r, nil
}

// migrate applies the migrations under the schema's migration lock (held
// on the lock connection for the duration) and reads the one-server lease
// token without taking the lease (the other replicas share it).
func (r *Replica) migrate(ctx context.Context) error {
	const key = "hashtextextended('dpbandit-migrate:' || current_schema(), 0)"
	if _, err := r.lock.ExecContext(ctx, "SELECT pg_advisory_lock("+key+")"); err != nil {
		return err
	}
	defer r.lock.ExecContext(context.Background(), "SELECT pg_advisory_unlock("+key+")")
	if _, err := r.W.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS dpbandit_schema (version INTEGER NOT NULL)"); err != nil {
		return err
	}
	var have int
	if err := r.W.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM dpbandit_schema").Scan(&have); err != nil {
		return err
	}
	if have >= leaseVersion {
		var tok int64
		if err := r.W.QueryRowContext(ctx, "SELECT token FROM dpbandit_lease WHERE id = 1").Scan(&tok); err != nil {
			return fmt.Errorf("reading the one-server lease: %w", err)
		}
		r.token.Store(tok)
	}
	return r.Migrate(ctx, migrations, have, func(ctx context.Context, tx *sql.Tx, v int) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO dpbandit_schema (version) VALUES ($1)", v); err != nil {
			return err
		}
		if v == leaseVersion {
			// A fresh schema: no replica has read the token yet (every
			// replica reads it after the migrations, under this lock).
			return r.takeLease(ctx, tx)
		}
		return nil
	})
}

// ReplicaID implements store.Replicated.
func (r *Replica) ReplicaID() string { return r.id }

// CreateReplicated implements store.Replicated.
func (r *Replica) CreateReplicated(ctx context.Context, e store.Experiment, st store.State, granted []byte) error {
	tx, err := r.beginW(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, dialect.InsertExperiment, e.ID, e.Name, e.Config, e.CreatedAt.UnixMilli()); err != nil {
		if isUnique(err) {
			return fmt.Errorf("experiment %s: %w", e.ID, store.ErrConflict)
		}
		return err
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO states (experiment, policy, engine, decision_seq, reward_seq, applied_seq, version) VALUES ($1, $2, $3, 0, 0, 0, $4)",
			[]any{e.ID, st.Policy, st.Engine, st.Version}},
		{"INSERT INTO replica_budget (experiment, granted) VALUES ($1, $2)", []any{e.ID, granted}},
		{"INSERT INTO replica_counters (experiment) VALUES ($1)", []any{e.ID}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// beginW starts a guarded, fenced write transaction.
func (r *Replica) beginW(ctx context.Context) (*sql.Tx, error) {
	if err := r.guard(); err != nil {
		return nil, err
	}
	tx, err := r.W.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if err := r.fence(ctx, tx); err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// Snapshot implements store.Replicated.
func (r *Replica) Snapshot(ctx context.Context, exp string) (store.State, store.Budget, error) {
	var st store.State
	var b store.Budget
	var exh, at, lexp int64
	err := r.R.QueryRowContext(ctx, `SELECT s.policy, s.engine, s.decision_seq, s.reward_seq, s.applied_seq, s.version,
		b.granted, b.exhausted, COALESCE(b.exhausted_at, 0), b.reservations,
		COALESCE(l.holder, ''), COALESCE(l.token, 0), COALESCE((extract(epoch from l.expires_at) * 1000)::bigint, 0)
		FROM states s JOIN replica_budget b ON b.experiment = s.experiment
		LEFT JOIN replica_leases l ON l.experiment = s.experiment WHERE s.experiment = $1`, exp).
		Scan(&st.Policy, &st.Engine, &st.DecisionSeq, &st.RewardSeq, &st.AppliedSeq, &st.Version,
			&b.Granted, &exh, &at, &b.Reservations, &b.Lease.Holder, &b.Lease.Token, &lexp)
	if errors.Is(err, sql.ErrNoRows) {
		return st, b, fmt.Errorf("replicated experiment %s (no budget row: not created in replica mode, or unknown): %w", exp, store.ErrNotFound)
	}
	if err != nil {
		return st, b, err
	}
	b.Exhausted = exh != 0
	if at != 0 {
		b.ExhaustedAt = time.UnixMilli(at).UTC()
	}
	b.Lease.Expires = time.UnixMilli(lexp).UTC()
	return st, b, nil
}

// Reserve implements store.Replicated.
func (r *Replica) Reserve(ctx context.Context, exp string, grant func(store.Budget) (store.Grant, error)) (store.Budget, error) {
	var b store.Budget
	tx, err := r.beginW(ctx)
	if err != nil {
		return b, err
	}
	defer tx.Rollback()
	var exh, at int64
	err = tx.QueryRowContext(ctx, "SELECT granted, exhausted, COALESCE(exhausted_at, 0), reservations FROM replica_budget WHERE experiment = $1 FOR UPDATE", exp).
		Scan(&b.Granted, &exh, &at, &b.Reservations)
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("replicated experiment %s: %w", exp, store.ErrNotFound)
	}
	if err != nil {
		return b, err
	}
	b.Exhausted = exh != 0
	if at != 0 {
		b.ExhaustedAt = time.UnixMilli(at).UTC()
	}
	g, err := grant(b)
	if err != nil {
		return b, err
	}
	switch {
	case g.Exhausted:
		if err := tx.QueryRowContext(ctx, "UPDATE replica_budget SET exhausted = 1, exhausted_at = COALESCE(exhausted_at, "+dbNowMS+") WHERE experiment = $1 RETURNING exhausted_at", exp).Scan(&at); err != nil {
			return b, err
		}
		b.Exhausted, b.ExhaustedAt = true, time.UnixMilli(at).UTC()
	case g.Amount > 0:
		if err := tx.QueryRowContext(ctx, "UPDATE replica_budget SET granted = $2, reservations = reservations + 1 WHERE experiment = $1 RETURNING reservations", exp, g.Granted).Scan(&b.Reservations); err != nil {
			return b, err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO replica_reservations (experiment, n, replica, amount, created_at) VALUES ($1, $2, $3, $4, "+dbNowMS+")",
			exp, b.Reservations, r.id, g.Amount); err != nil {
			return b, err
		}
		b.Granted = g.Granted
	default:
		return b, fmt.Errorf("reserve on experiment %s: the grant reserves nothing (amount %v) and does not report exhaustion", exp, g.Amount)
	}
	return b, tx.Commit()
}

// AcquireLease implements store.Replicated.
func (r *Replica) AcquireLease(ctx context.Context, exp string, l store.Lease, length time.Duration) (store.Lease, error) {
	if length <= 0 {
		return l, fmt.Errorf("lease length %v must be positive", length)
	}
	lms := length.Milliseconds()
	var out store.Lease
	var exms int64
	scan := func(row *sql.Row) error {
		err := row.Scan(&out.Holder, &out.Token, &exms)
		out.Expires = time.UnixMilli(exms).UTC()
		return err
	}
	if err := r.guard(); err != nil {
		return l, err
	}
	const ret = " RETURNING holder, token, (extract(epoch from expires_at) * 1000)::bigint"
	if l.Token > 0 {
		err := scan(r.W.QueryRowContext(ctx, "UPDATE replica_leases SET expires_at = clock_timestamp() + $4 * interval '1 millisecond' WHERE experiment = $1 AND holder = $2 AND token = $3 AND expires_at >= clock_timestamp()"+ret,
			exp, r.id, l.Token, lms))
		if err == nil {
			out.Held = true
			return out, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return l, err
		}
	}
	err := scan(r.W.QueryRowContext(ctx, `INSERT INTO replica_leases (experiment, holder, token, expires_at) VALUES ($1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond')
		ON CONFLICT (experiment) DO UPDATE SET holder = EXCLUDED.holder, token = replica_leases.token + 1, expires_at = EXCLUDED.expires_at
		WHERE replica_leases.expires_at < clock_timestamp()`+ret, exp, r.id, lms))
	if err == nil {
		out.Held = true
		return out, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		if isForeignKey(err) {
			return l, fmt.Errorf("learner lease of experiment %s: %w", exp, store.ErrNotFound)
		}
		return l, err
	}
	err = scan(r.R.QueryRowContext(ctx, "SELECT holder, token, (extract(epoch from expires_at) * 1000)::bigint FROM replica_leases WHERE experiment = $1", exp))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("learner lease of experiment %s: %w", exp, store.ErrNotFound)
	}
	return out, err
}

// CommitLearned implements store.Replicated.
func (r *Replica) CommitLearned(ctx context.Context, exp string, l store.Lease, from int64, st store.State) (int64, error) {
	tx, err := r.beginW(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var holder string
	var tok int64
	var valid bool
	err = tx.QueryRowContext(ctx, "SELECT holder, token, expires_at > clock_timestamp() FROM replica_leases WHERE experiment = $1 FOR SHARE", exp).Scan(&holder, &tok, &valid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("experiment %s has no learner lease: %w", exp, store.ErrLeaseLost)
	}
	if err != nil {
		return 0, err
	}
	if holder != r.id || tok != l.Token || !valid {
		return 0, fmt.Errorf("experiment %s: learner lease token %d held by %s (valid %v); this replica's token was %d: %w", exp, tok, holder, valid, l.Token, store.ErrLeaseLost)
	}
	var v int64
	err = tx.QueryRowContext(ctx, `UPDATE states SET policy = $2, engine = $3, applied_seq = $4, reward_seq = GREATEST(reward_seq, $4), version = version + 1
		WHERE experiment = $1 AND applied_seq = $5 RETURNING version`, exp, st.Policy, st.Engine, st.AppliedSeq, from).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("experiment %s: the stored state is no longer at the consumed offset %d this learner started from: %w", exp, from, store.ErrLeaseLost)
	}
	if err != nil {
		return 0, err
	}
	return v, tx.Commit()
}

// Append implements store.Replicated.
func (r *Replica) Append(ctx context.Context, b *store.Batch) error {
	if len(b.Decisions) == 0 && len(b.Rewards) == 0 {
		return nil
	}
	type counts struct{ d, r int64 }
	per := map[string]*counts{}
	for _, d := range b.Decisions {
		c := per[d.Experiment]
		if c == nil {
			c = &counts{}
			per[d.Experiment] = c
		}
		c.d++
	}
	for _, rw := range b.Rewards {
		c := per[rw.Experiment]
		if c == nil {
			c = &counts{}
			per[rw.Experiment] = c
		}
		c.r++
	}
	exps := make([]string, 0, len(per))
	for id := range per {
		exps = append(exps, id)
	}
	slices.Sort(exps) // lock the counter rows in one order: no deadlock between replicas
	tx, err := r.beginW(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	next := map[string]*counts{}
	for _, id := range exps {
		c := per[id]
		var dEnd, rEnd int64
		err := tx.QueryRowContext(ctx, "UPDATE replica_counters SET decision_seq = decision_seq + $2, reward_seq = reward_seq + $3 WHERE experiment = $1 RETURNING decision_seq, reward_seq",
			id, c.d, c.r).Scan(&dEnd, &rEnd)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("replicated experiment %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		next[id] = &counts{d: dEnd - c.d, r: rEnd - c.r}
	}
	for i := range b.Decisions {
		n := next[b.Decisions[i].Experiment]
		n.d++
		b.Decisions[i].Seq = n.d
	}
	for i := range b.Rewards {
		n := next[b.Rewards[i].Experiment]
		n.r++
		b.Rewards[i].Seq = n.r
	}
	if err := r.insert(ctx, tx, sqldb.DecisionsInsert, sqldb.DecisionsCols, len(b.Decisions), func(i int, a []any) {
		d := &b.Decisions[i]
		a[0], a[1], a[2], a[3], a[4], a[5], a[6] = d.Experiment, d.Seq, d.EventID, int64(d.Arm), boolInt(d.Frozen), d.CreatedAt.UnixMilli(), encFeatures(d.Features)
		a[7], a[8] = nil, nil
		if d.Propensity != nil {
			a[7], a[8] = *d.Propensity, int64(d.PropensityDraws)
		}
	}); err != nil {
		if isUnique(err) {
			return fmt.Errorf("a decision event id of this batch is stored already: %w", store.ErrConflict)
		}
		return err
	}
	if err := r.insert(ctx, tx, sqldb.RewardsInsert, sqldb.RewardsCols, len(b.Rewards), func(i int, a []any) {
		rw := &b.Rewards[i]
		a[0], a[1], a[2], a[3], a[4], a[5] = rw.Experiment, rw.Seq, rw.EventID, rw.Value, boolInt(rw.Default), rw.CreatedAt.UnixMilli()
	}); err != nil {
		if isUnique(err) {
			return fmt.Errorf("a reward event id of this batch is stored already: %w", store.ErrConflict)
		}
		return err
	}
	return tx.Commit()
}

// insert writes n rows in multi-row INSERTs of at most sqldb.RowsPerInsert.
func (r *Replica) insert(ctx context.Context, tx *sql.Tx, table string, cols, n int, fill func(i int, a []any)) error {
	args := make([]any, 0, cols*sqldb.RowsPerInsert)
	for i := 0; i < n; i += sqldb.RowsPerInsert {
		m := min(sqldb.RowsPerInsert, n-i)
		args = args[:cols*m]
		for j := 0; j < m; j++ {
			fill(i+j, args[cols*j:cols*(j+1)])
		}
		if _, err := tx.ExecContext(ctx, r.InsertSQL(table, cols, m), args...); err != nil {
			return err
		}
	}
	return nil
}

// Released implements store.Replicated.
func (r *Replica) Released(ctx context.Context, exp string, arms int) ([]int64, error) {
	rows, err := r.R.QueryContext(ctx, "SELECT arm, COUNT(*) FROM decisions WHERE experiment = $1 AND frozen = 0 GROUP BY arm", exp)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]int64, arms)
	for rows.Next() {
		var arm, n int64
		if err := rows.Scan(&arm, &n); err != nil {
			return nil, err
		}
		if arm < 0 || arm >= int64(arms) {
			return nil, fmt.Errorf("experiment %s: a logged decision has arm %d, outside its %d arms", exp, arm, arms)
		}
		out[arm] = n
	}
	return out, rows.Err()
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func encFeatures(x []float64) any {
	if x == nil {
		return nil
	}
	return store.EncodeFeatures(x)
}

func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}
