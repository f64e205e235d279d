package sim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interrupted runs p with a cache under out and cancels it once k cells
// have finished (one worker, so exactly k cells are saved); it returns the
// error of the run.
func interrupted(t *testing.T, p *Plan, out string, workers, k int, shard Shard) error {
	t.Helper()
	cache, err := OpenCellCache(out, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = p.Run(ctx, Options{Workers: workers, Shard: shard, Cache: cache, Progress: func(pr Progress) {
		if pr.CellsDone-pr.Resumed >= k {
			cancel()
		}
	}})
	return err
}

func cellFiles(t *testing.T, c *CellCache) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(c.Dir(), "e*-r*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestResumeAfterInterruption: a run cancelled after k cells leaves exactly
// those k cells in the cache (no temporary files); the rerun takes them
// from the cache, runs only the others, and its summary, curves and runs
// are byte for byte an uninterrupted run's.
func TestResumeAfterInterruption(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	want := runSummary(t, p, Options{Workers: 2})
	for _, k := range []int{1, 7, p.Cells() - 1} {
		out := t.TempDir()
		if err := interrupted(t, p, out, 1, k, Shard{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("k=%d: interrupted run returned %v, want context.Canceled", k, err)
		}
		cache, err := OpenCellCache(out, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(cellFiles(t, cache)); got != k {
			t.Fatalf("k=%d: %d cell files after the interruption, want %d", k, got, k)
		}
		if tmp, _ := filepath.Glob(filepath.Join(cache.Dir(), ".*tmp*")); len(tmp) > 0 {
			t.Fatalf("k=%d: temporary files left: %v", k, tmp)
		}
		res, err := p.Run(context.Background(), Options{Workers: 3, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if res.Resumed != k {
			t.Fatalf("k=%d: rerun resumed %d cells, want %d", k, res.Resumed, k)
		}
		if got := summaryBytes(t, res); !bytes.Equal(got, want) {
			t.Fatalf("k=%d: resumed run differs from the uninterrupted one", k)
		}
		if got := len(cellFiles(t, cache)); got != p.Cells() {
			t.Fatalf("k=%d: %d cell files after the rerun, want all %d", k, got, p.Cells())
		}
		if err := cache.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(out, CellsDir)); !os.IsNotExist(err) {
			t.Fatalf("k=%d: %s still there after Remove (%v)", k, CellsDir, err)
		}
	}
}

// TestResumeShardedAndParallel: interrupted shards run with 3 workers,
// resumed, and merged, give the unsharded bytes.
func TestResumeShardedAndParallel(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	want := runSummary(t, p, Options{Workers: 1})
	var dirs []string
	for i := range 2 {
		sh := Shard{Index: i, Count: 2}
		out := t.TempDir()
		if err := interrupted(t, p, out, 3, 2, sh); !errors.Is(err, context.Canceled) {
			t.Fatalf("shard %s: %v", sh, err)
		}
		cache, err := OpenCellCache(out, p)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(cellFiles(t, cache)); n < 2 || n >= p.Cells()/2 {
			t.Fatalf("shard %s: %d cells saved, want at least the 2 finished and fewer than the shard's %d", sh, n, p.Cells()/2)
		}
		res, err := p.Run(context.Background(), Options{Workers: 3, Shard: sh, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if res.Resumed < 2 {
			t.Fatalf("shard %s resumed %d cells", sh, res.Resumed)
		}
		if err := res.WritePartial(out); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, out)
	}
	merged, err := Merge(dirs, fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if got := summaryBytes(t, merged); !bytes.Equal(got, want) {
		t.Fatal("resumed shards merged differ from the unsharded run")
	}
}

// TestCorruptCellsRecomputed: a truncated file, a file whose result was
// altered (checksum mismatch), a file of another cell, a file whose pulls
// do not sum to the horizon (checksum recomputed to match) and a file from
// another plan's key are each rejected, removed and recomputed; the result
// equals an uninterrupted run.
func TestCorruptCellsRecomputed(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(testSpec(), fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	want := runSummary(t, p, Options{Workers: 2})
	out := t.TempDir()
	cache, err := OpenCellCache(out, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), Options{Workers: 2, Cache: cache}); err != nil {
		t.Fatal(err)
	}
	read := func(e, r int) []byte {
		b, err := os.ReadFile(cache.path(e, r))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(e, r int, b []byte) {
		if err := os.WriteFile(cache.path(e, r), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := read(0, 0)
	write(0, 0, b[:len(b)/2]) // truncated
	b = read(0, 1)
	i := bytes.Index(b, []byte(`"reward":`))
	if i < 0 {
		t.Fatalf("no reward in %s", b)
	}
	b[i+len(`"reward":`)] ^= 1 // one digit changed: checksum mismatch
	write(0, 1, b)
	write(1, 0, read(1, 1)) // the file of another cell
	// A well-formed, checksummed cell whose pulls do not sum to the horizon.
	bad, _ := cache.Load(1, 2)
	bad.Pulls[0]++
	if err := cache.Save(bad); err != nil {
		t.Fatal(err)
	}
	// A cell of another plan (another seed) copied in.
	other := testSpec()
	other.Seed++
	po, err := NewPlan(other, fakeRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if po.CacheKey() == p.CacheKey() {
		t.Fatal("a changed seed keeps the cache key")
	}
	oc, err := OpenCellCache(t.TempDir(), po)
	if err != nil {
		t.Fatal(err)
	}
	r22, err := po.RunCell(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := oc.Save(r22); err != nil {
		t.Fatal(err)
	}
	ob, err := os.ReadFile(oc.path(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	write(2, 2, ob)

	fresh, err := OpenCellCache(out, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), Options{Workers: 2, Cache: fresh})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Corrupt != 5 || res.Resumed != p.Cells()-5 {
		t.Fatalf("corrupt %d, resumed %d; want 5 and %d", fresh.Corrupt, res.Resumed, p.Cells()-5)
	}
	if got := summaryBytes(t, res); !bytes.Equal(got, want) {
		t.Fatal("run over a corrupted cache differs from the uninterrupted run")
	}
}

// TestCacheKey: the key is a function of the resolved configuration: equal
// for equal specs, different for any change of horizon, runs, policy
// parameter or extra checkpoint; and a cache opened for one plan is refused
// by another.
func TestCacheKey(t *testing.T) {
	t.Parallel()
	key := func(s Spec) string {
		p, err := NewPlan(s, fakeRegistry)
		if err != nil {
			t.Fatal(err)
		}
		return p.CacheKey()
	}
	base := key(testSpec())
	if len(base) != 32 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("key %q is not 32 hex digits", base)
	}
	if again := key(testSpec()); again != base {
		t.Fatalf("same spec, keys %s and %s", base, again)
	}
	changes := map[string]func(*Spec){
		"horizon":     func(s *Spec) { s.Horizon++ },
		"runs":        func(s *Spec) { s.Runs++ },
		"policy":      func(s *Spec) { s.Policies = mustParse("fake-ts", "fake-ts:c=5", "fixed") },
		"checkpoints": func(s *Spec) { s.ExtraCheckpoints = []int{17} },
		"env":         func(s *Spec) { s.Env = "bernoulli:0.75,0.625,0.5,0.375,0.2" },
	}
	for name, ch := range changes {
		s := testSpec()
		ch(&s)
		if key(s) == base {
			t.Errorf("changing the %s keeps the cache key", name)
		}
	}
	p, _ := NewPlan(testSpec(), fakeRegistry)
	s := testSpec()
	s.Seed++
	q, _ := NewPlan(s, fakeRegistry)
	c, err := OpenCellCache(t.TempDir(), q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), Options{Cache: c}); err == nil {
		t.Fatal("a cache of another plan was accepted")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, s := range []string{"first", "second, longer"} {
		if err := WriteFileAtomic(path, []byte(s)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != s {
			t.Fatalf("read %q, %v; want %q", b, err, s)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d entries in the directory, want 1 (no temporary files)", len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}
