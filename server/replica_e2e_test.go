package server_test

import (
	"database/sql"
	"encoding/json"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/dpbandit/dpbandit/store/storetest"
)

// Replica mode with real `dpbandit serve --replica` processes on one
// PostgreSQL schema (docs/replicas.md). Skipped without a server unless
// CI=true, like every PostgreSQL test.

// replicaState is what the tests read from the database directly.
type replicaState struct {
	Pulls      []int64
	Sum        []float64
	AppliedSeq int64
}

// dbOpen opens the schema for the test's own queries.
func dbOpen(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// learnedState reads the committed policy state (ts-gaussian's snapshot:
// {"state": {"sum": [...], "pulls": [...]}}) and the consumed offset.
func learnedState(t testing.TB, db *sql.DB, id string) replicaState {
	t.Helper()
	var raw []byte
	var s replicaState
	if err := db.QueryRow("SELECT policy, applied_seq FROM states WHERE experiment = $1", id).Scan(&raw, &s.AppliedSeq); err != nil {
		t.Fatal(err)
	}
	var snap struct {
		State struct {
			Sum   []float64 `json:"sum"`
			Pulls []int64   `json:"pulls"`
		} `json:"state"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatalf("policy state %s: %v", raw, err)
	}
	s.Pulls, s.Sum = snap.State.Pulls, snap.State.Sum
	if s.Pulls == nil {
		t.Fatalf("policy state without pulls: %s", raw)
	}
	return s
}

// expectedFromRewards is the oracle of the learned state: per arm, the
// number and sum of the stored rewards of decisions made by the policy.
func expectedFromRewards(t testing.TB, db *sql.DB, id string, k int) (pulls []int64, sums []float64, n int64) {
	t.Helper()
	pulls, sums = make([]int64, k), make([]float64, k)
	rows, err := db.Query(`SELECT d.arm, r.value, d.frozen FROM rewards r JOIN decisions d ON d.experiment = r.experiment AND d.event_id = r.event_id
		WHERE r.experiment = $1 ORDER BY r.seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var arm, frozen int
		var v float64
		if err := rows.Scan(&arm, &v, &frozen); err != nil {
			t.Fatal(err)
		}
		n++
		if frozen == 0 {
			pulls[arm]++
			sums[arm] += v
		}
	}
	return pulls, sums, n
}

// waitLearned waits until the learner consumed every stored reward.
func waitLearned(t testing.TB, db *sql.DB, id string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var applied, stored int64
		if err := db.QueryRow("SELECT s.applied_seq, c.reward_seq FROM states s JOIN replica_counters c ON c.experiment = s.experiment WHERE s.experiment = $1", id).Scan(&applied, &stored); err != nil {
			t.Fatal(err)
		}
		if applied == stored {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the learner consumed %d of %d rewards after %v", applied, stored, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkLearnedExactlyOnce(t testing.TB, db *sql.DB, id string, k int) replicaState {
	t.Helper()
	st := learnedState(t, db, id)
	pulls, sums, n := expectedFromRewards(t, db, id, k)
	if st.AppliedSeq != n {
		t.Errorf("consumed offset %d; %d rewards are stored", st.AppliedSeq, n)
	}
	for a := 0; a < k; a++ {
		if st.Pulls[a] != pulls[a] || math.Abs(st.Sum[a]-sums[a]) > 1e-9 {
			t.Errorf("arm %d: learned %d rewards summing to %v; the stored rewards of policy decisions are %d summing to %v (each applied exactly once)",
				a, st.Pulls[a], st.Sum[a], pulls[a], sums[a])
		}
	}
	return st
}

// TestReplicaE2E: a decision on one replica, its reward on another, learned
// once by the learner; the policies replica mode cannot serve are refused at
// creation with the reason; one-server mode is refused beside replicas.
func TestReplicaE2E(t *testing.T) {
	dsn := storetest.PostgresSchema(t)
	a := startReplica(t, dsn, "--replica", "--lease", "1s")
	b := startReplica(t, dsn, "--replica", "--lease", "1s")
	for _, bad := range []struct{ policy, want string }{
		{"dp-ts-ucb", "cannot be served by replicas"},
		{"auto", "not available in replica mode"},
		{"lazy-dp-ts", "cannot be served by replicas"},
	} {
		code, m := call(t, "POST", a.url+"/v1/experiments", adminKey, map[string]any{"name": "x", "arms": []string{"a", "b"}, "policy": bad.policy,
			"horizon": 1000, "budget": map[string]any{"epsilon": 1, "delta": 1e-6}})
		c, msg := errMsg(t, m)
		if code != 400 || c != "not_replicable" || !strings.Contains(msg, bad.want) || !strings.Contains(msg, "ts-gaussian") {
			t.Errorf("creating %s in replica mode: %d %s %q; want 400 not_replicable saying %q and naming ts-gaussian", bad.policy, code, c, msg, bad.want)
		}
	}
	code, m := call(t, "POST", a.url+"/v1/experiments", adminKey, map[string]any{"name": "x", "arms": []string{"a", "b"}, "policy": "ts-gaussian",
		"horizon": 100000, "budget": map[string]any{"mu": 5, "delta": 1e-6}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, m)
	}
	id := str(m, "id")
	db := dbOpen(t, dsn)
	for i := 0; i < 30; i++ {
		code, d := call(t, "POST", a.url+"/v1/experiments/"+id+"/decisions", adminKey, map[string]any{})
		if code != 200 {
			t.Fatalf("decide on a: %d %v", code, d)
		}
		v := float64(i%4) / 4
		code, rw := call(t, "POST", b.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"event_id": str(d, "event_id"), "reward": v})
		if code != 202 || str(rw, "status") != "accepted" {
			t.Fatalf("reward on b for a's decision: %d %v", code, rw)
		}
		code, rw = call(t, "POST", a.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"event_id": str(d, "event_id"), "reward": v})
		if code != 202 || str(rw, "status") != "duplicate" {
			t.Fatalf("the same reward again on a: %d %v; want 202 duplicate", code, rw)
		}
		code, rw = call(t, "POST", a.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"event_id": str(d, "event_id"), "reward": v + 0.125})
		if code != 409 {
			t.Fatalf("a different reward for the same event: %d %v; want 409", code, rw)
		}
	}
	if code, m := call(t, "POST", b.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"event_id": "ev_nope", "reward": 1}); code != 404 {
		t.Errorf("reward for an unknown event: %d %v; want 404", code, m)
	}
	waitLearned(t, db, id, 10*time.Second)
	st := checkLearnedExactlyOnce(t, db, id, 2)
	if st.AppliedSeq != 30 {
		t.Errorf("consumed %d rewards; want 30", st.AppliedSeq)
	}
	// A client event id is idempotent across replicas.
	_, d1 := call(t, "POST", a.url+"/v1/experiments/"+id+"/decisions", adminKey, map[string]any{"event_id": "client-1"})
	_, d2 := call(t, "POST", b.url+"/v1/experiments/"+id+"/decisions", adminKey, map[string]any{"event_id": "client-1"})
	if str(d1, "arm") == "" || str(d1, "arm") != str(d2, "arm") {
		t.Errorf("the same client event id on two replicas: %v and %v; want the same decision", d1, d2)
	}
	code, v := call(t, "GET", b.url+"/v1/experiments/"+id, adminKey, nil)
	if code != 200 || num(v, "budget_row", "spent") <= 0 || num(v, "budget_row", "spent") > 5 || str(v["learner"].(map[string]any), "holder") == "" {
		t.Errorf("status: %d %v; want spent in (0, 5] and a learner\n%s", code, v, b.errs.String())
	}
	// Unserved routes say so.
	if code, m := call(t, "GET", a.url+"/v1/keys", adminKey, nil); code != 501 {
		t.Errorf("GET /v1/keys in replica mode: %d %v; want 501", code, m)
	}
}

// TestReplicaPausedLearner: the learner process is paused (SIGSTOP) past
// its lease while rewards keep arriving through the other replica; the
// lease moves to it, it learns them, and when the paused process resumes
// (SIGCONT) it finds its lease lost and none of its writes lands: every
// stored reward is applied exactly once.
func TestReplicaPausedLearner(t *testing.T) {
	dsn := storetest.PostgresSchema(t)
	args := []string{"--replica", "--lease", "1s", "--log-level", "warn"}
	ps := []*proc{startReplica(t, dsn, args...), startReplica(t, dsn, args...)}
	code, m := call(t, "POST", ps[0].url+"/v1/experiments", adminKey, map[string]any{"name": "x", "arms": []string{"a", "b"}, "policy": "gaussian-ts",
		"horizon": 100000, "budget": map[string]any{"mu": 50, "delta": 1e-6}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, m)
	}
	id := str(m, "id")
	db := dbOpen(t, dsn)
	play := func(p *proc, n int) {
		for i := 0; i < n; i++ {
			code, d := call(t, "POST", p.url+"/v1/experiments/"+id+"/decisions", adminKey, map[string]any{})
			if code != 200 {
				t.Fatalf("decide: %d %v", code, d)
			}
			if code, rw := call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"event_id": str(d, "event_id"), "reward": float64(i % 2)}); code != 202 {
				t.Fatalf("reward: %d %v", code, rw)
			}
		}
	}
	play(ps[1], 20)
	waitLearned(t, db, id, 10*time.Second)
	var holder string
	var token int64
	if err := db.QueryRow("SELECT holder, token FROM replica_leases WHERE experiment = $1", id).Scan(&holder, &token); err != nil {
		t.Fatal(err)
	}
	li := 0
	if pidOf(holder) == ps[1].cmd.Process.Pid {
		li = 1
	}
	learner, other := ps[li], ps[1-li]
	if pidOf(holder) != learner.cmd.Process.Pid {
		t.Fatalf("lease holder %q is neither replica", holder)
	}
	if err := learner.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	play(other, 20)
	for {
		var h string
		var tok int64
		db.QueryRow("SELECT holder, token FROM replica_leases WHERE experiment = $1", id).Scan(&h, &tok)
		if pidOf(h) == other.cmd.Process.Pid && tok == token+1 {
			t.Logf("the lease moved to the other replica (token %d) %v after the pause", tok, time.Since(paused).Round(time.Millisecond))
			break
		}
		if time.Since(paused) > 5*time.Second {
			learner.cmd.Process.Signal(syscall.SIGCONT)
			t.Fatalf("the lease did not move within 5 s of pausing the learner (holder %q, token %d)", h, tok)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitLearned(t, db, id, 10*time.Second)
	learner.cmd.Process.Signal(syscall.SIGCONT)
	play(learner, 10) // the resumed process serves on, as a replica
	time.Sleep(600 * time.Millisecond)
	waitLearned(t, db, id, 10*time.Second)
	st := checkLearnedExactlyOnce(t, db, id, 2)
	if st.AppliedSeq != 50 {
		t.Errorf("consumed %d rewards; want 50", st.AppliedSeq)
	}
	var h string
	db.QueryRow("SELECT holder FROM replica_leases WHERE experiment = $1", id).Scan(&h)
	if pidOf(h) != other.cmd.Process.Pid {
		t.Errorf("the resumed learner holds the lease again (%q): it must have found it lost", h)
	}
	if log := learner.errs.String(); !strings.Contains(log, "lost the learner lease") && !strings.Contains(log, "learner lease was lost") {
		t.Errorf("the resumed learner did not report the lost lease:\n%s", log)
	}
}

// startReplica starts `dpbandit serve` with args and fails the test if the
// process (built with -race under the race detector) reported a data race.
func startReplica(t *testing.T, dsn string, args ...string) *proc {
	t.Helper()
	p := start(t, dsn, args...)
	t.Cleanup(func() {
		if log := p.errs.String(); strings.Contains(log, "DATA RACE") {
			t.Errorf("replica pid %d reported a data race:\n%s", p.cmd.Process.Pid, log)
		}
	})
	return p
}
