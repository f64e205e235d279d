package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresDSN is the PostgreSQL server tests use: $DPBANDIT_TEST_POSTGRES,
// or the local server that .ci/run starts (trust authentication, database
// test).
func PostgresDSN() string {
	if d := os.Getenv("DPBANDIT_TEST_POSTGRES"); d != "" {
		return d
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// PostgresSchema creates an empty schema for one test, dropped when it
// ends, and returns a DSN that selects it (search_path). Without a server
// the test is skipped, except under CI=true, where .ci/run has started one
// and its absence is a failure.
func PostgresSchema(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, PostgresDSN())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL at %s: %v (.ci/run should have started it)", PostgresDSN(), err)
		}
		t.Skipf("no PostgreSQL at %s (set DPBANDIT_TEST_POSTGRES): %v", PostgresDSN(), err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	schema := "dpb_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), PostgresDSN()); err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(PostgresDSN())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresLockHolder returns the backend pid of the database session that
// holds the one-server lock of dsn's schema (the advisory lock that
// postgres.Open takes), or 0 when no session holds it.
func PostgresLockHolder(t testing.TB, dsn string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var pid int
	err = conn.QueryRow(ctx, `SELECT pid FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('dpbandit:' || current_schema(), 0)`).Scan(&pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TerminatePostgresLock ends the session that holds the one-server lock of
// dsn's schema (pg_terminate_backend, as an administrator, an idle-session
// timeout or a network cut would) and waits until PostgreSQL has freed the
// lock. It returns the terminated backend's pid.
func TerminatePostgresLock(t testing.TB, dsn string) int {
	t.Helper()
	pid := PostgresLockHolder(t, dsn)
	if pid == 0 {
		t.Fatal("no session holds the dpbandit lock of this schema")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
	for deadline := time.Now().Add(5 * time.Second); PostgresLockHolder(t, dsn) == pid; {
		if time.Now().After(deadline) {
			t.Fatalf("the terminated session %d still holds the lock after 5 s", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return pid
}
