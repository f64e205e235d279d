package repro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpbandit/dpbandit/sim"
)

// ShardFile is the file a sharded reproduction writes into its directory.
const ShardFile = "repro-shard.json"

const shardFormat = "dpbandit-repro-shard/1"

// ShardInfo is the content of repro-shard.json: which reproduction, at which
// size, which shard, and the sweeps whose partial results are in
// sweeps/KEY/partial.json.
type ShardInfo struct {
	Format       string    `json:"format"`
	Reproduction string    `json:"reproduction"`
	Quick        bool      `json:"quick"`
	Runs         int       `json:"runs,omitempty"`    // --runs override (0: the size's)
	Horizon      int       `json:"horizon,omitempty"` // --horizon override (0: the size's)
	Size         Size      `json:"size"`
	Shard        sim.Shard `json:"shard"`
	Sweeps       []string  `json:"sweeps"`
	// Deferred is the first stage (1-based) that reads the results of a
	// sweep split over the shards, and so runs in the merge with every
	// later stage; 0 when the shards ran every stage.
	Deferred int `json:"deferred,omitempty"`
}

// RunShard runs shard o.Shard (i of n) of a reproduction: every sweep's
// cells c with c mod n = i (as `dpbandit simulate --shard`), written as
// sweeps/KEY/partial.json and manifest.json, and repro-shard.json. Figures,
// checks and README.md are made by [Merge], which gives byte for byte the
// directory of the unsharded run.
//
// A stage that reads the results of an earlier sweep (a tuning stage whose
// choice sets the reported runs, or a stage that writes tables) cannot run
// on one shard's part: the shard stops before it (ShardInfo.Deferred), and
// the merge runs it and every later stage itself, unsharded. A stage that
// computes without sim sweeps (the replay of mt2015-replay) runs on every
// shard and again in the merge.
func RunShard(ctx context.Context, r *Reproduction, o Options) (*ShardInfo, error) {
	if !o.Shard.Sharded() {
		return nil, fmt.Errorf("repro: shard %s does not split the cells (need n ≥ 2); use Run", o.Shard)
	}
	c, logw, err := start(ctx, r, o)
	if err != nil {
		return nil, err
	}
	info := &ShardInfo{Format: shardFormat, Reproduction: r.Name, Quick: o.Quick, Runs: o.Runs, Horizon: o.Horizon,
		Size: c.Size, Shard: o.Shard, Sweeps: slices.Clone(c.keys), Deferred: c.deferred}
	if info.Sweeps == nil {
		info.Sweeps = []string{}
	}
	if err := writeJSONFile(filepath.Join(o.Out, ShardFile), info); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(o.Out, sim.CellsDir)); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "%s shard %s: %d sweep(s) written to %s; combine the shards with: dpbandit merge DIR... --out DIR\n",
		r.Name, o.Shard, len(info.Sweeps), o.Out)
	return info, nil
}

// IsShard reports whether dir holds a sharded reproduction (repro-shard.json).
func IsShard(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ShardFile))
	return err == nil
}

// ReadShard reads dir/repro-shard.json.
func ReadShard(dir string) (*ShardInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, ShardFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, shardErrorf("%s has no %s: is it the --out of `dpbandit reproduce NAME --shard i/n`?", dir, ShardFile)
	}
	if err != nil {
		return nil, err
	}
	var s ShardInfo
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, shardErrorf("%s: %v", filepath.Join(dir, ShardFile), err)
	}
	if s.Format != shardFormat {
		return nil, shardErrorf("%s: format %q, want %q", filepath.Join(dir, ShardFile), s.Format, shardFormat)
	}
	return &s, nil
}

// ErrShards matches the errors of [Merge] and [ReadShard] about the
// directories given: not shards, of different runs, missing or repeated.
var ErrShards = errors.New("the directories are not the complete shards of one reproduction")

type shardError struct{ error }

func (shardError) Is(target error) bool { return target == ErrShards }
func (e shardError) Unwrap() error      { return e.error }

func shardErrorf(format string, a ...any) error { return shardError{fmt.Errorf(format, a...)} }

// Merge combines the directories of every shard of one sharded reproduction
// (any order) into o.Out: the sweeps the shards ran are merged (sim.Merge:
// same spec, every cell exactly once), the deferred stages run here, and
// the figures, checks.json and README.md are written as by an unsharded
// [Run] with the shards' size, which they equal byte for byte (README.md's
// runtimes aside: they are this merge's). o's Out, Workers, Log, Command,
// NoResume, Progress and Now are used; the size comes from the shards.
func Merge(ctx context.Context, dirs []string, o Options) (*Reproduction, *Outcome, error) {
	if len(dirs) == 0 {
		return nil, nil, shardErrorf("merge: no shard directories given")
	}
	infos := make([]*ShardInfo, len(dirs))
	for i, d := range dirs {
		s, err := ReadShard(d)
		if err != nil {
			return nil, nil, err
		}
		infos[i] = s
	}
	first := infos[0]
	owner := map[int]string{}
	for i, s := range infos {
		if s.Reproduction != first.Reproduction || s.Quick != first.Quick || s.Runs != first.Runs || s.Horizon != first.Horizon {
			return nil, nil, shardErrorf("merge: %s is %s (quick %t, runs %d, horizon %d) but %s is %s (quick %t, runs %d, horizon %d): not shards of one run",
				dirs[i], s.Reproduction, s.Quick, s.Runs, s.Horizon, dirs[0], first.Reproduction, first.Quick, first.Runs, first.Horizon)
		}
		if s.Shard.Count != first.Shard.Count {
			return nil, nil, shardErrorf("merge: %s is shard %s but %s is shard %s: the run was split differently", dirs[i], s.Shard, dirs[0], first.Shard)
		}
		if !slices.Equal(s.Sweeps, first.Sweeps) || s.Deferred != first.Deferred {
			return nil, nil, shardErrorf("merge: %s ran sweeps %v (deferred stage %d) but %s ran %v (deferred stage %d)",
				dirs[i], s.Sweeps, s.Deferred, dirs[0], first.Sweeps, first.Deferred)
		}
		if d, dup := owner[s.Shard.Index]; dup {
			return nil, nil, shardErrorf("merge: %s and %s are both shard %s", d, dirs[i], s.Shard)
		}
		owner[s.Shard.Index] = dirs[i]
	}
	if n := first.Shard.Count; len(owner) != n {
		var missing []string
		for i := range n {
			if _, ok := owner[i]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", i, n))
			}
		}
		return nil, nil, shardErrorf("merge: shard(s) %s of %s missing (have %d of %d)", strings.Join(missing, ", "), first.Reproduction, len(owner), n)
	}
	r, err := Lookup(first.Reproduction)
	if err != nil {
		return nil, nil, shardErrorf("merge: %w", err)
	}
	o.Quick, o.Runs, o.Horizon, o.Shard = first.Quick, first.Runs, first.Horizon, sim.Shard{}
	if got := r.EffectiveSize(o); !slices.Equal(got.Horizons, first.Size.Horizons) || got.Runs != first.Size.Runs {
		return nil, nil, shardErrorf("merge: the shards ran %s at %s, this dpbandit sizes it %s", r.Name, first.Size, got)
	}
	o.merge = map[string][]string{}
	for _, key := range first.Sweeps {
		for _, d := range dirs {
			o.merge[key] = append(o.merge[key], filepath.Join(d, SweepsDir, key))
		}
	}
	out, err := Run(ctx, r, o)
	return r, out, err
}
