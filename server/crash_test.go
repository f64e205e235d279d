package server_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/sqlite"
	"github.com/dpbandit/dpbandit/store/storetest"
)

// TestCrash runs the real binary under concurrent decide+reward load, kills
// it with SIGKILL at a random moment, restarts it and checks that
//
//   - every acknowledged (202) reward is stored with its value, counted once
//     by the service and learned once by the policy;
//   - the decision count equals the logged decisions;
//   - the privacy spent never decreases (across the kill and restarts);
//   - a decision the client received either was logged (its reward is
//     accepted) or is unknown (404), never anything else.
//
// It runs 3 kill points by default; DPBANDIT_CRASH_POINTS=N runs N (the long
// CI step uses 20).
func TestCrash(t *testing.T) { testCrash(t, filepath.Join(t.TempDir(), "db.sqlite")) }

// TestCrashPostgres is TestCrash with `--db postgres://...`: the restarted
// server waits for PostgreSQL to free the killed one's lock.
func TestCrashPostgres(t *testing.T) { testCrash(t, storetest.PostgresSchema(t)) }

func testCrash(t *testing.T, db string) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	points := 3
	if v := os.Getenv("DPBANDIT_CRASH_POINTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("DPBANDIT_CRASH_POINTS=%q: give a positive integer", v)
		}
		points = n
	}
	p := start(t, db)
	arms := []string{"a", "b", "c", "d"}
	ids := []string{
		create(t, p, map[string]any{"name": "crash-mts", "arms": arms, "policy": "mts-gaussian", "horizon": 1000000, "budget": map[string]any{"mu": 3, "delta": 1e-6}}),
		create(t, p, map[string]any{"name": "crash-ts", "arms": arms, "policy": "ts-gaussian", "horizon": 1000000, "budget": map[string]any{"mu": 40, "delta": 1e-6}}),
		// dp-ts-ucb runs with durable decisions: none is ever lost.
		create(t, p, map[string]any{"name": "crash-dptsucb", "arms": arms, "policy": "dp-ts-ucb", "horizon": 100000, "budget": map[string]any{"mu": 8, "delta": 1e-6}}),
	}
	durable := ids[2]
	acked := map[string]map[string]float64{} // experiment → event → value
	for _, id := range ids {
		acked[id] = map[string]float64{}
	}
	lastSpent := map[string]float64{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for k := 0; k < points; k++ {
		var mu sync.Mutex
		received := map[string][]string{} // experiment → events decided (unrewarded by design for 1 in 5)
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), uint64(k)))
				for i := 0; !stop.Load(); i++ {
					id := ids[r.IntN(len(ids))]
					code, d, err := try("POST", p.url+"/v1/experiments/"+id+"/decisions", map[string]any{})
					if err != nil || code != 200 {
						if err == nil && !stop.Load() {
							t.Errorf("decide: %d %v", code, d)
						}
						return
					}
					ev := str(d, "event_id")
					if i%5 == 0 {
						mu.Lock()
						received[id] = append(received[id], ev)
						mu.Unlock()
						continue
					}
					v := float64(r.IntN(2))
					code, m, err := try("POST", p.url+"/v1/experiments/"+id+"/rewards", map[string]any{"event_id": ev, "reward": v})
					if err != nil {
						return
					}
					if code == 202 {
						mu.Lock()
						acked[id][ev] = v
						mu.Unlock()
					} else if !stop.Load() {
						t.Errorf("reward: %d %v", code, m)
						return
					}
				}
			})
		}
		// Watch the spent while the load runs.
		wg.Go(func() {
			for !stop.Load() {
				for _, id := range ids {
					code, g, err := try("GET", p.url+"/v1/experiments/"+id, nil)
					if err != nil || code != 200 {
						return
					}
					s := spentOf(g)
					mu.Lock()
					if s < lastSpent[id] {
						t.Errorf("kill point %d: spent of %s decreased from %v to %v while running", k, id, lastSpent[id], s)
					}
					lastSpent[id] = max(lastSpent[id], s)
					mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		time.Sleep(time.Duration(150+rng.IntN(1200)) * time.Millisecond)
		p.kill()
		stop.Store(true)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		p = start(t, db)
		total, lostAll := 0, 0
		for _, id := range ids {
			total += len(acked[id])
			lost := checkAfterCrash(t, k, p, db, id, acked[id], lastSpent[id], received[id])
			if id == durable && lost > 0 {
				t.Errorf("kill point %d: %d decisions of the durable-decision experiment were lost", k, lost)
			}
			lostAll += lost
			_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
			lastSpent[id] = spentOf(g)
		}
		t.Logf("kill point %d: %d acknowledged rewards so far; %d decisions served from memory were lost (their rewards get 404)", k, total, lostAll)
		if t.Failed() {
			t.FailNow()
		}
	}
	p.stop()
}

func checkAfterCrash(t *testing.T, k int, p *proc, db, id string, acked map[string]float64, spentBefore float64, received []string) (lost int) {
	t.Helper()
	_, g := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	s, err := openReader(db)
	if err != nil {
		t.Fatal(err)
	}
	nd, nr, err := s.Counts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for ev, v := range acked {
		r, err := s.Reward(context.Background(), id, ev)
		if err != nil || r.Value != v {
			t.Errorf("kill point %d: acknowledged reward %s=%v: stored %+v, %v", k, ev, v, r, err)
		}
	}
	for _, ev := range received {
		if _, err := s.Decision(context.Background(), id, ev); errors.Is(err, store.ErrNotFound) {
			lost++
		}
	}
	s.Close()
	if int64(num(g, "decisions")) != nd {
		t.Errorf("kill point %d: %s: decisions %v, logged %d", k, id, g["decisions"], nd)
	}
	if int64(num(g, "rewards")) != nr || nr < int64(len(acked)) {
		t.Errorf("kill point %d: %s: rewards %v, stored %d, acknowledged %d", k, id, g["rewards"], nr, len(acked))
	}
	in := g["internal"].(map[string]any)
	st := in["policy_state"].(map[string]any)["state"].(map[string]any)
	pulls := 0.0
	if ps, ok := st["pulls"].([]any); ok {
		for _, x := range ps {
			pulls += x.(float64)
		}
	} else {
		for _, a := range st["arms"].([]any) {
			pulls += a.(map[string]any)["pulled"].(float64)
		}
	}
	if int64(pulls) != nr || int64(num(in, "rewards")) != nr {
		t.Errorf("kill point %d: %s: the policy learned %v rewards (internal count %v), %d are stored: each must be learned exactly once", k, id, pulls, in["rewards"], nr)
	}
	if sp := spentOf(g); sp < spentBefore {
		t.Errorf("kill point %d: %s: spent %v after the restart < %v observed before the kill", k, id, sp, spentBefore)
	}
	// Rewards for received decisions: accepted if logged, 404 if lost.
	notFound := 0
	for i, ev := range received {
		if i >= 40 {
			break
		}
		code, m := rewardOne(t, p, adminKey, id, ev, 1)
		switch code {
		case 202:
		case 404:
			notFound++
		default:
			t.Errorf("kill point %d: reward for received decision %s: %d %v", k, ev, code, m)
		}
	}
	if notFound > lost {
		t.Errorf("kill point %d: %d rewards got 404 but only %d decisions were lost", k, notFound, lost)
	}
	// Acknowledged rewards again: duplicates, nothing changes.
	n := 0
	for ev, v := range acked {
		if n++; n > 30 {
			break
		}
		if code, m := rewardOne(t, p, adminKey, id, ev, v); code != 202 || str(m, "status") != "duplicate" {
			t.Errorf("kill point %d: acknowledged reward %s again: %d %v", k, ev, code, m)
		}
	}
	_, g2 := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
	if num(g2, "rewards") != num(g, "rewards")+float64(len(received[:min(40, len(received))]))-float64(notFound) {
		t.Errorf("kill point %d: rewards %v after re-posting, want %v", k, g2["rewards"], num(g, "rewards")+float64(min(40, len(received))-notFound))
	}
	return lost
}

// try is call without failing the test on a transport error.
func try(method, url string, body any) (code int, m map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	ft := &fatalTB{}
	code, m = call(ft, method, url, adminKey, body)
	return code, m, nil
}

// fatalTB turns t.Fatalf into a panic that try recovers.
type fatalTB struct{ testing.TB }

func (*fatalTB) Helper()                   {}
func (*fatalTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (*fatalTB) Fatal(a ...any)            { panic(fmt.Sprint(a...)) }

// openReader opens the store of a running server for the checks: the
// SQLite file (WAL: readers beside the writer), or a PostgreSQL reader.
func openReader(db string) (store.Store, error) {
	if strings.HasPrefix(db, "postgres://") {
		return postgres.OpenReader(context.Background(), db)
	}
	return sqlite.OpenReader(context.Background(), db)
}
