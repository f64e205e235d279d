// Package cli wires dpbandit's subcommands (kong). One file per subcommand
// group; each command writes results to Globals.Stdout and diagnostics to
// Globals.Stderr so tests can drive the CLI in-process.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// Globals are shared by every subcommand.
type Globals struct {
	Stdout io.Writer `kong:"-"`
	Stderr io.Writer `kong:"-"`
}

// root is the command tree. Each subcommand group lives in its own file.
type root struct {
	Simulate  simulateCmd  `cmd:"" help:"Simulate policies on an environment (parallel runs, equal-budget mode, shards)."`
	Merge     mergeCmd     `cmd:"" help:"Merge the shards of a sweep or a reproduction (simulate/reproduce --shard i/n)."`
	Policies  policiesCmd  `cmd:"" help:"List the policies, their parameters, defaults and ranges."`
	Recommend recommendCmd `cmd:"" help:"Which private policy learns at your arms, horizon and budget: an equal-budget simulation, ranked."`
	Reproduce reproduceCmd `cmd:"" help:"Reproduce a paper's experiment (figures, checks.json, README.md); --list shows them."`
	Evaluate  evaluateCmd  `cmd:"" help:"Off-policy evaluation on logged bandit feedback: IPS, SNIPS, DM, DR, Switch-DR with intervals."`
	Privacy   privacyCmd   `cmd:"" help:"The privacy accountant: convert, calibrate, compose; subsampled Gaussian (RDP)."`
	Audit     auditCmd     `cmd:"" help:"Empirical privacy audit: a lower bound on a policy's ε (and μ) from neighbouring runs, against its certificate."`
	Loadtest  loadtestCmd  `cmd:"" help:"Load a decision service on loopback: throughput and p50/p95/p99 latency of decide and reward."`
	Serve     serveCmd     `cmd:"" help:"Run the HTTP decision service (experiments, decisions, rewards, budgets, dashboard)."`
	Export    exportCmd    `cmd:"" help:"Export an experiment's decision log (raw rewards; admin key) as JSONL or an evaluation CSV."`
	Data      dataCmd      `cmd:"" help:"The public data sets: list them, fetch one (SHA-256 checked), verify local copies."`
	Version   versionCmd   `cmd:"" help:"Print the version and build information."`
}

const description = `dpbandit: differentially private bandits.

A library of bandit policies with a tight privacy accountant, a simulator that
compares them at equal privacy, one-command reproductions of the papers, and
an HTTP decision service that enforces a privacy budget.`

// Main runs the CLI with args (without the program name) and returns the exit
// code. Errors are printed as one line on stderr.
func Main(args []string, stdout, stderr io.Writer) int {
	var cli root
	g := &Globals{Stdout: stdout, Stderr: stderr}
	exit := -1
	parser, err := kong.New(&cli,
		kong.Name("dpbandit"),
		kong.Description(description),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code; panic(exitPanic{}) }),
		kong.Bind(g),
	)
	if err != nil {
		fmt.Fprintln(stderr, "dpbandit:", err)
		return 2
	}
	code := func() (code int) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(exitPanic); ok {
					code = exit
					return
				}
				panic(r)
			}
		}()
		ctx, err := parser.Parse(args)
		if err != nil {
			printUsageIfIncomplete(parser, err, stderr)
			fmt.Fprintln(stderr, "dpbandit:", err)
			return 2
		}
		if err := ctx.Run(); err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				fmt.Fprintln(stderr, "dpbandit:", err)
				return 2
			}
			fmt.Fprintln(stderr, "dpbandit:", err)
			return 1
		}
		return 0
	}()
	return code
}

type exitPanic struct{}

// printUsageIfIncomplete prints, on w, the usage of the command a parse
// error stopped at when that command only groups subcommands and none was
// given (`dpbandit`, `dpbandit privacy`): its subcommands with one line
// each, so the user sees what to type next. It is an error like any other
// incomplete command line, so Main then prints the error and exits 2 (not
// kong's own 80 for parse errors, nor 0: the command did nothing); the usage
// goes to stderr with it, while --help prints on stdout and exits 0.
func printUsageIfIncomplete(parser *kong.Kong, err error, w io.Writer) {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return
	}
	node := pe.Context.Selected()
	if node == nil {
		node = parser.Model.Node
	}
	if node.Type != kong.ApplicationNode && node.Type != kong.CommandNode {
		return
	}
	var groups bool
	for _, c := range node.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			groups = true
			break
		}
	}
	if !groups {
		return
	}
	stdout := parser.Stdout
	parser.Stdout = w
	defer func() { parser.Stdout = stdout }()
	if pe.Context.PrintUsage(false) == nil {
		fmt.Fprintln(w)
	}
}

// usageError marks an error in the user's input (exit code 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// badInput wraps a message as a usage error.
func badInput(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
