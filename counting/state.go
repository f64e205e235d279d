package counting

import (
	"encoding/json"
	"fmt"
	"math"
)

// StateVersion is the version of [State] written by this package.
const StateVersion = 1

// State is everything a [Counter] keeps, in a form the service persists and
// restores ([Counter.State], [Restore]), so that a restart neither redraws a
// node's noise nor forgets one (docs/privacy-model.md rule 5). It marshals to
// JSON exactly (float64 values round-trip).
//
// The slices are indexed by level (length L). Level j is occupied iff bit j
// of Count is set; unoccupied levels are zero. Exact holds the exact sums of
// the occupied nodes: it is raw data, as sensitive as the rewards, and must
// be stored like them and never returned by the service (docs/privacy-model.md rule 2).
// Noisy holds the released node values and Smoothed (GLS only) their GLS
// estimates; both are DP outputs.
type State struct {
	Version  int              `json:"version"`
	Laplace  *LaplaceOptions  `json:"laplace,omitempty"`
	Gaussian *GaussianOptions `json:"gaussian,omitempty"`
	// Discrete records whether the nodes were released by discrete (secure)
	// mechanisms; Restore requires a Noise of the same kind.
	Discrete bool      `json:"discrete"`
	Count    int       `json:"count"`
	Exact    []float64 `json:"exact"`
	Noisy    []float64 `json:"noisy"`
	Smoothed []float64 `json:"smoothed,omitempty"`
}

// State returns a deep copy of the counter's state. Cost: O(L), allocates.
func (c *Counter) State() State {
	s := State{
		Version: StateVersion, Discrete: c.discrete, Count: c.count,
		Exact: append([]float64(nil), c.exact...), Noisy: append([]float64(nil), c.noisy...),
	}
	if c.gls {
		s.Smoothed = append([]float64(nil), c.gest...)
	}
	switch c.kind {
	case kindLaplace:
		o := c.lap
		s.Laplace = &o
	case kindGaussian:
		o := c.gauss
		s.Gaussian = &o
	}
	return s
}

// MarshalJSON encodes [Counter.State].
func (c *Counter) MarshalJSON() ([]byte, error) { return json.Marshal(c.State()) }

// Restore rebuilds a counter from a [State], with nz supplying the noise of
// the nodes completed from now on. It validates the options as the
// constructors do and checks the state's consistency (version, the noise
// kind, the count against the capacity, the slice lengths, zeros on
// unoccupied levels, finite values); errors wrap [ErrInvalid]. Nothing is
// drawn: the restored counter's Sum equals the saved one's, and with the same
// noise stream it continues exactly as the saved counter would have.
func Restore(s State, nz Noise) (*Counter, error) {
	if s.Version != StateVersion {
		return nil, fmt.Errorf("%w: state version %d, want %d", ErrInvalid, s.Version, StateVersion)
	}
	if nz == nil {
		return nil, fmt.Errorf("%w: noise source is nil (use SimNoise or SecureNoise)", ErrInvalid)
	}
	if nz.Discrete() != s.Discrete {
		return nil, fmt.Errorf("%w: state was written with discrete=%v noise, restoring with discrete=%v; use the same kind",
			ErrInvalid, s.Discrete, nz.Discrete())
	}
	var c *Counter
	var err error
	switch {
	case s.Laplace != nil && s.Gaussian == nil:
		c, err = NewLaplace(*s.Laplace, nz)
	case s.Gaussian != nil && s.Laplace == nil:
		c, err = NewGaussian(*s.Gaussian, nz)
	default:
		return nil, fmt.Errorf("%w: state must hold exactly one of laplace and gaussian options", ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("restoring counter: %w", err)
	}
	if s.Count < 0 || s.Count > c.capacity {
		return nil, fmt.Errorf("%w: state count %d outside [0, Capacity=%d]", ErrInvalid, s.Count, c.capacity)
	}
	L := c.levels
	if len(s.Exact) != L || len(s.Noisy) != L {
		return nil, fmt.Errorf("%w: state has %d exact and %d noisy levels, want L = %d", ErrInvalid, len(s.Exact), len(s.Noisy), L)
	}
	if c.gls != (s.Smoothed != nil) || (c.gls && len(s.Smoothed) != L) {
		return nil, fmt.Errorf("%w: state has %d smoothed levels with GLS=%v, want %d with GLS and none without",
			ErrInvalid, len(s.Smoothed), c.gls, L)
	}
	for j := range L {
		occupied := s.Count>>j&1 == 1
		vals := [3]float64{s.Exact[j], s.Noisy[j], 0}
		if c.gls {
			vals[2] = s.Smoothed[j]
		}
		for _, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) || (!occupied && v != 0) {
				return nil, fmt.Errorf("%w: state level %d holds %v (occupied=%v): values must be finite, and zero on unoccupied levels",
					ErrInvalid, j, v, occupied)
			}
		}
	}
	c.count = s.Count
	copy(c.exact, s.Exact)
	copy(c.noisy, s.Noisy)
	if c.gls {
		copy(c.gest, s.Smoothed)
	}
	c.sum = c.decompositionSum()
	return c, nil
}
