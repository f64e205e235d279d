package linear

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// TestBaselineZCDPEpisodicReport checks N_max = ⌊d·ln(1+T/(dλ))/ln(1+c)⌋
// (113 at d = 20, T = 10⁴, λ = 1, c = 2) and the two composition modes.
func TestBaselineZCDPEpisodicReport(t *testing.T) {
	if n := zcdpEpNMax(20, 10000, 1, 2); n != 113 {
		t.Errorf("N_max = %d, want ⌊20·ln 501/ln 3⌋ = 113", n)
	}
	d, _ := Lookup("zcdp-episodic")
	s := bandit.Setting{Dim: 20, K: 5, Horizon: 10000}
	rho := 0.020820 // ρ_BS16(1, 1e-5), Riyazat & Ukwatta, AdaPrivate-TS; docs/linear.md §1.11
	p, _ := d.Complete(nil)
	rep, err := d.Report(s, p)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Certified.Value-rho) > 5e-7 || rep.Paper == nil || math.Abs(rep.Paper.Value-rho) > 5e-7 || !rep.PaperValid {
		t.Errorf("split = 1: certified %+v paper %+v, want ρ = %v both, valid", rep.Certified, rep.Paper, rho)
	}
	p0, _ := d.Complete(bandit.Params{"split": 0})
	rep0, err := d.Report(s, p0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep0.Certified.Value/(113*rho)-1) > 3e-5 || rep0.PaperValid {
		t.Errorf("split = 0: certified %+v (paper valid %v), want 113ρ = %v with the paper's ρ invalid", rep0.Certified, rep0.PaperValid, 113*rho)
	}
}

// TestBaselineZCDPEpisodicSensitivity checks at every release that the noise
// is calibrated to a sensitivity no smaller than the true ‖A⁻¹‖₂ (gonum's
// eigenvalues of the released A), and that the release count stays within
// N_max without the guard binding.
func TestBaselineZCDPEpisodicSensitivity(t *testing.T) {
	const d, T = 5, 4000
	pol := blBuild(t, "zcdp-episodic", T, bandit.Params{"trigger": 1}, 3).(*ZCDPEpisodic)
	step := blEnvStepper(t)
	a := make([]float64, d*d)
	eps := 0
	for range T {
		cands, reward := step()
		i := pol.Select(cands)
		pol.Update(cands[i], reward(i))
		if pol.Episodes() == eps {
			continue
		}
		eps = pol.Episodes()
		pol.frozen.SymTo(a)
		lmin := blMinEig(t, d, a)
		delta := pol.LastSigma() * math.Sqrt(2*pol.rhoEp) // the Δ the noise is calibrated to
		if delta < 1/lmin*(1-1e-12) {
			t.Fatalf("release %d: noise calibrated to Δ = %v < ‖A⁻¹‖₂ = %v", eps, delta, 1/lmin)
		}
		if delta > 2.5/lmin {
			t.Errorf("release %d: Δ = %v is loose against ‖A⁻¹‖₂ = %v", eps, delta, 1/lmin)
		}
	}
	if eps == 0 || eps >= pol.NMax() {
		t.Errorf("%d releases with N_max = %d: want some, and fewer than the bound", eps, pol.NMax())
	}
	t.Logf("%d releases, N_max = %d", eps, pol.NMax())
}

func TestBaselineZCDPEpisodicValidation(t *testing.T) {
	good := ZCDPEpisodicOptions{Dim: 3, Horizon: 10, Epsilon: 1, Delta: 1e-5, Lambda: 1, Alpha: 1, Trigger: 2, Split: 1}
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		mod  func(*ZCDPEpisodicOptions)
		want string
	}{
		{func(o *ZCDPEpisodicOptions) { o.Dim = 0 }, "dimension"},
		{func(o *ZCDPEpisodicOptions) { o.Horizon = 0 }, "horizon"},
		{func(o *ZCDPEpisodicOptions) { o.Epsilon = -1 }, "epsilon"},
		{func(o *ZCDPEpisodicOptions) { o.Lambda = math.NaN() }, "lambda"},
		{func(o *ZCDPEpisodicOptions) { o.Trigger = 0 }, "trigger"},
		{func(o *ZCDPEpisodicOptions) { o.Split = 2 }, "split"},
	} {
		o := good
		c.mod(&o)
		if _, err := NewZCDPEpisodic(o, r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %+v: error %v, want one naming %q", o, err, c.want)
		}
	}
}
