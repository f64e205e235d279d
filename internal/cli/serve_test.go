package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestServeRefusesMemoryDatabase(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"serve", "--db", ":memory:", "--admin-key", "a-long-enough-admin-key"}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "file path") {
		t.Errorf("serve --db :memory: exited %d: %s", code, errb.String())
	}
}

func TestServeRejectsShortAdminKey(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"serve", "--db", t.TempDir() + "/db.sqlite", "--admin-key", "short"}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "at least 16") {
		t.Errorf("short admin key: exit %d: %s", code, errb.String())
	}
}

func TestServeHelp(t *testing.T) {
	var out, errb bytes.Buffer
	Main([]string{"serve", "--help"}, &out, &errb)
	for _, f := range []string{"--addr", "--db", "--admin-key", "DPBANDIT_ADMIN_KEY", "--rate-limit"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("serve --help lacks %s:\n%s", f, out.String())
		}
	}
}

// The database printed at start never shows a PostgreSQL password.
func TestRedactDB(t *testing.T) {
	for in, want := range map[string]string{
		"./dpbandit.db":                      "./dpbandit.db",
		"postgres://dpb:s3cret@db:5432/prod": "postgres://dpb:xxxxx@db:5432/prod",
		"postgres://dpb@db/prod":             "postgres://dpb@db/prod",
	} {
		if got := redactDB(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("redactDB(%q) = %q, want %q", in, got, want)
		}
	}
}
