package repro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/sim"
)

// fixedClock makes README.md's runtimes 0 so directories compare byte for
// byte.
func fixedClock() time.Time { return time.Unix(0, 0) }

// readTree returns every regular file under dir (relative path → content).
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails unless got and want hold the same files with the same bytes.
func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: %s missing", what, name)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs (%d vs %d bytes)", what, name, len(g), len(w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: extra file %s", what, name)
		}
	}
}

// TestShardMergeByteIdentical: each reproduction run as 3 shards and merged
// writes the unsharded run's directory byte for byte (checks.json,
// README.md, the figures, sweeps/). mt2015-mab has a tuning stage that the
// later stage reads: its shards stop there (Deferred = 2) and the merge
// runs the rest; ada-ablation's table stage is likewise deferred;
// ou2024-bernoulli's shards run every stage. The merge's README records the
// unsharded command line.
func TestShardMergeByteIdentical(t *testing.T) {
	cases := []struct {
		name     string
		opts     Options
		deferred int
	}{
		{"ou2024-bernoulli", Options{Runs: 3, Horizon: 2000}, 0},
		{"mt2015-mab", Options{Runs: 2, Horizon: 500}, 2},
		{"ada-ablation", Options{Runs: 3, Horizon: 300}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Lookup(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			base := t.TempDir()
			o := tc.opts
			o.Workers, o.Now, o.Command = 2, fixedClock, "dpbandit reproduce "+tc.name+" --out OUT"
			o.Out = filepath.Join(base, "single")
			want, err := Run(context.Background(), r, o)
			if err != nil {
				t.Fatal(err)
			}
			const n = 3
			var dirs []string
			for _, i := range []int{2, 0, 1} {
				so := o
				so.Out = filepath.Join(base, "shard", string(rune('0'+i)))
				so.Shard = sim.Shard{Index: i, Count: n}
				info, err := RunShard(context.Background(), r, so)
				if err != nil {
					t.Fatal(err)
				}
				if info.Deferred != tc.deferred {
					t.Fatalf("shard %d: deferred stage %d, want %d", i, info.Deferred, tc.deferred)
				}
				if len(info.Sweeps) == 0 {
					t.Fatalf("shard %d ran no sweep", i)
				}
				if _, err := os.Stat(filepath.Join(so.Out, ChecksFile)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("shard %d wrote %s", i, ChecksFile)
				}
				if _, err := os.Stat(filepath.Join(so.Out, sim.CellsDir)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("shard %d left %s", i, sim.CellsDir)
				}
				dirs = append(dirs, so.Out)
			}
			// Workers as in the single run: manifest.json records it (the
			// results do not depend on it).
			mo := Options{Out: filepath.Join(base, "merged"), Workers: o.Workers, Now: fixedClock, Command: o.Command}
			mr, got, err := Merge(context.Background(), dirs, mo)
			if err != nil {
				t.Fatal(err)
			}
			if mr.Name != tc.name || !slices.EqualFunc(got.Checks, want.Checks, func(a, b Check) bool { return a == b }) {
				t.Fatalf("merged %s checks differ from the unsharded run's", mr.Name)
			}
			sameTree(t, "merged vs unsharded", readTree(t, mo.Out), readTree(t, o.Out))

			// A missing shard, a duplicate and a shard of another size are refused.
			if _, _, err := Merge(context.Background(), dirs[:2], mo); !errors.Is(err, ErrShards) {
				t.Errorf("merge with a shard missing: %v, want ErrShards", err)
			}
			if _, _, err := Merge(context.Background(), []string{dirs[0], dirs[0], dirs[1]}, mo); !errors.Is(err, ErrShards) {
				t.Errorf("merge with a duplicate shard: %v, want ErrShards", err)
			}
		})
	}
}

// TestMergeRejectsMixedShards: shards of one reproduction at two sizes do
// not merge, and a directory without repro-shard.json is named.
func TestMergeRejectsMixedShards(t *testing.T) {
	r, err := Lookup("ou2024-bernoulli")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	var dirs []string
	for i, runs := range []int{2, 3} {
		o := Options{Out: filepath.Join(base, string(rune('a'+i))), Runs: runs, Horizon: 500, Workers: 2,
			Shard: sim.Shard{Index: i, Count: 2}}
		if _, err := RunShard(context.Background(), r, o); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, o.Out)
	}
	if _, _, err := Merge(context.Background(), dirs, Options{Out: filepath.Join(base, "m")}); !errors.Is(err, ErrShards) {
		t.Fatalf("shards of two sizes: %v, want ErrShards", err)
	}
	if _, _, err := Merge(context.Background(), []string{dirs[0], t.TempDir()}, Options{Out: filepath.Join(base, "m")}); !errors.Is(err, ErrShards) {
		t.Fatalf("a directory that is no shard: %v, want ErrShards", err)
	}
	// A shard whose partial.json lost a cell is refused by the sweep merge.
	sweep := filepath.Join(dirs[0], SweepsDir)
	ents, err := os.ReadDir(sweep)
	if err != nil || len(ents) == 0 {
		t.Fatalf("no sweeps in %s: %v", sweep, err)
	}
	var whole []string
	for i := range 2 {
		o := Options{Out: filepath.Join(base, "w"+string(rune('0'+i))), Runs: 2, Horizon: 500, Workers: 2, Shard: sim.Shard{Index: i, Count: 2}}
		if _, err := RunShard(context.Background(), r, o); err != nil {
			t.Fatal(err)
		}
		whole = append(whole, o.Out)
	}
	pf := filepath.Join(whole[1], SweepsDir, ents[0].Name(), sim.PartialFile)
	p, err := sim.ReadPartial(filepath.Dir(pf))
	if err != nil {
		t.Fatal(err)
	}
	p.Runs = p.Runs[1:]
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Merge(context.Background(), whole, Options{Out: filepath.Join(base, "m2")}); !errors.Is(err, sim.ErrSpec) {
		t.Fatalf("a shard with a cell missing: %v, want sim.ErrSpec", err)
	}
	if _, err := RunShard(context.Background(), r, Options{Out: t.TempDir(), Shard: sim.Shard{Index: 0, Count: 1}}); err == nil {
		t.Fatal("RunShard with 0/1 succeeded")
	}
}

// TestReproduceResume: a reproduction interrupted after k cells of a sweep
// (cancelled from the progress callback) and rerun with the same options
// resumes from the saved cells, and its directory is the uninterrupted
// run's byte for byte (.cells removed).
func TestReproduceResume(t *testing.T) {
	r, err := Lookup("ou2024-bernoulli")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	o := Options{Runs: 3, Horizon: 2000, Workers: 1, Now: fixedClock, Out: filepath.Join(base, "whole")}
	if _, err := Run(context.Background(), r, o); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, o.Out)

	o.Out = filepath.Join(base, "resumed")
	ctx, cancel := context.WithCancel(context.Background())
	const k = 4
	o.Progress = func(p sim.Progress) {
		if p.CellsDone-p.Resumed >= k {
			cancel()
		}
	}
	if _, err := Run(ctx, r, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	cells, _ := filepath.Glob(filepath.Join(o.Out, sim.CellsDir, "*", "e*-r*.json"))
	if len(cells) != k {
		t.Fatalf("%d cells saved after the interruption, want %d", len(cells), k)
	}
	var log bytes.Buffer
	o.Progress, o.Log = nil, &log
	if _, err := Run(context.Background(), r, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log.Bytes(), []byte("resumed 4 of")) {
		t.Errorf("the rerun does not report resuming 4 cells:\n%s", log.String())
	}
	sameTree(t, "resumed vs uninterrupted", readTree(t, o.Out), want)
}
