package mab

import (
	"fmt"
	"github.com/dpbandit/dpbandit/internal/timebound"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Issue 10, item 4: the equal-budget calibrations return at once for every
// float64 target. ε ≥ 5e307 used to hang in privacy.GDPMu (via targetMu), so
// mts-gaussian, dp-ts-ucb and their callers (server.newConfig, the
// simulator's budgets) never returned; a μ above √MaxFloat64 made
// mtsCForTarget return a c that did not meet the target.

// calibrateBound is the time one calibration may take: they take well under
// 10 ms; the bound leaves room for a loaded 2-core machine, and a hang never
// ends.
const calibrateBound = 5 * time.Second

// withinBound runs fn under calibrateBound (internal/timebound).
func withinBound(t testing.TB, what string, fn func()) {
	t.Helper()
	timebound.Within(t, calibrateBound, what, fn)
}

// checkCalibrated fails unless params p of policy name complete, build and
// report a GDP value ≤ mu on the basis (the paper value on the paper basis,
// the certified one otherwise).
func checkCalibrated(t *testing.T, what, name string, s bandit.Setting, p bandit.Params, mu float64, basis string) {
	t.Helper()
	d, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	full, err := d.Complete(p)
	if err != nil {
		t.Errorf("%s: calibrated params %v do not complete: %v", what, p, err)
		return
	}
	if _, err := d.New(s, full, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Errorf("%s: calibrated params %v do not build: %v", what, p, err)
		return
	}
	rep, err := d.Report(s, full)
	if err != nil {
		t.Errorf("%s: report of %v: %v", what, p, err)
		return
	}
	g := rep.Certified
	if basis == bandit.BasisPaper && rep.Paper != nil && rep.PaperValid {
		g = *rep.Paper
	}
	if g.Notion != privacy.NotionGDP || !(g.Value <= mu) {
		t.Errorf("%s: calibrated params %v report %v = %v, above the target %v-GDP (%s basis)", what, p, g.Notion, g.Value, mu, basis)
	}
}

// TestCalibrateHugeEpsilon: at ε = 5e307 (μ ≈ 1e154) mts-gaussian and
// dp-ts-ucb calibrate promptly to a policy that meets the target; above
// ε ≈ 9e307 (μ > √MaxFloat64) M-TS's value cannot be evaluated in float64
// and its calibration says so, promptly, instead of returning an unchecked c.
func TestCalibrateHugeEpsilon(t *testing.T) {
	s := bandit.Setting{K: 2, Horizon: 1000}
	for _, eps := range []float64{5e307, 1e308, math.MaxFloat64} {
		for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
			tg := bandit.Target{Epsilon: eps, Delta: 1e-6, Basis: basis}
			var mu float64
			var err error
			withinBound(t, fmt.Sprintf("targetMu(%v)", eps), func() { mu, _, err = targetMu(tg) })
			if err != nil || !(mu > 1e153) || math.IsInf(mu, 0) {
				t.Fatalf("targetMu(ε=%v) = %v, %v; want μ ≈ √(2ε)", eps, mu, err)
			}
			reachable := mu <= math.Sqrt(math.MaxFloat64)
			for _, p := range []bandit.Params{{}, {"b": 9}} {
				what := fmt.Sprintf("calibrateMTS(ε=%v, %s, %v)", eps, basis, p)
				var cp bandit.Params
				withinBound(t, what, func() { cp, err = calibrateMTS(s, tg, p) })
				switch {
				case reachable && err != nil:
					t.Errorf("%s: %v", what, err)
				case reachable:
					checkCalibrated(t, what, "mts-gaussian", s, cp, mu, basis)
				case err == nil || !strings.Contains(err.Error(), "out of reach"):
					t.Errorf("%s = %v, %v; want an out-of-reach error", what, cp, err)
				}
			}
			// c given: b = 0 already meets any μ ≥ √(T/c).
			var cp bandit.Params
			withinBound(t, "calibrateMTS(c given)", func() { cp, err = calibrateMTS(s, tg, bandit.Params{"c": 1}) })
			if err != nil || cp["b"] != 0 {
				t.Errorf("calibrateMTS(ε=%v, c = 1) = %v, %v; want b = 0", eps, cp, err)
			}
			withinBound(t, "calibrateDPTSUCB", func() { cp, err = calibrateDPTSUCB(s, tg, nil) })
			if err != nil || cp["alpha"] != 0 {
				t.Errorf("calibrateDPTSUCB(ε=%v) = %v, %v; want alpha = 0", eps, cp, err)
			} else {
				checkCalibrated(t, "dp-ts-ucb", "dp-ts-ucb", s, cp, mu, basis)
			}
			var grid []bandit.Params
			withinBound(t, "MTSGrid", func() { grid, err = MTSGrid(s, tg, 0) })
			if reachable != (err == nil) {
				t.Errorf("MTSGrid(ε=%v, %s) = %v, %v (reachable: %v)", eps, basis, grid, err, reachable)
			}
			for _, p := range grid {
				checkCalibrated(t, "MTSGrid", "mts-gaussian", s, p, mu, basis)
			}
		}
	}
}

// TestMTSCForTargetRange: a μ that makes c leave the float64 range is an
// error naming the valid range, not a c that fails the target (μ = 1e300
// gave c = 3e-322 with a value of 1.8e162), nor c = +Inf (a subnormal μ).
func TestMTSCForTargetRange(t *testing.T) {
	for _, mu := range []float64{1e300, math.MaxFloat64, 5e-324, 1e-200} {
		for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
			c, err := mtsCForTarget(2, 1000, 0, mu, basis)
			if err == nil || !strings.Contains(err.Error(), "out of reach") || !strings.Contains(err.Error(), "valid:") {
				t.Errorf("mtsCForTarget(μ=%v, %s) = %v, %v; want an out-of-reach error", mu, basis, c, err)
			}
		}
	}
	// Just inside: μ = 1.3e154 gives a subnormal c that still meets it.
	for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
		c, err := mtsCForTarget(2, 1000, 0, 1.3e154, basis)
		if err != nil {
			t.Fatalf("mtsCForTarget(μ=1.3e154, %s): %v", basis, err)
		}
		checkCalibrated(t, "μ=1.3e154", "mts-gaussian", bandit.Setting{K: 2, Horizon: 1000}, bandit.Params{"b": 0, "c": c}, 1.3e154, basis)
	}
}

// calibSpecials seed every float argument of FuzzCalibrate.
var calibSpecials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 5e-324, 1e-310, 1e-6, 0.5, 1, 40, 1e154, 5e307, 1e308, math.MaxFloat64}

// FuzzCalibrate calls the K-armed calibrations (mts-gaussian with b, c or
// neither given, its grid, dp-ts-ucb, the pure-DP comparators) with an
// arbitrary target (ε, δ, μ) on both bases, under the time bound. Each
// returns; a calibration that succeeds meets its target.
//
//	go test -run '^$' -fuzz=FuzzCalibrate ./mab/
func FuzzCalibrate(f *testing.F) {
	for _, e := range calibSpecials {
		f.Add(e, 1e-6, 0.0, uint16(1000))
		f.Add(0.0, 1e-6, e, uint16(1000))
		f.Add(1.0, e, 0.0, uint16(100))
	}
	f.Add(5e307, 1e-6, 0.0, uint16(21))
	f.Add(1.0, 1e-6, 0.0, uint16(0))
	f.Fuzz(func(t *testing.T, eps, delta, mu float64, horizon uint16) {
		s := bandit.Setting{K: 2, Horizon: int(horizon)}
		for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
			tg := bandit.Target{Epsilon: eps, Delta: delta, Mu: mu, Basis: basis}
			var tmu float64
			var terr error
			withinBound(t, fmt.Sprintf("targetMu(%+v)", tg), func() { tmu, _, terr = targetMu(tg) })
			if terr == nil && (!(tmu > 0) || math.IsInf(tmu, 0)) {
				t.Fatalf("targetMu(%+v) = %v", tg, tmu)
			}
			check := func(name string, p bandit.Params, err error) {
				t.Helper()
				if err == nil && terr != nil {
					t.Errorf("%s calibrated %v to the invalid target %+v (%v)", name, p, tg, terr)
				}
				if err == nil {
					checkCalibrated(t, fmt.Sprintf("%s(%+v)", name, tg), name, s, p, tmu, basis)
				}
			}
			for _, p := range []bandit.Params{{}, {"b": 1}, {"c": 1}} {
				var cp bandit.Params
				var err error
				withinBound(t, fmt.Sprintf("calibrateMTS(%+v, %v)", tg, p), func() { cp, err = calibrateMTS(s, tg, p) })
				check("mts-gaussian", cp, err)
			}
			var grid []bandit.Params
			var err error
			withinBound(t, fmt.Sprintf("MTSGrid(%+v)", tg), func() { grid, err = MTSGrid(s, tg, 1) })
			if err == nil && terr != nil {
				t.Errorf("MTSGrid accepted the invalid target %+v", tg)
			}
			for _, p := range grid {
				check("mts-gaussian", p, nil)
			}
			var cp bandit.Params
			withinBound(t, fmt.Sprintf("calibrateDPTSUCB(%+v)", tg), func() { cp, err = calibrateDPTSUCB(s, tg, nil) })
			check("dp-ts-ucb", cp, err)
			for _, name := range []string{"dp-se", "dp-ts", "lazy-dp-ts", "adap-ucb", "anytime-lazy-ucb"} {
				d, lerr := Lookup(name)
				if lerr != nil {
					t.Fatal(lerr)
				}
				withinBound(t, fmt.Sprintf("%s.Calibrate(%+v)", name, tg), func() { cp, err = d.Calibrate(s, tg, nil) })
				if err == nil {
					for k, v := range cp {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Errorf("%s.Calibrate(%+v) = %s = %v", name, tg, k, v)
						}
					}
				}
			}
		}
	})
}
