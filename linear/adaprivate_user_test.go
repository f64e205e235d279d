package linear

import (
	"math"
	"testing"
)

// TestUserClipperSpentUserAddsNothing: a user whose clipping budget C² is
// used up (nothing left to release) and whose new batch sum is zero adds
// exactly 0 to the released sum: no 0/0 when the remaining radius and the
// sum's norm are both 0.
func TestUserClipperSpentUserAddsNothing(t *testing.T) {
	for _, centre := range []bool{false, true} {
		u := newUserClipper(2, 1, centre, false)
		r2 := u.radius * u.radius * capFraction
		u.spent[7] = r2 // the whole budget used in earlier batches
		x := []float64{0.6, 0.8}
		u.add(7, x, 0) // reward 0: r·x = 0
		s := make([]float64, 2)
		u.flush(s, 8)
		want := []float64{0, 0}
		if centre {
			want = []float64{0.3, 0.4} // the public centre ½x is added back
		}
		for i := range s {
			if math.IsNaN(s[i]) || s[i] != want[i] {
				t.Errorf("centre %v: released %v, want %v", centre, s, want)
				break
			}
		}
		if u.spent[7] != r2 {
			t.Errorf("centre %v: spent %v, want it unchanged at %v", centre, u.spent[7], r2)
		}
	}
}

// TestUserClipperRestoresMidBatch: a clipper saved in the middle of a batch
// (with and without centring), with a user who has used nothing (spent 0)
// and one who has used the whole squared radius, restores and flushes
// exactly as the original does.
func TestUserClipperRestoresMidBatch(t *testing.T) {
	for _, centre := range []bool{false, true} {
		u := newUserClipper(2, 1, centre, false)
		r2 := u.radius * u.radius
		u.spent[1], u.spent[2] = 0, r2
		u.add(3, []float64{0.6, 0.8}, 1)
		u.add(1, []float64{1, 0}, 0.5)
		st := u.state()
		v := newUserClipper(2, 1, centre, false)
		if err := v.restore(st); err != nil {
			t.Fatalf("centre %v: restoring a mid-batch state: %v", centre, err)
		}
		a, b := make([]float64, 2), make([]float64, 2)
		u.flush(a, 4)
		v.flush(b, 4)
		if a[0] != b[0] || a[1] != b[1] {
			t.Errorf("centre %v: restored clipper released %v, the original %v", centre, b, a)
		}
	}
}
