// Package server is dpbandit's HTTP decision service: experiments with a
// privacy budget enforced by a filter, decisions served from memory,
// rewards made durable by one group-commit writer, API keys, Prometheus
// metrics and the dashboard. `dpbandit serve` runs it on the embedded SQLite
// store (store/sqlite). The contract is api/openapi.yaml.
//
// # Architecture
//
//   - Engine (engine.go, experiment.go): one running policy per experiment,
//     each behind its own mutex (experiments never contend). A decision
//     charges the privacy filter with the policy's NextCost (every served
//     private policy is bandit.Metered), then calls Select on the secure
//     select stream; it never touches the disk.
//   - Ledger (ledger.go): the privacy.Filter and its write-ahead
//     reservation, so that a crash never under-reports the budget spent.
//   - Writer (writer.go): the only goroutine that writes, one transaction per
//     cycle (group commit, fsynced).
//   - HTTP (http.go, auth.go, validate.go, metrics.go).
//
// # Durability
//
// Each group commit writes, in one transaction: the rewards claimed since
// the last commit, the decisions served since the last commit, the policy's
// serialised state as of exactly those decisions (taken under the
// experiment's mutex), the ledger (with the next reservation chunk, if one
// was requested) and a fresh update seed. Only after the commit is durable
// are the decisions marked logged, the reservation chunk made spendable, and
// the rewards applied to the policy (on the update stream keyed by the
// stored seed) and acknowledged with 202. So:
//
//   - a 202 means the reward is stored durably, and it is learned exactly
//     once: a reward never acknowledged never influenced a released decision;
//   - the state written by a commit lacks only that commit's rewards, which a
//     restart replays with the stored seed, drawing exactly the same noise
//     (nothing is redrawn, docs/privacy-model.md rule 5);
//   - the privacy spent recorded on disk (the reservation) is always at
//     least what the live filter spent, so a restart after a crash sets
//     spent := reserved and the spent never decreases; a graceful shutdown
//     returns the unused reservation;
//   - decisions served after the last commit are lost in a crash: they are
//     unknown afterwards (their late rewards get 404), and the decision count
//     equals the logged decisions. Experiments with durable_decisions (always
//     for dp-ts-ucb, whose Select updates the sample counts its accounting
//     relies on) return a decision only after the commit that logs it.
//
// Decisions alone are coalesced for up to 5 ms per commit; a reward or a
// reservation request commits at once. BENCHMARKS.txt has the throughput.
//
// What the service protects, what it treats as public and what each key
// sees: docs/privacy-model.md; the served policies: the pages linked from
// README.md, "Documentation".
package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/dpbandit/dpbandit/server/web"
	"github.com/dpbandit/dpbandit/store"

	// The policies the service can run register themselves.
	_ "github.com/dpbandit/dpbandit/linear"
	_ "github.com/dpbandit/dpbandit/mab"
)

// Options configure a Server.
type Options struct {
	// Store is where everything is kept (required). The Server does not
	// close it.
	Store store.Store
	// AdminKey, when set, is the admin key (its hash replaces the stored
	// one). When empty and no admin key was ever stored, New generates one
	// and returns it once.
	AdminKey string
	// MetricsToken, when set, lets a /metrics scrape that presents it
	// (Authorization: Bearer TOKEN) read the per-experiment series, as the
	// admin key does; without a credential a scrape gets the process-level
	// series only. At least 16 characters.
	MetricsToken string
	// Logger for operational messages (nil: discard).
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Retain is how long logged decisions without a reward stay in memory
	// (default 1 minute); later rewards look them up in the store.
	Retain time.Duration
	// SweepInterval is how often default rewards are applied (default 1 s).
	SweepInterval time.Duration
	// RateLimit, when > 0, limits each API key to that many requests per
	// second (burst RateBurst, default 2×RateLimit).
	RateLimit float64
	RateBurst int
	// Dashboard serves GET / (default: the embedded dashboard, server/web).
	Dashboard http.Handler
	// ValidateAll validates the hot decide and reward bodies against the
	// OpenAPI document too (default: they are validated by hand with the
	// same constraints, because the generic validator costs more than the
	// decision itself; see BENCHMARKS.txt).
	ValidateAll bool
}

// Server is the decision service. Create it with New, serve Handler, and
// Close it after the HTTP server has shut down.
type Server struct {
	o      Options
	eng    *Engine
	auth   *auth
	spec   *validator
	h      http.Handler
	log    *slog.Logger
	closed chan struct{}
}

// New opens the engine on the store (restoring every experiment) and
// returns the server. When no admin key is configured or stored, it
// generates one, stores only its SHA-256 hash and returns the key in
// generatedAdminKey: the caller must show it once.
func New(ctx context.Context, o Options) (s *Server, generatedAdminKey string, err error) {
	if o.Store == nil {
		return nil, "", errors.New("server: Options.Store is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Retain <= 0 {
		o.Retain = time.Minute
	}
	if o.Dashboard == nil {
		o.Dashboard = web.Handler()
	}
	a, gen, err := newAuth(ctx, o.Store, o.Logger, o.AdminKey, o.MetricsToken, o.RateLimit, o.RateBurst)
	if err != nil {
		return nil, "", err
	}
	v, err := newValidator()
	if err != nil {
		return nil, "", fmt.Errorf("server: OpenAPI document: %w", err)
	}
	eng, err := openEngine(ctx, o.Store, o.Logger, engineOptions{Retain: o.Retain, SweepInterval: o.SweepInterval})
	if err != nil {
		return nil, "", err
	}
	s = &Server{o: o, eng: eng, auth: a, spec: v, log: o.Logger, closed: make(chan struct{})}
	s.h = s.routes()
	return s, gen, nil
}

// Handler returns the HTTP handler of the whole service.
func (s *Server) Handler() http.Handler { return s.h }

// HTTPServer returns an http.Server for addr with the service's timeouts
// and header limit.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Close commits everything pending and stops the writer. Call it after the
// HTTP server has stopped accepting requests.
func (s *Server) Close() error { return s.eng.Close() }

func hashKey(k string) []byte {
	h := sha256.Sum256([]byte(k))
	return h[:]
}
