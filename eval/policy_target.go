package eval

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/bandit"
	// The policies register their descriptors on import.
	_ "github.com/dpbandit/dpbandit/linear"
	_ "github.com/dpbandit/dpbandit/mab"
)

// PolicyTargetInfo describes how PolicyTarget obtained the distribution.
type PolicyTargetInfo struct {
	Policy string // the spec, canonical
	// Draws is 0 when the distribution is exact (the policy implements
	// bandit.Propensities with exact probabilities, e.g. a deterministic
	// index rule), else the Monte Carlo draws behind it; SE bounds the
	// standard error of each probability, sqrt(p(1−p)/draws) ≤ 0.5/√draws
	// (0 when exact).
	Draws int
	SE    float64
}

// PolicyTarget returns a K-armed policy's action distribution, frozen, as
// a context-free target: the policy described by spec is built for the
// log's A actions (horizon n, generator seeded by seed) and never updated,
// so every round and position gets the distribution of its first Select.
// It is exact when the policy implements bandit.Propensities and says so
// (SelectProbs returns 0); otherwise it is the Monte Carlo frequency of
// draws calls (SelectProbs' own estimate, or Select called draws times on
// the frozen policy when it has no SelectProbs).
//
// A learning policy is not a fixed distribution: its value on the log is
// what Replay measures, on a uniformly random logger's log. PolicyTarget
// is the frozen (untrained) policy, for logs where replay does not apply.
// Contextual policies are not supported here.
func PolicyTarget(l *Log, spec string, draws int, seed uint64) (*ActionDist, PolicyTargetInfo, error) {
	var info PolicyTargetInfo
	if l == nil || l.A < 1 {
		return nil, info, errors.New("empty log")
	}
	if draws < 1 {
		return nil, info, fmt.Errorf("draws must be ≥ 1, got %d", draws)
	}
	sp, d, err := lookupSpec(spec)
	if err != nil {
		return nil, info, err
	}
	if d.New == nil {
		return nil, info, fmt.Errorf("%s is contextual: a fixed policy target supports K-armed policies only (replay a contextual policy on a uniform log instead)", sp.Name)
	}
	s := bandit.Setting{K: l.A, Horizon: max(l.N, 1)}
	p, err := d.CompleteFor(s, sp.Params)
	if err != nil {
		return nil, info, err
	}
	r := bandit.NewRand(seed, replaySeed2)
	pol, err := d.New(s, p, r)
	if err != nil {
		return nil, info, err
	}
	info.Policy = bandit.Spec{Name: sp.Name, Params: sp.Params}.String()
	t := &ActionDist{N: 1, A: l.A, P: 1, Shared: true, Values: make([]float64, l.A)}
	if pp, ok := pol.(bandit.Propensities); ok {
		info.Draws = pp.SelectProbs(nil, t.Values, draws, bandit.NewRand(seed, replaySeed2+1))
	} else {
		info.Draws = bandit.EstimateProbs(t.Values, draws, pol.Select)
	}
	if info.Draws > 0 {
		info.SE = 0.5 / math.Sqrt(float64(info.Draws))
	}
	return t, info, nil
}

// Learns reports whether the named policy learns from feedback: every
// policy of the registry does (bandit.Policy and bandit.Contextual have
// Update), so it is true for every known name.
func Learns(spec string) (bool, error) {
	if _, _, err := lookupSpec(spec); err != nil {
		return false, err
	}
	return true, nil
}

// lookupSpec parses a policy spec ("name[:key=value,...]") and finds its
// descriptor in the registry.
func lookupSpec(spec string) (bandit.Spec, bandit.Descriptor, error) {
	sp, err := bandit.ParseSpec(spec)
	if err != nil {
		return bandit.Spec{}, bandit.Descriptor{}, err
	}
	d, err := bandit.Lookup(bandit.AnyKind, sp.Name)
	if err != nil {
		return bandit.Spec{}, bandit.Descriptor{}, err
	}
	return sp, d, nil
}
