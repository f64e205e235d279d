package mab

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestDPTSUCBPrefersTheBetterArm: with two arms whose rewards are always 1
// and always 0, DP-TS-UCB (Hu & Hegde, UAI 2022) plays the better arm in most
// rounds after its K initial pulls. Its samples are Mean + N(0, ln(T)^α)
// (and their running maximum once an epoch's draws are spent), so each
// round it prefers arm 1 with probability Φ(1/(√2·sd)) ≥ 0.6 at T = 2000,
// α = 0.5; over 1998 rounds the share falls below 0.5 with negligible
// probability (fixed seed). A selection loop that never updates its best
// value (comparing against +Inf, or with the comparison inverted) keeps arm
// 0 and plays arm 1 once.
func TestDPTSUCBPrefersTheBetterArm(t *testing.T) {
	const T = 2000
	p, err := NewDPTSUCB(DPTSUCBOptions{K: 2, Horizon: T, Alpha: 0.5, C0: DefaultC0}, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	better := 0
	for round := range T {
		a := p.Select()
		p.Update(a, float64(a))
		if round >= 2 && a == 1 {
			better++
		}
	}
	if share := float64(better) / (T - 2); share < 0.5 {
		t.Fatalf("the better arm was played in %.3f of the rounds after the initial pulls, want ≥ 0.5", share)
	} else {
		t.Logf("better arm share %.3f", share)
	}
}

// TestDPTSUCBRestoresItsOwnEdgeStates: states the policy produces at the
// edges of the restore check's ranges load back: a fresh policy (no pulls,
// no draws), and one right after its initial pulls with rewards 0 (every
// arm in epoch 1 with mean 0 and no draws yet). Each bound of the check
// (draws, pulls, epoch and mean at their smallest) is met with equality
// here, so a check that is strict at any of them refuses a valid state.
func TestDPTSUCBRestoresItsOwnEdgeStates(t *testing.T) {
	o := DPTSUCBOptions{K: 3, Horizon: 500, Alpha: 0.5, C0: DefaultC0}
	p, err := NewDPTSUCB(o, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	restore := func(what string) {
		t.Helper()
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := NewDPTSUCB(o, rand.New(rand.NewPCG(2, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if err := q.UnmarshalJSON(b); err != nil {
			t.Fatalf("%s: the policy's own state does not restore: %v", what, err)
		}
	}
	restore("fresh")
	for range o.K {
		p.Update(p.Select(), 0)
	}
	for i, a := range p.State().Arms {
		if a.N != 1 || a.Epoch != 1 || a.Mean != 0 || a.Draws != 0 {
			t.Fatalf("arm %d after the initial pulls: %+v", i, a)
		}
	}
	restore("after the initial pulls")
}

// TestDPTSUCBRefusesForgedEpochs: the restore check refuses an arm whose
// open epoch is already full (O = 2^r: Update would step past the closing
// count and the epoch would never close) and an arm in epoch 62 (its next
// epoch's size 2^63 overflows int), while the same state with O = 2^r − 1
// or epoch 61 loads.
func TestDPTSUCBRefusesForgedEpochs(t *testing.T) {
	o := DPTSUCBOptions{K: 2, Horizon: 500, Alpha: 0.5, C0: DefaultC0}
	p, err := NewDPTSUCB(o, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for range o.K {
		p.Update(p.Select(), 0)
	}
	for _, c := range []struct {
		arm  DPTSUCBArm
		want bool // loads
	}{
		{DPTSUCBArm{N: 1, Epoch: 1, O: 1, Pulled: 2}, true},
		{DPTSUCBArm{N: 1, Epoch: 1, O: 2, Pulled: 3}, false},
		{DPTSUCBArm{N: 1 << 60, Epoch: 61, Pulled: 1<<61 - 1}, true},
		{DPTSUCBArm{N: 1 << 61, Epoch: 62, Pulled: 1<<62 - 1}, false},
	} {
		st := p.State()
		st.Arms[0] = c.arm
		b, err := json.Marshal(snapshot[DPTSUCBOptions, DPTSUCBState]{Policy: "dp-ts-ucb", Options: o, State: st})
		if err != nil {
			t.Fatal(err)
		}
		q, err := NewDPTSUCB(o, rand.New(rand.NewPCG(2, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if err := q.UnmarshalJSON(b); (err == nil) != c.want {
			t.Errorf("arm %+v: restore error %v, want loads = %v", c.arm, err, c.want)
		}
	}
}
