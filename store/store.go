// Package store is the persistence contract of the decision service: API
// keys, experiments, their decision and reward logs, and each experiment's
// durable state (the policy's serialised learning state and the privacy
// ledger). Implementations live in subpackages (sqlite is the embedded
// default); storetest is the conformance suite every implementation passes.
//
// The store does not interpret policy states or ledgers: they are opaque
// bytes written by the server. What it guarantees is atomicity and
// durability: [Store.Commit] writes a whole [Batch] (decisions, rewards and
// states of any number of experiments) in one transaction, and returns only
// once the transaction is durable (fsync), so a crash leaves either all of a
// batch or none of it.
//
// Concurrency: every method is safe for concurrent use. The server calls
// Commit from a single writer goroutine; reads may run concurrently with it.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned (wrapped) when a key, experiment, decision or
// reward does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned (wrapped) by Commit when a decision or reward with
// the same experiment and event id exists already, and by CreateExperiment
// and CreateKey on a duplicate id. Commit then writes nothing.
var ErrConflict = errors.New("conflict")

// ErrLockLost is returned (wrapped) by every write once the store has lost
// its exclusive hold on the database (another process may own it now). A
// write that fails with it did not land: the check runs inside the write's
// transaction. The server must stop writing; see [Exclusive].
var ErrLockLost = errors.New("the store lost its exclusive lock on the database")

// ErrLocked is returned (wrapped) by an implementation's Open when another
// process holds the database's exclusive lock.
var ErrLocked = errors.New("the database is in use by another process")

// Exclusive is implemented by stores that hold an exclusive lock on their
// database for their lifetime, so that no second server writes to it.
// Lost is closed when the store finds the lock lost (within about a second
// for PostgreSQL, whose lock lives in a database session that can be
// terminated); LostErr then says why. A store never regains a lost lock.
type Exclusive interface {
	Lost() <-chan struct{}
	LostErr() error
}

// Role is what an API key may do.
type Role string

// Roles of API keys.
const (
	RoleAdmin  Role = "admin"  // manages everything
	RoleClient Role = "client" // decides and rewards on its experiments only
)

// Key is an API key as stored: only the SHA-256 hash of the secret.
type Key struct {
	ID          string    // public identifier, e.g. "key_3f2a…"
	Hash        []byte    // SHA-256 of the secret token (32 bytes)
	Role        Role      // admin or client
	Experiments []string  // client keys: the experiment ids in scope
	CreatedAt   time.Time // UTC
}

// Experiment is an experiment's immutable configuration. Config is the
// server's JSON (arms, policy, calibrated parameters, budget, ...).
type Experiment struct {
	ID        string
	Name      string
	Config    []byte
	CreatedAt time.Time
}

// State is an experiment's durable state, replaced as a whole by each
// commit that touches the experiment.
type State struct {
	// Policy is the policy's serialised learning state (its MarshalJSON) as
	// of exactly the decisions logged up to DecisionSeq and the rewards
	// applied up to AppliedSeq.
	Policy []byte
	// Engine is the server's own state (privacy ledger, reservation,
	// released-action counts, freeze status, seeds, watermarks), opaque here.
	Engine []byte
	// DecisionSeq is the sequence number of the last logged decision.
	DecisionSeq int64
	// RewardSeq is the sequence number of the last stored reward.
	RewardSeq int64
	// AppliedSeq is the last reward sequence number whose update is in
	// Policy; rewards with AppliedSeq < seq ≤ RewardSeq are replayed on load.
	AppliedSeq int64
	// Version counts the commits that wrote this state.
	Version int64
}

// Decision is one logged decision.
type Decision struct {
	Experiment string
	EventID    string
	Seq        int64     // 1, 2, ... per experiment, in the order decided
	Arm        int       // index into the experiment's arms
	Frozen     bool      // played after the budget was exhausted (not by the policy)
	CreatedAt  time.Time // UTC, millisecond precision
	// Features is the chosen candidate's feature vector (contextual
	// policies; nil for K-armed ones): Update needs it with the reward.
	Features []float64
	// Propensity is the probability with which the policy chose Arm, when
	// the caller asked for it (nil otherwise); PropensityDraws is the number
	// of Monte Carlo draws behind it (0: exact).
	Propensity      *float64
	PropensityDraws int
}

// Reward is one stored reward, joined to its decision by event id.
type Reward struct {
	Experiment string
	EventID    string
	Seq        int64   // 1, 2, ... per experiment, in commit order
	Value      float64 // in the experiment's reward range (0 when Purged)
	Default    bool    // the experiment's default reward, applied after reward_wait
	CreatedAt  time.Time
	// Purged reports that the value was deleted (PurgeRewards): the event
	// has a reward, applied to the policy, whose value is no longer kept.
	Purged bool
}

// Batch is what one commit writes: for each experiment, its new decisions
// and rewards and (optionally) its new state.
type Batch struct {
	Decisions []Decision
	Rewards   []Reward
	States    map[string]State // by experiment id
}

// Empty reports whether the batch writes nothing.
func (b *Batch) Empty() bool {
	return len(b.Decisions) == 0 && len(b.Rewards) == 0 && len(b.States) == 0
}

// Store persists the decision service's data. See the package comment for
// the atomicity and durability contract.
type Store interface {
	// Meta reads a server setting (e.g. the admin key's hash); ErrNotFound
	// when unset. SetMeta writes it durably.
	Meta(ctx context.Context, name string) ([]byte, error)
	SetMeta(ctx context.Context, name string, value []byte) error

	// CreateKey stores a key (ErrConflict on a duplicate id or hash). Keys
	// lists every key.
	CreateKey(ctx context.Context, k Key) error
	Keys(ctx context.Context) ([]Key, error)
	// DeleteKey durably deletes a key by id (ErrNotFound when there is
	// none): the revocation of a leaked key.
	DeleteKey(ctx context.Context, id string) error

	// CreateExperiment stores an experiment with its initial state in one
	// transaction (ErrConflict on a duplicate id). Experiments lists them in
	// creation order; Experiment returns one (ErrNotFound).
	CreateExperiment(ctx context.Context, e Experiment, initial State) error
	Experiments(ctx context.Context) ([]Experiment, error)
	Experiment(ctx context.Context, id string) (Experiment, error)
	// LoadState returns an experiment's state (ErrNotFound).
	LoadState(ctx context.Context, id string) (State, error)
	// DeleteExperiment durably deletes an experiment with its state, its
	// decisions and its rewards, in one transaction (ErrNotFound when there
	// is none), and removes its id from every client key's scope.
	DeleteExperiment(ctx context.Context, id string) error

	// Decision and Reward look up one event (ErrNotFound).
	Decision(ctx context.Context, experiment, eventID string) (Decision, error)
	Reward(ctx context.Context, experiment, eventID string) (Reward, error)
	// RewardsAfter returns the experiment's rewards with seq > after, in seq
	// order, each with the arm and frozen flag of its decision.
	RewardsAfter(ctx context.Context, experiment string, after int64) ([]JoinedReward, error)
	// Unrewarded returns up to limit logged decisions with seq > afterSeq,
	// created at or before before, that have no reward, in seq order. It
	// also returns the largest seq it examined (the new watermark): every
	// decision with seq ≤ that and created at or before before has been
	// returned now or earlier.
	Unrewarded(ctx context.Context, experiment string, afterSeq int64, before time.Time, limit int) ([]Decision, int64, error)
	// Log returns up to limit logged decisions of the experiment with seq >
	// afterSeq, in seq order, each with its reward when one is stored (the
	// decision log of GET /v1/experiments/{id}/log). A limit below 1 is read
	// as 1. An unknown experiment has an empty log (nil, nil), as in Counts.
	// Only the chosen candidate's features are logged (Decision.Features):
	// the other candidates of a contextual decision are not stored.
	Log(ctx context.Context, experiment string, afterSeq int64, limit int) ([]LogRow, error)
	// Counts returns the numbers of logged decisions and stored rewards.
	Counts(ctx context.Context, experiment string) (decisions, rewards int64, err error)
	// PurgeRewards durably deletes the values of the experiment's rewards
	// with after < seq ≤ upTo, keeping their rows (Reward then reports them
	// Purged; Counts and idempotency by event id are unchanged). The caller
	// purges only rewards already in a durable policy state: they are never
	// replayed. It returns the number of values deleted.
	PurgeRewards(ctx context.Context, experiment string, after, upTo int64) (int64, error)

	// Commit writes the batch in one durable transaction. It fails with
	// ErrConflict (and writes nothing) if a decision or reward event id is
	// already stored for its experiment, and with ErrNotFound if a state or
	// event names an unknown experiment.
	Commit(ctx context.Context, b *Batch) error

	// Close releases the store. Calls after Close fail.
	Close() error
}

// JoinedReward is a reward with its decision's arm.
type JoinedReward struct {
	Reward
	Arm      int
	Frozen   bool
	Features []float64 // the decision's features (contextual), or nil
}

// LogRow is one row of an experiment's decision log: a logged decision and
// its reward, nil while none is stored. A reward whose value was deleted
// (PurgeRewards) has Purged set and Value 0.
type LogRow struct {
	Decision
	Reward *Reward
}
