package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

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
