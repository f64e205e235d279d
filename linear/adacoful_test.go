package linear

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// TestBaselineAdaCOFULReport checks ρ = ρ_BS16(ε, 1e-5) and σ = 1/√(2ρ)
// against docs/linear.md §1.11's table (✔ values, printed digits).
func TestBaselineAdaCOFULReport(t *testing.T) {
	d, _ := Lookup("adac-oful")
	for _, c := range []struct{ eps, rho, sigma, tolR, tolS float64 }{
		{0.5, 0.005314, 9.700, 5e-7, 5e-4},
		{1, 0.020820, 4.901, 5e-7, 5e-4},
		{5, 0.449623, 1.0545, 5e-7, 5e-5},
	} {
		p, _ := d.Complete(bandit.Params{"epsilon": c.eps})
		rep, err := d.Report(bandit.Setting{Dim: 20, K: 5, Horizon: 10000}, p)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Certified.Notion != privacy.NotionZCDP || math.Abs(rep.Certified.Value-c.rho) > c.tolR {
			t.Errorf("ε = %v: certified %+v, want ρ = %v", c.eps, rep.Certified, c.rho)
		}
		if rep.Paper == nil || !rep.PaperValid || rep.Paper.Value > rep.Certified.Value {
			t.Errorf("ε = %v: paper %+v (valid %v), want ρ, valid", c.eps, rep.Paper, rep.PaperValid)
		}
		pol, err := NewAdaCOFUL(adacOptions(bandit.Setting{Dim: 20}, p), rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(pol.Sigma()-c.sigma) > c.tolS {
			t.Errorf("ε = %v: σ = %v, want %v", c.eps, pol.Sigma(), c.sigma)
		}
		if eps, _, _ := rep.Certified.Epsilon(1e-5); eps > c.eps {
			t.Errorf("ε = %v: certified ε %v at δ = 1e-5 exceeds the target", c.eps, eps)
		}
	}
}

// TestBaselineAdaCOFULEachRewardOnce runs AdaC-OFUL with negligible noise
// and checks that b̃ is exactly Σ r·x over the rounds of completed episodes
// (each reward released once, in its own episode) while the open episode's
// rewards sit unreleased in s, and that the tracked log det A matches
// gonum's.
func TestBaselineAdaCOFULEachRewardOnce(t *testing.T) {
	const d, T = 5, 2000
	pol := blBuild(t, "adac-oful", T, bandit.Params{"rho": 1e30}, 2).(*AdaCOFUL)
	step := blEnvStepper(t)
	released, open := make([]float64, d), make([]float64, d)
	x := make([]float64, d)
	eps := 0
	for range T {
		cands, reward := step()
		i := pol.Select(cands)
		rw := reward(i)
		pol.Update(cands[i], rw)
		blClip(x, cands[i])
		axpyVec(rw, x, open)
		if pol.Episodes() > eps { // this round closed an episode
			axpyVec(1, open, released)
			clear(open)
			eps = pol.Episodes()
		}
	}
	if eps < 10 {
		t.Fatalf("only %d episodes in %d rounds", eps, T)
	}
	for i := range d {
		if math.Abs(pol.bt[i]-released[i]) > 1e-9*(1+math.Abs(released[i])) {
			t.Errorf("b̃[%d] = %v, want Σ r·x over completed episodes %v", i, pol.bt[i], released[i])
		}
		if math.Abs(pol.s[i]-open[i]) > 1e-9*(1+math.Abs(open[i])) {
			t.Errorf("s[%d] = %v, want the open episode's Σ r·x %v", i, pol.s[i], open[i])
		}
	}
	a := make([]float64, d*d)
	pol.a.SymTo(a)
	var ld float64
	var f = pol.a
	l := make([]float64, d*d)
	f.LTo(l)
	for i := range d {
		ld += 2 * math.Log(l[i*d+i])
	}
	if math.Abs(ld-pol.logdet) > 1e-8*math.Abs(ld) {
		t.Errorf("tracked log det A = %v, factor gives %v", pol.logdet, ld)
	}
	t.Logf("%d episodes in %d rounds (log det A = %.2f)", eps, T, ld)
}

func TestBaselineAdaCOFULValidation(t *testing.T) {
	good := AdaCOFULOptions{Dim: 3, Epsilon: 1, Delta: 1e-5, Lambda: 1, Alpha: 1, Trigger: 1}
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		mod  func(*AdaCOFULOptions)
		want string
	}{
		{func(o *AdaCOFULOptions) { o.Dim = 0 }, "dimension"},
		{func(o *AdaCOFULOptions) { o.Epsilon = 0 }, "epsilon"},
		{func(o *AdaCOFULOptions) { o.Delta = 0 }, "delta"},
		{func(o *AdaCOFULOptions) { o.Rho = -1 }, "rho"},
		{func(o *AdaCOFULOptions) { o.Lambda = 0 }, "lambda"},
		{func(o *AdaCOFULOptions) { o.Alpha = math.Inf(1) }, "alpha"},
		{func(o *AdaCOFULOptions) { o.Trigger = 0 }, "trigger"},
	} {
		o := good
		c.mod(&o)
		if _, err := NewAdaCOFUL(o, r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %+v: error %v, want one naming %q", o, err, c.want)
		}
	}
}
