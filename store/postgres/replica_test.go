package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/storetest"
)

func openReplica(t *testing.T, dsn string) *postgres.Replica {
	t.Helper()
	r, err := postgres.OpenReplica(context.Background(), dsn, postgres.Options{LockWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// granted is a toy stand-in for the server's privacy filter in these store
// tests: a decimal number of budget units spent, with a budget of 100.
func grantBlock(amount int) func(b store.Budget) (store.Grant, error) {
	return func(b store.Budget) (store.Grant, error) {
		have, err := strconv.Atoi(string(b.Granted))
		if err != nil {
			return store.Grant{}, err
		}
		if have+amount > 100 {
			return store.Grant{Exhausted: true}, nil
		}
		return store.Grant{Granted: []byte(strconv.Itoa(have + amount)), Amount: float64(amount)}, nil
	}
}

func createReplicated(t *testing.T, r *postgres.Replica, id string) {
	t.Helper()
	err := r.CreateReplicated(context.Background(), store.Experiment{ID: id, Name: id, Config: []byte("{}"), CreatedAt: time.Now()},
		store.State{Policy: []byte("p0"), Engine: []byte("e0"), Version: 1}, []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
}

// Replicas open beside each other; a one-server store is refused while
// they hold the schema, and a replica is refused while a one-server store
// holds it (store.ErrLocked both ways).
func TestReplicaModesExclude(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	a := openReplica(t, dsn)
	b := openReplica(t, dsn)
	if a.ReplicaID() == b.ReplicaID() {
		t.Fatalf("two replicas share the id %q", a.ReplicaID())
	}
	if s, err := postgres.OpenWith(ctx, dsn, postgres.Options{LockWait: 200 * time.Millisecond}); err == nil {
		s.Close()
		t.Fatal("a one-server store opened beside replicas")
	} else if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("one-server Open beside replicas: %v; want store.ErrLocked", err)
	}
	a.Close()
	b.Close()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("one-server Open after the replicas closed: %v", err)
	}
	defer s.Close()
	if r, err := postgres.OpenReplica(ctx, dsn, postgres.Options{LockWait: 200 * time.Millisecond}); err == nil {
		r.Close()
		t.Fatal("a replica opened beside a one-server store")
	} else if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("replica beside a one-server store: %v; want store.ErrLocked", err)
	}
}

// Two replicas race for one expired lease, many times: each round exactly
// one wins, and the fencing token increases by exactly one per takeover.
func TestReplicaLeaseRace(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	a, b := openReplica(t, dsn), openReplica(t, dsn)
	createReplicated(t, a, "x")
	var last int64
	for round := 0; round < 10; round++ {
		var wg sync.WaitGroup
		got := make([]store.Lease, 2)
		errs := make([]error, 2)
		for i, r := range []*postgres.Replica{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = r.AcquireLease(ctx, "x", store.Lease{}, 250*time.Millisecond)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got[0].Held == got[1].Held {
			t.Fatalf("round %d: held %v and %v; want exactly one winner", round, got[0].Held, got[1].Held)
		}
		w := got[0]
		if got[1].Held {
			w = got[1]
		}
		if w.Token != last+1 {
			t.Fatalf("round %d: token %d after %d; want +1 per takeover", round, w.Token, last)
		}
		last = w.Token
		time.Sleep(270 * time.Millisecond) // past the expiry
	}
}

// A learner paused past its lease (SIGSTOP, a GC pause, a partition),
// simulated by letting the lease expire: its fenced write fails with
// ErrLeaseLost before and after another replica takes the lease over, and
// the stored state is the new learner's.
func TestReplicaFencedWriteAfterTakeover(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	a, b := openReplica(t, dsn), openReplica(t, dsn)
	createReplicated(t, a, "x")
	la, err := a.AcquireLease(ctx, "x", store.Lease{}, 500*time.Millisecond)
	if err != nil || !la.Held {
		t.Fatalf("a takes the lease: %+v, %v", la, err)
	}
	if lb, err := b.AcquireLease(ctx, "x", store.Lease{}, time.Second); err != nil || lb.Held || lb.Holder != a.ReplicaID() {
		t.Fatalf("b while a holds it: %+v, %v; want not held, holder a", lb, err)
	}
	v, err := a.CommitLearned(ctx, "x", la, 0, store.State{Policy: []byte("a1"), Engine: []byte("e"), AppliedSeq: 3})
	if err != nil || v != 2 {
		t.Fatalf("a's write while it holds the lease: version %d, %v", v, err)
	}
	time.Sleep(550 * time.Millisecond) // a is paused past its lease
	if _, err := a.CommitLearned(ctx, "x", la, 3, store.State{Policy: []byte("a2"), Engine: []byte("e"), AppliedSeq: 5}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a's write after expiry: %v; want ErrLeaseLost", err)
	}
	lb, err := b.AcquireLease(ctx, "x", store.Lease{}, time.Second)
	if err != nil || !lb.Held || lb.Token != la.Token+1 {
		t.Fatalf("b takes over: %+v, %v; want held with token %d", lb, err, la.Token+1)
	}
	if _, err := a.CommitLearned(ctx, "x", la, 3, store.State{Policy: []byte("a2"), Engine: []byte("e"), AppliedSeq: 5}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a's write after the takeover: %v; want ErrLeaseLost", err)
	}
	if l, err := a.AcquireLease(ctx, "x", la, time.Second); err != nil || l.Held {
		t.Fatalf("a renews a lease taken over: %+v, %v; want not held", l, err)
	}
	// b continues from the committed offset; a stale offset is refused.
	if _, err := b.CommitLearned(ctx, "x", lb, 0, store.State{Policy: []byte("b"), Engine: []byte("e"), AppliedSeq: 4}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("b's write from a stale offset: %v; want ErrLeaseLost", err)
	}
	if _, err := b.CommitLearned(ctx, "x", lb, 3, store.State{Policy: []byte("b"), Engine: []byte("e"), AppliedSeq: 4}); err != nil {
		t.Fatal(err)
	}
	st, bud, err := b.Snapshot(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if string(st.Policy) != "b" || st.AppliedSeq != 4 || st.Version != 3 || bud.Lease.Holder != b.ReplicaID() || bud.Lease.Token != lb.Token {
		t.Fatalf("snapshot %q applied %d version %d lease %+v; want b's state at offset 4, version 3, b's lease", st.Policy, st.AppliedSeq, st.Version, bud.Lease)
	}
}

// A replica that dies holding a reservation: its block stays granted
// (counted as spent, never returned or reused), so the others can reserve
// only the rest, and exhaustion is recorded once, globally.
func TestReplicaKilledReservationCountsAsSpent(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	a, b := openReplica(t, dsn), openReplica(t, dsn)
	createReplicated(t, a, "x")
	if bud, err := a.Reserve(ctx, "x", grantBlock(30)); err != nil || string(bud.Granted) != "30" || bud.Reservations != 1 {
		t.Fatalf("a reserves 30: %+v, %v", bud, err)
	}
	a.Close() // a dies with its whole block unused
	for i, want := range []string{"60", "90"} {
		if bud, err := b.Reserve(ctx, "x", grantBlock(30)); err != nil || string(bud.Granted) != want || bud.Exhausted {
			t.Fatalf("b's reservation %d: %+v, %v; want granted %s", i, bud, err, want)
		}
	}
	bud, err := b.Reserve(ctx, "x", grantBlock(30))
	if err != nil || !bud.Exhausted || bud.ExhaustedAt.IsZero() || string(bud.Granted) != "90" {
		t.Fatalf("the reservation past the budget: %+v, %v; want exhausted with 90 granted", bud, err)
	}
	_, snap, err := b.Snapshot(ctx, "x")
	if err != nil || !snap.Exhausted || string(snap.Granted) != "90" || snap.Reservations != 3 || !snap.ExhaustedAt.Equal(bud.ExhaustedAt) {
		t.Fatalf("snapshot after exhaustion: %+v, %v", snap, err)
	}
	if _, err := b.Reserve(ctx, "x", func(store.Budget) (store.Grant, error) { return store.Grant{}, nil }); err == nil {
		t.Fatal("a grant of nothing was accepted")
	}
}

// Appends from several replicas at once get gapless sequence numbers in
// commit order; a duplicate event id is a conflict that writes nothing.
func TestReplicaAppendSequence(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	rs := []*postgres.Replica{openReplica(t, dsn), openReplica(t, dsn), openReplica(t, dsn)}
	createReplicated(t, rs[0], "x")
	const per = 40
	var wg sync.WaitGroup
	errs := make(chan error, len(rs)*per)
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < per; j++ {
				id := fmt.Sprintf("ev%d_%d", i, j)
				b := &store.Batch{Decisions: []store.Decision{{Experiment: "x", EventID: id, Arm: j % 2, CreatedAt: time.Now()}}}
				if err := r.Append(ctx, b); err != nil {
					errs <- err
					return
				}
				b = &store.Batch{Rewards: []store.Reward{{Experiment: "x", EventID: id, Value: float64(j%2) / 2, CreatedAt: time.Now()}}}
				if err := r.Append(ctx, b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rws, err := rs[1].RewardsAfter(ctx, "x", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rws) != len(rs)*per {
		t.Fatalf("%d rewards; want %d", len(rws), len(rs)*per)
	}
	for i, r := range rws {
		if r.Seq != int64(i+1) {
			t.Fatalf("reward %d has seq %d; want gapless 1..%d", i, r.Seq, len(rws))
		}
	}
	dup := &store.Batch{Decisions: []store.Decision{{Experiment: "x", EventID: "new", CreatedAt: time.Now()}, {Experiment: "x", EventID: "ev0_0", CreatedAt: time.Now()}}}
	if err := rs[2].Append(ctx, dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("append with a stored event id: %v; want ErrConflict", err)
	}
	if _, err := rs[2].Decision(ctx, "x", "new"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the conflicting batch's other decision: %v; want not stored", err)
	}
	rel, err := rs[0].Released(ctx, "x", 2)
	if err != nil || rel[0] != per*3/2 || rel[1] != per*3/2 {
		t.Fatalf("released counts %v, %v; want [%d %d]", rel, err, per*3/2, per*3/2)
	}
	if err := rs[0].Append(ctx, &store.Batch{Rewards: []store.Reward{{Experiment: "nope", EventID: "e"}}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("append to an unknown experiment: %v; want ErrNotFound", err)
	}
	if _, _, err := rs[0].Snapshot(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("snapshot of an unknown experiment: %v", err)
	}
}

// FuzzReplicaReserve drives the reservation path with hostile amounts and
// grant outcomes: the stored granted total is always the sum of the
// granted blocks, never above the budget, and never decreases.
func FuzzReplicaReserve(f *testing.F) {
	f.Add(int64(30), int64(80), int64(-5), int64(0))
	f.Add(int64(100), int64(1), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, a, b, c, d int64) {
		r, err := postgres.OpenReplica(context.Background(), storetest.PostgresSchema(t), postgres.Options{LockWait: time.Second, Watch: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		id := "f"
		createReplicated(t, r, id)
		total := 0
		for _, x := range []int64{a, b, c, d} {
			bud, err := r.Reserve(context.Background(), id, func(bud store.Budget) (store.Grant, error) {
				if x <= 0 {
					return store.Grant{}, fmt.Errorf("refused amount %d", x)
				}
				if x > 1000 {
					return store.Grant{Exhausted: true}, nil
				}
				return grantBlock(int(x))(bud)
			})
			if x <= 0 {
				if err == nil {
					t.Fatalf("amount %d: a refused grant was committed", x)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bud.Exhausted {
				total += int(x)
			}
			got, _ := strconv.Atoi(string(bud.Granted))
			if got != total || got > 100 {
				t.Fatalf("granted %d after %v; want %d ≤ 100", got, []int64{a, b, c, d}, total)
			}
		}
	})
}

// A replica whose lock session is terminated (pg_terminate_backend, a
// network cut) finds it lost within about a second and refuses every write
// (store.ErrLockLost); a one-server store can then take the schema over,
// and its lease token fences the replica's pool out for good.
func TestReplicaLockSessionTerminated(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresSchema(t)
	r := openReplica(t, dsn)
	createReplicated(t, r, "x")
	storetest.TerminatePostgresLock(t, dsn)
	select {
	case <-r.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the replica did not notice its terminated lock session within 5 s")
	}
	if err := r.Append(ctx, &store.Batch{Decisions: []store.Decision{{Experiment: "x", EventID: "e", CreatedAt: time.Now()}}}); !errors.Is(err, store.ErrLockLost) {
		t.Fatalf("append after the lock was lost: %v; want ErrLockLost", err)
	}
	if _, err := r.Reserve(ctx, "x", grantBlock(1)); !errors.Is(err, store.ErrLockLost) {
		t.Fatalf("reserve after the lock was lost: %v; want ErrLockLost", err)
	}
	s, err := postgres.OpenWith(ctx, dsn, postgres.Options{LockWait: 2 * time.Second})
	if err != nil {
		t.Fatalf("one-server Open after the replica's session ended: %v", err)
	}
	defer s.Close()
	if _, err := s.Decision(ctx, "x", "e"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused append landed: %v", err)
	}
}
