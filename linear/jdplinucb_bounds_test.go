package linear

import (
	"strings"
	"testing"
)

// TestJDPOptionBounds: each of JDP-LinUCB's parameter ranges, at its closed
// end (accepted) and just past its open end (refused, naming the range).
func TestJDPOptionBounds(t *testing.T) {
	ok := JDPLinUCBOptions{Dim: 3, Horizon: 100, Epsilon: 1, Delta: 1e-5, Lambda: 1, Alpha: 1, Fail: 0.1}
	for _, c := range []struct {
		mod  func(*JDPLinUCBOptions)
		want string // "" = accepted
	}{
		{func(o *JDPLinUCBOptions) { o.Dim = 200 }, ""},
		{func(o *JDPLinUCBOptions) { o.Dim = 201 }, "outside [1, 200]"},
		{func(o *JDPLinUCBOptions) { o.Horizon = 2 }, ""},
		{func(o *JDPLinUCBOptions) { o.Horizon = 1 }, "horizon T = 1 is outside its valid range [2, ∞)"},
		{func(o *JDPLinUCBOptions) { o.Epsilon = 1e-6 }, ""},
		{func(o *JDPLinUCBOptions) { o.Delta = 0 }, "delta = 0 is outside its valid range (0, 1)"},
		{func(o *JDPLinUCBOptions) { o.Delta = 1 }, "delta = 1 is outside its valid range (0, 1)"},
		{func(o *JDPLinUCBOptions) { o.Fail = 0 }, "fail = 0 is outside its valid range (0, 1)"},
		{func(o *JDPLinUCBOptions) { o.Fail = 1 }, "fail = 1 is outside its valid range (0, 1)"},
	} {
		o := ok
		c.mod(&o)
		err := checkJDP(o)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", o, err, c.want)
		}
	}
}
