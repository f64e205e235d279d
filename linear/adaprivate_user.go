package linear

import (
	"fmt"
	"math"
	"slices"
)

// userClipper implements the user-level clipping of AdaPrivate across the
// stream (docs/reproduction-decisions.md A15): per batch it accumulates each user's contribution
// c_u = Σ r·x (and, when clipping around the centre, m_u = ½Σx), and at the
// batch boundary clips c_u (or c_u − m_u) to the user's remaining radius so
// that the squared norms of a user's clipped contributions never sum to more
// than radius² over the stream, then adds the clipped contributions to the
// batch sum.
type userClipper struct {
	d      int
	radius float64 // C (around 0) or C/2 (around the centre)
	centre bool
	block  bool // users are ⌊t/k⌋: a user never returns once a later user has started

	spent map[uint64]float64 // Σ ‖clipped‖² per user so far
	idx   map[uint64]int     // users of the current batch → position in batch
	batch []userAcc          // batch[:n] are the current batch's accumulators, in order of first appearance
	n     int
}

type userAcc struct {
	id   uint64
	sum  []float64 // Σ r·x
	half []float64 // ½Σ x (centre only)
}

// capFraction leaves a relative margin of 2⁻⁴⁰ below radius² so that the
// rounding of the running sums can never push a user past it.
const capFraction = 1 - 0x1p-40

func newUserClipper(d int, c float64, centre, block bool) *userClipper {
	u := &userClipper{d: d, radius: c, centre: centre, block: block,
		spent: map[uint64]float64{}, idx: map[uint64]int{}}
	if centre {
		u.radius = c / 2
	}
	return u
}

func (u *userClipper) acc(id uint64) *userAcc {
	if i, ok := u.idx[id]; ok {
		return &u.batch[i]
	}
	if u.n == len(u.batch) {
		a := userAcc{sum: make([]float64, u.d)}
		if u.centre {
			a.half = make([]float64, u.d)
		}
		u.batch = append(u.batch, a)
	}
	a := &u.batch[u.n]
	a.id = id
	clear(a.sum)
	clear(a.half)
	u.idx[id] = u.n
	u.n++
	return a
}

// add records the clipped feature vector x with reward r for user id.
func (u *userClipper) add(id uint64, x []float64, r float64) {
	a := u.acc(id)
	axpyVec(r, x, a.sum)
	if u.centre {
		axpyVec(0.5, x, a.half)
	}
}

// flush adds every user's clipped contribution of the current batch to s, in
// order of first appearance, and starts a new batch. In block mode, users
// before next (the user of the next round) are forgotten: they never return.
func (u *userClipper) flush(s []float64, next uint64) {
	r2 := u.radius * u.radius * capFraction
	for k := range u.n {
		a := &u.batch[k]
		v := a.sum
		if u.centre {
			for i := range v {
				v[i] -= a.half[i]
			}
		}
		norm := math.Sqrt(dotVec(v, v))
		rem := math.Sqrt(max(0, r2-u.spent[a.id]))
		c := 1.0
		if norm > rem {
			c = rem / norm
		}
		used := 0.0
		for i, vi := range v {
			w := c * vi
			used += w * w
			if u.centre {
				w += a.half[i]
			}
			s[i] += w
		}
		u.spent[a.id] += used
	}
	clear(u.idx)
	u.n = 0
	if u.block {
		// Users are ⌊t/k⌋, so every user seen so far is ≤ next and only
		// next itself can return. Clearing the map and putting next back
		// (rather than deleting the others one by one) leaves no
		// tombstones: the map never grows again once it has held one
		// batch's users, so steady-state rounds do not allocate (deletes
		// made its growth depend on the map's random hash seed).
		keep, ok := u.spent[next]
		clear(u.spent)
		if ok {
			u.spent[next] = keep
		}
	}
}

// UserClipState is the JSON form of the user-level accumulators: the squared
// norm each user has used so far, and the current batch's raw per-user sums
// in order of first appearance.
type UserClipState struct {
	Spent map[uint64]float64 `json:"spent"`
	Batch []UserAccState     `json:"batch"`
}

// UserAccState is one user's accumulator in the current batch.
type UserAccState struct {
	User uint64    `json:"user"`
	Sum  []float64 `json:"sum"`
	Half []float64 `json:"half,omitempty"`
}

func (u *userClipper) state() UserClipState {
	st := UserClipState{Spent: make(map[uint64]float64, len(u.spent)), Batch: make([]UserAccState, u.n)}
	for id, v := range u.spent {
		st.Spent[id] = v
	}
	for k := range u.n {
		a := &u.batch[k]
		st.Batch[k] = UserAccState{User: a.id, Sum: slices.Clone(a.sum)}
		if u.centre {
			st.Batch[k].Half = slices.Clone(a.half)
		}
	}
	return st
}

func (u *userClipper) restore(st UserClipState) error {
	r2 := u.radius * u.radius
	for id, v := range st.Spent {
		if !(v >= 0 && v <= r2) {
			return fmt.Errorf("user %d has used %v of the squared radius %v", id, v, r2)
		}
		u.spent[id] = v
	}
	for _, a := range st.Batch {
		if _, dup := u.idx[a.User]; dup {
			return fmt.Errorf("user %d appears twice in the batch", a.User)
		}
		if len(a.Sum) != u.d || !allFinite(a.Sum) || (u.centre && (len(a.Half) != u.d || !allFinite(a.Half))) ||
			(!u.centre && a.Half != nil) {
			return fmt.Errorf("user %d: accumulators must have d = %d finite entries", a.User, u.d)
		}
		acc := u.acc(a.User)
		copy(acc.sum, a.Sum)
		if u.centre {
			copy(acc.half, a.Half)
		}
	}
	return nil
}
