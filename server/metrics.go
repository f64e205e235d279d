package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"
)

// metrics are the service's Prometheus metrics, on two registries:
//
//   - proc: process-level series (request latency by route, group commits,
//     quarantined records, the Go runtime and the process), served to
//     anyone who scrapes /metrics;
//   - exps: per-experiment series (decisions, rewards, budget, spent,
//     exhaustion), labelled with experiment ids, served only to a scrape
//     that presents the metrics token or the admin key (client keys are
//     refused them, as they are refused other experiments' status).
//
// Per-experiment counters are resolved once per experiment (expMetrics), so
// the hot path pays one atomic add per event; budget gauges are computed at
// scrape time by a collector that locks one experiment at a time. A scrape
// costs O(experiments), and authorised scrapes share one rendering per
// second (scrape), so any number of scrapers costs the decisions at most
// one rendering a second.
type metrics struct {
	proc, exps *prometheus.Registry
	latency    *prometheus.HistogramVec
	decisions  *prometheus.CounterVec
	rewards    *prometheus.CounterVec
	commitDur  prometheus.Histogram
	commitN    prometheus.Histogram
	commitErr  prometheus.Counter
	// quarantined counts stored records that could not be applied: kind
	// "reward" (a reward the policy refused) or "experiment" (one that
	// could not be loaded at start).
	quarantined *prometheus.CounterVec

	scrape struct {
		sync.Mutex
		at   time.Time
		body []byte // plain text
		gz   []byte // the same, gzipped
		ct   string
	}
	// scrapes limits /metrics requests of every kind together, so that no
	// number of scrapers can take more than a few renderings' and
	// transfers' worth of CPU a second from the decisions.
	scrapes *rate.Limiter
}

// Scrape limits: a Prometheus server scrapes every 15-60 s; these leave
// room for several servers and people with curl, and answer 429 beyond.
const (
	scrapeRate  = 4
	scrapeBurst = 8
)

type expMetrics struct {
	decPolicy, decFrozen  prometheus.Counter
	rewClient, rewDefault prometheus.Counter
}

// scrapeTTL is how long an authorised scrape's rendering is reused.
const scrapeTTL = time.Second

func newMetrics(e *Engine) *metrics {
	m := &metrics{proc: prometheus.NewRegistry(), exps: prometheus.NewRegistry(), scrapes: rate.NewLimiter(scrapeRate, scrapeBurst)}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dpbandit_http_request_duration_seconds", Help: "HTTP request latency by route, method and status code.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route", "method", "code"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dpbandit_decisions_total", Help: "Decisions served, by experiment and mode (policy: made by the policy; frozen: after the budget was exhausted, from past decisions).",
	}, []string{"experiment", "mode"})
	m.rewards = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dpbandit_rewards_total", Help: "Rewards stored durably, by experiment and source (client, or default after reward_wait).",
	}, []string{"experiment", "source"})
	m.commitDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "dpbandit_commit_duration_seconds", Help: "Duration of one group commit (one fsynced transaction).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
	})
	m.commitN = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "dpbandit_commit_events", Help: "Decisions and rewards written by one group commit.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 9),
	})
	m.commitErr = prometheus.NewCounter(prometheus.CounterOpts{Name: "dpbandit_commit_errors_total", Help: "Failed group commits."})
	m.quarantined = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dpbandit_quarantined_total",
		Help: "Stored records that could not be applied and were set aside (kept in the store, logged with their ids): kind reward or experiment."}, []string{"kind"})
	m.proc.MustRegister(m.latency, m.commitDur, m.commitN, m.commitErr, m.quarantined,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.exps.MustRegister(m.decisions, m.rewards, budgetCollector{e})
	return m
}

func (m *metrics) forExperiment(id string) *expMetrics {
	return &expMetrics{
		decPolicy: m.decisions.WithLabelValues(id, "policy"), decFrozen: m.decisions.WithLabelValues(id, "frozen"),
		rewClient: m.rewards.WithLabelValues(id, "client"), rewDefault: m.rewards.WithLabelValues(id, "default"),
	}
}

// handler serves /metrics: the process-level series to anyone; with
// them the per-experiment series when authorised(r) (a valid metrics token
// or admin key). A request with a wrong credential gets 401 from authorised.
func (m *metrics) handler(authorised func(w http.ResponseWriter, r *http.Request) (ok, answered bool)) http.Handler {
	public := promhttp.HandlerFor(m.proc, promhttp.HandlerOpts{})
	full := m.fullHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !m.scrapes.Allow() {
			w.Header().Set("Retry-After", "1")
			writeErr(w, errf(http.StatusTooManyRequests, "scrape_rate_limited", fmt.Sprintf("/metrics answers at most %d scrapes a second (burst %d) in all; scrape less often (Prometheus: every 15 s or more)", scrapeRate, scrapeBurst)))
			return
		}
		ok, answered := authorised(w, r)
		switch {
		case answered:
		case !ok:
			public.ServeHTTP(w, r)
		default:
			m.serveCached(w, r, full)
		}
	})
}

// fullHandler renders every series, process-level and per-experiment.
func (m *metrics) fullHandler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{m.proc, m.exps}, promhttp.HandlerOpts{})
}

// serveCached serves an authorised scrape from a rendering at most
// scrapeTTL old; one scraper renders, concurrent ones wait for it.
func (m *metrics) serveCached(w http.ResponseWriter, r *http.Request, full http.Handler) {
	c := &m.scrape
	c.Lock()
	if c.body == nil || time.Since(c.at) >= scrapeTTL {
		rec := &bufferWriter{h: http.Header{}}
		rq := r.Clone(r.Context())
		rq.Header.Del("Accept-Encoding") // cache plain text; one format for all
		rq.Header.Del("Accept")
		full.ServeHTTP(rec, rq)
		c.body, c.ct, c.at = rec.buf.Bytes(), rec.h.Get("Content-Type"), time.Now()
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(c.body)
		zw.Close()
		c.gz = gz.Bytes()
	}
	body, ct := c.body, c.ct
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		body = c.gz
		w.Header().Set("Content-Encoding", "gzip")
	}
	c.Unlock()
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Vary", "Accept-Encoding")
	w.Write(body)
}

// bufferWriter is an http.ResponseWriter into memory.
type bufferWriter struct {
	h   http.Header
	buf bytes.Buffer
}

func (b *bufferWriter) Header() http.Header         { return b.h }
func (b *bufferWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }
func (b *bufferWriter) WriteHeader(int)             {}

// observe wraps a handler with the latency histogram of its route.
func (m *metrics) observe(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		m.latency.WithLabelValues(route, r.Method, strconv.Itoa(sw.code)).Observe(time.Since(t0).Seconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(c int) { s.code = c; s.ResponseWriter.WriteHeader(c) }

// budgetCollector reports each experiment's budget and spent at scrape time.
type budgetCollector struct{ e *Engine }

var (
	budgetDesc = prometheus.NewDesc("dpbandit_privacy_budget", "The experiment's privacy budget in its filter's parameter (μ for gdp, ρ for zcdp, ε for pure).",
		[]string{"experiment", "notion", "accounting"}, nil)
	spentDesc = prometheus.NewDesc("dpbandit_privacy_spent", "Privacy spent so far, in the same parameter as dpbandit_privacy_budget (rounded up).",
		[]string{"experiment", "notion", "accounting"}, nil)
	spentEpsDesc = prometheus.NewDesc("dpbandit_privacy_spent_epsilon", "Privacy spent so far as ε at the budget's δ (filter accounting).",
		[]string{"experiment"}, nil)
	exhaustedDesc = prometheus.NewDesc("dpbandit_privacy_exhausted", "1 when the experiment's budget is exhausted.", []string{"experiment"}, nil)
)

func (budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- budgetDesc
	ch <- spentDesc
	ch <- spentEpsDesc
	ch <- exhaustedDesc
}

func (c budgetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, x := range c.e.all() {
		if x.led == nil {
			continue
		}
		x.mu.Lock()
		spent, budget, exh := x.led.f.Spent(), x.led.f.Budget(), x.exhausted
		x.mu.Unlock()
		n, acc := string(x.cfg.Notion), x.cfg.Accounting
		ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, budget, x.cfg.ID, n, acc)
		ch <- prometheus.MustNewConstMetric(spentDesc, prometheus.GaugeValue, spent, x.cfg.ID, n, acc)
		if acc == AccountFilter {
			if eps, _, err := (guaranteeOf(x.cfg.Notion, spent)).Epsilon(x.cfg.Budget.Delta); err == nil && !math.IsInf(eps, 0) {
				ch <- prometheus.MustNewConstMetric(spentEpsDesc, prometheus.GaugeValue, eps, x.cfg.ID)
			}
		}
		v := 0.0
		if exh {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(exhaustedDesc, prometheus.GaugeValue, v, x.cfg.ID)
	}
}
