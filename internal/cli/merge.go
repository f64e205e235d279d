package cli

import (
	"errors"
	"fmt"

	"github.com/dpbandit/dpbandit/repro"
	"github.com/dpbandit/dpbandit/sim"
)

type mergeCmd struct {
	Dirs    []string `arg:"" help:"Output directories of 'dpbandit simulate --shard i/n' or 'dpbandit reproduce NAME --shard i/n', one per shard, any order." type:"existingdir" name:"DIR"`
	Out     string   `help:"Output directory for the merged results." required:"" type:"path" placeholder:"DIR"`
	JSON    bool     `help:"Also print summary.json to stdout (sweeps)."`
	LogX    bool     `name:"log-x" help:"Log-scale round axis in the plots (sweeps)."`
	NoPlots bool     `help:"Skip regret.svg and regret.png (sweeps)."`
	Workers int      `help:"Cells run in parallel by the stages a sharded reproduction left to the merge (default GOMAXPROCS)." placeholder:"N"`
}

func (mergeCmd) Help() string {
	return `Combines the partial results of a sharded sweep into the files an unsharded
'dpbandit simulate' writes (summary.json, curves.csv, runs.csv, manifest.json, plots).
It checks that every shard comes from the same spec (spec hash), that each shard i of n
appears once, and that every cell (policy, run) is present exactly once. The merged
summary.json is byte-for-byte the one of the unsharded sweep.

Example:

  for i in 0 1 2 3; do dpbandit simulate --spec sweep.toml --shard $i/4 --out part$i; done
  dpbandit merge part0 part1 part2 part3 --out merged

The shards of a reproduction ('dpbandit reproduce NAME --shard i/n', recognised by their
repro-shard.json) merge the same way: each sweep's cells are checked and combined, the
stages the shards left to the merge (those that read earlier sweeps' results) run here,
and --out receives the figures, checks.json, README.md and sweeps/ of the unsharded
'dpbandit reproduce NAME', byte for byte (README.md's runtimes are the merge's). The exit
code is then 1 when a check not expected to fail did not pass, as for reproduce.

  for i in 0 1 2 3; do dpbandit reproduce ada-ablation --quick --shard $i/4 --out part$i; done
  dpbandit merge part0 part1 part2 part3 --out out/e14
`
}

func (c *mergeCmd) Run(g *Globals) error {
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞) (0: GOMAXPROCS)", c.Workers)
	}
	if len(c.Dirs) > 0 && repro.IsShard(c.Dirs[0]) {
		return c.mergeReproduction(g)
	}
	res, err := sim.Merge(c.Dirs, sim.Default)
	if err != nil {
		return simErr(err)
	}
	agg, err := res.Aggregate()
	if err != nil {
		return simErr(err)
	}
	fmt.Fprintf(g.Stderr, "merged %d shards: %d cells of %s\n", len(c.Dirs), len(agg.Runs), sim.HashString(agg.Plan.Hash()))
	m := sim.NewManifest(agg.Plan, sim.Shard{}, 0, nil)
	m.MergedFrom = c.Dirs
	return writeResults(g, agg, c.Out, sim.WriteOptions{LogX: c.LogX, NoPlots: c.NoPlots}, c.JSON, m)
}

// mergeReproduction merges the shards of `dpbandit reproduce NAME --shard`.
func (c *mergeCmd) mergeReproduction(g *Globals) error {
	if c.JSON || c.LogX || c.NoPlots {
		return badInput("--json, --log-x and --no-plots apply to sweeps; %s is a reproduction shard", c.Dirs[0])
	}
	for _, d := range c.Dirs[1:] {
		if !repro.IsShard(d) {
			return badInput("%s is not a reproduction shard (no %s) but %s is", d, repro.ShardFile, c.Dirs[0])
		}
	}
	first, err := repro.ReadShard(c.Dirs[0])
	if err != nil {
		return badInput("%v", err)
	}
	ctx, stop := runContext()
	defer stop()
	o := repro.Options{Out: c.Out, Workers: c.Workers, Log: g.Stderr, Now: reproNow, Progress: progressFunc(ctx, nil),
		Command: reproduceCommand(first.Reproduction, c.Out, first.Quick, first.Runs, first.Horizon)}
	_, out, err := repro.Merge(ctx, c.Dirs, o)
	if errors.Is(err, repro.ErrShards) {
		return usageError{err}
	}
	if err != nil {
		return simErr(err) // a sweep's shards that do not merge: sim.ErrSpec, exit 2
	}
	fmt.Fprintf(g.Stderr, "merged %d shards of %s into %s\n", len(c.Dirs), first.Reproduction, c.Out)
	failed, err := printChecks(g, out)
	if err != nil {
		return err
	}
	return checksFailed(failed, c.Out)
}
