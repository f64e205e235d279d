package linear

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdaPrivateClipsFeatures kills "AdaPrivate features not clipped"
// (issue 14). Library callers may pass features with ‖x‖ > 1; the policy
// must clip them to the unit ball itself (x ← x/max(1, ‖x‖), [ADA] Alg 1
// line 5), because the release's L2 sensitivity 1 (‖r·x − r′·x‖ ≤ 1) and
// the user-level bounds need ‖x‖ ≤ 1. Two policies on the same seed, one
// fed features of norm 5 and one fed the same features divided by their
// norm (mixed with features of norm < 1, which are left alone), must end in
// the same state: Gram matrix A, released statistic b, unreleased batch sum
// s and user accumulators, equal to a relative 1e-12 (the policy and the
// test divide by the norm with different roundings), and make the same
// decisions on candidate sets that mix norms. Without clipping A's
// increments grow 25-fold and s's 5-fold. It covers TS, UCB, Amp, grid
// noise and user level (around 0 and around the centre). The unreleased
// batch sum s must also stay within its sensitivity bound: ‖s‖ ≤ count.
func TestAdaPrivateClipsFeatures(t *testing.T) {
	const d, rounds = 3, 200
	base := AdaPrivateOptions{Dim: d, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7, Sigma: 0.5}
	variants := []struct {
		name string
		edit func(o *AdaPrivateOptions)
	}{
		{"ts", func(o *AdaPrivateOptions) {}},
		{"ucb", func(o *AdaPrivateOptions) { o.UCB = true }},
		{"ts-amp", func(o *AdaPrivateOptions) { o.Amp = 0.5 }},
		{"ts-forced", func(o *AdaPrivateOptions) { o.Forced = 2 }},
		{"ts-grid", func(o *AdaPrivateOptions) { o.Grid = true }},
		{"user", func(o *AdaPrivateOptions) { o.UserClip, o.UserRounds = 3, 4 }},
		{"user-centre", func(o *AdaPrivateOptions) { o.UserClip, o.UserRounds, o.ClipCentre = 3, 4, true }},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			build := func() *AdaPrivate {
				o := base
				v.edit(&o)
				if o.Grid {
					o.GridSource = rand.NewPCG(3, 4)
				}
				p, err := NewAdaPrivate(o, rand.New(rand.NewPCG(1, 2)))
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			big, unit := build(), build()
			fr := rand.New(rand.NewPCG(7, 8))
			// vec returns a random feature of norm 5 (every other round) or
			// of norm 0.5, and its clipped copy x/max(1, ‖x‖).
			vec := func(t int) (x, xc []float64) {
				x = make([]float64, d)
				for i := range x {
					x[i] = fr.NormFloat64()
				}
				norm := 0.0
				for _, v := range x {
					norm += v * v
				}
				norm = math.Sqrt(norm)
				scale := 5.0
				if t%2 == 1 {
					scale = 0.5
				}
				xc = make([]float64, d)
				for i := range x {
					x[i] *= scale / norm
					xc[i] = x[i] / max(1, scale)
				}
				return x, xc
			}
			for step := range rounds {
				cands, candsC := make([][]float64, 3), make([][]float64, 3)
				for j := range cands {
					cands[j], candsC[j] = vec(step + j)
				}
				if a, b := big.Select(cands), unit.Select(candsC); a != b {
					t.Fatalf("round %d: Select chose %d with features of norm 5, %d with the clipped features", step, a, b)
				}
				x, xc := vec(step)
				r := fr.Float64()
				big.Update(x, r)
				unit.Update(xc, r)
				if n := math.Sqrt(dotVec(big.s, big.s)); n > float64(big.count)*(1+1e-12) {
					t.Fatalf("round %d: the unreleased batch sum has norm %v > %d rewards in the batch: features were not clipped", step, n, big.count)
				}
			}
			if big.Releases() < 20 {
				t.Fatalf("only %d releases: the test must exercise the release", big.Releases())
			}
			ab, au := make([]float64, d*d), make([]float64, d*d)
			big.f.SymTo(ab)
			unit.f.SymTo(au)
			clipClose(t, "Gram matrix A", ab, au)
			clipClose(t, "released b", big.b, unit.b)
			clipClose(t, "batch sum s", big.s, unit.s)
			if big.users != nil {
				sb, su := big.users.state(), unit.users.state()
				if len(sb.Batch) != len(su.Batch) || len(sb.Spent) != len(su.Spent) {
					t.Fatalf("user accumulators differ: %+v vs %+v", sb, su)
				}
				for i := range sb.Batch {
					clipClose(t, fmt.Sprint("user sum ", i), sb.Batch[i].Sum, su.Batch[i].Sum)
					clipClose(t, fmt.Sprint("user half ", i), sb.Batch[i].Half, su.Batch[i].Half)
				}
				for id, v := range sb.Spent {
					clipClose(t, fmt.Sprint("user spent ", id), []float64{v}, []float64{su.Spent[id]})
				}
			}
		})
	}
}

// clipClose requires got and want to agree to a relative 1e-12 of the
// larger magnitude.
func clipClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: lengths %d and %d", what, len(got), len(want))
	}
	for i := range got {
		if tol := 1e-12 * max(1, math.Abs(want[i])); !(math.Abs(got[i]-want[i]) <= tol) {
			t.Errorf("%s[%d] = %v with features of norm 5, %v with the clipped features", what, i, got[i], want[i])
		}
	}
}
