// Package mab holds the K-armed bandit policies, one file per algorithm, each
// registered with a Descriptor (parameters, defaults, valid ranges, privacy
// report, calibration to a budget). Every policy reads rewards in [0, 1] and
// implements bandit.Policy and bandit.Private; Select and Update do not
// allocate.
//
// Documentation, one page per family with the algorithm, parameters,
// privacy derivation and sources: docs/gaussian-ts.md (ts-gaussian,
// mts-gaussian, gaussian-ts), docs/dp-ts-ucb.md, docs/pure-dp-epochs.md
// (dp-se, anytime-lazy-ucb, lazy-dp-ts, dp-ts, adap-ucb), docs/tree-based.md
// (mt-ucb, mt-ts) and docs/baselines.md (ucb1, beta-ts).
package mab

import "github.com/dpbandit/dpbandit/bandit"

// register adds a K-armed descriptor to the one registry (bandit.Register).
func register(d bandit.Descriptor) { bandit.Register(d) }

// Lookup returns the descriptor of a K-armed policy by name. The error lists
// the known names.
func Lookup(name string) (bandit.Descriptor, error) { return bandit.Lookup(bandit.KArmed, name) }

// Names returns the K-armed policy names in sorted order.
func Names() []string { return bandit.Names(bandit.KArmed) }

// All returns every K-armed descriptor, sorted by name.
func All() []bandit.Descriptor { return bandit.All(bandit.KArmed) }

// Build constructs the policy described by spec for the setting, after
// completing its parameters with defaults and checking their ranges. It
// returns the completed parameters too.
func Build(spec bandit.Spec, s bandit.Setting, r bandit.Rand) (bandit.Policy, bandit.Params, error) {
	d, err := Lookup(spec.Name)
	if err != nil {
		return nil, nil, err
	}
	p, err := d.Complete(spec.Params)
	if err != nil {
		return nil, nil, err
	}
	pol, err := d.New(s, p, r)
	if err != nil {
		return nil, nil, err
	}
	return pol, p, nil
}
