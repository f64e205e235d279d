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

// TestBatchedBaselinesNoiseMatchesTheReport ties each batched baseline's
// actual noise σ to the ρ its report certifies, through the Gaussian
// mechanism's cost 1/(2σ²) per release at sensitivity 1 (Bun & Steinke 2016,
// Prop 1.6): coreset-elim-dp's releases see disjoint rewards (parallel
// composition: one release's cost), batched-agg-dp's K releases all see
// every earlier reward (sequential: K times it). A σ computed from the wrong
// share of ρ under-reports.
func TestBatchedBaselinesNoiseMatchesTheReport(t *testing.T) {
	s := bandit.Setting{Dim: 3, K: 4, Horizon: 1000}
	for _, c := range []struct {
		name     string
		releases func(k int) float64 // how many releases one reward enters
	}{
		{"coreset-elim-dp", func(int) float64 { return 1 }},
		{"batched-agg-dp", func(k int) float64 { return float64(k) }},
	} {
		d, _ := Lookup(c.name)
		p, err := d.Complete(bandit.Params{"batch": 50, "epsilon": 2})
		if err != nil {
			t.Fatal(err)
		}
		pol, err := d.NewContextual(s, p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		var sigma float64
		var k int
		switch q := pol.(type) {
		case *CoreSetElimDP:
			sigma, k = q.Sigma(), q.k
		case *BatchedAggDP:
			sigma, k = q.Sigma(), q.k
		}
		cost := c.releases(k) / (2 * sigma * sigma)
		own := pol.(bandit.Private).Privacy()
		if got := own.Certified.Value; got < cost || got > cost*(1+1e-9) {
			t.Errorf("%s: K = %d, σ = %v: certified ρ = %v, want the noise's %v", c.name, k, sigma, got, cost)
		}
		rep, err := d.Report(s, p)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Certified != own.Certified || rep.Derivation != own.Derivation {
			t.Errorf("%s: the descriptor's report differs from the policy's:\n%+v\n%+v", c.name, rep, own)
		}
	}
}

// TestBatchedAggRefusesAFullBatch: a stored batched-agg-dp state whose open
// batch already holds B rounds is refused. The release fires when the count
// reaches B; restored past it, the batch would never be released and the
// policy would silently stop learning. The forged state differs from a
// genuine one (10 rounds into a batch of 50) only in that count.
func TestBatchedAggRefusesAFullBatch(t *testing.T) {
	s := bandit.Setting{Dim: 3, K: 4, Horizon: 200}
	pol, _, err := Build(bandit.Spec{Name: "batched-agg-dp", Params: blSmallParams("batched-agg-dp")}, s, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lineartest.Play(pol, lineartest.NewEnv(s.Dim, s.K, 1), rand.New(rand.NewPCG(3, 4)), 10); err != nil {
		t.Fatal(err)
	}
	st, err := pol.(json.Marshaler).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	good := string(st)
	forged := strings.Replace(good, `"in_batch":10`, `"in_batch":50`, 1)
	if forged == good {
		t.Fatalf("test setup: no \"in_batch\":10 in %s", good)
	}
	fresh, _, err := Build(bandit.Spec{Name: "batched-agg-dp", Params: blSmallParams("batched-agg-dp")}, s, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.(json.Unmarshaler).UnmarshalJSON([]byte(good)); err != nil {
		t.Fatalf("the genuine state: %v", err)
	}
	if err := fresh.(json.Unmarshaler).UnmarshalJSON([]byte(forged)); err == nil || !strings.Contains(err.Error(), "in batch 50") {
		t.Errorf("a state with in_batch = B = 50: %v, want refused", err)
	}
}
