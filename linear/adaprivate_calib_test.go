package linear

import (
	"math"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Tests of AdaPrivate's privacy report and calibration edges
// (adaprivate_privacy.go), written for gremlins survivors.

// TestAdaReportNeighbouringOfGrid: the grid mechanism's report is
// record-level without user clipping and user-level with it.
func TestAdaReportNeighbouringOfGrid(t *testing.T) {
	base := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7, Sigma: 0.5, Grid: true}
	r, err := adaPrivateReport(base)
	if err != nil {
		t.Fatal(err)
	}
	if r.Neighbouring == userLevel {
		t.Errorf("grid without user clipping reports %q, want the record-level relation", r.Neighbouring)
	}
	u := base
	u.UserClip, u.UserRounds = 3, 4
	if r, err = adaPrivateReport(u); err != nil {
		t.Fatal(err)
	}
	if r.Neighbouring != userLevel {
		t.Errorf("grid with user clipping reports %q, want the user-level relation", r.Neighbouring)
	}
}

// TestAdaReportPaperUserLevel: with user clipping C the paper's (invalid)
// value is ρ = C²/(2σ²), the one [ADA] states; the certified one uses
// Δ_u = 2C (4× larger) and is above it.
func TestAdaReportPaperUserLevel(t *testing.T) {
	o := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7, Sigma: 0.8, UserClip: 3, UserRounds: 4}
	r, err := adaPrivateReport(o)
	if err != nil {
		t.Fatal(err)
	}
	want := 3.0 * 3 / (2 * 0.8 * 0.8)
	if r.Paper == nil || math.Abs(r.Paper.Value-want) > 1e-15*want || r.PaperValid {
		t.Fatalf("paper value %+v (valid %v), want ρ = C²/(2σ²) = %v, not valid", r.Paper, r.PaperValid, want)
	}
	if c := r.Certified.Value; !(c >= 4*want && c <= 4*want*(1+1e-12)) {
		t.Errorf("certified ρ = %v, want (2C)²/(2σ²) = %v rounded up", c, 4*want)
	}
}

// TestAdaSigmaTargetEdges: δ must lie strictly inside (0, 1) and ε must be
// > 0; each refusal names the bad value.
func TestAdaSigmaTargetEdges(t *testing.T) {
	o := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7}
	for _, c := range []struct {
		t    bandit.Target
		want string
	}{
		{bandit.Target{Epsilon: 1, Delta: 0}, "delta = 0 must lie in (0, 1)"},
		{bandit.Target{Epsilon: 1, Delta: 1}, "delta = 1 must lie in (0, 1)"},
		{bandit.Target{Epsilon: 1, Delta: 0, Basis: bandit.BasisCertified}, "delta = 0 must lie in (0, 1)"},
		{bandit.Target{Epsilon: 0, Delta: 1e-5}, "epsilon = 0 must be finite and > 0"},
		{bandit.Target{Epsilon: 0, Delta: 1e-5, Basis: bandit.BasisCertified}, "epsilon = 0 must be finite and > 0"},
	} {
		s, err := AdaPrivateSigma(o, c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AdaPrivateSigma(%+v) = %v, %v; want an error containing %q", c.t, s, err, c.want)
		}
	}
	// A GDP target needs no δ on the certified basis.
	if s, err := AdaPrivateSigma(o, bandit.Target{Mu: 1, Basis: bandit.BasisCertified}); err != nil || !(s >= 1) {
		t.Errorf("certified μ = 1 without δ: σ = %v, %v; want σ ≥ 1", s, err)
	}
}

// TestAdaSigmaRecordLevelIsTheGaussianCalibration: without user clipping the
// paper-basis σ is exactly the Gaussian mechanism's σ = Δ/√(2ρ) for
// ρ = ρ_BS16(ε, δ) at the record-level sensitivity Δ; the nudge that keeps a
// rounded-up report ≤ ρ is only for the user-level report.
func TestAdaSigmaRecordLevelIsTheGaussianCalibration(t *testing.T) {
	o := AdaPrivateOptions{Dim: 2, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 7}
	for _, eps := range []float64{0.3, 1, 4} {
		s, err := AdaPrivateSigma(o, bandit.Target{Epsilon: eps, Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		rho, err := privacy.ZCDPRhoBS(eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		want, err := privacy.GaussianSigmaForRho(rho, adaSensitivity(o))
		if err != nil {
			t.Fatal(err)
		}
		if s != want {
			t.Errorf("ε = %v: σ = %v, want the Gaussian calibration %v exactly", eps, s, want)
		}
	}
}

// TestNudgeUpTakesAtMost257Steps pins nudgeUp's contract: s itself when ok;
// otherwise one jump of s·2⁻⁴⁶ and then at most 256 single-ulp steps,
// stopping at the first s that is ok (and returning the last one tried if
// none is).
func TestNudgeUpTakesAtMost257Steps(t *testing.T) {
	s0 := 1.5
	jump := s0 + s0*0x1p-46
	up := func(s float64, n int) float64 {
		for range n {
			s = math.Nextafter(s, math.Inf(1))
		}
		return s
	}
	for _, c := range []struct {
		need, want float64
	}{
		{s0, s0},                        // already ok
		{up(s0, 1), jump},               // the jump suffices
		{up(jump, 200), up(jump, 200)},  // 200 steps after the jump
		{up(jump, 256), up(jump, 256)},  // the last step allowed
		{up(jump, 257), up(jump, 256)},  // one too many: gives up, not ok
		{up(jump, 5000), up(jump, 256)}, // far out of reach
	} {
		need := c.need
		if got := nudgeUp(s0, func(s float64) bool { return s >= need }); got != c.want {
			t.Errorf("nudgeUp to %v: %v, want %v", need, got, c.want)
		}
	}
}
