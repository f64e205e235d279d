package sim

import (
	"slices"

	"github.com/dpbandit/dpbandit/bandit"
	// The contextual policies register themselves with package bandit.
	_ "github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/mab"
)

// MinC is the smallest variance multiplier c that the equal-budget grid of
// M-TS-Gaussian keeps ([OU] Alg 2; docs/gaussian-ts.md §1.4: the regret theory needs c ≥ 1).
const MinC = 1.0

func defaultRegistry() Registry {
	return Registry{Lookup: mab.Lookup, LookupContextual: lookupContextual, Expand: expandMTS}
}

// lookupContextual finds a contextual policy (package linear registers
// them) in the one bandit registry.
func lookupContextual(name string) (bandit.Descriptor, error) {
	return bandit.Lookup(bandit.ContextualKind, name)
}

// expandMTS expands mts-gaussian without an explicit b into the equal-budget
// grid of mab.MTSGrid (b over a grid, c from c(b+1) = T/μ² or its certified
// counterpart, keeping c ≥ MinC). A spec that sets b (or c) is calibrated
// by the descriptor's Calibrate instead.
func expandMTS(sp bandit.Spec, s bandit.Setting, t bandit.Target) ([]bandit.Params, bool, error) {
	if sp.Name != "mts-gaussian" || slices.Contains(sp.Set, "b") || slices.Contains(sp.Set, "c") {
		return nil, false, nil
	}
	sets, err := mab.MTSGrid(s, t, MinC)
	return sets, err == nil, err
}
