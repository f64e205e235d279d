// Package repro holds one-command reproductions of the K-armed experiments of
// dpbandit's source papers (docs/reproductions.md E1–E14): each is a declarative value
// (a [Reproduction]) naming the paper and experiment, its full and quick
// sizes, the sweeps it runs through package sim, the figures it draws through
// package report, and the targets it checks.
//
// Running a reproduction ([Run]) writes into one directory:
//
//   - checks.json: {"checks": [{"name", "target", "measured", "tolerance",
//     "pass", "expected_to_fail", "reason", ...}]}, one entry per target of
//     docs/reproduction-decisions.md §3 for the experiment (qualitative targets turned into
//     measurable criteria with the seeds stated), plus a few consistency
//     checks; it holds no runtime, timestamp or path, so the full-size files
//     are committed (docs/repro/NAME/checks.json, see [Publish]) and CI
//     compares a fresh full-size run with them byte for byte;
//   - README.md: what was run, at what size, how long it took, the checks as a
//     table, the figures and the notes on what does not reproduce and why;
//   - the paper's figures as SVG and PNG;
//   - sweeps/KEY/: the raw results of every sweep (sim's summary.json,
//     curves.csv, runs.csv, manifest.json), from which every figure and check
//     can be recomputed.
//
// A target that docs/reproduction-decisions.md expects not to reproduce (a
// claim shown to be wrong, or a target decided not to be met as stated) is a
// check with expected_to_fail set and the reason (the decision and its
// diagnosis, evidence in docs/findings.md); it
// stays in the file. A run
// fails ([Outcome.Failed]) when a check that is not expected to fail does not
// pass at the size that was run.
//
// Every sweep is a pure function of its sim.Spec (seeded; results do not
// depend on the number of workers), so a reproduction's outputs are
// identical on every machine for the same size.
package repro

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpbandit/dpbandit/report"
)

// Size is how big a reproduction runs: the horizons (most experiments have
// one) and the independent runs per policy.
type Size struct {
	Horizons []int `json:"horizons"`
	Runs     int   `json:"runs"`
}

func (s Size) String() string {
	h := make([]string, len(s.Horizons))
	for i, t := range s.Horizons {
		h[i] = fmtInt(t)
	}
	if s.Runs == 0 {
		return "closed form"
	}
	if len(h) == 1 {
		return fmt.Sprintf("T = %s, %d runs", h[0], s.Runs)
	}
	return fmt.Sprintf("T ∈ {%s}, %d runs", strings.Join(h, ", "), s.Runs)
}

// Target is one checkable target of an experiment. Measure computes the
// measured value (as text) and whether the target is met; it runs after all
// sweeps. A target whose claim docs/reproduction-decisions.md shows to be wrong has ExpectedToFail.
type Target struct {
	ID             string // stable identifier, e.g. "E1.prepull"
	Name           string // short name for tables
	Source         string // where the target comes from (paper, docs/ page)
	Target         string // the target, with its criterion
	Tolerance      string
	ExpectedToFail bool
	// Reason says why the check is expected to fail: the docs/reproduction-decisions.md §2 item
	// that decides it and the diagnosis. Required when ExpectedToFail is
	// set, empty otherwise.
	Reason  string
	Measure func(c *Context) (measured string, pass bool, err error)
}

// FigureDef is one of the paper's figures. Build draws it from the results;
// it is written as File.svg and File.png.
type FigureDef struct {
	File    string // base name, e.g. "fig2_bernoulli"
	Caption string
	Build   func(c *Context) (report.Figure, error)
}

// Stage returns the sweeps of one stage of a reproduction. Stages run in
// order; a later stage may read the results of earlier ones (e.g. tuning on
// a separate seed before the reported runs).
type Stage func(c *Context) ([]Sweep, error)

// Reproduction is one experiment (or a group of experiments that share their
// runs) of one paper.
type Reproduction struct {
	Name        string // command name, e.g. "ou2024-bernoulli"
	Paper       string // citation tag and title
	Experiments string // docs/reproductions.md labels, e.g. "E5, E6"
	Section     string // the paper's section and figures
	Description string // one line for --list
	// Full is the paper's size (or docs/reproductions.md's choice where the paper is
	// silent); Quick finishes in well under a minute on 2 cores. A closed-form
	// reproduction has Runs = 0 and ignores --runs and --horizon.
	Full, Quick Size
	Seed        uint64
	Env         string // environment spec, for the README ("" for closed form)
	Metric      Metric // the regret the paper plots
	// Setup describes the sweeps (policies, grids, parameters) in words.
	Setup   []string
	Stages  []Stage
	Figures []FigureDef
	Targets []Target
	// Notes are caveats: assumptions where the paper is silent, and what does
	// not reproduce and why.
	Notes []string
}

// ClosedForm reports whether the reproduction runs no simulations.
func (r *Reproduction) ClosedForm() bool { return r.Full.Runs == 0 }

var registry []*Reproduction

// The reproductions, in the order of docs/reproductions.md.
func init() {
	register(ouGrid("ou2024-bernoulli", "E1", "§5.1, Fig 2", ouBernoulli, "fig2_bernoulli",
		"M-TS-Gaussian on Bernoulli arms at η ∈ {1, 2, 5}-GDP, (b, c) on c(b+1) = T/η² (Fig 2)", true))
	register(ouGrid("ou2024-truncexp", "E2", "§5.2, Fig 3", ouTruncExp, "fig3_truncexp",
		"M-TS-Gaussian on truncated-exponential arms at η ∈ {1, 2, 5}-GDP, (b, c) on c(b+1) = T/η² (Fig 3)", false))
	register(ouPrivacyCurves())
	register(ouVsPureDP())
	register(huAlpha())
	register(huSameBound())
	register(huSamePrivacy())
	register(huPureDP())
	register(mtMAB())
	register(mtReplay())
	// The AdaPrivate-TS reproductions (issue 4), after the K-armed ones so
	// that --list follows the papers' order.
	register(adaSynthetic())
	register(adaAblation())
	register(adaUserLevel())
	register(adaOPE())
	register(adaMovieLens())
	register(adaJester())
	register(adaJesterOPE())
	register(adaDPSVD())
}

func register(r *Reproduction) {
	if slices.ContainsFunc(registry, func(o *Reproduction) bool { return o.Name == r.Name }) {
		panic("repro: duplicate reproduction " + r.Name)
	}
	seen := map[string]bool{}
	for _, t := range r.Targets {
		if seen[t.ID] {
			panic("repro: duplicate target id " + t.ID + " in " + r.Name)
		}
		seen[t.ID] = true
	}
	registry = append(registry, r)
}

// All returns the reproductions in the order of docs/reproductions.md.
func All() []*Reproduction { return slices.Clone(registry) }

// Names returns the reproduction names in the order of All.
func Names() []string {
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.Name
	}
	return out
}

// Lookup returns the reproduction called name; the error lists the known
// names.
func Lookup(name string) (*Reproduction, error) {
	for _, r := range registry {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unknown reproduction %q (known: %s; see `dpbandit reproduce --list`)", name, strings.Join(Names(), ", "))
}
