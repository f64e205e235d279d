package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/storetest"
)

// Benchmarks over loopback with an in-process load generator, and a bare
// net/http handler measured the same way in the same run:
//
//	go test ./server -run '^$' -bench . -benchtime 5s
//
// Each reports req/s (throughput at the generator's concurrency), p50 and
// p99 latency in ms. Results and the machine are in BENCHMARKS.txt.

const benchConc = 32

type loadGen struct {
	url    string
	client *http.Client
}

func newLoadGen(url string) *loadGen {
	tr := &http.Transport{MaxIdleConns: 2 * benchConc, MaxIdleConnsPerHost: 2 * benchConc, MaxConnsPerHost: 2 * benchConc, DisableCompression: true}
	return &loadGen{url: url, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

func (g *loadGen) post(path string, body []byte) (int, []byte, error) {
	req, _ := http.NewRequest("POST", g.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer bench-admin-key-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b, err
}

// run performs n operations with benchConc workers; op(i) does the i-th.
// It reports throughput and latency percentiles.
func run(b *testing.B, n int, unit string, op func(i int) error) {
	var next atomic.Int64
	lat := make([][]time.Duration, benchConc)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	b.ResetTimer()
	t0 := time.Now()
	for w := 0; w < benchConc; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				s := time.Now()
				if err := op(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat[w] = append(lat[w], time.Since(s))
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	b.StopTimer()
	if e := firstErr.Load(); e != nil {
		b.Fatal(e)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	b.ReportMetric(float64(n)/el.Seconds(), unit+"/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

type benchEnv struct {
	g   *loadGen
	exp string
	srv *Server
}

func newBenchServer(b *testing.B, opts Options) *benchEnv {
	b.Helper()
	st, err := openSQLite(filepath.Join(b.TempDir(), "db.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	return newBenchServerOn(b, opts, st)
}

// newBenchServerOn is newBenchServer on a given store.
func newBenchServerOn(b *testing.B, opts Options, st store.Store) *benchEnv {
	b.Helper()
	opts.Store, opts.AdminKey = st, "bench-admin-key-0123456789"
	s, _, err := New(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := s.HTTPServer(ln.Addr().String())
	go hs.Serve(ln)
	b.Cleanup(func() {
		hs.Shutdown(context.Background())
		s.Close()
		st.Close()
	})
	g := newLoadGen("http://" + ln.Addr().String())
	code, body, err := g.post("/v1/experiments", []byte(`{"name":"bench","arms":["a","b","c","d","e"],"policy":"mts-gaussian","horizon":100000000,"budget":{"mu":3,"delta":1e-6}}`))
	if err != nil || code != 201 {
		b.Fatalf("create: %d %s %v", code, body, err)
	}
	var m map[string]any
	json.Unmarshal(body, &m)
	return &benchEnv{g: g, exp: m["id"].(string), srv: s}
}

// BenchmarkBare is a bare net/http handler over the same loopback, with the
// same load generator and server timeouts: the ceiling for this machine.
func BenchmarkBare(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.Write([]byte(`{"event_id":"ev_0123456789abcdefghijklmnop","arm":"a"}` + "\n"))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	go hs.Serve(ln)
	defer hs.Shutdown(context.Background())
	g := newLoadGen("http://" + ln.Addr().String())
	run(b, b.N, "req", func(int) error {
		code, body, err := g.post("/v1/experiments/x/decisions", nil)
		if err == nil && code != 200 {
			err = fmt.Errorf("%d %s", code, body)
		}
		return err
	})
}

func benchDecide(b *testing.B, opts Options) {
	benchDecideOn(b, newBenchServer(b, opts))
}

func benchDecideOn(b *testing.B, e *benchEnv) {
	path := "/v1/experiments/" + e.exp + "/decisions"
	run(b, b.N, "decisions", func(int) error {
		code, body, err := e.g.post(path, nil)
		if err == nil && code != 200 {
			err = fmt.Errorf("decide: %d %s", code, body)
		}
		return err
	})
}

// BenchmarkDecide: single decisions (no body, generated event ids).
func BenchmarkDecide(b *testing.B) { benchDecide(b, Options{}) }

// BenchmarkDecideSpecValidated validates the decide body with kin-openapi
// too (Options.ValidateAll): why the hot path is validated by hand.
func BenchmarkDecideSpecValidated(b *testing.B) { benchDecide(b, Options{ValidateAll: true}) }

// BenchmarkReward: durable rewards (each 202 is after an fsynced group
// commit) for decisions made before the timer starts.
func BenchmarkReward(b *testing.B) { benchReward(b, newBenchServer(b, Options{})) }

// BenchmarkRewardPostgres is BenchmarkReward on the PostgreSQL store (each
// 202 after a commit with synchronous_commit=on).
func BenchmarkRewardPostgres(b *testing.B) {
	benchReward(b, newBenchServerOn(b, Options{}, benchPostgres(b)))
}

// BenchmarkDecidePostgres is BenchmarkDecide on the PostgreSQL store.
func BenchmarkDecidePostgres(b *testing.B) {
	benchDecideOn(b, newBenchServerOn(b, Options{}, benchPostgres(b)))
}

func benchPostgres(b *testing.B) store.Store {
	st, err := postgres.Open(context.Background(), storetest.PostgresSchema(b))
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func benchReward(b *testing.B, e *benchEnv) {
	b.StopTimer()
	ids := make([]string, 0, b.N)
	for len(ids) < b.N {
		n := min(1000, b.N-len(ids))
		code, body, err := e.g.post("/v1/experiments/"+e.exp+"/decisions", fmt.Appendf(nil, `{"count":%d}`, n))
		if err != nil || code != 200 {
			b.Fatalf("decide batch: %d %s %v", code, body, err)
		}
		var m struct{ Decisions []decision }
		json.Unmarshal(body, &m)
		for _, d := range m.Decisions {
			ids = append(ids, d.EventID)
		}
	}
	path := "/v1/experiments/" + e.exp + "/rewards"
	b.StartTimer()
	run(b, b.N, "rewards", func(i int) error {
		code, body, err := e.g.post(path, fmt.Appendf(nil, `{"event_id":%q,"reward":%d}`, ids[i], i%2))
		if err == nil && code != 202 {
			err = fmt.Errorf("reward: %d %s", code, body)
		}
		return err
	})
}

// BenchmarkDecideReward: one decision and its durable reward per operation.
func BenchmarkDecideReward(b *testing.B) {
	e := newBenchServer(b, Options{})
	dp, rp := "/v1/experiments/"+e.exp+"/decisions", "/v1/experiments/"+e.exp+"/rewards"
	run(b, b.N, "pairs", func(i int) error {
		code, body, err := e.g.post(dp, nil)
		if err != nil || code != 200 {
			return fmt.Errorf("decide: %d %s %v", code, body, err)
		}
		var d decision
		json.Unmarshal(body, &d)
		code, body, err = e.g.post(rp, fmt.Appendf(nil, `{"event_id":%q,"reward":%d}`, d.EventID, i%2))
		if err == nil && code != 202 {
			err = fmt.Errorf("reward: %d %s", code, body)
		}
		return err
	})
}

// BenchmarkDecideHandler is the decision handler alone (no network): auth,
// decoding, filter charge, Select, logging to memory, JSON answer.
func BenchmarkDecideHandler(b *testing.B) {
	e := newBenchServer(b, Options{})
	st, _ := openSQLite(filepath.Join(b.TempDir(), "db.sqlite"))
	defer st.Close()
	s, _, err := New(context.Background(), Options{Store: st, AdminKey: "bench-admin-key-0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	_ = e
	cfg, raw := mustConfig(b, createRequest{Name: "h", Arms: []string{"a", "b", "c", "d", "e"}, Policy: "mts-gaussian", Horizon: 100000000, Budget: &Budget{Mu: 3, Delta: 1e-6}})
	x, err := s.eng.create(context.Background(), cfg, raw)
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	path := "/v1/experiments/" + x.cfg.ID + "/decisions"
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest("POST", path, nil)
			r.Header.Set("Authorization", "Bearer bench-admin-key-0123456789")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkDecideAtRate measures decide latency at the throughput target
// (issue 5: ≥ 10,000 decisions/s with p99 < 10 ms) with an open-loop
// generator: request i is due at t0 + i/rate and its latency is measured
// from that due time, not from when a worker got to it, so a stall counts
// for every request it delays (no coordinated omission; wrk2's method).
// BenchmarkDecide instead drives the server to saturation with 32
// closed-loop clients, where p99 mostly measures the queue they build.
// b.N is ignored: each run sends rate × 5 s requests.
func BenchmarkDecideAtRate(b *testing.B) {
	const rate, dur = 10000, 5 * time.Second
	e := newBenchServer(b, Options{})
	path := "/v1/experiments/" + e.exp + "/decisions"
	n := int(rate * dur.Seconds())
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for range 2 * benchConc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				due := t0.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				code, body, err := e.g.post(path, nil)
				if err == nil && code != 200 {
					err = fmt.Errorf("decide: %d %s", code, body)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat[i] = time.Since(due)
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	b.StopTimer()
	if e := firstErr.Load(); e != nil {
		b.Fatal(e)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(n-1))]) / 1e6 }
	b.ReportMetric(float64(n)/el.Seconds(), "decisions/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(0.999), "p999-ms")
	b.ReportMetric(0, "ns/op")
}
