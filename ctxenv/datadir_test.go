package ctxenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/datasets"
)

// DataDir follows $DPBANDIT_DATA, then the cache directory, then an
// ancestor's shared/data, and DataRoot says which; a loader given the
// resolved directory finds a file in a later directory of the order, one
// given an explicit directory does not.
func TestDataDirOrderAndFallback(t *testing.T) {
	tmp := t.TempDir()
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := mk(filepath.Join(tmp, "env"))
	cache := filepath.Join(tmp, "xdg", "dpbandit")
	shared := mk(filepath.Join(tmp, "w", "shared", "data"))
	t.Chdir(mk(filepath.Join(tmp, "w", "repo")))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "xdg"))
	t.Setenv(DataEnv, "")

	r, err := DataRoot()
	if err != nil || r.Dir != shared || r.Source != datasets.FromShared {
		t.Errorf("no env, no cache: %v, %v", r, err)
	}
	mk(cache)
	if d, err := DataDir(); err != nil || d != cache {
		t.Errorf("cache exists: DataDir() = %q, %v", d, err)
	}
	t.Setenv(DataEnv, env)
	if r, err := DataRoot(); err != nil || r != (datasets.Root{Dir: env, Source: datasets.FromEnv}) {
		t.Errorf("env set: %v, %v", r, err)
	}

	const rel = "uci-mushroom/probe.txt"
	if err := os.MkdirAll(filepath.Join(shared, "uci-mushroom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, filepath.FromSlash(rel)), []byte("from shared"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, _ := DataDir()
	if b, err := readFile(dir, rel); err != nil || string(b) != "from shared" {
		t.Errorf("readFile(DataDir(), %s) = %q, %v; want the shared copy", rel, b, err)
	}
	if p, r, err := DataFile(rel); err != nil || r.Source != datasets.FromShared || p != filepath.Join(shared, filepath.FromSlash(rel)) {
		t.Errorf("DataFile = %q, %v, %v", p, r, err)
	}
	// An explicit directory has no fallback, and the error says how to get
	// the data.
	_, err = readFile(tmp, rel)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), DataEnv) || !strings.Contains(err.Error(), "dpbandit data fetch") {
		t.Errorf("explicit directory: %v", err)
	}
	if _, _, err := DataFile("nowhere/x"); !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), env) {
		t.Errorf("DataFile of a missing file: %v", err)
	}
}
