package linear

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAdaPrivateOptionBounds: each documented range accepts its closed ends
// and refuses what lies just outside: γ_v ∈ (0, 1] (0 refused), B ≥ 1
// (1 accepted, 0 refused), q = amp ∈ [0, 1] (1 accepted).
func TestAdaPrivateOptionBounds(t *testing.T) {
	base := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7, Sigma: 0.5}
	for _, c := range []struct {
		name string
		edit func(o *AdaPrivateOptions)
		ok   bool
	}{
		{"gammav=0", func(o *AdaPrivateOptions) { o.GammaV = 0 }, false},
		{"gammav=1", func(o *AdaPrivateOptions) { o.GammaV = 1 }, true},
		{"B=1", func(o *AdaPrivateOptions) { o.BatchSize = 1 }, true},
		{"B=0", func(o *AdaPrivateOptions) { o.BatchSize = 0 }, false},
		{"amp=1", func(o *AdaPrivateOptions) { o.Amp = 1 }, true},
	} {
		o := base
		c.edit(&o)
		_, err := NewAdaPrivate(o, rand.New(rand.NewPCG(1, 2)))
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want accepted = %v", c.name, err, c.ok)
		}
	}
}

// TestAdaPrivateFirstChoice: before any release the estimate is θ = 0, so
// AdaPrivate-UCB's score is α·‖x‖_{V⁻¹} = α‖x‖/√λ and it must choose the
// candidate of larger norm (an optimistic bonus, added, not subtracted or
// divided); among identical candidates both rules keep the first (the
// package's tie rule: the lowest index).
func TestAdaPrivateFirstChoice(t *testing.T) {
	base := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7, Sigma: 0.5}
	for _, ucb := range []bool{true, false} {
		o := base
		o.UCB = ucb
		p, err := NewAdaPrivate(o, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		if ucb {
			if got := p.Select([][]float64{{0.5, 0}, {1, 0}}); got != 1 {
				t.Errorf("UCB chose candidate %d of norms (0.5, 1), want 1", got)
			}
		}
		if got := p.Select([][]float64{{0.6, 0.8}, {0.6, 0.8}}); got != 0 {
			t.Errorf("UCB=%v chose candidate %d of two identical ones, want 0", ucb, got)
		}
	}
}

// TestAdaPrivateKeepsItsOwnPrior: the policy copies the prior mean θ0 it is
// given, so a caller who reuses the slice afterwards does not change the
// options the policy reports in its saved state.
func TestAdaPrivateKeepsItsOwnPrior(t *testing.T) {
	prior := []float64{0.5, 0}
	o := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7, Sigma: 0.5, Theta0: prior}
	p, err := NewAdaPrivate(o, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	prior[0] = -9
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"theta0":[0.5,0]`) {
		t.Fatalf("saved state after the caller changed its slice: %s", b)
	}
}

// TestAdaPrivateLearnsFromReleases: without subsampling every reward
// enters the released batch sums. With σ = 1e-6, B = 1 and width α = 0.01,
// after e₁ has paid 1 four times and e₂ paid 0 three times, AdaPrivate-UCB
// must choose e₁ (estimate 0.8 against 0). A release that dropped the
// rewards (noise only, |θ| ~ 1e-6) would leave only the bonuses, where the
// less-played e₂ leads by 0.01·(1/2 − 1/√5) ≈ 5e-4, so it would choose e₂.
func TestAdaPrivateLearnsFromReleases(t *testing.T) {
	o := AdaPrivateOptions{Dim: 2, UCB: true, Lambda: 1, Alpha: 0.01, GammaV: 1, BatchSize: 1, Sigma: 1e-6}
	p, err := NewAdaPrivate(o, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	e1, e2 := []float64{1, 0}, []float64{0, 1}
	for range 4 {
		p.Update(e1, 1)
	}
	for range 3 {
		p.Update(e2, 0)
	}
	if got := p.Select([][]float64{e2, e1}); got != 1 {
		t.Fatalf("chose candidate %d after e1 paid 1 and e2 paid 0, want 1 (e1)", got)
	}
}

// TestAdaPrivateRestoresFreshAndZeroScale: a fresh policy's state (no
// rounds, updates, releases or forced rounds) and the state of a policy
// whose exploration scale is 0 (V = 0) load back: every lower bound of the
// restore check is met with equality there.
func TestAdaPrivateRestoresFreshAndZeroScale(t *testing.T) {
	for _, v := range []float64{1, 0} {
		o := AdaPrivateOptions{Dim: 2, Lambda: 1, V: v, Alpha: 1, GammaV: 1, BatchSize: 3, Sigma: 0.5, Forced: 2}
		p, err := NewAdaPrivate(o, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := NewAdaPrivate(o, rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		if err := q.UnmarshalJSON(b); err != nil {
			t.Errorf("V = %v: a fresh policy's state does not restore: %v", v, err)
		}
	}
}

// TestAdaPrivateRefusesAFullBatch: a stored state whose open batch already
// holds B updates is refused. Such a batch would never be released (the
// release fires when the count reaches B, and it would go past it), so a
// policy restored from it would silently stop learning. The forged state
// keeps updates = releases·B + count consistent, so only the count check
// can refuse it.
func TestAdaPrivateRefusesAFullBatch(t *testing.T) {
	o := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 3, Sigma: 0.5}
	p, err := NewAdaPrivate(o, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.6, 0.8}
	for range 2 {
		p.Select([][]float64{x})
		p.Update(x, 1)
	}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	forged := strings.Replace(strings.Replace(good, `"count":2`, `"count":3`, 1), `"updates":2`, `"updates":3`, 1)
	if forged == good || strings.Count(forged, ":3") < 2 {
		t.Fatalf("test setup: count and updates not found in %s", good)
	}
	q, err := NewAdaPrivate(o, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.UnmarshalJSON([]byte(good)); err != nil {
		t.Fatalf("the genuine state (count 2 of B = 3): %v", err)
	}
	if err := q.UnmarshalJSON([]byte(forged)); err == nil || !strings.Contains(err.Error(), "count 3") {
		t.Errorf("a state with count = B = 3: %v, want refused", err)
	}
}
