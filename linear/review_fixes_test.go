package linear

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/privacy"
)

// TestAdaPrivateChargesBeforeOutstandingRelease: with B decisions
// outstanding before any reward arrives, the first release happens inside an
// Update; the cost must have been charged by a Select before it (Metered
// contract, docs/accountant.md §2.6 condition (c)).
func TestAdaPrivateChargesBeforeOutstandingRelease(t *testing.T) {
	const d, B = 3, 3
	p, err := NewAdaPrivate(AdaPrivateOptions{Dim: d, Lambda: 1, V: 1, GammaV: 1, BatchSize: B, Sigma: 2},
		rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	cands := [][]float64{{1, 0, 0}, {0, 1, 0}}
	var charged float64
	var chosen [][]float64
	for range B {
		g := p.NextCost()
		charged += g.Value * g.Value
		chosen = append(chosen, cands[p.Select(cands)])
	}
	if charged == 0 {
		t.Fatal("no cost charged before B outstanding decisions")
	}
	for _, x := range chosen {
		p.Update(x, 1)
	}
	if p.Releases() != 1 {
		t.Fatalf("releases = %d, want 1", p.Releases())
	}
	want := p.ReleaseCost()
	if want.Notion != privacy.NotionGDP || charged < want.Value*want.Value*(1-1e-12) {
		t.Errorf("charged μ² = %v before the release, want ≥ %v (%v)", charged, want.Value*want.Value, want.Notion)
	}
	for range 10 * B {
		if g := p.NextCost(); g.Value != 0 {
			t.Fatalf("later rounds must cost nothing (parallel composition), got %v", g.Value)
		}
		x := cands[p.Select(cands)]
		p.Update(x, 0.5)
	}
}

// TestMTLinRelationIsJoint: MT private LinUCB/LinTS read round τ's own
// candidates without noise, so with private contexts only joint DP holds.
func TestMTLinRelationIsJoint(t *testing.T) {
	r := mtlinReport("mt-linucb", 6, 0.1)
	if !strings.Contains(r.Neighbouring, "joint DP") || !strings.Contains(r.Neighbouring, "OTHER rounds") {
		t.Errorf("relation %q must state joint DP", r.Neighbouring)
	}
}

// TestDGSRestoreRecertifiesLambdaMin: a saved λ_min bound above what the
// restored A certifies is refused (it sets the noise scale Δ = 1/λ_min). The
// old check only compared it with A's smallest diagonal entry.
func TestDGSRestoreRecertifiesLambdaMin(t *testing.T) {
	opts := DGSLinUCBOptions{Dim: 3, Horizon: 500, Epsilon: 5, Delta: 1e-5, Lambda: 1, Alpha: 1}
	p, err := NewDGSLinUCB(opts, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	cands := make([][]float64, 4)
	for i := range cands {
		cands[i] = make([]float64, 3)
	}
	for range 200 {
		for _, c := range cands {
			for j := range c {
				c[j] = r.Float64()*2 - 1
			}
		}
		i := p.Select(cands)
		p.Update(cands[i], r.Float64())
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// A faithful state restores.
	q, _ := NewDGSLinUCB(opts, rand.New(rand.NewPCG(7, 8)))
	if err := q.UnmarshalJSON(raw); err != nil {
		t.Fatalf("faithful state refused: %v", err)
	}
	// Inflate the bound to 99% of the smallest diagonal entry of A: allowed by
	// the old diagonal check, but far above λ_min of a non-diagonal A.
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	var st DGSLinUCBState
	if err := json.Unmarshal(env["state"], &st); err != nil {
		t.Fatalf("state: %v (keys %v)", err, env)
	}
	sym := make([]float64, 9)
	p.a.SymTo(sym)
	st.LamLow = 0.99 * min(sym[0], sym[4], sym[8])
	env["state"], _ = json.Marshal(st)
	bad, _ := json.Marshal(env)
	if err := q.UnmarshalJSON(bad); err == nil {
		t.Errorf("state with λ_min bound %v (diagonal %v, %v, %v) was accepted", st.LamLow, sym[0], sym[4], sym[8])
	}
}
