package linear

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCoreSetSelectRule checks CoreSet-Elimination-DP's choice against an
// independent evaluation of its rule ([ADA] §4.8, as documented on Select):
// with m = xᵀθ̃ and width w = α(√(xᵀA⁻¹x) + σ‖A⁻¹x‖) for each clipped
// candidate x, keep the candidates whose m + w reaches the best m − w, and
// play the widest of them (the first on a tie). A⁻¹ comes from gonum's
// dense inverse here, not from the policy's Cholesky factor. 300 seeded
// random states and candidate sets, some candidates outside the unit ball,
// some with α = 0 (the greedy rule) and some with a duplicated candidate.
func TestCoreSetSelectRule(t *testing.T) {
	const d = 3
	r := rand.New(rand.NewPCG(7, 8))
	p, err := NewCoreSetElimDP(CoreSetElimOptions{Dim: d, Horizon: 1000, Rho: 1, Lambda: 1, Alpha: 0.7, Batch: 10}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sym := make([]float64, d*d)
	var ainv mat.Dense
	distinct := map[int]bool{}
	for trial := range 300 {
		p.est = blRandomSPD(r, d, 1, 1+trial%17)
		p.sigma = []float64{0, 0.3, 2}[trial%3]
		p.released = 1
		for i := range p.theta {
			p.theta[i] = r.NormFloat64()
		}
		p.est.SymTo(sym)
		if err := ainv.Inverse(mat.NewDense(d, d, append([]float64(nil), sym...))); err != nil {
			t.Fatal(err)
		}
		alpha := 0.7
		if trial%5 == 0 {
			alpha = 0 // no widths: the first candidate of largest xᵀθ̃
		}
		p.opts.Alpha = alpha
		n := 2 + trial%6
		cands := make([][]float64, n)
		mid, wid := make([]float64, n), make([]float64, n)
		bestLCB := math.Inf(-1)
		for i := range cands {
			x := make([]float64, d)
			for j := range x {
				x[j] = r.NormFloat64() * 0.8
			}
			if i == 1 && trial%7 == 0 {
				copy(x, cands[0]) // a duplicate: equal widths, the first wins
			}
			cands[i] = x
			xc := make([]float64, d)
			if nrm := math.Sqrt(mat.Dot(mat.NewVecDense(d, x), mat.NewVecDense(d, x))); nrm > 1 {
				for j := range x {
					xc[j] = x[j] / nrm
				}
			} else {
				copy(xc, x)
			}
			var s mat.VecDense
			s.MulVec(&ainv, mat.NewVecDense(d, xc))
			q := mat.Dot(mat.NewVecDense(d, xc), &s)
			mid[i] = mat.Dot(mat.NewVecDense(d, xc), mat.NewVecDense(d, p.theta))
			wid[i] = alpha * (math.Sqrt(q) + p.sigma*math.Sqrt(mat.Dot(&s, &s)))
			bestLCB = max(bestLCB, mid[i]-wid[i])
		}
		want, bw := -1, math.Inf(-1)
		for i := range cands {
			if mid[i]+wid[i] >= bestLCB-1e-12 && wid[i] > bw+1e-12 {
				want, bw = i, wid[i]
			}
		}
		if got := p.Select(cands); got != want {
			t.Fatalf("trial %d: chose %d, want %d (mid %v, width %v, best LCB %v)", trial, got, want, mid, wid, bestLCB)
		}
		distinct[want] = true
	}
	if len(distinct) < 3 {
		t.Errorf("the choices cover only %d positions: the test does not exercise the rule", len(distinct))
	}
}

// TestCoreSetRestoreInPhaseBound: phase ℓ (from 1) lasts B·2^{ℓ−1} rounds, and
// the phase ends (and releases) when that many have been played, so a state
// that holds B·2^{ℓ−1} rounds in its running phase cannot be reached and is
// refused; one round fewer is accepted.
func TestCoreSetRestoreInPhaseBound(t *testing.T) {
	const B = 10
	opts := CoreSetElimOptions{Dim: 2, Horizon: 1000, Rho: 1, Lambda: 1, Alpha: 0.7, Batch: B}
	p, err := NewCoreSetElimDP(opts, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.6, 0.8}
	for range B + 2*B + 3 { // phases 1 and 2 done, 3 rounds into phase 3 (length 4B)
		p.Update(x, 0.5)
	}
	raw, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]json.RawMessage // the options stay byte for byte
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(env["state"], &st); err != nil {
		t.Fatal(err)
	}
	if st["phase"] != 3.0 || st["in_phase"] != 3.0 {
		t.Fatalf("after %d rounds: phase %v, in phase %v; want 3 and 3", 3*B+3, st["phase"], st["in_phase"])
	}
	for _, c := range []struct {
		inPhase int
		ok      bool
	}{{4*B - 1, true}, {4 * B, false}, {8*B - 1, false}} {
		st["in_phase"], st["steps"] = c.inPhase, 3*B+c.inPhase
		env["state"], _ = json.Marshal(st)
		b, _ := json.Marshal(env)
		q, _ := NewCoreSetElimDP(opts, rand.New(rand.NewPCG(1, 1)))
		if err := q.UnmarshalJSON(b); (err == nil) != c.ok {
			t.Errorf("phase 3 (length %d) holding %d rounds: err = %v, want accepted %v", 4*B, c.inPhase, err, c.ok)
		}
	}
}

// TestCoreSetReportDerivation: the derivation states the per-release ρ/K.
func TestCoreSetReportDerivation(t *testing.T) {
	r := coresetReport(1, 4, 0.5)
	if !strings.Contains(r.Derivation, fmt.Sprintf("ρ/K = %g zCDP", 0.25)) {
		t.Errorf("derivation %q does not state ρ/K = 0.25", r.Derivation)
	}
}

// TestCoreSetNoReleaseBeyondTheBudget: the K phases that fit in the horizon
// are the releases the report pays for; played past the horizon, the policy
// makes no further release (θ̃ stays as the K-th release left it).
func TestCoreSetNoReleaseBeyondTheBudget(t *testing.T) {
	opts := CoreSetElimOptions{Dim: 2, Horizon: 100, Rho: 1, Lambda: 1, Alpha: 0.7, Batch: 10}
	p, err := NewCoreSetElimDP(opts, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.6, 0.8}
	for range opts.Horizon {
		p.Update(x, 0.5)
	}
	if p.released != p.k || p.k != 3 {
		t.Fatalf("after T = %d rounds: %d releases, K = %d; want K = 3 (phases of 10, 20, 40) all made", opts.Horizon, p.released, p.k)
	}
	theta := append([]float64(nil), p.theta...)
	for range 10 * opts.Horizon {
		p.Update(x, 0.5)
	}
	if p.released != p.k || theta[0] != p.theta[0] || theta[1] != p.theta[1] {
		t.Errorf("played 10T rounds past the horizon: %d releases (K = %d), θ̃ %v → %v; want no release", p.released, p.k, theta, p.theta)
	}
}
