package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Scrapes with many experiments (issue 10: with 2000 experiments, 8
// scrapers used to cut decision throughput by about 94%).
//
//	go test ./server -run '^$' -bench 'Scrape' -benchtime 3s

const scrapeExps = 2000

// scrapeServer is a server with n private experiments (one calibration,
// copied under n ids) behind the load generator.
func scrapeServer(b *testing.B, n int) (*benchEnv, *Server) {
	b.Helper()
	st, err := openSQLite(filepath.Join(b.TempDir(), "db.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	e := newBenchServerOn(b, Options{}, st)
	srv := e.srv
	base, _ := mustConfig(b, createRequest{Name: "s", Arms: []string{"a", "b", "c"}, Policy: "mts-gaussian", Horizon: 1 << 30,
		Budget: &Budget{Mu: 3, Delta: 1e-6}})
	ctx := context.Background()
	for i := range n - 1 {
		c := *base
		c.ID = fmt.Sprintf("exp_scrape%05d", i)
		raw, _ := json.Marshal(&c)
		if _, err := srv.eng.create(ctx, &c, raw); err != nil {
			b.Fatal(err)
		}
	}
	return e, srv
}

// BenchmarkScrape renders one authorised scrape of 2000 experiments (the
// cache is bypassed): the cost a scraper can impose at most once a second.
func BenchmarkScrape(b *testing.B) {
	_, srv := scrapeServer(b, scrapeExps)
	full := promHandler(srv)
	b.ReportAllocs()
	b.ResetTimer()
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		full.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes")
}

// BenchmarkDecideWhileScraped: decisions with 8 scrapers reading the
// per-experiment metrics of 2000 experiments as fast as they can, beside
// BenchmarkDecide's figure on the same machine.
func BenchmarkDecideWhileScraped(b *testing.B) {
	e, _ := scrapeServer(b, scrapeExps)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var scrapes atomic.Int64
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", e.g.url+"/metrics", nil)
				req.Header.Set("Authorization", "Bearer bench-admin-key-0123456789")
				req.Header.Set("Accept-Encoding", "gzip") // as Prometheus does
				resp, err := e.g.client.Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					scrapes.Add(1)
				}
			}
		})
	}
	t0 := time.Now()
	benchDecideOn(b, e)
	el := time.Since(t0)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(scrapes.Load())/el.Seconds(), "scrapes/s")
}

// promHandler renders the full metrics without the cache.
func promHandler(s *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := s.eng.m
		m.scrape.Lock()
		m.scrape.body = nil // force a rendering
		m.scrape.Unlock()
		m.serveCached(w, r, m.fullHandler())
	})
}

// BenchmarkSnapshotDim: what one commit pays to serialise a contextual
// experiment's state at the largest dim the service accepts (maxDim), and
// below it; the state is written whole by every commit that touches it.
//
//	go test ./server -run '^$' -bench 'SnapshotDim' -benchtime 20x
func BenchmarkSnapshotDim(b *testing.B) {
	for _, d := range []int{16, 64, maxDim} {
		for _, pol := range []string{"adaprivate-ts", "lints"} {
			b.Run(fmt.Sprintf("%s/d=%d", pol, d), func(b *testing.B) {
				req := createRequest{Name: "s", Arms: []string{"a", "b"}, Policy: pol, Horizon: 1 << 20, Dim: &d}
				if pol == "adaprivate-ts" {
					req.Budget = &Budget{Epsilon: 1, Delta: 1e-6}
				}
				cfg, _ := mustConfig(b, req)
				x, err := newExperiment(cfg)
				if err != nil {
					b.Fatal(err)
				}
				var size int
				for b.Loop() {
					st, err := x.snapshot(nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					size = len(st.Policy)
				}
				b.ReportMetric(float64(size), "bytes")
			})
		}
	}
}

// BenchmarkDecideHandlerPolicy: the handler cost of one decision for each
// served pure-DP epoch policy beside mts-gaussian's (issue 11: within 2×),
// 5 arms, after 2,000 decisions with their rewards (so the epoch policies
// are past their initial pulls and have released values), parallel.
//
//	go test ./server -run '^$' -bench 'DecideHandlerPolicy' -benchtime 2s
func BenchmarkDecideHandlerPolicy(b *testing.B) {
	arms := []string{"a", "b", "c", "d", "e"}
	for _, pol := range []string{"mts-gaussian", "lazy-dp-ts", "anytime-lazy-ucb", "adap-ucb", "dp-se", "dp-ts", "mt-ucb", "mt-ts"} {
		b.Run(pol, func(b *testing.B) {
			st, err := openSQLite(filepath.Join(b.TempDir(), "db.sqlite"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			s, _, err := New(context.Background(), Options{Store: st, AdminKey: "bench-admin-key-0123456789"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			req := createRequest{Name: "h", Arms: arms, Policy: pol, Horizon: 1_000_000, Budget: &Budget{Epsilon: 1, Delta: 1e-6}}
			if pol == "mts-gaussian" {
				req.Horizon, req.Budget = 100_000_000, &Budget{Mu: 3, Delta: 1e-6}
			}
			cfg, raw := mustConfig(b, req)
			x, err := s.eng.create(context.Background(), cfg, raw)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for i := range 2000 {
				ds, err := s.eng.decide(ctx, x, []string{""}, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.eng.reward(ctx, x, ds[0].EventID, float64(i%2)); err != nil {
					b.Fatal(err)
				}
			}
			h := s.Handler()
			path := "/v1/experiments/" + x.cfg.ID + "/decisions"
			b.ReportAllocs()
			b.ResetTimer()
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
		})
	}
}
