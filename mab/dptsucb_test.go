package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/mab/policytest"
)

// TestDPTSUCBE6 checks docs/reproductions.md E6 ([HU] Thm 4.4): the paper value (Thm 4.4) and the tight
// value [in brackets] for α ∈ {0, .25, .5, .75, 1} and T ∈ {1e4, 1e5, 1e6},
// to the printed digits, through the descriptor's Report.
func TestDPTSUCBE6(t *testing.T) {
	table := []struct {
		alpha float64
		cells [3][2]string // T = 1e4, 1e5, 1e6: {paper, tight}
	}{
		{0, [3][2]string{{"152.00", "107.48"}, {"319.54", "225.95"}, {"651.49", "460.67"}}},
		{0.25, [3][2]string{{"56.37", "39.85"}, {"98.41", "69.59"}, {"167.92", "118.73"}}},
		{0.5, [3][2]string{{"20.90", "14.78"}, {"30.31", "21.43"}, {"43.28", "30.60"}}},
		{0.75, [3][2]string{{"7.752", "5.467"}, {"9.335", "6.597"}, {"11.155", "7.880"}}},
		{1, [3][2]string{{"2.875", "2.031"}, {"2.875", "2.020"}, {"2.875", "2.031"}}},
	}
	d, err := Lookup("dp-ts-ucb")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range table {
		for j, T := range []int{1e4, 1e5, 1e6} {
			p, err := d.Complete(bandit.Params{"alpha": row.alpha})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := d.Report(bandit.Setting{K: 5, Horizon: T}, p)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("α=%v T=%d", row.alpha, T)
			matchPrinted(t, name+" paper", rep.Paper.Value, row.cells[j][0])
			matchPrinted(t, name+" certified", rep.Certified.Value, row.cells[j][1])
			if rep.Certified.Value > rep.Paper.Value || !rep.PaperValid {
				t.Errorf("%s: certified %v must be ≤ the valid paper value %v", name, rep.Certified.Value, rep.Paper.Value)
			}
		}
	}
}

// TestDPTSUCBPhi checks docs/reproductions.md E6's φ at T = 1e6 and the (ε, δ) values of
// the α = 1 paper guarantee (ε = 15.78 at δ = 1e-5, 17.21 at δ = 1e-6), and
// that c0 = sqrt(2πe) = 4.13273 (docs/reproductions.md §3.0).
func TestDPTSUCBPhi(t *testing.T) {
	matchPrinted(t, "c0", DefaultC0, "4.13273")
	want := []string{"212220.6", "27179.5", "3480.9", "445.8", "57.10"}
	for i, alpha := range []float64{0, 0.25, 0.5, 0.75, 1} {
		matchPrinted(t, fmt.Sprintf("φ(α=%v)", alpha), dptsucbPhi(1e6, alpha, DefaultC0), want[i])
	}
	rep := dptsucbReport(1e6, 1, DefaultC0)
	for _, c := range []struct {
		delta float64
		want  string
	}{{1e-5, "15.78"}, {1e-6, "17.21"}} {
		st, err := rep.At(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		matchPrinted(t, fmt.Sprintf("paper ε at δ=%g", c.delta), *st.PaperEpsilon, c.want)
		if *st.Epsilon >= *st.PaperEpsilon {
			t.Errorf("certified ε %v not below paper ε %v", *st.Epsilon, *st.PaperEpsilon)
		}
	}
	// A7: Thm 4.6's sqrt(2φ) (10.686 at α = 1, T = 1e6) is not what is reported.
	matchPrinted(t, "Thm 4.6 value", math.Sqrt(2*dptsucbPhi(1e6, 1, DefaultC0)), "10.686")
	if math.Abs(rep.Paper.Value-10.686) < 1 {
		t.Errorf("report uses Thm 4.6")
	}
}

// TestDPTSUCBMechanics follows Algorithm 1 on a small instance with φ = 3.x:
// the K initial pulls in index order, ⌊φ⌋ = 3 fresh draws per estimate and
// then reuse of MAX, doubling epochs (n = 1, 2, 4, …) that each observation
// enters once, and pull counts summing to T.
func TestDPTSUCBMechanics(t *testing.T) {
	const K, T = 3, 4000
	// φ = c0·(ln T)^1 at α = 1; choose c0 so that φ = 3.7.
	c0 := 3.7 / math.Log(T)
	p, err := NewDPTSUCB(DPTSUCBOptions{K: K, Horizon: T, Alpha: 1, C0: c0}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if p.budget != 3 {
		t.Fatalf("budget ⌊φ⌋ = %d, want 3", p.budget)
	}
	env := policytest.NewBernoulli([]float64{0.8, 0.5, 0.2}, rand.New(rand.NewPCG(3, 4)))
	for i := range K {
		if a := p.Select(); a != i {
			t.Fatalf("initial round %d pulled arm %d", i, a)
		}
		p.Update(i, env.Pull(i))
	}
	for round := K; round < T; round++ {
		before := p.State()
		a := p.Select()
		after := p.State()
		for i := range K {
			b, c := before.Arms[i], after.Arms[i]
			if b.Draws < 3 {
				if c.Draws != b.Draws+1 || c.Max < b.Max || c.Max < 0 {
					t.Fatalf("round %d arm %d: fresh draw expected: %+v → %+v", round, i, b, c)
				}
			} else if c.Draws != 3 || c.Max != b.Max {
				t.Fatalf("round %d arm %d: UCB phase must reuse MAX: %+v → %+v", round, i, b, c)
			}
		}
		p.Update(a, env.Pull(a))
		ar := p.st.Arms[a]
		if ar.N != 1<<(ar.Epoch-1) || ar.O >= 1<<ar.Epoch || ar.Pulled != 2*ar.N-1+ar.O {
			t.Fatalf("round %d arm %d: epoch bookkeeping broken: %+v", round, a, ar)
		}
	}
	total := 0
	for _, a := range p.st.Arms {
		total += a.Pulled
	}
	if total != T {
		t.Errorf("pull counts sum to %d, want %d", total, T)
	}
}

// TestDPTSUCBTies: in the UCB phase with every MAX = 0 the lowest index wins
// ([HU] Alg 1; docs/dp-ts-ucb.md §1.6), and an uninitialised estimate never draws.
func TestDPTSUCBTies(t *testing.T) {
	p, err := NewDPTSUCB(DPTSUCBOptions{K: 4, Horizon: 100, Alpha: 1, C0: DefaultC0}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	arms := make([]DPTSUCBArm, 4)
	for i := range arms {
		arms[i] = DPTSUCBArm{Mean: 0.5, N: 2, Epoch: 2, Draws: p.budget, Max: 0, Pulled: 3}
	}
	data, _ := json.Marshal(snapshot[DPTSUCBOptions, DPTSUCBState]{Policy: "dp-ts-ucb", Options: p.opts,
		State: DPTSUCBState{Rounds: 12, Arms: arms}})
	if err := p.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if a := p.Select(); a != 0 {
			t.Fatalf("tie at MAX = 0 went to arm %d, want 0", a)
		}
	}
	if c := p.NextCost(); c.Value != 0 {
		t.Errorf("NextCost in the UCB phase = %v, want 0", c.Value)
	}
}

// TestDPTSUCBNextCost: Σ NextCost² over a run equals the largest per-record
// loss, which is ≤ ⌊φ⌋/(ln T)^α (the certified μ²).
func TestDPTSUCBNextCost(t *testing.T) {
	for _, alpha := range []float64{0, 0.5, 1} {
		const K, T = 5, 20000
		p, err := NewDPTSUCB(DPTSUCBOptions{K: K, Horizon: T, Alpha: alpha, C0: DefaultC0}, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		env := policytest.NewBernoulli([]float64{0.95, 0.75, 0.55, 0.35, 0.15}, rand.New(rand.NewPCG(7, 8)))
		var sum float64
		for range T {
			c := p.NextCost().Value
			sum += c * c
			a := p.Select()
			p.Update(a, env.Pull(a))
		}
		_, cert := dptsucbValues(T, alpha, DefaultC0)
		if sum > cert*cert*(1+1e-9) {
			t.Errorf("α=%v: Σ NextCost² = %v > certified² = %v", alpha, sum, cert*cert)
		}
		// The largest per-record loss at the end equals the sum.
		lmax := p.st.PastLoss
		for _, a := range p.st.Arms {
			lmax = max(lmax, float64(a.Draws)*p.eta2(a.N))
		}
		if math.Abs(sum-lmax) > 1e-9*lmax {
			t.Errorf("α=%v: Σ NextCost² = %v, largest per-record loss %v", alpha, sum, lmax)
		}
		t.Logf("α=%v: Σ NextCost² = %.4g of certified² %.4g", alpha, sum, cert*cert)
	}
}

// TestDPTSUCBOptions: the constructor names the bad parameter and its range.
func TestDPTSUCBOptions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		o    DPTSUCBOptions
		want string
	}{
		{DPTSUCBOptions{K: 0, Horizon: 100, Alpha: 0, C0: 1}, "K = 0"},
		{DPTSUCBOptions{K: 2, Horizon: 20, Alpha: 0, C0: 1}, "horizon T = 20"},
		{DPTSUCBOptions{K: 50, Horizon: 30, Alpha: 0, C0: 1}, "max(K, 21)"},
		{DPTSUCBOptions{K: 2, Horizon: 100, Alpha: 1.5, C0: 1}, "alpha = 1.5 must lie in [0, 1]"},
		{DPTSUCBOptions{K: 2, Horizon: 100, Alpha: math.NaN(), C0: 1}, "alpha"},
		{DPTSUCBOptions{K: 2, Horizon: 100, Alpha: 0, C0: 0}, "c0 = 0"},
		{DPTSUCBOptions{K: 2, Horizon: 100, Alpha: 0, C0: math.Inf(1)}, "c0"},
	} {
		if _, err := NewDPTSUCB(c.o, r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewDPTSUCB(%+v): error %v, want one containing %q", c.o, err, c.want)
		}
	}
	if _, err := NewDPTSUCB(DPTSUCBOptions{K: 2, Horizon: 100, Alpha: 0, C0: 1}, nil); err == nil {
		t.Errorf("nil generator accepted")
	}
}

// TestDPTSUCBStateRejects: corrupted or foreign states are refused.
func TestDPTSUCBStateRejects(t *testing.T) {
	p, _ := NewDPTSUCB(DPTSUCBOptions{K: 2, Horizon: 100, Alpha: 1, C0: DefaultC0}, rand.New(rand.NewPCG(1, 2)))
	q, _ := NewDPTSUCB(DPTSUCBOptions{K: 2, Horizon: 101, Alpha: 1, C0: DefaultC0}, rand.New(rand.NewPCG(1, 2)))
	good, _ := p.MarshalJSON()
	if err := q.UnmarshalJSON(good); err == nil {
		t.Errorf("state with other options accepted")
	}
	bad := DPTSUCBState{Arms: []DPTSUCBArm{{Mean: 0.5, N: 3, Epoch: 2, Pulled: 5}, {}}}
	data, _ := json.Marshal(snapshot[DPTSUCBOptions, DPTSUCBState]{Policy: "dp-ts-ucb", Options: p.opts, State: bad})
	if err := p.UnmarshalJSON(data); err == nil {
		t.Errorf("estimate of size 3 accepted")
	}
}
