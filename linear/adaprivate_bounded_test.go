package linear_test

import (
	"fmt"
	"github.com/dpbandit/dpbandit/internal/timebound"
	"math"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/privacy"
)

// Issue 10, item 4: AdaPrivate's calibration returns at once for every
// float64 ε (ε ≥ 5e307 hung in privacy.GDPMu on the certified basis, and in
// ZCDPRho for the grid and user-level mechanisms from ε ≈ 1e154).

// adaBound is the time one calibration may take: the slowest here (Amp on
// the certified basis at ε = 1e308) takes about 0.3 s; the bound leaves room
// for a loaded 2-core machine, and a hang never ends.
const adaBound = 10 * time.Second

// adaWithin runs fn under adaBound (internal/timebound).
func adaWithin(t *testing.T, what string, fn func()) {
	t.Helper()
	timebound.Within(t, adaBound, what, fn)
}

// TestAdaPrivateSigmaHugeEpsilon: every mechanism and basis calibrates
// promptly at ε = 5e307, 1e308 and MaxFloat64, and the policy built with the
// σ found meets the target in its certified notion. The paper basis meets
// it with room to spare in exact arithmetic; at these magnitudes the room is
// below an ulp, so the certified value may exceed the target by the
// rounding-up of the report (1e-12 relative allowed there).
func TestAdaPrivateSigmaHugeEpsilon(t *testing.T) {
	const delta = 1e-5
	modes := []struct {
		name string
		set  func(*linear.AdaPrivateOptions)
	}{
		{"event", func(*linear.AdaPrivateOptions) {}},
		{"amp", func(o *linear.AdaPrivateOptions) { o.Amp = 0.3 }},
		{"grid", func(o *linear.AdaPrivateOptions) { o.Grid = true }},
		{"user", func(o *linear.AdaPrivateOptions) { o.UserClip, o.UserRounds = math.Sqrt(5), 5 }},
		{"user-grid", func(o *linear.AdaPrivateOptions) { o.UserClip, o.UserRounds, o.Grid = 2, 5, true }},
	}
	for _, m := range modes {
		for _, eps := range []float64{5e307, 1e308, math.MaxFloat64} {
			for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
				o := adaOpts(20, 1)
				m.set(&o)
				what := fmt.Sprintf("AdaPrivateSigma(%s, ε=%v, %s)", m.name, eps, basis)
				var sig float64
				var err error
				adaWithin(t, what, func() { sig, err = linear.AdaPrivateSigma(o, bandit.Target{Epsilon: eps, Delta: delta, Basis: basis}) })
				if err != nil || !(sig > 0) || math.IsInf(sig, 0) {
					t.Errorf("%s = %v, %v; want a σ > 0", what, sig, err)
					continue
				}
				o.Sigma = sig
				cert := mustAda(t, o, 1).Privacy().Certified
				slack := 1.0
				if basis == bandit.BasisPaper {
					slack = 1 + 1e-12
				}
				switch cert.Notion {
				case privacy.NotionGDP:
					mu, err := privacy.GDPMu(eps, delta)
					if err != nil || cert.Value > mu*slack {
						t.Errorf("%s: σ = %v certifies μ = %v > GDPMu = %v (%v)", what, sig, cert.Value, mu, err)
					}
				case privacy.NotionZCDP:
					rho, _, err := privacy.ZCDPRho(eps, delta)
					if err != nil || cert.Value > rho*slack {
						t.Errorf("%s: σ = %v certifies ρ = %v > ZCDPRho = %v (%v)", what, sig, cert.Value, rho, err)
					}
				default:
					ce, _, err := cert.Epsilon(delta)
					if err != nil || ce > eps {
						t.Errorf("%s: σ = %v certifies ε = %v > %v (%v)", what, sig, ce, eps, err)
					}
				}
			}
		}
	}
}

// TestAdaPrivateCalibrateHugeEpsilon: the descriptors' Calibrate (what the
// simulator and the service call) returns a σ at ε = 5e307.
func TestAdaPrivateCalibrateHugeEpsilon(t *testing.T) {
	s := bandit.Setting{Dim: 20, K: 5, Horizon: 10000}
	for _, name := range []string{"adaprivate-ts", "adaprivate-ucb"} {
		d, err := linear.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
			var cp bandit.Params
			adaWithin(t, name+".Calibrate(5e307)", func() {
				cp, err = d.Calibrate(s, bandit.Target{Epsilon: 5e307, Delta: 1e-6, Basis: basis}, nil)
			})
			// σ = 1/μ with μ ≈ √(2ε) = 1e154.
			if err != nil || math.Abs(cp["sigma"]-1e-154) > 1e-166 {
				t.Errorf("%s.Calibrate(ε = 5e307, %s) = %v, %v; want sigma ≈ 1e-154", name, basis, cp, err)
			}
		}
	}
}

// TestZCDPBaselinesOutOfReach: the zCDP baselines' certified calibration
// divides ρ by a factor; at ε ≥ 1e308 that used to give ρ = NaN with no
// error. Every baseline either meets the target with a positive finite
// parameter or says the target is out of reach.
func TestZCDPBaselinesOutOfReach(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 1000, Dim: 4}
	for _, name := range []string{"coreset-elim-dp", "jdp-linucb"} {
		d, err := bandit.Lookup(bandit.AnyKind, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, basis := range []string{bandit.BasisCertified, bandit.BasisPaper} {
			for _, eps := range []float64{1e308, math.MaxFloat64} {
				var cp bandit.Params
				adaWithin(t, fmt.Sprintf("%s.Calibrate(%g, %s)", name, eps, basis), func() {
					cp, err = d.Calibrate(s, bandit.Target{Epsilon: eps, Delta: 1e-6, Basis: basis}, nil)
				})
				if err != nil {
					continue
				}
				for k, v := range cp {
					if name == "jdp-linucb" && basis == bandit.BasisPaper && k == "sigma" && v == 0 {
						continue // the sentinel for "the paper's σ formula from epsilon and delta"
					}
					if math.IsNaN(v) || math.IsInf(v, 0) || (k != "epsilon" && k != "delta" && !(v > 0)) {
						t.Errorf("%s at ε = %g (%s): %s = %v with no error", name, eps, basis, k, v)
					}
				}
			}
		}
	}
}
