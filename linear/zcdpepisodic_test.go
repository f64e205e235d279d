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
// eigenvalues of the released A) at the per-release ρ that the report pays
// for (N_max releases compose to the certified ρ, so ρ_ep = ρ_cert/N_max
// under split = 1 and ρ under split = 0, read from the report, not from the
// policy's own ρ_ep), that the drawn noise θ̃ − A⁻¹b has that s.d. (RMS of
// the standardised noise over all releases and coordinates within 25% of
// 1: over the 210-odd draws of each split its s.d. is about 5%), and that the release count stays
// within N_max without the guard binding.
func TestBaselineZCDPEpisodicSensitivity(t *testing.T) {
	const d, T = 5, 4000
	for _, split := range []float64{1, 0} {
		pol := blBuild(t, "zcdp-episodic", T, bandit.Params{"trigger": 1, "split": split}, 3).(*ZCDPEpisodic)
		rhoEp := pol.Privacy().Certified.Value / float64(pol.NMax())
		step := blEnvStepper(t)
		a := make([]float64, d*d)
		mean := make([]float64, d)
		eps, n, ss := 0, 0, 0.0
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
			delta := pol.LastSigma() * math.Sqrt(2*rhoEp) // the Δ the noise pays for
			if delta < 1/lmin*(1-1e-12) {
				t.Fatalf("split %v release %d: noise σ = %v pays for Δ = %v at ρ_ep = %v, below ‖A⁻¹‖₂ = %v",
					split, eps, pol.LastSigma(), delta, rhoEp, 1/lmin)
			}
			if delta > 2.5/lmin {
				t.Errorf("split %v release %d: Δ = %v is loose against ‖A⁻¹‖₂ = %v", split, eps, delta, 1/lmin)
			}
			pol.frozen.SolveTo(mean, pol.b)
			for j := range d {
				z := (pol.theta[j] - mean[j]) / pol.LastSigma()
				ss += z * z
				n++
			}
		}
		if eps == 0 || eps >= pol.NMax() {
			t.Errorf("split %v: %d releases with N_max = %d: want some, and fewer than the bound", split, eps, pol.NMax())
		}
		if rms := math.Sqrt(ss / float64(n)); math.Abs(rms-1) > 0.25 {
			t.Errorf("split %v: standardised noise RMS %v over %d draws, want 1 ± 0.25", split, rms, n)
		}
		t.Logf("split %v: %d releases, N_max = %d, %d noise draws", split, eps, pol.NMax(), n)
	}
}

// TestZCDPEpisodicNMaxOracle pins N_max = ⌊d·ln(1 + T/(dλ))/ln(1 + c)⌋ at
// λ ≠ 1, where T/(dλ) and T·λ/d differ: d = 3, T = 1000, λ = ½, c = 2 gives
// ⌊17.76⌋ = 17 (Python's math, independently), and d = 2, T = 50, λ = 4,
// c = ½ gives ⌊9.77⌋ = 9; a bound below 1 is raised to 1.
func TestZCDPEpisodicNMaxOracle(t *testing.T) {
	for _, c := range []struct {
		d, T         int
		lambda, trig float64
		want         int
	}{{3, 1000, 0.5, 2, 17}, {2, 50, 4, 0.5, 9}, {1, 1, 100, 4, 1}} {
		if got := zcdpEpNMax(c.d, c.T, c.lambda, c.trig); got != c.want {
			t.Errorf("N_max(d=%d, T=%d, λ=%v, c=%v) = %d, want %d", c.d, c.T, c.lambda, c.trig, got, c.want)
		}
	}
}

// TestZCDPEpisodicEpisodeRule: an episode ends when det A grows by MORE than
// 1 + c, and the policy never releases more than N_max times. With d = 1,
// λ = 1, c = 1 and x = 1 every round, det A_t = 1 + t: round 1 reaches
// exactly det = 2 = (1+c)·det A₀ (an exact tie in floating point too:
// ln(1+1) on both sides), which is not more, so the first release is at
// round 2 (det 3). N_max = ⌊ln 31/ln 2⌋ = 4 at T = 30; fed 1,000 rounds
// (beyond T) the policy stops at 4 releases. A policy stopped there
// restores, and a state claiming N_max + 1 releases is refused.
func TestZCDPEpisodicEpisodeRule(t *testing.T) {
	o := ZCDPEpisodicOptions{Dim: 1, Horizon: 30, Rho: 1, Lambda: 1, Alpha: 1, Trigger: 1, Split: 1}
	p, err := NewZCDPEpisodic(o, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if p.NMax() != 4 {
		t.Fatalf("N_max = %d, want 4", p.NMax())
	}
	x := []float64{1}
	p.Update(x, 0.5)
	if p.Episodes() != 0 {
		t.Errorf("after round 1 (det A = 2 = (1+c)·1, not more): %d releases, want 0", p.Episodes())
	}
	p.Update(x, 0.5)
	if p.Episodes() != 1 {
		t.Errorf("after round 2 (det A = 3 > 2): %d releases, want 1", p.Episodes())
	}
	for range 998 {
		p.Update(x, 0.5)
	}
	if p.Episodes() != 4 {
		t.Errorf("after 1,000 rounds: %d releases, want N_max = 4", p.Episodes())
	}
	data, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewZCDPEpisodic(o, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.UnmarshalJSON(data); err != nil || q.Episodes() != 4 {
		t.Errorf("restoring a policy at N_max releases: %v (episodes %d)", err, q.Episodes())
	}
	forged := strings.Replace(string(data), `"episodes":4`, `"episodes":5`, 1)
	if forged == string(data) {
		t.Fatalf("test setup: no \"episodes\":4 in %s", data)
	}
	if err := q.UnmarshalJSON([]byte(forged)); err == nil || !strings.Contains(err.Error(), "episodes 5 (N_max 4)") {
		t.Errorf("a state with N_max + 1 releases: %v, want refused", err)
	}
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
