package bandit

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/privacy"
)

// Params are a policy's numeric parameters by name.
type Params map[string]float64

// Param describes one parameter of a policy: its default and valid range.
type Param struct {
	Name    string
	Default float64
	Min     float64 // inclusive lower bound
	Max     float64 // inclusive upper bound (+Inf when unbounded)
	Integer bool
	Doc     string
	// Serving marks a switch for serving (such as grid: secure noise) whose
	// default changes no simulation draw: at its default it does not key
	// the simulator's random streams, so adding it to a policy does not
	// move that policy's seeded results.
	Serving bool
}

// StreamParams returns p without the serving switches that are at their
// default (Param.Serving): what keys a policy's simulation streams.
func (d Descriptor) StreamParams(p Params) Params {
	var out Params
	for _, ps := range d.Params {
		if v, ok := p[ps.Name]; ok && ps.Serving && v == ps.Default {
			if out == nil {
				out = maps.Clone(p)
			}
			delete(out, ps.Name)
		}
	}
	if out == nil {
		return p
	}
	return out
}

// Check returns an error naming the parameter and its valid range when v is
// outside it.
func (p Param) Check(policy string, v float64) error {
	if math.IsNaN(v) || v < p.Min || v > p.Max {
		return fmt.Errorf("%s: parameter %s = %v is outside its valid range %s", policy, p.Name, v, p.Range())
	}
	if p.Integer && v != math.Trunc(v) {
		return fmt.Errorf("%s: parameter %s = %v must be an integer in %s", policy, p.Name, v, p.Range())
	}
	return nil
}

// Range renders the valid range, e.g. "[0, 1]" or "[1, ∞)".
func (p Param) Range() string {
	hi := "∞)"
	if !math.IsInf(p.Max, 1) {
		hi = strconv.FormatFloat(p.Max, 'g', -1, 64) + "]"
	}
	return "[" + strconv.FormatFloat(p.Min, 'g', -1, 64) + ", " + hi
}

// Target is an equal-budget privacy target: either (Epsilon, Delta) or a GDP
// parameter Mu (with Delta for reporting).
type Target struct {
	Epsilon float64
	Delta   float64
	Mu      float64 // if > 0, the target is Mu-GDP
	// Basis says which value is set equal to the target: BasisPaper (the
	// source paper's formula, as the papers calibrated by hand; valid but
	// conservative where the tight value is smaller) or BasisCertified (the
	// project's certified value). Where the paper's value is invalid
	// (docs/findings.md), calibration always uses the certified value.
	Basis string
}

// Calibration bases for Target.Basis.
const (
	BasisPaper     = "paper"
	BasisCertified = "certified"
)

// Descriptor is a registry entry: how to build a policy from a Spec, what it
// guarantees, and how to calibrate its free parameters to a budget.
type Descriptor struct {
	Name    string
	Summary string // one line for `dpbandit policies`
	Source  string // paper and algorithm number
	Private bool
	Params  []Param
	// New builds the policy. Params are already completed with defaults and
	// range-checked by Build.
	New func(s Setting, p Params, r Rand) (Policy, error)
	// NewContextual builds a contextual policy (set instead of New); the
	// setting's Dim is the feature dimension and K the candidates per round.
	NewContextual func(s Setting, p Params, r Rand) (Contextual, error)
	// Report states the privacy of the policy for the setting without running it.
	Report func(s Setting, p Params) (privacy.Report, error)
	// Calibrate returns parameters (a subset; the rest keep their defaults or
	// the user's values) that meet the target for the setting. Nil for
	// non-private policies or policies with nothing to calibrate.
	Calibrate func(s Setting, t Target, p Params) (Params, error)
	// Resolve, if set, fills parameters derived from the others (for example
	// a noise scale σ left at 0 and derived from epsilon and delta), so the
	// parameters reported are exactly the ones the policy runs with. It
	// receives completed parameters and returns the full set.
	Resolve func(s Setting, p Params) (Params, error)
	// Serving says whether and how the decision service may run the policy
	// on live traffic (docs/privacy-model.md rule 4). Nil means simulation only: the
	// policy keeps or releases values with floating-point noise from the
	// simulation samplers, which is attackable (Mironov 2012), so the
	// service refuses it.
	Serving *Serving
}

// Serving describes a policy the decision service may run.
type Serving struct {
	// Why states why serving is safe, e.g. "only the argmax of Gaussian
	// draws is released" or "not private".
	Why string
	// Params are forced when serving (e.g. grid=1: secure discrete noise on
	// released batch increments); a request may not override them.
	Params Params
	// DurableSelect marks policies whose Select changes state their privacy
	// accounting relies on (DP-TS-UCB counts the fresh samples drawn per
	// estimate), so a decision must be durable before it is returned.
	DurableSelect bool
}

// CompleteFor completes p with defaults, checks every range (Complete), and
// then fills derived parameters with Resolve when the descriptor has one.
func (d Descriptor) CompleteFor(s Setting, p Params) (Params, error) {
	full, err := d.Complete(p)
	if err != nil || d.Resolve == nil {
		return full, err
	}
	return d.Resolve(s, full)
}

// Complete fills in defaults and checks every parameter against its range.
// Unknown parameter names are an error that lists the known ones.
func (d Descriptor) Complete(p Params) (Params, error) {
	out := Params{}
	for _, q := range d.Params {
		out[q.Name] = q.Default
	}
	for k, v := range p {
		i := slices.IndexFunc(d.Params, func(q Param) bool { return q.Name == k })
		if i < 0 {
			if len(d.Params) == 0 {
				return nil, fmt.Errorf("%s: unknown parameter %q (%s takes no parameters)", d.Name, k, d.Name)
			}
			names := make([]string, len(d.Params))
			for j, q := range d.Params {
				names[j] = q.Name
			}
			return nil, fmt.Errorf("%s: unknown parameter %q (known: %s)", d.Name, k, strings.Join(names, ", "))
		}
		if err := d.Params[i].Check(d.Name, v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// Spec is a parsed policy specification "name[:key=value,...]".
type Spec struct {
	Name   string
	Params Params
	// Set lists the parameter names given explicitly, in order.
	Set []string
}

// ParseSpec parses "name[:key=value,...]", e.g. "mts-gaussian:b=10,c=5".
func ParseSpec(s string) (Spec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	if name == "" {
		return Spec{}, fmt.Errorf("policy spec %q: missing policy name (form: name[:key=value,...])", s)
	}
	sp := Spec{Name: name, Params: Params{}}
	if rest == "" {
		return sp, nil
	}
	for kv := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return Spec{}, fmt.Errorf("policy spec %q: %q is not key=value", s, kv)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return Spec{}, fmt.Errorf("policy spec %q: value of %s is not a number: %q", s, k, v)
		}
		if _, dup := sp.Params[k]; dup {
			return Spec{}, fmt.Errorf("policy spec %q: parameter %s given twice", s, k)
		}
		sp.Params[k] = f
		sp.Set = append(sp.Set, k)
	}
	return sp, nil
}

// String renders the spec in canonical form with parameters sorted by name.
func (s Spec) String() string {
	if len(s.Params) == 0 {
		return s.Name
	}
	keys := make([]string, 0, len(s.Params))
	for k := range s.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(s.Params[k], 'g', -1, 64)
	}
	return s.Name + ":" + strings.Join(parts, ",")
}

// NewRand returns a seeded simulation generator (PCG). Library code never
// uses the global generator.
func NewRand(seed1, seed2 uint64) Rand { return rand.New(rand.NewPCG(seed1, seed2)) }
