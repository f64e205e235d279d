package sim

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/env"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
)

// Registry is where a sweep finds its policies. [Default] is the mab
// registry; tests and other packages may supply their own.
type Registry struct {
	// Lookup returns a policy's descriptor; its error names the known policies.
	Lookup func(name string) (bandit.Descriptor, error)
	// LookupContextual returns a contextual policy's descriptor (one with
	// NewContextual), for contextual environments (package ctxenv). Nil:
	// the registry has no contextual policies.
	LookupContextual func(name string) (bandit.Descriptor, error)
	// Expand, when non-nil, may replace one policy spec by several
	// calibrated parameter sets in equal-budget mode (M-TS-Gaussian without
	// an explicit b becomes a grid over b). ok is false when the spec is not
	// expanded; it is then calibrated with Descriptor.Calibrate.
	Expand func(sp bandit.Spec, s bandit.Setting, t bandit.Target) (sets []bandit.Params, ok bool, err error)
}

// Entry is one policy configuration of a plan: a column of the results.
type Entry struct {
	// Name is the label in tables, plots and curves.csv; unique in the plan.
	// Calibrated values are shown with 6 significant digits.
	Name string
	// Spec is the policy as run: the user's parameters plus the calibrated
	// ones, exact. Running Spec without a budget reproduces the entry.
	Spec bandit.Spec
	// From is the user's spec this entry came from.
	From bandit.Spec
	// Params are all parameters, defaults included.
	Params bandit.Params
	// Calibrated names the parameters chosen by equal-budget calibration.
	Calibrated []string
	// Private reports whether the policy states a privacy guarantee.
	Private bool
	// Note says what equal-budget mode did ("not private", "calibrated: …").
	Note string
	// Report is the policy's privacy report for the setting and Statement
	// is that report at the spec's δ.
	Report    privacy.Report
	Statement privacy.Statement

	desc    bandit.Descriptor
	cellKey int // identifies the policy stream: hash of the complete spec
	cp      int // contextual plans: index of the non-private counterpart entry, or −1
}

// Plan is a resolved sweep: a normalized spec, its environment, and the
// policy entries after equal-budget calibration. Cell c = entry·Runs + run
// is a pure function of (stream hash, entry's complete spec, run), so
// results do not depend on workers, scheduling or sharding.
//
// Streams. The environment stream of run r is env.Streams' environment
// stream for specHash = env.HashString(Env + "\x00" + decimal Seed): it
// depends on the environment and seed only, so every policy of run r sees
// the same reward table (common random numbers), and the same seed gives
// the same rewards whatever the horizon or the other policies. The policy
// stream uses as cell identifier the FNV-1a hash of the entry's complete
// spec (every parameter, defaults included): a policy's results do not
// change when other policies are added to the sweep.
type Plan struct {
	Spec Spec // normalized
	// Env is the K-armed environment; nil when the plan is contextual.
	Env env.Env
	// Ctx is the contextual environment (run 0's instance; each cell runs
	// on Ctx.ForRun(run)); nil when the plan is K-armed. See contextual.go.
	Ctx         ctxenv.Env
	Setting     bandit.Setting
	Entries     []Entry
	Checkpoints []int     // rounds at which regret is recorded (log grid ∪ Spec.ExtraCheckpoints); last is Horizon
	Means       []float64 // K-armed: the arms' means (nil when contextual)
	Best        float64   // K-armed: the best mean (0 when contextual)

	hash, streamHash uint64
}

// Default is the registry of the K-armed policies of package mab.
var Default = defaultRegistry()

// NewPlan validates and resolves a spec. In equal-budget mode (Spec.Budget
// set) every private policy is calibrated to the budget: with
// Registry.Expand when it expands the spec, else with its
// Descriptor.Calibrate given the user's parameters (the returned parameters
// override the user's and the defaults). The calibrated report must meet
// the target on the target's basis, or NewPlan fails. Non-private policies
// run unchanged and are noted "not private".
//
// Every entry is built once (and discarded) so that parameter errors
// surface here. Errors about the input match ErrSpec.
func NewPlan(spec Spec, reg Registry) (*Plan, error) {
	s, e, ce, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	p := &Plan{Spec: s, Env: e, Ctx: ce, Checkpoints: MergeCheckpoints(Checkpoints(s.Horizon, s.Checkpoints), s.ExtraCheckpoints)}
	if ce != nil {
		p.Setting = bandit.Setting{K: ce.K(), Horizon: s.Horizon, Dim: ce.Dim()}
	} else {
		p.Setting = bandit.Setting{K: e.K(), Horizon: s.Horizon}
		p.Means, p.Best = e.Means(), e.Best()
	}
	p.hash = s.Hash()
	p.streamHash = env.HashString(s.Env + "\x00" + strconv.FormatUint(s.Seed, 10))
	for _, sp := range s.Policies {
		entries, err := p.resolve(sp, reg)
		if err != nil {
			return nil, err
		}
		p.Entries = append(p.Entries, entries...)
	}
	seen := map[string]int{}
	keys := map[string]bool{}
	for i := range p.Entries {
		en := &p.Entries[i]
		if n := seen[en.Name]; n > 0 {
			en.Name += "#" + strconv.Itoa(n+1)
		}
		seen[en.Name]++
		full := bandit.Spec{Name: en.Spec.Name, Params: en.Params}.String()
		if keys[full] {
			return nil, inputErrorf("policy %s occurs twice after calibration (from %s)", full, en.From)
		}
		keys[full] = true
		// Serving switches at their default do not key the stream (see
		// bandit.Param.Serving): adding one to a policy moves nothing.
		en.cellKey = int(env.HashString(bandit.Spec{Name: en.Spec.Name, Params: en.desc.StreamParams(en.Params)}.String()))
	}
	p.matchCounterparts()
	return p, nil
}

// Hash is the spec hash (Spec.Hash of the normalized spec).
func (p *Plan) Hash() uint64 { return p.hash }

// Cells is the number of (entry, run) cells.
func (p *Plan) Cells() int { return len(p.Entries) * p.Spec.Runs }

// Streams returns the environment and policy generators of one cell.
func (p *Plan) Streams(entry, run int) (envRand, policyRand *rand.Rand) {
	return env.Streams(p.streamHash, p.Entries[entry].cellKey, run)
}

// StreamSeeds returns the PCG seeds of one cell (for the manifest).
func (p *Plan) StreamSeeds(entry, run int) (envSeed, policySeed [2]uint64) {
	return env.StreamSeeds(p.streamHash, p.Entries[entry].cellKey, run)
}

func (p *Plan) resolve(sp bandit.Spec, reg Registry) ([]Entry, error) {
	lookup := reg.Lookup
	if p.Contextual() {
		if lookup = reg.LookupContextual; lookup == nil {
			return nil, inputErrorf("environment %s is contextual, but this registry has no contextual policies", p.Spec.Env)
		}
	}
	d, err := lookup(sp.Name)
	if err != nil {
		return nil, inputErr(p.kindHint(sp.Name, reg, err))
	}
	t := p.Spec.Budget
	var sets []bandit.Params // calibrated parameter sets; nil: none
	note := ""
	switch {
	case !d.Private:
		note = "not private"
	case t == nil:
	case reg.Expand != nil:
		xs, ok, err := reg.Expand(sp, p.Setting, *t)
		if err != nil {
			return nil, inputErr(fmt.Errorf("calibrating %s to %s: %w", sp, FormatBudget(*t), err))
		}
		if ok {
			sets = xs
			if len(sets) == 0 {
				return nil, inputErrorf("calibrating %s to %s: no parameter set meets the budget", sp, FormatBudget(*t))
			}
			break
		}
		fallthrough
	default:
		if d.Calibrate == nil {
			note = "private; nothing to calibrate"
			break
		}
		cp, err := d.Calibrate(p.Setting, *t, maps.Clone(sp.Params))
		if err != nil {
			return nil, inputErr(fmt.Errorf("calibrating %s to %s: %w", sp, FormatBudget(*t), err))
		}
		sets = []bandit.Params{cp}
	}
	if sets == nil {
		en, err := p.entry(d, sp, nil, note)
		if err != nil {
			return nil, err
		}
		return []Entry{en}, nil
	}
	out := make([]Entry, 0, len(sets))
	for _, cp := range sets {
		en, err := p.entry(d, sp, cp, "")
		if err != nil {
			return nil, err
		}
		out = append(out, en)
	}
	return out, nil
}

// entry completes, builds and reports one configuration: the user's spec sp
// with the calibrated parameters cp (nil: none) applied on top.
func (p *Plan) entry(d bandit.Descriptor, sp bandit.Spec, cp bandit.Params, note string) (Entry, error) {
	run := bandit.Spec{Name: sp.Name, Params: maps.Clone(sp.Params)}
	label := bandit.Params{}
	maps.Copy(label, sp.Params)
	var calibrated []string
	for _, k := range slices.Sorted(maps.Keys(cp)) { // sorted: notes are deterministic
		v := cp[k]
		old, set := sp.Params[k]
		if set && old == v {
			continue // the user's value, kept
		}
		if set {
			note = appendNote(note, fmt.Sprintf("calibration replaced %s=%g", k, old))
		}
		run.Params[k] = v
		label[k] = v
		calibrated = append(calibrated, k)
	}
	for k := range run.Params {
		run.Set = append(run.Set, k)
	}
	slices.Sort(run.Set)
	params, err := d.CompleteFor(p.Setting, run.Params)
	if err != nil {
		return Entry{}, inputErr(err)
	}
	if err := p.tryBuild(d, params); err != nil {
		return Entry{}, inputErr(fmt.Errorf("%s: %w", run, err))
	}
	rep := privacy.NotPrivate(d.Name, "the policy states no privacy guarantee")
	if d.Report != nil {
		if rep, err = d.Report(p.Setting, params); err != nil {
			return Entry{}, inputErr(fmt.Errorf("privacy report of %s: %w", run, err))
		}
	}
	st, err := rep.At(p.Spec.Delta)
	if err != nil {
		return Entry{}, fmt.Errorf("privacy report of %s at δ=%g: %w", run, p.Spec.Delta, err)
	}
	st.Params = params
	if t := p.Spec.Budget; t != nil && cp != nil {
		a, err := bandit.Achieved(rep, *t, p.Spec.Delta)
		if err != nil {
			return Entry{}, fmt.Errorf("privacy report of %s: %w", run, err)
		}
		if !a.Meets {
			return Entry{}, fmt.Errorf("calibration of %s did not meet the budget %s: %s (a bug in the policy's calibration)",
				run, FormatBudget(*t), a)
		}
		note = appendNote(note, "calibrated: "+a.String())
	} else if t != nil && rep.Private() {
		a, err := bandit.Achieved(rep, *t, p.Spec.Delta)
		if err != nil {
			return Entry{}, fmt.Errorf("privacy report of %s: %w", run, err)
		}
		if a.Meets {
			note = appendNote(note, "within the budget: "+a.String())
		} else {
			note = appendNote(note, "OVER the budget: "+a.String())
		}
	}
	name := sp.Name
	if cp != nil && len(label) > 0 {
		keys := slices.Sorted(maps.Keys(label))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + report.Num(label[k], 6)
		}
		name += ":" + strings.Join(parts, ",")
	} else {
		name = sp.String()
	}
	return Entry{Name: name, Spec: run, From: sp, Params: params, Calibrated: calibrated,
		Private: rep.Private(), Note: note, Report: rep, Statement: st, desc: d, cp: -1}, nil
}

func appendNote(note, s string) string {
	if note == "" {
		return s
	}
	return note + "; " + s
}

// Describe writes what the plan will run: one line per entry with its
// privacy at the spec's δ and what equal-budget mode chose.
func (p *Plan) Describe(w io.Writer) error {
	tb := report.Table{Header: []string{"policy", "privacy (certified)", "ε at δ=" + report.Num(p.Spec.Delta, 3), "note"}}
	if p.Contextual() {
		tb.Header = append(tb.Header, "non-private counterpart")
	}
	for i, en := range p.Entries {
		priv := "none"
		if en.Private {
			priv = string(en.Report.Certified.Notion)
			if en.Report.Certified.Notion != privacy.NotionRDP {
				priv += " " + report.Num(en.Report.Certified.Value, 6)
			}
		}
		eps := "—"
		if en.Statement.Epsilon != nil {
			eps = report.Num(*en.Statement.Epsilon, 6)
		}
		row := []string{en.Name, priv, eps, en.Note}
		if p.Contextual() {
			cp := ""
			if c, ok := p.CounterpartOf(i); ok {
				cp = p.Entries[c].Name
			}
			row = append(row, cp)
		}
		tb.AddRow(row...)
	}
	head := fmt.Sprintf("%s, T=%d, %d runs, seed %d", p.Spec.Env, p.Spec.Horizon, p.Spec.Runs, p.Spec.Seed)
	if t := p.Spec.Budget; t != nil {
		head += ", equal budget " + FormatBudget(*t)
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	return tb.Text(w)
}
