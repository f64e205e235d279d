package store

import (
	"context"
	"errors"
	"time"
)

// ErrLeaseLost is returned (wrapped) by Replicated.CommitLearned when the
// caller's learner lease is no longer valid: it expired, or another replica
// took it over (its fencing token moved). The write did not land: the check
// runs inside the write's transaction. The caller must stop learning for
// that experiment and reload the state before it takes the lease again.
var ErrLeaseLost = errors.New("the learner lease was lost")

// Replicated is implemented by stores on which any number of serving
// processes (replicas) serve the same experiments at once
// (`dpbandit serve --replica`, docs/replicas.md). Only store/postgres
// implements it. Its methods add three things to Store:
//
//   - a budget row per experiment, locked by each reservation, that holds
//     the privacy filter of everything ever granted to any replica (opaque
//     bytes here: the server's privacy.Filter, in its exact units);
//   - a learner lease per experiment: a row with a holder, a fencing token
//     and an expiry in database time, checked inside every state write;
//   - an event log whose sequence numbers are assigned in commit order
//     (gapless, one counter row per experiment locked by each append), so
//     that the learner reads the rewards in one total order.
//
// Every method is safe for concurrent use by any number of processes.
type Replicated interface {
	Store

	// ReplicaID names this process (its lease holder and reservation rows).
	ReplicaID() string

	// CreateReplicated stores an experiment, its initial state and its
	// budget row (granted: the filter with nothing spent) in one
	// transaction (ErrConflict on a duplicate id).
	CreateReplicated(ctx context.Context, e Experiment, initial State, granted []byte) error

	// Snapshot reads an experiment's newest state and its budget row in one
	// statement (ErrNotFound when the experiment has no budget row: it was
	// not created in replica mode).
	Snapshot(ctx context.Context, experiment string) (State, Budget, error)

	// Reserve locks the experiment's budget row (SELECT ... FOR UPDATE) and
	// calls grant with it. grant returns the new granted filter and the
	// amount reserved (> 0: a reservation row is written), or exhausted
	// (the budget cannot pay for the next step: the row's exhausted flag
	// and time are set, nothing is reserved). Both land in the same
	// transaction, durable when Reserve returns. An error from grant aborts
	// the transaction.
	Reserve(ctx context.Context, experiment string, grant func(b Budget) (Grant, error)) (Budget, error)

	// AcquireLease takes the experiment's learner lease when it is absent
	// or expired (incrementing its token), or renews it when this replica
	// holds it with the token in l (l.Token 0: take only). It returns the
	// lease held after the call; Held is false when another replica holds
	// an unexpired lease. Expiry is judged by the database's clock.
	AcquireLease(ctx context.Context, experiment string, l Lease, length time.Duration) (Lease, error)

	// CommitLearned writes the learner's new state: policy and engine bytes
	// with AppliedSeq, the consumed offset, in one transaction that first
	// checks, with the lease row locked FOR SHARE, that l is still this
	// replica's, unexpired, with the same token (ErrLeaseLost otherwise),
	// and that the stored AppliedSeq is still from (ErrLeaseLost too: a
	// state this learner did not start from). Version is incremented.
	CommitLearned(ctx context.Context, experiment string, l Lease, from int64, st State) (version int64, err error)

	// Append logs decisions and rewards of any experiments in one durable
	// transaction, assigning each its Seq in commit order (written back
	// into b): the counter row of each experiment is locked until commit,
	// so sequence numbers are gapless and commit in increasing order. It
	// fails with ErrConflict (writing nothing) when an event id exists.
	// States in b are ignored.
	Append(ctx context.Context, b *Batch) error

	// Released counts, per arm, the logged decisions made by the policy
	// (not frozen): released outputs, whose empirical distribution a frozen
	// experiment plays.
	Released(ctx context.Context, experiment string, arms int) ([]int64, error)
}

// Budget is an experiment's budget row in replica mode.
type Budget struct {
	// Granted is the serialised filter of every block ever reserved by any
	// replica; its spent is the experiment's certified privacy spent (a
	// block counts in full as soon as it is granted, used or not).
	Granted []byte
	// Exhausted is set when a reservation found the budget unable to pay
	// for the next step; ExhaustedAt is when (database clock).
	Exhausted   bool
	ExhaustedAt time.Time
	// Reservations counts the blocks granted so far.
	Reservations int64
	// Lease is the learner lease as stored (Held is not meaningful here).
	Lease Lease
}

// Grant is what a Reserve callback decides.
type Grant struct {
	Granted   []byte  // the new granted filter (ignored when Exhausted)
	Amount    float64 // the block reserved, in the filter's parameter (μ, ρ or ε)
	Exhausted bool
}

// Lease is a learner lease.
type Lease struct {
	Holder  string
	Token   int64
	Expires time.Time // database clock
	Held    bool      // held by the caller after AcquireLease
}
