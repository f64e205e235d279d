package audit

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
	_ "github.com/dpbandit/dpbandit/linear" // registers the contextual policies
	_ "github.com/dpbandit/dpbandit/mab"    // registers the K-armed policies
	"github.com/dpbandit/dpbandit/privacy"
)

// GaussianReleaseName is the spec name of the built-in one-step Gaussian
// release (GaussianRelease): "gaussian-release[:n=N,noise=S]".
const GaussianReleaseName = "gaussian-release"

// Target is what Resolve builds: the mechanism's name (the spec with its
// completed parameters), the neighbouring pairs to search, and the report
// the audit checks.
type Target struct {
	Name       string
	Params     bandit.Params
	Candidates []Candidate
	Report     privacy.Report
}

// Resolve builds the audit target of a policy spec for the setting: a
// registered K-armed or contextual policy (calibrated to the budget when
// one is given and the policy has something to calibrate, as the simulator
// does), or the built-in gaussian-release. Contextual policies get
// features from featureSeed.
func Resolve(spec bandit.Spec, s bandit.Setting, budget *bandit.Target, featureSeed uint64) (Target, error) {
	if spec.Name == GaussianReleaseName {
		return resolveGaussian(spec)
	}
	d, err := bandit.Lookup(bandit.AnyKind, spec.Name)
	if err != nil {
		return Target{}, err
	}
	if !d.Private || d.Report == nil {
		return Target{}, fmt.Errorf("audit: %s states no privacy guarantee; there is nothing to audit", spec.Name)
	}
	if d.NewContextual != nil && s.Dim < 1 {
		return Target{}, fmt.Errorf("audit: %s is contextual: give the feature dimension (--dim, ≥ 1)", spec.Name)
	}
	params := maps.Clone(spec.Params)
	if params == nil {
		params = bandit.Params{}
	}
	if budget != nil && d.Calibrate != nil {
		cp, err := d.Calibrate(s, *budget, maps.Clone(spec.Params))
		if err != nil {
			return Target{}, fmt.Errorf("calibrating %s to the budget: %w", spec, err)
		}
		maps.Copy(params, cp)
	}
	full, err := d.CompleteFor(s, params)
	if err != nil {
		return Target{}, err
	}
	rep, err := d.Report(s, full)
	if err != nil {
		return Target{}, fmt.Errorf("privacy report of %s: %w", spec.Name, err)
	}
	if !rep.Private() {
		return Target{}, fmt.Errorf("audit: %s states no privacy guarantee; there is nothing to audit", spec.Name)
	}
	cands, err := PolicyCandidates(d, s, full, featureSeed)
	if err != nil {
		return Target{}, err
	}
	// The name shows the parameters given, calibrated or derived (those
	// that differ from their defaults); Params has them all.
	shown := bandit.Params{}
	for _, q := range d.Params {
		if _, set := params[q.Name]; set || full[q.Name] != q.Default {
			shown[q.Name] = full[q.Name]
		}
	}
	return Target{Name: specName(spec.Name, shown), Params: full, Candidates: cands, Report: rep}, nil
}

func resolveGaussian(spec bandit.Spec) (Target, error) {
	g := GaussianRelease{N: 1, NoiseScale: 1}
	for k, v := range spec.Params {
		switch k {
		case "n":
			if v != float64(int(v)) || v < 1 || v > 1<<40 {
				return Target{}, fmt.Errorf("%s: parameter n = %v must be an integer in [1, 2^40]", GaussianReleaseName, v)
			}
			g.N = int(v)
		case "noise":
			g.NoiseScale = v
		default:
			return Target{}, fmt.Errorf("%s: unknown parameter %q (known: n, noise)", GaussianReleaseName, k)
		}
	}
	cands, err := GaussianCandidates(g)
	if err != nil {
		return Target{}, err
	}
	p := bandit.Params{"n": float64(g.N), "noise": g.NoiseScale}
	return Target{Name: specName(GaussianReleaseName, p), Params: p, Candidates: cands, Report: g.Report()}, nil
}

func specName(name string, p bandit.Params) string {
	if len(p) == 0 {
		return name
	}
	keys := slices.Sorted(maps.Keys(p))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(p[k], 'g', 6, 64)
	}
	return name + ":" + strings.Join(parts, ",")
}
