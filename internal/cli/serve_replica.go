package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/server"
	"github.com/dpbandit/dpbandit/store/postgres"
)

// runReplica is `dpbandit serve --replica`: one replica of many over one
// PostgreSQL schema (docs/replicas.md).
func (c *serveCmd) runReplica(ctx context.Context, g *Globals, log *slog.Logger) error {
	if !strings.HasPrefix(c.DB, "postgres://") && !strings.HasPrefix(c.DB, "postgresql://") {
		return badInput("--replica needs a PostgreSQL --db (postgres://...): replicas share one database; got %q", redactDB(c.DB))
	}
	if c.Lease < 200*time.Millisecond || c.Lease > 10*time.Minute {
		return badInput("--lease %v: give a duration in [200ms, 10m]", c.Lease)
	}
	st, err := postgres.OpenReplica(ctx, c.DB, postgres.Options{})
	if err != nil {
		return fmt.Errorf("--db: %w", err)
	}
	defer st.Close()
	poll := min(50*time.Millisecond, c.Lease/4)
	rp, err := server.NewReplica(ctx, server.ReplicaOptions{Store: st, AdminKey: c.AdminKey, MetricsToken: c.MetricsToken, Logger: log,
		MaxBodyBytes: c.MaxBody, RateLimit: c.RateLimit, Lease: c.Lease, Poll: poll})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		rp.Close()
		return fmt.Errorf("--addr %s: %w", c.Addr, err)
	}
	hs := rp.HTTPServer(c.Addr)
	log.Info("dpbandit serving as a replica", "addr", ln.Addr().String(), "db", redactDB(c.DB), "replica", rp.ID(), "lease", c.Lease)
	fmt.Fprintf(g.Stdout, "dpbandit serving on http://%s (database %s, replica %s)\n", ln.Addr(), redactDB(c.DB), rp.ID())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	case <-st.Lost():
		lerr := st.LostErr()
		log.Error("lost the database lock: stopping", "err", lerr)
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		cancel()
		rp.Close()
		return fmt.Errorf("lost the database lock, so stopped serving: %w", lerr)
	}
	if cerr := rp.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
