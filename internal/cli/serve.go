package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dpbandit/dpbandit/server"
	"github.com/dpbandit/dpbandit/store"
	"github.com/dpbandit/dpbandit/store/postgres"
	"github.com/dpbandit/dpbandit/store/sqlite"
)

// serveCmd runs the HTTP decision service on the embedded SQLite store, or
// on PostgreSQL when --db is a postgres:// URL.
type serveCmd struct {
	Addr         string        `default:"127.0.0.1:8080" help:"Address to listen on."`
	DB           string        `name:"db" default:"./dpbandit.db" help:"SQLite database file (created if missing; WAL, synchronous=FULL), or a PostgreSQL URL such as postgres://user@host/db (one server per database; add ?search_path=SCHEMA to share a database)."`
	AdminKey     string        `name:"admin-key" env:"DPBANDIT_ADMIN_KEY" help:"Admin API key (at least 16 characters). Without one, the first start generates a key, stores only its SHA-256 hash and prints it once. Given on a database that has another admin key, it replaces it (logged): the recovery path for a lost admin key."`
	MetricsToken string        `name:"metrics-token" env:"DPBANDIT_METRICS_TOKEN" help:"Bearer token (at least 16 characters) that lets a /metrics scrape read the per-experiment series (decisions, rewards, privacy spent), as the admin key does. Without a credential a scrape gets the process-level series only."`
	MaxBody      int64         `name:"max-body" default:"1048576" help:"Largest request body in bytes."`
	RateLimit    float64       `name:"rate-limit" default:"0" help:"Requests per second per API key (0: unlimited)."`
	Retain       time.Duration `default:"1m" help:"How long logged decisions without a reward stay in memory (later rewards are looked up in the store)."`
	LogLevel     string        `name:"log-level" default:"info" enum:"debug,info,warn,error" help:"Log level (JSON logs on stderr)."`
	Replica      bool          `help:"Replica mode (PostgreSQL only): any number of servers started with --replica serve the same experiments of one database, with one shared privacy budget reserved in blocks and one learner per experiment holding a lease (docs/replicas.md). Serves ts-gaussian and gaussian-ts; needs --admin-key on a new database."`
	Lease        time.Duration `default:"2s" help:"Replica mode: the learner lease length L (renewed every L/4; a dead learner's lease moves within about 1.25 L)."`
}

func (c *serveCmd) Run(g *Globals) error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return badInput("--log-level: %v", err)
	}
	log := slog.New(slog.NewJSONHandler(g.Stderr, &slog.HandlerOptions{Level: lvl}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Replica {
		return c.runReplica(ctx, g, log)
	}
	st, err := openStore(ctx, c.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, key, err := server.New(ctx, server.Options{Store: st, AdminKey: c.AdminKey, MetricsToken: c.MetricsToken, Logger: log,
		MaxBodyBytes: c.MaxBody, Retain: c.Retain, RateLimit: c.RateLimit})
	if err != nil {
		return err
	}
	if key != "" {
		fmt.Fprintf(g.Stderr, "\n"+
			"==================================================================\n"+
			"  dpbandit: generated the ADMIN KEY (shown only this once;\n"+
			"  the server stores only its SHA-256 hash):\n\n"+
			"      %s\n\n"+
			"  Use it as: Authorization: Bearer <key>\n"+
			"  (or start with --admin-key / DPBANDIT_ADMIN_KEY to choose one)\n"+
			"==================================================================\n\n", key)
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		srv.Close()
		return fmt.Errorf("--addr %s: %w", c.Addr, err)
	}
	hs := srv.HTTPServer(c.Addr)
	log.Info("dpbandit serving", "addr", ln.Addr().String(), "db", redactDB(c.DB))
	fmt.Fprintf(g.Stdout, "dpbandit serving on http://%s (database %s)\n", ln.Addr(), redactDB(c.DB))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	// A store that holds an exclusive lock on its database (PostgreSQL's
	// lives in a database session, which can end) says when it lost it.
	var lost <-chan struct{} // nil: never
	ex, _ := st.(store.Exclusive)
	if ex != nil {
		lost = ex.Lost()
	}
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	case <-lost:
		// Another server may own the database now: stop serving at once,
		// and skip the clean shutdown (srv.Close), whose final commits
		// and reservation release could only fail (the store refuses every
		// write now, and none would land) while the writer retries them.
		lerr := ex.LostErr()
		log.Error("lost the database lock: stopping; another server may own this database now", "err", lerr)
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if hs.Shutdown(sctx) != nil {
			hs.Close() // requests still waiting on a commit that cannot come
		}
		cancel()
		return fmt.Errorf("lost the database lock, so stopped serving (another server may own this database now): %w", lerr)
	}
	if cerr := srv.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// openStore opens the store --db names: PostgreSQL for a postgres:// or
// postgresql:// URL, else the SQLite file at that path.
func openStore(ctx context.Context, db string) (store.Store, error) {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		st, err := postgres.Open(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("--db: %w", err)
		}
		return st, nil
	}
	return sqlite.Open(ctx, db)
}

// redactDB hides a password in a database URL before it is printed.
func redactDB(db string) string {
	if u, err := url.Parse(db); err == nil && u.User != nil {
		return u.Redacted()
	}
	return db
}
