package linear

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/bandit"
)

// register adds a contextual descriptor to the one registry (bandit.Register).
func register(d bandit.Descriptor) { bandit.Register(d) }

// Lookup returns the descriptor of a contextual policy by name. The error
// lists the known names.
func Lookup(name string) (bandit.Descriptor, error) {
	return bandit.Lookup(bandit.ContextualKind, name)
}

// Names returns the contextual policy names in sorted order.
func Names() []string { return bandit.Names(bandit.ContextualKind) }

// All returns every contextual descriptor, sorted by name.
func All() []bandit.Descriptor { return bandit.All(bandit.ContextualKind) }

// Build constructs the contextual policy described by spec for the setting
// (Dim = feature dimension, K = candidates per round), after completing its
// parameters with defaults and checking their ranges. It returns the
// completed parameters too.
func Build(spec bandit.Spec, s bandit.Setting, r bandit.Rand) (bandit.Contextual, bandit.Params, error) {
	d, err := Lookup(spec.Name)
	if err != nil {
		return nil, nil, err
	}
	p, err := d.Complete(spec.Params)
	if err != nil {
		return nil, nil, err
	}
	pol, err := d.NewContextual(s, p, r)
	if err != nil {
		return nil, nil, err
	}
	return pol, p, nil
}

// ---------------------------------------------------------------------------
// Helpers shared by the policy files of this package.

// errState is wrapped by every error about an inconsistent restored state.
var errState = errors.New("inconsistent policy state")

// checkDim returns an error unless the feature dimension d is ≥ 1.
func checkDim(policy string, d int) error {
	if d < 1 {
		return fmt.Errorf("%s: feature dimension d = %d must be ≥ 1", policy, d)
	}
	return nil
}

// checkPositive returns an error naming the parameter unless v is finite
// and > 0.
func checkPositive(policy, name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return fmt.Errorf("%s: parameter %s = %v must be finite and > 0", policy, name, v)
	}
	return nil
}

// checkNonNegative returns an error naming the parameter unless v is finite
// and ≥ 0.
func checkNonNegative(policy, name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 1) {
		return fmt.Errorf("%s: parameter %s = %v must be finite and ≥ 0", policy, name, v)
	}
	return nil
}

// mustUnitReward panics unless 0 ≤ r ≤ 1: the Contextual contract makes an
// out-of-range reward the caller's error, and every privacy statement of this
// package assumes it (docs/privacy-model.md rule 6). It does not allocate unless it fails.
func mustUnitReward(policy string, r float64) {
	if !(r >= 0 && r <= 1) {
		panic(fmt.Sprintf("linear: %s.Update: reward %v outside [0, 1]", policy, r))
	}
}

// mustDim panics unless len(x) == d (programmer error).
func mustDim(policy string, x []float64, d int) {
	if len(x) != d {
		panic(fmt.Sprintf("linear: %s: feature vector of length %d, want d = %d", policy, len(x), d))
	}
}

// mustCandidates panics unless there is at least one candidate.
func mustCandidates(policy string, n int) {
	if n < 1 {
		panic("linear: " + policy + ".Select with no candidates")
	}
}

// dotVec returns x·y; len(y) must be at least len(x).
func dotVec(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += x[j] * y[j]
		s1 += x[j+1] * y[j+1]
		s2 += x[j+2] * y[j+2]
		s3 += x[j+3] * y[j+3]
	}
	for ; j < len(x); j++ {
		s0 += x[j] * y[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyVec sets y ← y + a·x; len(y) must be at least len(x).
func axpyVec(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// clipFactor returns 1/max(1, ‖x‖₂): x times it is x clipped to the unit
// ball, x ← x/max(1, ‖x‖) ([ADA] Alg 1 line 5).
func clipFactor(x []float64) float64 {
	n2 := dotVec(x, x)
	if n2 <= 1 {
		return 1
	}
	return 1 / math.Sqrt(n2)
}

// roundUpRel returns x enlarged by 2⁻⁵⁰ relative (about 4 ulps), so that a
// privacy parameter computed with a handful of correctly rounded float64
// operations is never reported below its exact value (docs/privacy-model.md rule 1).
func roundUpRel(x float64) float64 { return x + x*0x1p-50 }

// intParam converts an integer-valued parameter to int, saturating far
// beyond any valid value so that a huge input fails range checks with its
// sign kept.
func intParam(v float64) int {
	const lim = 1 << 53
	switch {
	case v >= lim:
		return lim
	case v <= -lim:
		return -lim
	}
	return int(v)
}

// allFinite reports whether every value is finite.
func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// stateEnvelope is the JSON form of a policy's learning state: the policy
// name, the options it was built with (checked on restore) and the state.
// The generator is not part of it: the caller persists and restores the RNG
// separately (a PCG's MarshalBinary in simulation; the service reseeds its
// ChaCha8 from crypto/rand). The state holds raw statistics: it is for
// persistence only and must never be released (docs/privacy-model.md rule 2).
type stateEnvelope[S any] struct {
	Policy  string          `json:"policy"`
	Options json.RawMessage `json:"options"`
	State   S               `json:"state"`
}

func marshalState[S any](name string, opts any, st S) ([]byte, error) {
	o, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding options: %w", name, err)
	}
	return json.Marshal(stateEnvelope[S]{Policy: name, Options: o, State: st})
}

// unmarshalState decodes data, rejecting unknown fields, another policy's
// state, or options whose JSON encoding differs from the receiver's.
func unmarshalState[S any](data []byte, name string, opts any) (S, error) {
	var env stateEnvelope[S]
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return env.State, fmt.Errorf("%s: decoding state: %w", name, err)
	}
	if env.Policy != name {
		return env.State, fmt.Errorf("%s: state belongs to policy %q", name, env.Policy)
	}
	want, err := json.Marshal(opts)
	if err != nil {
		return env.State, fmt.Errorf("%s: encoding options: %w", name, err)
	}
	var got bytes.Buffer
	if err := json.Compact(&got, env.Options); err != nil {
		return env.State, fmt.Errorf("%s: decoding options: %w", name, err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		return env.State, fmt.Errorf("%s: state was saved with options %s, the policy has %s", name, got.Bytes(), want)
	}
	return env.State, nil
}
