package linear

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/linear/lineartest"
)

// TestBaselinesRestoreAtTheEndOfTheHorizon: a baseline's state after its
// whole horizon (every scheduled release made) restores into a fresh
// policy, which saves the same state again. The conformance suite saves at
// T/2; this covers the counters at their upper ends.
func TestBaselinesRestoreAtTheEndOfTheHorizon(t *testing.T) {
	s := bandit.Setting{Dim: 3, K: 4, Horizon: 200}
	for _, name := range blNames {
		t.Run(name, func(t *testing.T) {
			d, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			p, err := d.Complete(blSmallParams(name))
			if err != nil {
				t.Fatal(err)
			}
			pol, err := d.NewContextual(s, p, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lineartest.Play(pol, lineartest.NewEnv(s.Dim, s.K, 1), rand.New(rand.NewPCG(3, 4)), s.Horizon); err != nil {
				t.Fatal(err)
			}
			st, err := pol.(json.Marshaler).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := d.NewContextual(s, p, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if err := fresh.(json.Unmarshaler).UnmarshalJSON(st); err != nil {
				t.Fatalf("restoring the state after %d rounds: %v", s.Horizon, err)
			}
			again, _ := fresh.(json.Marshaler).MarshalJSON()
			if string(again) != string(st) {
				t.Errorf("restored state differs:\n%s\n%s", again, st)
			}
		})
	}
}

// TestBatchedReportDerivation: the derivation shown with batched-agg-dp's
// report states the per-release cost ρ/K.
func TestBatchedReportDerivation(t *testing.T) {
	r := batchedReport(1, 4, 0.5)
	if want := fmt.Sprintf("ρ/K = %g zCDP each", 0.25); !strings.Contains(r.Derivation, want) {
		t.Errorf("derivation %q does not state %q", r.Derivation, want)
	}
}
