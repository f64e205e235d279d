package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store/storetest"
)

// TestReplicaThroughput measures decisions (and decide+reward pairs) per
// second through 1 and 3 replicas, and through one server in one-server
// mode on the same PostgreSQL, with the same closed-loop generator
// (DPBANDIT_REPLICA_BENCH_WORKERS workers, default 32, each with one request
// in flight, spread round-robin over the replicas), for
// DPBANDIT_REPLICA_BENCH_SECONDS (default 5) per mode. It also reports the
// reservations per decision and their mean transaction time. Run it with
// DPBANDIT_REPLICA_BENCH=1 (BENCHMARKS.md); it is skipped otherwise.
func TestReplicaThroughput(t *testing.T) {
	if os.Getenv("DPBANDIT_REPLICA_BENCH") != "1" {
		t.Skip("set DPBANDIT_REPLICA_BENCH=1 to measure replica throughput")
	}
	workers, secs := 32, 5
	if v, err := strconv.Atoi(os.Getenv("DPBANDIT_REPLICA_BENCH_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	if v, err := strconv.Atoi(os.Getenv("DPBANDIT_REPLICA_BENCH_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	post := func(url string, body any) (int, map[string]any) {
		j, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", url, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+adminKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		json.Unmarshal(raw, &m)
		return resp.StatusCode, m
	}
	run := func(name string, n int, extra []string, durable bool) {
		dsn := storetest.PostgresSchema(t)
		ps := make([]*proc, n)
		for i := range ps {
			ps[i] = start(t, dsn, append([]string{"--log-level", "warn"}, extra...)...)
		}
		spec := map[string]any{"name": "bench", "arms": []string{"a", "b", "c", "d"}, "policy": "ts-gaussian", "horizon": 1 << 30,
			"budget": map[string]any{"mu": 100, "delta": 1e-6}}
		if durable {
			spec["durable_decisions"] = true
		}
		code, m := call(t, "POST", ps[0].url+"/v1/experiments", adminKey, spec)
		if code != 201 {
			t.Fatalf("create: %d %v", code, m)
		}
		id := str(m, "id")
		for _, mode := range []string{"decide", "decide+reward"} {
			var dec, rew, errs atomic.Int64
			var stop atomic.Bool
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := w; !stop.Load(); k++ {
						p := ps[k%n]
						code, d := post(p.url+"/v1/experiments/"+id+"/decisions", map[string]any{})
						if code != 200 {
							errs.Add(1)
							continue
						}
						dec.Add(1)
						if mode == "decide" {
							continue
						}
						q := ps[(k+1)%n] // the reward goes to the next replica
						if code, _ := post(q.url+"/v1/experiments/"+id+"/rewards", map[string]any{"event_id": str(d, "event_id"), "reward": float64(k % 2)}); code == 202 {
							rew.Add(1)
						} else {
							errs.Add(1)
						}
					}
				}()
			}
			time.Sleep(time.Duration(secs) * time.Second)
			stop.Store(true)
			wg.Wait()
			line := fmt.Sprintf("%-34s %-14s %8.0f decisions/s %8.0f rewards/s  errors %d", name, mode, float64(dec.Load())/float64(secs), float64(rew.Load())/float64(secs), errs.Load())
			if n > 0 && len(extra) > 0 && extra[0] == "--replica" {
				var resv, decs float64
				var meanMS []string
				for _, p := range ps {
					_, v := call(t, "GET", p.url+"/v1/experiments/"+id, adminKey, nil)
					resv += num(v, "replica", "reservations")
					decs += num(v, "replica", "decisions")
					meanMS = append(meanMS, fmt.Sprintf("%.2f", num(v, "replica", "reserve_mean_ms")))
				}
				line += fmt.Sprintf("  | cumulative: %.0f reservations for %.0f decisions (1 per %.0f), mean reservation %v ms", resv, decs, decs/max(resv, 1), meanMS)
			}
			t.Log(line)
			fmt.Println(line)
		}
		for _, p := range ps {
			p.kill()
		}
	}
	run("one-server (PostgreSQL)", 1, nil, false)
	run("one-server, durable_decisions", 1, nil, true)
	run("1 replica", 1, []string{"--replica"}, false)
	run("3 replicas", 3, []string{"--replica"}, false)
}
