// Package sqldb is the part of the SQL stores that is the same on SQLite
// and PostgreSQL: every store.Store method but Open and Close, over
// database/sql. The stores differ in their driver, their migrations, how
// they take the one writer, and a Dialect.
//
// Queries are written with $1, $2, … placeholders, which PostgreSQL reads
// as they are and SQLite as the numbered ?1, ?2, … (Dialect.Dollar false).
// Booleans are stored as integers 0/1 in both schemas, times as unix
// milliseconds, feature vectors as store.EncodeFeatures.
package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/store"
)

// Dialect is what differs between the SQL stores.
type Dialect struct {
	// Dollar keeps $n placeholders (PostgreSQL); false rewrites them to ?n
	// (SQLite).
	Dollar bool
	// IsUnique reports a unique or primary-key violation.
	IsUnique func(error) bool
	// InsertExperiment inserts ($1 id, $2 name, $3 config, $4 created_at)
	// with the store's creation order.
	InsertExperiment string
}

// DB implements the shared store.Store methods. W takes every write, R the
// reads (the same pool on PostgreSQL; SQLite has one writer connection and
// a read pool). Prepared, when set, returns a statement prepared on W for a
// multi-row INSERT, or nil (then the SQL is sent as is).
//
// Guard and Fence keep a store that lost its exclusive hold on the database
// from writing (store.ErrLockLost); both are nil on SQLite, whose OS file
// lock cannot be lost. Guard, when set, runs before every write starts: an
// error refuses the write at once, before any transaction. Fence, when set,
// runs first inside every write transaction (Commit, CreateExperiment,
// CreateKey, DeleteKey, DeleteExperiment, SetMeta, PurgeRewards and each
// migration): an error aborts the transaction, so nothing of it lands.
type DB struct {
	W, R     *sql.DB
	D        Dialect
	Prepared func(q string) *sql.Stmt
	Guard    func() error
	Fence    func(ctx context.Context, tx *sql.Tx) error

	inserts   sync.Map // insertKey → SQL text (built once per size)
	rewritten sync.Map // query → its SQLite form (q)
}

type insertKey struct {
	table      string
	cols, rows int
}

// q is query s in the dialect. For SQLite each $n becomes an anonymous ?
// when they appear as $1, $2, … in order (SQLite then binds by position,
// without looking up a parameter name per value), else the numbered ?n.
// Rewrites are cached.
func (db *DB) q(s string) string {
	if db.D.Dollar {
		return s
	}
	if r, ok := db.rewritten.Load(s); ok {
		return r.(string)
	}
	var anon, num strings.Builder
	inOrder, next := true, 1
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			anon.WriteByte(s[i])
			num.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(s[i+1 : j])
		inOrder = inOrder && n == next
		next++
		anon.WriteByte('?')
		num.WriteString("?" + s[i+1:j])
		i = j - 1
	}
	r := num.String()
	if inOrder {
		r = anon.String()
	}
	db.rewritten.Store(s, r)
	return r
}

func ms(t time.Time) int64       { return t.UnixMilli() }
func fromMS(v int64) time.Time   { return time.UnixMilli(v).UTC() }
func notFound(what string) error { return fmt.Errorf("%s: %w", what, store.ErrNotFound) }
func conflict(what string) error { return fmt.Errorf("%s: %w", what, store.ErrConflict) }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
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

// features is the features argument: NULL for none.
func features(x []float64) any {
	if x == nil {
		return nil
	}
	return store.EncodeFeatures(x)
}

// begin starts a write transaction on W: Guard first, then Fence inside it.
func (db *DB) begin(ctx context.Context) (*sql.Tx, error) {
	if db.Guard != nil {
		if err := db.Guard(); err != nil {
			return nil, err
		}
	}
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if db.Fence != nil {
		if err := db.Fence(ctx, tx); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}

// exec runs one write statement: in a fenced transaction when there is a
// Fence, else on its own (SQLite: one implicit transaction, as before).
func (db *DB) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if db.Fence == nil {
		if db.Guard != nil {
			if err := db.Guard(); err != nil {
				return nil, err
			}
		}
		return db.W.ExecContext(ctx, q, args...)
	}
	tx, err := db.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return res, tx.Commit()
}

// Meta implements store.Store.
func (db *DB) Meta(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := db.R.QueryRowContext(ctx, db.q("SELECT value FROM meta WHERE name = $1"), name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("setting " + name)
	}
	return v, err
}

// SetMeta implements store.Store.
func (db *DB) SetMeta(ctx context.Context, name string, value []byte) error {
	_, err := db.exec(ctx, db.q("INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value"), name, nonNilBytes(value))
	return err
}

// CreateKey implements store.Store.
func (db *DB) CreateKey(ctx context.Context, k store.Key) error {
	exps, err := json.Marshal(nonNil(k.Experiments))
	if err != nil {
		return err
	}
	_, err = db.exec(ctx, db.q("INSERT INTO api_keys (id, hash, role, experiments, created_at) VALUES ($1, $2, $3, $4, $5)"),
		k.ID, k.Hash, string(k.Role), string(exps), ms(k.CreatedAt))
	if db.D.IsUnique(err) {
		return conflict("api key " + k.ID)
	}
	return err
}

// Keys implements store.Store, in creation order (ties by id, bytewise).
func (db *DB) Keys(ctx context.Context) ([]store.Key, error) {
	order := "id"
	if db.D.Dollar {
		order = `id COLLATE "C"`
	}
	rows, err := db.R.QueryContext(ctx, "SELECT id, hash, role, experiments, created_at FROM api_keys ORDER BY created_at, "+order)
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

// DeleteKey implements store.Store.
func (db *DB) DeleteKey(ctx context.Context, id string) error {
	res, err := db.exec(ctx, db.q("DELETE FROM api_keys WHERE id = $1"), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return notFound("api key " + id)
	}
	return nil
}

// CreateExperiment implements store.Store.
func (db *DB) CreateExperiment(ctx context.Context, e store.Experiment, st store.State) error {
	tx, err := db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, db.q(db.D.InsertExperiment), e.ID, e.Name, nonNilBytes(e.Config), ms(e.CreatedAt))
	if db.D.IsUnique(err) {
		return conflict("experiment " + e.ID)
	}
	if err != nil {
		return err
	}
	if err := db.putState(ctx, tx, e.ID, st); err != nil {
		return err
	}
	return tx.Commit()
}

func (db *DB) putState(ctx context.Context, tx *sql.Tx, id string, st store.State) error {
	_, err := tx.ExecContext(ctx, db.q(`INSERT INTO states (experiment, policy, engine, decision_seq, reward_seq, applied_seq, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (experiment) DO UPDATE SET policy = excluded.policy, engine = excluded.engine,
		decision_seq = excluded.decision_seq, reward_seq = excluded.reward_seq, applied_seq = excluded.applied_seq, version = excluded.version`),
		id, nonNilBytes(st.Policy), nonNilBytes(st.Engine), st.DecisionSeq, st.RewardSeq, st.AppliedSeq, st.Version)
	return err
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
func (db *DB) Experiments(ctx context.Context) ([]store.Experiment, error) {
	rows, err := db.R.QueryContext(ctx, "SELECT "+expCols+" FROM experiments ORDER BY ord")
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
func (db *DB) Experiment(ctx context.Context, id string) (store.Experiment, error) {
	e, err := scanExp(db.R.QueryRowContext(ctx, db.q("SELECT "+expCols+" FROM experiments WHERE id = $1"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, notFound("experiment " + id)
	}
	return e, err
}

// LoadState implements store.Store.
func (db *DB) LoadState(ctx context.Context, id string) (store.State, error) {
	var st store.State
	err := db.R.QueryRowContext(ctx, db.q("SELECT policy, engine, decision_seq, reward_seq, applied_seq, version FROM states WHERE experiment = $1"), id).
		Scan(&st.Policy, &st.Engine, &st.DecisionSeq, &st.RewardSeq, &st.AppliedSeq, &st.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return st, notFound("state of experiment " + id)
	}
	return st, err
}

// DeleteExperiment implements store.Store: one transaction deletes the
// experiment's rewards, decisions and state (the rows that reference it:
// their foreign keys have no ON DELETE action, so the children go first),
// takes its id out of every key's scope, and deletes the experiment.
func (db *DB) DeleteExperiment(ctx context.Context, id string) error {
	tx, err := db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, db.q("SELECT 1 FROM experiments WHERE id = $1"), id).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("experiment " + id)
		}
		return err
	}
	for _, q := range []string{
		"DELETE FROM rewards WHERE experiment = $1",
		"DELETE FROM decisions WHERE experiment = $1",
		"DELETE FROM states WHERE experiment = $1",
	} {
		if _, err := tx.ExecContext(ctx, db.q(q), id); err != nil {
			return err
		}
	}
	if err := db.unscope(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, db.q("DELETE FROM experiments WHERE id = $1"), id); err != nil {
		return err
	}
	return tx.Commit()
}

// unscope removes experiment id from every key's experiments list, in tx.
func (db *DB) unscope(ctx context.Context, tx *sql.Tx, id string) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, experiments FROM api_keys")
	if err != nil {
		return err
	}
	type change struct{ key, exps string }
	var changes []change
	for rows.Next() {
		var key, raw string
		if err := rows.Scan(&key, &raw); err != nil {
			rows.Close()
			return err
		}
		var exps []string
		if err := json.Unmarshal([]byte(raw), &exps); err != nil {
			rows.Close()
			return fmt.Errorf("api key %s: experiments: %w", key, err)
		}
		kept := slices.DeleteFunc(slices.Clone(exps), func(e string) bool { return e == id })
		if len(kept) == len(exps) {
			continue
		}
		b, err := json.Marshal(nonNil(kept))
		if err != nil {
			rows.Close()
			return err
		}
		changes = append(changes, change{key, string(b)})
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := tx.ExecContext(ctx, db.q("UPDATE api_keys SET experiments = $1 WHERE id = $2"), c.exps, c.key); err != nil {
			return err
		}
	}
	return nil
}

// Decision implements store.Store.
func (db *DB) Decision(ctx context.Context, exp, ev string) (store.Decision, error) {
	d := store.Decision{Experiment: exp, EventID: ev}
	var frozen, at int64
	var feat []byte
	var prop sql.NullFloat64
	var draws sql.NullInt64
	err := db.R.QueryRowContext(ctx, db.q("SELECT seq, arm, frozen, created_at, features, propensity, propensity_draws FROM decisions WHERE experiment = $1 AND event_id = $2"), exp, ev).
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
func (db *DB) Reward(ctx context.Context, exp, ev string) (store.Reward, error) {
	r := store.Reward{Experiment: exp, EventID: ev}
	var def, at int64
	var v sql.NullFloat64
	err := db.R.QueryRowContext(ctx, db.q("SELECT seq, value, is_default, created_at FROM rewards WHERE experiment = $1 AND event_id = $2"), exp, ev).
		Scan(&r.Seq, &v, &def, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("reward " + ev)
	}
	r.Value, r.Purged = v.Float64, !v.Valid
	r.Default, r.CreatedAt = def != 0, fromMS(at)
	return r, err
}

// PurgeRewards implements store.Store (one durable statement).
func (db *DB) PurgeRewards(ctx context.Context, exp string, after, upTo int64) (int64, error) {
	if upTo <= after {
		return 0, nil
	}
	res, err := db.exec(ctx, db.q("UPDATE rewards SET value = NULL WHERE experiment = $1 AND seq > $2 AND seq <= $3 AND value IS NOT NULL"), exp, after, upTo)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RewardsAfter implements store.Store.
func (db *DB) RewardsAfter(ctx context.Context, exp string, after int64) ([]store.JoinedReward, error) {
	rows, err := db.R.QueryContext(ctx, db.q(`SELECT r.event_id, r.seq, r.value, r.is_default, r.created_at, d.arm, d.frozen, d.features
		FROM rewards r JOIN decisions d ON d.experiment = r.experiment AND d.event_id = r.event_id
		WHERE r.experiment = $1 AND r.seq > $2 ORDER BY r.seq`), exp, after)
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
func (db *DB) Unrewarded(ctx context.Context, exp string, afterSeq int64, before time.Time, limit int) ([]store.Decision, int64, error) {
	if limit < 1 {
		limit = 1
	}
	rows, err := db.R.QueryContext(ctx, db.q(`SELECT d.event_id, d.seq, d.arm, d.frozen, d.created_at,
		CASE WHEN EXISTS (SELECT 1 FROM rewards r WHERE r.experiment = d.experiment AND r.event_id = d.event_id) THEN 1 ELSE 0 END
		FROM decisions d WHERE d.experiment = $1 AND d.seq > $2 AND d.created_at <= $3 ORDER BY d.seq LIMIT $4`),
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

// Log implements store.Store: decisions in seq order (their primary key),
// each left-joined with its reward by the rewards' (experiment, event_id)
// index. r.seq is NULL when there is no reward; r.value is NULL also when
// the reward's value was purged.
func (db *DB) Log(ctx context.Context, exp string, afterSeq int64, limit int) ([]store.LogRow, error) {
	if limit < 1 {
		limit = 1
	}
	rows, err := db.R.QueryContext(ctx, db.q(`SELECT d.seq, d.event_id, d.arm, d.frozen, d.created_at, d.features, d.propensity, d.propensity_draws,
		r.seq, r.value, r.is_default, r.created_at
		FROM decisions d LEFT JOIN rewards r ON r.experiment = d.experiment AND r.event_id = d.event_id
		WHERE d.experiment = $1 AND d.seq > $2 ORDER BY d.seq LIMIT $3`), exp, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.LogRow
	for rows.Next() {
		row := store.LogRow{Decision: store.Decision{Experiment: exp}}
		d := &row.Decision
		var frozen, at int64
		var feat []byte
		var prop, rv sql.NullFloat64
		var draws, rseq, rdef, rat sql.NullInt64
		if err := rows.Scan(&d.Seq, &d.EventID, &d.Arm, &frozen, &at, &feat, &prop, &draws, &rseq, &rv, &rdef, &rat); err != nil {
			return nil, err
		}
		d.Frozen, d.CreatedAt = frozen != 0, fromMS(at)
		if prop.Valid {
			p := prop.Float64
			d.Propensity, d.PropensityDraws = &p, int(draws.Int64)
		}
		if d.Features, err = store.DecodeFeatures(feat); err != nil {
			return nil, fmt.Errorf("decision %s: %w", d.EventID, err)
		}
		if rseq.Valid {
			row.Reward = &store.Reward{Experiment: exp, EventID: d.EventID, Seq: rseq.Int64, Value: rv.Float64, Purged: !rv.Valid,
				Default: rdef.Int64 != 0, CreatedAt: fromMS(rat.Int64)}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// Counts implements store.Store.
func (db *DB) Counts(ctx context.Context, exp string) (int64, int64, error) {
	var d, r int64
	err := db.R.QueryRowContext(ctx, db.q(`SELECT (SELECT COUNT(*) FROM decisions WHERE experiment = $1), (SELECT COUNT(*) FROM rewards WHERE experiment = $1)`), exp).Scan(&d, &r)
	return d, r, err
}

// The tables and columns the group commit appends to.
const (
	DecisionsInsert = "decisions (experiment, seq, event_id, arm, frozen, created_at, features, propensity, propensity_draws)"
	DecisionsCols   = 9
	RewardsInsert   = "rewards (experiment, seq, event_id, value, is_default, created_at)"
	RewardsCols     = 6
)

// RowsPerInsert is how many rows one INSERT statement carries: one
// statement per row costs more in database/sql and the driver than the
// database's own work.
const RowsPerInsert = 64

// InsertSQL is the INSERT of rows rows into table (with its column list),
// cols columns each. Each size is built once: group commits ask for it
// several times per commit.
func (db *DB) InsertSQL(table string, cols, rows int) string {
	k := insertKey{table, cols, rows}
	if q, ok := db.inserts.Load(k); ok {
		return q.(string)
	}
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" VALUES ")
	n := 0
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := 0; j < cols; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			if db.D.Dollar {
				n++
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
			} else {
				// Anonymous ? in order: SQLite binds them by position
				// without looking up a parameter name per value (the
				// numbered ?n cost ~10% of a commit of 64-row INSERTs).
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	q := b.String()
	db.inserts.Store(k, q)
	return q
}

// insertRows inserts n rows of cols columns into table in multi-row INSERT
// statements; fill sets row i's arguments.
func (db *DB) insertRows(ctx context.Context, tx *sql.Tx, table string, cols, n int, fill func(i int, a []any)) error {
	args := make([]any, 0, cols*RowsPerInsert)
	for i := 0; i < n; i += RowsPerInsert {
		m := min(RowsPerInsert, n-i)
		args = args[:cols*m]
		for j := 0; j < m; j++ {
			fill(i+j, args[cols*j:cols*(j+1)])
		}
		q := db.InsertSQL(table, cols, m)
		var err error
		if st := db.prepared(q); st != nil {
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

func (db *DB) prepared(q string) *sql.Stmt {
	if db.Prepared == nil {
		return nil
	}
	return db.Prepared(q)
}

// Commit implements store.Store: one transaction on W, durable when it
// returns (the store's settings make it so: synchronous=FULL on SQLite,
// synchronous_commit=on on PostgreSQL).
func (db *DB) Commit(ctx context.Context, b *store.Batch) error {
	if b.Empty() {
		return nil
	}
	tx, err := db.begin(ctx)
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
		if err := tx.QueryRowContext(ctx, db.q("SELECT 1 FROM experiments WHERE id = $1"), id).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return notFound("experiment " + id)
			}
			return err
		}
	}
	if err := db.insertRows(ctx, tx, DecisionsInsert, DecisionsCols, len(b.Decisions), func(i int, a []any) {
		d := &b.Decisions[i]
		a[0], a[1], a[2], a[3], a[4], a[5], a[6] = d.Experiment, d.Seq, d.EventID, int64(d.Arm), boolInt(d.Frozen), ms(d.CreatedAt), features(d.Features)
		a[7], a[8] = nil, nil
		if d.Propensity != nil {
			a[7], a[8] = *d.Propensity, int64(d.PropensityDraws)
		}
	}); err != nil {
		if db.D.IsUnique(err) {
			return conflict("a decision event id or seq of this batch is stored already")
		}
		return err
	}
	if err := db.insertRows(ctx, tx, RewardsInsert, RewardsCols, len(b.Rewards), func(i int, a []any) {
		r := &b.Rewards[i]
		a[0], a[1], a[2], a[3], a[4], a[5] = r.Experiment, r.Seq, r.EventID, r.Value, boolInt(r.Default), ms(r.CreatedAt)
	}); err != nil {
		if db.D.IsUnique(err) {
			return conflict("a reward event id or seq of this batch is stored already")
		}
		return err
	}
	for id, st := range b.States {
		if err := db.putState(ctx, tx, id, st); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Migrate applies the migrations in fsys (migrations/NNNN_*.sql, in name
// order; version v is the v-th file) that are newer than the database's
// version have, each in its own (guarded and fenced) transaction on W,
// together with setVersion(tx, v). A database newer than the binary is
// refused.
func (db *DB) Migrate(ctx context.Context, fsys fs.FS, have int, setVersion func(ctx context.Context, tx *sql.Tx, v int) error) error {
	names, err := fs.Glob(fsys, "migrations/*.sql")
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
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		tx, err := db.begin(ctx)
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
		// One file holds several statements: both drivers run them all
		// when there are no arguments.
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", name, err)
		}
		if err := setVersion(ctx, tx, v); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}
