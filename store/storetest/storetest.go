// Package storetest is the conformance suite of store.Store, after
// testing/slogtest: every implementation runs Run from its own tests.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store"
)

// Run checks the store.Store contract against fresh stores made by
// newStore. It calls newStore once per subtest; newStore must return an
// empty store and may register its own cleanup (Run closes each store).
// reopen, when non-nil, closes s and opens the same database again: Run
// then also checks that committed data survive a reopen.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, reopen func(t *testing.T, s store.Store) store.Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	fresh := func(t *testing.T) store.Store {
		s := newStore(t)
		t.Cleanup(func() { s.Close() })
		return s
	}
	mkExp := func(t *testing.T, s store.Store, id string) {
		t.Helper()
		err := s.CreateExperiment(ctx, store.Experiment{ID: id, Name: "n-" + id, Config: []byte(`{"k":1}`), CreatedAt: now},
			store.State{Policy: []byte("p0"), Engine: []byte("e0")})
		if err != nil {
			t.Fatalf("CreateExperiment(%s): %v", id, err)
		}
	}

	t.Run("Meta", func(t *testing.T) {
		s := fresh(t)
		if _, err := s.Meta(ctx, "admin"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Meta of unset: err = %v, want ErrNotFound", err)
		}
		for _, v := range []string{"one", "two"} {
			if err := s.SetMeta(ctx, "admin", []byte(v)); err != nil {
				t.Fatal(err)
			}
			got, err := s.Meta(ctx, "admin")
			if err != nil || string(got) != v {
				t.Fatalf("Meta = %q, %v; want %q", got, err, v)
			}
		}
	})

	t.Run("Keys", func(t *testing.T) {
		s := fresh(t)
		k := store.Key{ID: "k1", Hash: bytes.Repeat([]byte{1}, 32), Role: store.RoleClient, Experiments: []string{"a", "b"}, CreatedAt: now}
		if err := s.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateKey(ctx, k); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate key: err = %v, want ErrConflict", err)
		}
		k2 := k
		k2.ID = "k2"
		if err := s.CreateKey(ctx, k2); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate hash: err = %v, want ErrConflict", err)
		}
		admin := store.Key{ID: "k3", Hash: bytes.Repeat([]byte{3}, 32), Role: store.RoleAdmin, CreatedAt: now.Add(time.Second)}
		if err := s.CreateKey(ctx, admin); err != nil {
			t.Fatal(err)
		}
		ks, err := s.Keys(ctx)
		if err != nil || len(ks) != 2 {
			t.Fatalf("Keys = %v, %v; want 2 keys", ks, err)
		}
		if ks[0].ID != "k1" || !bytes.Equal(ks[0].Hash, k.Hash) || ks[0].Role != store.RoleClient ||
			fmt.Sprint(ks[0].Experiments) != "[a b]" || !ks[0].CreatedAt.Equal(now) {
			t.Errorf("Keys[0] = %+v, want %+v", ks[0], k)
		}
		if ks[1].Role != store.RoleAdmin || len(ks[1].Experiments) != 0 {
			t.Errorf("Keys[1] = %+v", ks[1])
		}
	})

	t.Run("Exclusive", func(t *testing.T) {
		// A store that holds an exclusive lock on its database has not
		// lost it when nothing took it away.
		s := fresh(t)
		ex, ok := s.(store.Exclusive)
		if !ok {
			t.Skip("the store holds no exclusive lock")
		}
		mkExp(t, s, "e1")
		select {
		case <-ex.Lost():
			t.Errorf("Lost is closed on a fresh store: %v", ex.LostErr())
		default:
		}
		if err := ex.LostErr(); err != nil {
			t.Errorf("LostErr = %v on a fresh store", err)
		}
	})

	t.Run("DeleteKey", func(t *testing.T) {
		s := fresh(t)
		for i, id := range []string{"k1", "k2"} {
			k := store.Key{ID: id, Hash: bytes.Repeat([]byte{byte(i + 1)}, 32), Role: store.RoleClient, Experiments: []string{"a"}, CreatedAt: now}
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteKey(ctx, "k1"); err != nil {
			t.Fatalf("DeleteKey(k1): %v", err)
		}
		if ks, err := s.Keys(ctx); err != nil || len(ks) != 1 || ks[0].ID != "k2" {
			t.Errorf("Keys after deleting k1 = %+v, %v; want k2 only", ks, err)
		}
		for _, id := range []string{"k1", "nope"} {
			if err := s.DeleteKey(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("DeleteKey(%s): err = %v, want ErrNotFound", id, err)
			}
		}
		// The id and the hash are free again: the key is gone, not hidden.
		if err := s.CreateKey(ctx, store.Key{ID: "k1", Hash: bytes.Repeat([]byte{1}, 32), Role: store.RoleAdmin, CreatedAt: now}); err != nil {
			t.Errorf("re-creating a deleted key: %v", err)
		}
	})

	t.Run("DeleteExperiment", func(t *testing.T) {
		s := fresh(t)
		for _, id := range []string{"e1", "e2", "e3"} {
			mkExp(t, s, id)
		}
		b := &store.Batch{States: map[string]store.State{}}
		for _, e := range []string{"e1", "e2"} {
			for i := int64(1); i <= 3; i++ {
				b.Decisions = append(b.Decisions, store.Decision{Experiment: e, EventID: fmt.Sprint("ev", i), Seq: i, Arm: int(i % 2), CreatedAt: now, Features: []float64{float64(i)}})
				if i < 3 {
					b.Rewards = append(b.Rewards, store.Reward{Experiment: e, EventID: fmt.Sprint("ev", i), Seq: i, Value: 0.5, CreatedAt: now})
				}
			}
			b.States[e] = store.State{Policy: []byte("p-" + e), Engine: []byte("e-" + e), DecisionSeq: 3, RewardSeq: 2, AppliedSeq: 2, Version: 1}
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		keys := []store.Key{
			{ID: "c1", Hash: bytes.Repeat([]byte{1}, 32), Role: store.RoleClient, Experiments: []string{"e1", "e2", "e1"}, CreatedAt: now},
			{ID: "c2", Hash: bytes.Repeat([]byte{2}, 32), Role: store.RoleClient, Experiments: []string{"e1"}, CreatedAt: now.Add(time.Second)},
			{ID: "c3", Hash: bytes.Repeat([]byte{3}, 32), Role: store.RoleClient, Experiments: []string{"e3", "e2"}, CreatedAt: now.Add(2 * time.Second)},
			{ID: "ad", Hash: bytes.Repeat([]byte{4}, 32), Role: store.RoleAdmin, CreatedAt: now.Add(3 * time.Second)},
		}
		for _, k := range keys {
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteExperiment(ctx, "e1"); err != nil {
			t.Fatalf("DeleteExperiment(e1): %v", err)
		}
		if _, err := s.Experiment(ctx, "e1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Experiment(e1) after the delete: err = %v, want ErrNotFound", err)
		}
		if _, err := s.LoadState(ctx, "e1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LoadState(e1) after the delete: err = %v, want ErrNotFound", err)
		}
		for i := 1; i <= 3; i++ {
			if _, err := s.Decision(ctx, "e1", fmt.Sprint("ev", i)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Decision(e1, ev%d) after the delete: err = %v, want ErrNotFound", i, err)
			}
			if _, err := s.Reward(ctx, "e1", fmt.Sprint("ev", i)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Reward(e1, ev%d) after the delete: err = %v, want ErrNotFound", i, err)
			}
		}
		if nd, nr, err := s.Counts(ctx, "e1"); err != nil || nd != 0 || nr != 0 {
			t.Errorf("Counts(e1) after the delete = %d, %d, %v; want 0, 0", nd, nr, err)
		}
		if jr, err := s.RewardsAfter(ctx, "e1", 0); err != nil || len(jr) != 0 {
			t.Errorf("RewardsAfter(e1) after the delete = %+v, %v", jr, err)
		}
		// The other experiments are untouched.
		es, err := s.Experiments(ctx)
		var ids []string
		for _, e := range es {
			ids = append(ids, e.ID)
		}
		if err != nil || fmt.Sprint(ids) != "[e2 e3]" {
			t.Errorf("Experiments after deleting e1 = %v, %v; want [e2 e3]", ids, err)
		}
		if st, err := s.LoadState(ctx, "e2"); err != nil || string(st.Policy) != "p-e2" || st.DecisionSeq != 3 {
			t.Errorf("LoadState(e2) = %+v, %v", st, err)
		}
		if nd, nr, err := s.Counts(ctx, "e2"); err != nil || nd != 3 || nr != 2 {
			t.Errorf("Counts(e2) = %d, %d, %v; want 3, 2", nd, nr, err)
		}
		if d, err := s.Decision(ctx, "e2", "ev2"); err != nil || d.Seq != 2 || fmt.Sprint(d.Features) != "[2]" {
			t.Errorf("Decision(e2, ev2) = %+v, %v", d, err)
		}
		if st, err := s.LoadState(ctx, "e3"); err != nil || string(st.Policy) != "p0" {
			t.Errorf("LoadState(e3) = %+v, %v", st, err)
		}
		// Its id is out of every key's scope; the rest of each scope stays.
		ks, err := s.Keys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		scope := map[string]string{}
		for _, k := range ks {
			scope[k.ID] = fmt.Sprint(k.Experiments)
		}
		if want := map[string]string{"c1": "[e2]", "c2": "[]", "c3": "[e3 e2]", "ad": "[]"}; fmt.Sprint(scope) != fmt.Sprint(want) {
			t.Errorf("key scopes after deleting e1 = %v, want %v", scope, want)
		}
		if err := s.DeleteExperiment(ctx, "e1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteExperiment(e1) again: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteExperiment(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteExperiment(nope): err = %v, want ErrNotFound", err)
		}
		// A new experiment may take the deleted one's id, with fresh logs.
		mkExp(t, s, "e1")
		if nd, nr, err := s.Counts(ctx, "e1"); err != nil || nd != 0 || nr != 0 {
			t.Errorf("Counts of a re-created e1 = %d, %d, %v; want 0, 0", nd, nr, err)
		}
		if err := s.Commit(ctx, &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: "ev1", Seq: 1, CreatedAt: now}}}); err != nil {
			t.Errorf("a decision of the re-created e1 with a deleted event id: %v", err)
		}
		es, _ = s.Experiments(ctx)
		if len(es) != 3 || es[2].ID != "e1" {
			t.Errorf("Experiments after re-creating e1 = %+v; want it last", es)
		}
		// A commit to a deleted experiment writes nothing.
		if err := s.DeleteExperiment(ctx, "e3"); err != nil {
			t.Fatal(err)
		}
		err = s.Commit(ctx, &store.Batch{Decisions: []store.Decision{{Experiment: "e2", EventID: "ev9", Seq: 9, CreatedAt: now}},
			States: map[string]store.State{"e3": {Policy: []byte("late"), Version: 2}}})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("commit naming the deleted e3: err = %v, want ErrNotFound", err)
		}
		if _, err := s.Decision(ctx, "e2", "ev9"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a commit naming a deleted experiment landed in part: %v", err)
		}
	})

	t.Run("Experiments", func(t *testing.T) {
		s := fresh(t)
		if _, err := s.Experiment(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown experiment: %v", err)
		}
		if _, err := s.LoadState(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown state: %v", err)
		}
		for _, id := range []string{"b", "a", "c"} {
			mkExp(t, s, id)
		}
		err := s.CreateExperiment(ctx, store.Experiment{ID: "a", Name: "dup", Config: []byte("{}"), CreatedAt: now}, store.State{})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate experiment: err = %v, want ErrConflict", err)
		}
		es, err := s.Experiments(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range es {
			ids = append(ids, e.ID)
		}
		if fmt.Sprint(ids) != "[b a c]" {
			t.Errorf("Experiments order = %v, want creation order [b a c]", ids)
		}
		e, err := s.Experiment(ctx, "a")
		if err != nil || e.Name != "n-a" || string(e.Config) != `{"k":1}` || !e.CreatedAt.Equal(now) {
			t.Errorf("Experiment(a) = %+v, %v", e, err)
		}
		st, err := s.LoadState(ctx, "a")
		if err != nil || string(st.Policy) != "p0" || string(st.Engine) != "e0" || st.Version != 0 {
			t.Errorf("LoadState(a) = %+v, %v", st, err)
		}
	})

	t.Run("Commit", func(t *testing.T) {
		s := fresh(t)
		mkExp(t, s, "e1")
		mkExp(t, s, "e2")
		if err := s.Commit(ctx, &store.Batch{}); err != nil {
			t.Fatalf("empty commit: %v", err)
		}
		prop, one := 0.123456789012345678, 1.0
		b := &store.Batch{
			Decisions: []store.Decision{
				{Experiment: "e1", EventID: "a", Seq: 1, Arm: 0, CreatedAt: now},
				{Experiment: "e1", EventID: "b", Seq: 2, Arm: 2, Frozen: true, CreatedAt: now.Add(time.Second), Features: []float64{0.5, -1, 1e-300}},
				{Experiment: "e2", EventID: "a", Seq: 1, Arm: 1, CreatedAt: now, Propensity: &prop, PropensityDraws: 4096},
				{Experiment: "e2", EventID: "c", Seq: 2, Arm: 0, CreatedAt: now, Propensity: &one},
			},
			Rewards: []store.Reward{{Experiment: "e1", EventID: "a", Seq: 1, Value: 0.25, CreatedAt: now}},
			States: map[string]store.State{
				"e1": {Policy: []byte("p1"), Engine: []byte("e1"), DecisionSeq: 2, RewardSeq: 1, AppliedSeq: 0, Version: 1},
			},
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		d, err := s.Decision(ctx, "e1", "b")
		if err != nil || d.Seq != 2 || d.Arm != 2 || !d.Frozen || !d.CreatedAt.Equal(now.Add(time.Second)) || fmt.Sprint(d.Features) != "[0.5 -1 1e-300]" {
			t.Errorf("Decision(e1, b) = %+v, %v", d, err)
		}
		if d, _ := s.Decision(ctx, "e1", "b"); d.Propensity != nil {
			t.Errorf("a decision without a propensity read back with %v", *d.Propensity)
		}
		if d, err := s.Decision(ctx, "e2", "a"); err != nil || d.Propensity == nil || *d.Propensity != prop || d.PropensityDraws != 4096 {
			t.Errorf("Decision(e2, a) = %+v, %v: want propensity %v from 4096 draws", d, err, prop)
		}
		if d, err := s.Decision(ctx, "e2", "c"); err != nil || d.Propensity == nil || *d.Propensity != 1 || d.PropensityDraws != 0 {
			t.Errorf("Decision(e2, c) = %+v, %v: want exact propensity 1", d, err)
		}
		if _, err := s.Decision(ctx, "e2", "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Decision(e2, b): err = %v, want ErrNotFound", err)
		}
		r, err := s.Reward(ctx, "e1", "a")
		if err != nil || r.Value != 0.25 || r.Seq != 1 || r.Default {
			t.Errorf("Reward(e1, a) = %+v, %v", r, err)
		}
		if _, err := s.Reward(ctx, "e1", "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Reward(e1, b): err = %v, want ErrNotFound", err)
		}
		st, err := s.LoadState(ctx, "e1")
		if err != nil || string(st.Policy) != "p1" || st.DecisionSeq != 2 || st.RewardSeq != 1 || st.Version != 1 {
			t.Errorf("LoadState(e1) = %+v, %v", st, err)
		}
		if st2, _ := s.LoadState(ctx, "e2"); string(st2.Policy) != "p0" {
			t.Errorf("state of e2 changed without being in the batch: %+v", st2)
		}
		nd, nr, err := s.Counts(ctx, "e1")
		if err != nil || nd != 2 || nr != 1 {
			t.Errorf("Counts(e1) = %d, %d, %v; want 2, 1", nd, nr, err)
		}
		if d, _ := s.Decision(ctx, "e1", "a"); d.Features != nil {
			t.Errorf("a decision without features read back with %v", d.Features)
		}
		jr, err := s.RewardsAfter(ctx, "e1", 0)
		if err != nil || len(jr) != 1 || jr[0].Arm != 0 || jr[0].EventID != "a" || jr[0].Frozen || jr[0].Features != nil {
			t.Errorf("RewardsAfter(e1, 0) = %+v, %v", jr, err)
		}
		if jr, _ := s.RewardsAfter(ctx, "e1", 1); len(jr) != 0 {
			t.Errorf("RewardsAfter(e1, 1) = %+v, want none", jr)
		}
	})

	t.Run("CommitSizes", func(t *testing.T) {
		// Batches of every size class a multi-row INSERT may use (several
		// full statements and a remainder, a remainder alone, one row),
		// repeated so that reused statements are exercised: every row is
		// stored once, and a later read finds the last of each batch.
		s := fresh(t)
		mkExp(t, s, "e1")
		seq := int64(0)
		var want int64
		for _, n := range []int{150, 3, 64, 150, 1, 3, 129} {
			b := &store.Batch{}
			for range n {
				seq++
				b.Decisions = append(b.Decisions, store.Decision{Experiment: "e1", EventID: fmt.Sprint("d", seq), Seq: seq, Arm: int(seq % 3), CreatedAt: now})
				b.Rewards = append(b.Rewards, store.Reward{Experiment: "e1", EventID: fmt.Sprint("d", seq), Seq: seq, Value: float64(seq%2) / 2, CreatedAt: now})
			}
			if err := s.Commit(ctx, b); err != nil {
				t.Fatalf("commit of %d rows: %v", n, err)
			}
			want += int64(n)
			if d, err := s.Decision(ctx, "e1", fmt.Sprint("d", seq)); err != nil || d.Seq != seq || d.Arm != int(seq%3) {
				t.Errorf("after a batch of %d: Decision(d%d) = %+v, %v", n, seq, d, err)
			}
		}
		if d, r, err := s.Counts(ctx, "e1"); err != nil || d != want || r != want {
			t.Errorf("Counts = %d decisions, %d rewards, %v; want %d of each", d, r, err, want)
		}
	})
	t.Run("PurgeRewards", func(t *testing.T) {
		// Values in (after, upTo] of one experiment are deleted; rows,
		// counts and other experiments stay; purging again deletes nothing.
		s := fresh(t)
		mkExp(t, s, "e1")
		mkExp(t, s, "e2")
		b := &store.Batch{}
		for i := int64(1); i <= 5; i++ {
			for _, e := range []string{"e1", "e2"} {
				b.Decisions = append(b.Decisions, store.Decision{Experiment: e, EventID: fmt.Sprint("r", i), Seq: i, CreatedAt: now})
				b.Rewards = append(b.Rewards, store.Reward{Experiment: e, EventID: fmt.Sprint("r", i), Seq: i, Value: float64(i) / 10, CreatedAt: now})
			}
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		if n, err := s.PurgeRewards(ctx, "e1", 1, 3); err != nil || n != 2 {
			t.Fatalf("PurgeRewards(e1, 1, 3) = %d, %v; want 2 values deleted", n, err)
		}
		if n, err := s.PurgeRewards(ctx, "e1", 0, 3); err != nil || n != 1 {
			t.Errorf("PurgeRewards(e1, 0, 3) again = %d, %v; want only r1's value", n, err)
		}
		for i := int64(1); i <= 5; i++ {
			r, err := s.Reward(ctx, "e1", fmt.Sprint("r", i))
			if err != nil || r.Purged != (i <= 3) || (i > 3 && r.Value != float64(i)/10) || (i <= 3 && r.Value != 0) {
				t.Errorf("e1 reward r%d after the purge: %+v, %v", i, r, err)
			}
			if r, _ := s.Reward(ctx, "e2", fmt.Sprint("r", i)); r.Purged || r.Value != float64(i)/10 {
				t.Errorf("e2 reward r%d changed by e1's purge: %+v", i, r)
			}
		}
		if d, r, err := s.Counts(ctx, "e1"); err != nil || d != 5 || r != 5 {
			t.Errorf("Counts(e1) = %d, %d, %v after the purge; want 5, 5", d, r, err)
		}
		if jr, err := s.RewardsAfter(ctx, "e1", 3); err != nil || len(jr) != 2 || jr[0].Purged || jr[0].Value != 0.4 {
			t.Errorf("RewardsAfter(e1, 3) = %+v, %v", jr, err)
		}
		if jr, _ := s.RewardsAfter(ctx, "e1", 2); len(jr) != 3 || !jr[0].Purged {
			t.Errorf("RewardsAfter(e1, 2) should report r3 as purged: %+v", jr)
		}
		if n, err := s.PurgeRewards(ctx, "e1", 3, 3); err != nil || n != 0 {
			t.Errorf("empty range: %d, %v", n, err)
		}
	})
	t.Run("CommitIsAtomic", func(t *testing.T) {
		s := fresh(t)
		mkExp(t, s, "e1")
		ok := &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: "a", Seq: 1, CreatedAt: now}}}
		if err := s.Commit(ctx, ok); err != nil {
			t.Fatal(err)
		}
		bad := []*store.Batch{
			{ // duplicate decision event id, after a good row and with a state
				Decisions: []store.Decision{{Experiment: "e1", EventID: "z", Seq: 2, CreatedAt: now}, {Experiment: "e1", EventID: "a", Seq: 3, CreatedAt: now}},
				States:    map[string]store.State{"e1": {Policy: []byte("bad"), Version: 9}},
			},
			{ // duplicate reward
				Rewards: []store.Reward{{Experiment: "e1", EventID: "a", Seq: 1, Value: 1, CreatedAt: now}, {Experiment: "e1", EventID: "a", Seq: 2, Value: 1, CreatedAt: now}},
			},
		}
		for i, b := range bad {
			if err := s.Commit(ctx, b); !errors.Is(err, store.ErrConflict) {
				t.Errorf("bad batch %d: err = %v, want ErrConflict", i, err)
			}
		}
		unknown := &store.Batch{Decisions: []store.Decision{{Experiment: "nope", EventID: "a", Seq: 1, CreatedAt: now}}}
		if err := s.Commit(ctx, unknown); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown experiment: err = %v, want ErrNotFound", err)
		}
		nd, nr, _ := s.Counts(ctx, "e1")
		if nd != 1 || nr != 0 {
			t.Errorf("after failed commits Counts = %d, %d; want 1, 0 (nothing of a failed batch is written)", nd, nr)
		}
		if st, _ := s.LoadState(ctx, "e1"); string(st.Policy) != "p0" {
			t.Errorf("state written by a failed batch: %+v", st)
		}
	})

	t.Run("Unrewarded", func(t *testing.T) {
		s := fresh(t)
		mkExp(t, s, "e1")
		b := &store.Batch{}
		for i := 1; i <= 10; i++ {
			b.Decisions = append(b.Decisions, store.Decision{Experiment: "e1", EventID: fmt.Sprint("d", i), Seq: int64(i), Arm: i % 3,
				CreatedAt: now.Add(time.Duration(i) * time.Second)})
		}
		b.Rewards = []store.Reward{{Experiment: "e1", EventID: "d2", Seq: 1, Value: 1, CreatedAt: now}, {Experiment: "e1", EventID: "d3", Seq: 2, Value: 0, CreatedAt: now}}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		ds, mark, err := s.Unrewarded(ctx, "e1", 0, now.Add(5*time.Second), 100)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range ds {
			ids = append(ids, d.EventID)
		}
		if fmt.Sprint(ids) != "[d1 d4 d5]" || mark != 5 {
			t.Errorf("Unrewarded(before 5s) = %v, mark %d; want [d1 d4 d5], 5", ids, mark)
		}
		ds, mark, err = s.Unrewarded(ctx, "e1", mark, now.Add(time.Hour), 2)
		if err != nil || len(ds) != 2 || ds[0].EventID != "d6" || ds[1].EventID != "d7" || mark != 7 {
			t.Errorf("Unrewarded(after 5, limit 2) = %+v, mark %d, %v; want d6 d7, mark 7", ds, mark, err)
		}
	})

	t.Run("Log", func(t *testing.T) {
		// Decisions in seq order from the cursor on, each joined with its
		// reward (value, default flag, time; purged without its value);
		// propensities and features as logged; other experiments apart.
		s := fresh(t)
		mkExp(t, s, "e1")
		mkExp(t, s, "e2")
		p := 0.25
		b := &store.Batch{}
		for i := int64(1); i <= 7; i++ {
			d := store.Decision{Experiment: "e1", EventID: fmt.Sprint("d", i), Seq: i, Arm: int(i % 3), Frozen: i == 7,
				CreatedAt: now.Add(time.Duration(i) * time.Millisecond), Features: []float64{float64(i), -0.5}}
			if i%2 == 1 {
				d.Propensity, d.PropensityDraws = &p, int(i)
			}
			b.Decisions = append(b.Decisions, d, store.Decision{Experiment: "e2", EventID: fmt.Sprint("d", i), Seq: i, CreatedAt: now})
		}
		// Rewards for d2 (a value), d3 (the default), d5 (purged below),
		// d6 (value 0); d1, d4 and d7 have none.
		b.Rewards = []store.Reward{
			{Experiment: "e1", EventID: "d2", Seq: 1, Value: 0.75, CreatedAt: now.Add(time.Second)},
			{Experiment: "e1", EventID: "d5", Seq: 2, Value: 0.5, CreatedAt: now.Add(2 * time.Second)},
			{Experiment: "e1", EventID: "d3", Seq: 3, Value: 0.1, Default: true, CreatedAt: now.Add(3 * time.Second)},
			{Experiment: "e1", EventID: "d6", Seq: 4, Value: 0, CreatedAt: now.Add(4 * time.Second)},
			{Experiment: "e2", EventID: "d1", Seq: 1, Value: 1, CreatedAt: now},
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PurgeRewards(ctx, "e1", 1, 2); err != nil {
			t.Fatal(err)
		}
		all, err := s.Log(ctx, "e1", 0, 100)
		if err != nil || len(all) != 7 {
			t.Fatalf("Log(e1, 0, 100) = %d rows, %v; want 7", len(all), err)
		}
		for i, r := range all {
			n := int64(i + 1)
			if r.Seq != n || r.EventID != fmt.Sprint("d", n) || r.Arm != int(n%3) || r.Frozen != (n == 7) ||
				!r.CreatedAt.Equal(now.Add(time.Duration(n)*time.Millisecond)) || fmt.Sprint(r.Features) != fmt.Sprint([]float64{float64(n), -0.5}) {
				t.Errorf("Log row %d = %+v", i, r.Decision)
			}
			if (r.Propensity != nil) != (n%2 == 1) || (r.Propensity != nil && (*r.Propensity != 0.25 || r.PropensityDraws != int(n))) {
				t.Errorf("Log row %d propensity = %v (draws %d); want 0.25 (draws %d) on odd rows only", i, r.Propensity, r.PropensityDraws, n)
			}
		}
		want := map[int64]string{1: "<nil>", 2: "1 0.75 false false", 3: "3 0.1 true false", 4: "<nil>", 5: "2 0 false true", 6: "4 0 false false", 7: "<nil>"}
		for _, r := range all {
			got := "<nil>"
			if r.Reward != nil {
				got = fmt.Sprint(r.Reward.Seq, r.Reward.Value, r.Reward.Default, r.Reward.Purged)
				if r.Reward.EventID != r.EventID || !r.Reward.CreatedAt.Equal(now.Add(time.Duration(r.Reward.Seq)*time.Second)) {
					t.Errorf("row %d: reward %+v", r.Seq, *r.Reward)
				}
			}
			if got != want[r.Seq] {
				t.Errorf("row %d: reward (seq value default purged) = %s, want %s", r.Seq, got, want[r.Seq])
			}
		}
		// The cursor resumes exactly after; limit bounds the page.
		page, err := s.Log(ctx, "e1", 2, 3)
		if err != nil || len(page) != 3 || page[0].Seq != 3 || page[2].Seq != 5 {
			t.Errorf("Log(e1, after 2, limit 3) = %+v, %v; want seqs 3..5", page, err)
		}
		if page, err := s.Log(ctx, "e1", 5, 0); err != nil || len(page) != 1 || page[0].Seq != 6 {
			t.Errorf("Log(e1, after 5, limit 0) = %+v, %v; want seq 6 (a limit below 1 is 1)", page, err)
		}
		if page, err := s.Log(ctx, "e1", 7, 10); err != nil || len(page) != 0 {
			t.Errorf("Log(e1, after the last) = %+v, %v; want none", page, err)
		}
		if page, err := s.Log(ctx, "e2", 0, 10); err != nil || len(page) != 7 || page[0].Reward == nil || page[0].Reward.Value != 1 || page[1].Reward != nil || page[0].Features != nil || page[0].Propensity != nil {
			t.Errorf("Log(e2) = %+v, %v; want its own 7 rows, K-armed, d1 rewarded 1", page, err)
		}
		if page, err := s.Log(ctx, "nope", 0, 10); err != nil || len(page) != 0 {
			t.Errorf("Log(unknown experiment) = %+v, %v; want empty, no error", page, err)
		}
	})

	t.Run("ConcurrentReadsDuringCommits", func(t *testing.T) {
		s := fresh(t)
		mkExp(t, s, "e1")
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, _, err := s.Counts(ctx, "e1"); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for i := 1; i <= 50; i++ {
			b := &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: fmt.Sprint(i), Seq: int64(i), CreatedAt: now}},
				States: map[string]store.State{"e1": {DecisionSeq: int64(i), Version: int64(i)}}}
			if err := s.Commit(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		if nd, _, _ := s.Counts(ctx, "e1"); nd != 50 {
			t.Errorf("Counts = %d, want 50", nd)
		}
	})

	if reopen != nil {
		t.Run("Reopen", func(t *testing.T) {
			s := newStore(t)
			mkExp(t, s, "e1")
			if err := s.SetMeta(ctx, "admin", []byte("h")); err != nil {
				t.Fatal(err)
			}
			mkExp(t, s, "gone")
			for i, id := range []string{"kgone", "kkept"} {
				if err := s.CreateKey(ctx, store.Key{ID: id, Hash: bytes.Repeat([]byte{byte(i + 7)}, 32), Role: store.RoleClient, Experiments: []string{"gone", "e1"}, CreatedAt: now}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.DeleteKey(ctx, "kgone"); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteExperiment(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			b := &store.Batch{Decisions: []store.Decision{{Experiment: "e1", EventID: "a", Seq: 1, CreatedAt: now}},
				Rewards: []store.Reward{{Experiment: "e1", EventID: "a", Seq: 1, Value: 0.5, Default: true, CreatedAt: now}},
				States:  map[string]store.State{"e1": {Policy: []byte("p9"), Engine: []byte("e9"), DecisionSeq: 1, RewardSeq: 1, AppliedSeq: 1, Version: 3}}}
			if err := s.Commit(ctx, b); err != nil {
				t.Fatal(err)
			}
			s = reopen(t, s)
			defer s.Close()
			st, err := s.LoadState(ctx, "e1")
			if err != nil || string(st.Policy) != "p9" || string(st.Engine) != "e9" || st.AppliedSeq != 1 || st.Version != 3 {
				t.Errorf("after reopen LoadState = %+v, %v", st, err)
			}
			if r, err := s.Reward(ctx, "e1", "a"); err != nil || !r.Default || r.Value != 0.5 {
				t.Errorf("after reopen Reward = %+v, %v", r, err)
			}
			if v, err := s.Meta(ctx, "admin"); err != nil || string(v) != "h" {
				t.Errorf("after reopen Meta = %q, %v", v, err)
			}
			if _, err := s.Experiment(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("after reopen a deleted experiment: %v; want ErrNotFound", err)
			}
			if ks, err := s.Keys(ctx); err != nil || len(ks) != 1 || ks[0].ID != "kkept" || fmt.Sprint(ks[0].Experiments) != "[e1]" {
				t.Errorf("after reopen Keys = %+v, %v; want kkept with scope [e1]", ks, err)
			}
		})
	}
}
