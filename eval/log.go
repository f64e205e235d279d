package eval

import (
	"fmt"
	"math"
)

// Log is logged bandit feedback in columns: round i took Action[i] at
// Position[i], observed Reward[i], and the logging policy chose that action
// at that position with probability PScore[i].
type Log struct {
	N int // rounds
	A int // actions, indexed 0..A-1
	P int // positions (slots), indexed 0..P-1; 1 for an ordinary bandit
	D int // context features per round (0: none)

	Action   []int32
	Position []int32 // nil when the log has no position column (all 0)
	Reward   []float64
	PScore   []float64 // in (0, 1]
	// Context is n×D, row-major: round i's features are Context[i*D:(i+1)*D].
	Context []float64
	// Timestamp is seconds (as read: a number, or RFC 3339 converted to Unix
	// seconds); nil when absent.
	Timestamp []float64

	// PiE is the target policy's action distribution when the log carries it
	// (pi_e_<a> columns), QHat a reward model's predictions (qhat_<a>); nil
	// otherwise.
	PiE  *ActionDist
	QHat *ActionDist

	// ActionNames maps indices to names when the action column held names
	// (index = order of first appearance); nil when it held indices.
	ActionNames []string
	// Ignored lists the input columns the reader did not recognise.
	Ignored []string
}

// Pos returns the position of round i (0 when the log has none).
func (l *Log) Pos(i int) int {
	if l.Position == nil {
		return 0
	}
	return int(l.Position[i])
}

// ActionDist is a table of values per (round, action, position): a policy's
// probabilities π(a | x_i, position p), or a reward model's predictions
// q̂(x_i, a, p). Values are stored row-major as [round][action][position]
// (OBP's action_dist layout, n×A×P). A table with P = 1 applies to every
// position; a Shared table holds one A×P block that applies to every round
// (a context-free policy).
type ActionDist struct {
	N, A, P int
	Shared  bool
	Values  []float64
}

// NewActionDist allocates an n×a×p table of zeros.
func NewActionDist(n, a, p int) *ActionDist {
	return &ActionDist{N: n, A: a, P: p, Values: make([]float64, n*a*p)}
}

// Uniform is the context-free target that picks each of a actions with
// probability 1/a at every position.
func Uniform(a int) *ActionDist {
	d := &ActionDist{N: 1, A: a, P: 1, Shared: true, Values: make([]float64, a)}
	for i := range d.Values {
		d.Values[i] = 1 / float64(a)
	}
	return d
}

// At returns the value for round i, action a, position p.
func (d *ActionDist) At(i, a, p int) float64 {
	return d.Values[d.offset(i, p)+a*d.P]
}

// offset is the index of (round i, action 0, position p); actions follow
// at stride P.
func (d *ActionDist) offset(i, p int) int {
	if d.P == 1 {
		p = 0
	}
	if d.Shared {
		i = 0
	}
	return i*d.A*d.P + p
}

// checkPolicy reports the first (round, position) of d whose probabilities
// are not a distribution over the actions (each in [0, 1], summing to 1
// within 1e-6), for the positions the log uses.
func (d *ActionDist) checkPolicy(l *Log, what string) error {
	if d.A != l.A {
		return fmt.Errorf("%s covers %d actions, the log has %d", what, d.A, l.A)
	}
	if !d.Shared && d.N != l.N {
		return fmt.Errorf("%s has %d rounds, the log has %d", what, d.N, l.N)
	}
	if d.P != 1 && d.P < l.P {
		return fmt.Errorf("%s covers %d positions, the log has %d", what, d.P, l.P)
	}
	rows := l.N
	if d.Shared {
		rows = 1
	}
	for i := range rows {
		for p := range d.P {
			var s float64
			base := d.offset(i, p)
			for a := range d.A {
				v := d.Values[base+a*d.P]
				if !(v >= 0 && v <= 1) {
					return fmt.Errorf("%s: round %d, action %d, position %d: probability %v is not in [0, 1]", what, i+1, a, p, v)
				}
				s += v
			}
			if math.Abs(s-1) > 1e-6 {
				return fmt.Errorf("%s: round %d, position %d: probabilities sum to %v, not 1", what, i+1, p, s)
			}
		}
	}
	return nil
}

// checkModel reports a reward table whose shape does not fit l or that
// holds a non-finite value.
func (d *ActionDist) checkModel(l *Log) error {
	if d.A != l.A || (!d.Shared && d.N != l.N) || (d.P != 1 && d.P < l.P) {
		return fmt.Errorf("reward model is %d×%d×%d, the log has %d rounds, %d actions, %d positions", d.N, d.A, d.P, l.N, l.A, l.P)
	}
	for k, v := range d.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("reward model: value %v at index %d is not finite", v, k)
		}
	}
	return nil
}
