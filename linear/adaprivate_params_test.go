package linear

import (
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// TestAdaOptionsTunesV0AtEveryDimension: with lambda0 > 0, AdaPrivate-TS's
// initial scale is [ADA] §4.2's tuned v0 = 1 + σ_b/(d·√λ0) at every
// dimension d ≥ 1, one included; AdaPrivate-UCB and lambda0 = 0 keep the
// given v.
func TestAdaOptionsTunesV0AtEveryDimension(t *testing.T) {
	d, err := Lookup("adaprivate-ts")
	if err != nil {
		t.Fatal(err)
	}
	for _, dim := range []int{1, 2, 7} {
		p, err := d.Complete(bandit.Params{"lambda0": 0.25})
		if err != nil {
			t.Fatal(err)
		}
		o, err := adaOptions(false, bandit.Setting{Dim: dim, K: 3, Horizon: 100}, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := TunedV0(o, 0.25); o.V != want || !(want > 1) {
			t.Errorf("d = %d, lambda0 = 0.25: v = %v, want the tuned %v", dim, o.V, want)
		}
		p0, _ := d.Complete(nil)
		u, err := adaOptions(true, bandit.Setting{Dim: dim, K: 3, Horizon: 100}, p)
		if err != nil {
			t.Fatal(err)
		}
		if u.V != p0["v"] {
			t.Errorf("d = %d: AdaPrivate-UCB's v = %v, want the default %v (no tuning)", dim, u.V, p0["v"])
		}
	}
}
