package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func mkdir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The search order: $DPBANDIT_DATA, then the cache directory when it exists,
// then an ancestor's shared/data; Locate and LocateFile fall through per
// data set and per file.
func TestResolveOrder(t *testing.T) {
	tmp := t.TempDir()
	env := mkdir(t, filepath.Join(tmp, "env"))
	xdg := filepath.Join(tmp, "xdg")
	cache := filepath.Join(xdg, "dpbandit")
	shared := mkdir(t, filepath.Join(tmp, "work", "shared", "data"))
	wd := mkdir(t, filepath.Join(tmp, "work", "main", "pkg"))
	t.Chdir(wd)
	t.Setenv("XDG_CACHE_HOME", xdg)
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv(EnvVar, env)

	if c, err := CacheDir(); err != nil || c != cache {
		t.Fatalf("CacheDir() = %q, %v; want %q", c, err, cache)
	}
	check := func(what string, want Root) {
		t.Helper()
		r, err := Resolve()
		if err != nil || r != want {
			t.Errorf("%s: Resolve() = %v, %v; want %v", what, r, err, want)
		}
	}
	check("env set", Root{env, FromEnv})
	// An explicit $DPBANDIT_DATA wins even before it exists.
	t.Setenv(EnvVar, filepath.Join(tmp, "not-yet"))
	check("env set, missing", Root{filepath.Join(tmp, "not-yet"), FromEnv})
	t.Setenv(EnvVar, "")
	check("no env, no cache", Root{shared, FromShared})
	mkdir(t, cache)
	check("cache exists", Root{cache, FromCache})
	t.Setenv(EnvVar, env)
	if r := Roots(); len(r) != 3 || r[0] != (Root{env, FromEnv}) || r[1] != (Root{cache, FromCache}) || r[2] != (Root{shared, FromShared}) {
		t.Errorf("Roots() = %v", r)
	}

	// Per data set: the first root holding NAME/.
	d := Dataset{Name: "uci-mushroom"}
	if _, err := Locate(d); !errors.Is(err, ErrNoDataDir) {
		t.Errorf("Locate with no copy: %v", err)
	}
	mkdir(t, filepath.Join(shared, d.Name))
	if r, err := Locate(d); err != nil || r.Source != FromShared {
		t.Errorf("Locate, copy in shared only: %v, %v", r, err)
	}
	mkdir(t, filepath.Join(cache, d.Name))
	if r, err := Locate(d); err != nil || r.Source != FromCache {
		t.Errorf("Locate, copies in cache and shared: %v, %v", r, err)
	}
	// A data set with files: an empty leftover directory in the cache does
	// not hide the copy in shared.
	withFiles := Dataset{Name: d.Name, Files: []File{{Path: "x.data"}}}
	write(t, shared, "uci-mushroom/x.data", "s")
	if r, err := Locate(withFiles); err != nil || r.Source != FromShared {
		t.Errorf("Locate, empty directory in cache, copy in shared: %v, %v", r, err)
	}
	// Per file, starting from a root of the order; none from a directory
	// outside it.
	write(t, shared, "uci-mushroom/x.data", "s")
	if r, p, ok := LocateFile(env, "uci-mushroom/x.data"); !ok || r.Source != FromShared || p != filepath.Join(shared, "uci-mushroom", "x.data") {
		t.Errorf("LocateFile from env: %v %q %v", r, p, ok)
	}
	write(t, cache, "uci-mushroom/x.data", "c")
	if r, _, ok := LocateFile(env, "uci-mushroom/x.data"); !ok || r.Source != FromCache {
		t.Errorf("LocateFile, cache before shared: %v %v", r, ok)
	}
	if _, _, ok := LocateFile(tmp, "uci-mushroom/x.data"); ok {
		t.Errorf("LocateFile fell back from a directory outside the search order")
	}

	// Where fetch writes: --dir, else $DPBANDIT_DATA, else the cache.
	if r, _ := FetchRoot("/x"); r != (Root{"/x", FromFlag}) {
		t.Errorf("FetchRoot(--dir) = %v", r)
	}
	if r, _ := FetchRoot(""); r != (Root{env, FromEnv}) {
		t.Errorf("FetchRoot(env) = %v", r)
	}
	t.Setenv(EnvVar, "")
	if r, _ := FetchRoot(""); r != (Root{cache, FromCache}) {
		t.Errorf("FetchRoot() = %v", r)
	}

	// Without XDG_CACHE_HOME the cache is $HOME/.cache/dpbandit.
	t.Setenv("XDG_CACHE_HOME", "")
	if c, _ := CacheDir(); c != filepath.Join(tmp, "home", ".cache", "dpbandit") {
		t.Errorf("CacheDir() with HOME = %q", c)
	}
	// Nothing anywhere: an error that says what was searched.
	t.Chdir(tmp)
	if _, err := os.Stat(filepath.Join(filepath.Dir(tmp), "shared", "data")); err == nil {
		t.Skip("a shared/data directory exists above the temporary directory")
	}
	if r, err := Resolve(); !errors.Is(err, ErrNoDataDir) {
		t.Errorf("nothing to find: %v, %v", r, err)
	}
}
