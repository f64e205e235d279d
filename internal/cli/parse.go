package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kong"

	"github.com/dpbandit/dpbandit/repro"
	"github.com/dpbandit/dpbandit/sim"
)

// Parse checks that args (without the program name) form a valid dpbandit
// command line, as Main would see it, without running the command: kong's
// parser with the command tree of Main (flags, types, required values,
// enums, existing files and directories), and then, for the commands that
// run long jobs on a cluster (simulate, reproduce, merge), the checks their
// Run makes before doing any work: the sweep spec resolves to a plan (env,
// policies, budget), --shard parses, the reproduction exists. The deploy
// manifests' tests run it on every command line they contain.
func Parse(args []string) error {
	var cli root
	g := &Globals{Stdout: io.Discard, Stderr: io.Discard}
	exited := false
	parser, err := kong.New(&cli,
		kong.Name("dpbandit"),
		kong.Description(description),
		kong.Writers(io.Discard, io.Discard),
		kong.Exit(func(int) { exited = true; panic(exitPanic{}) }),
		kong.Bind(g),
	)
	if err != nil {
		return err
	}
	var ctx *kong.Context
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(exitPanic); ok {
					err = nil
					return
				}
				panic(r)
			}
		}()
		ctx, err = parser.Parse(args)
		return err
	}()
	if err != nil || exited {
		return err // --help and friends are valid command lines
	}
	node := ctx.Selected()
	if node == nil {
		return errors.New("no command given")
	}
	if v, ok := node.Target.Addr().Interface().(interface{ check() error }); ok {
		return v.check()
	}
	return nil
}

// check is simulate's Run up to the point where it starts the cells.
func (c *simulateCmd) check() error {
	spec, err := c.spec()
	if err != nil {
		return err
	}
	if c.Shard != "" {
		if _, err := sim.ParseShard(c.Shard); err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
	}
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞) (0: GOMAXPROCS)", c.Workers)
	}
	_, err = sim.NewPlan(spec, sim.Default)
	return err
}

// check is reproduce's Run up to the point where it starts the sweeps.
func (c *reproduceCmd) check() error {
	if c.List {
		return nil
	}
	if c.Name == "" {
		return badInput("give a reproduction name or --list")
	}
	if c.Out == "" {
		return badInput("--out DIR is required")
	}
	if c.Name != "all" {
		if _, err := repro.Lookup(c.Name); err != nil {
			return err
		}
	}
	if c.Shard != "" {
		sh, err := sim.ParseShard(c.Shard)
		if err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
		if c.Name == "all" && sh.Sharded() {
			return badInput("--shard runs one reproduction: name it (not all)")
		}
	}
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞)", c.Workers)
	}
	if (c.Runs != nil && *c.Runs < 1) || (c.Horizon != nil && *c.Horizon < 1) {
		return badInput("--runs and --horizon must be ≥ 1")
	}
	return nil
}

// check is merge's check of its arguments before it reads the shards.
func (c *mergeCmd) check() error {
	if c.Workers < 0 {
		return badInput("--workers %d is outside its valid range [0, ∞)", c.Workers)
	}
	return nil
}
