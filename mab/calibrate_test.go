package mab

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// matchPrinted fails unless got rounds to the printed decimal string want:
// |got − want| ≤ half a unit in its last printed digit (docs/reproductions.md §3.0:
// "tolerance: relative 1e-3, or the printed digits").
func matchPrinted(t *testing.T, what string, got float64, want string) {
	t.Helper()
	var w float64
	if _, err := fmt.Sscan(want, &w); err != nil {
		t.Fatalf("%s: bad printed value %q", what, want)
	}
	d := 0
	if i := strings.IndexByte(want, '.'); i >= 0 {
		d = len(want) - i - 1
	}
	tol := 0.5*math.Pow(10, -float64(d)) + 1e-12*math.Abs(w)
	if math.Abs(got-w) > tol {
		t.Errorf("%s = %.10g, want %s (±%g)", what, got, want, tol)
	}
}

// TestHuE1C checks [HU] App E.1's formula against docs/reproductions.md §3.0's list
// (T = 1e6, c0 = sqrt(2πe)) to the printed digits, including the two values
// the paper reports (c = 1.1780 at α = 0, b = 1 and 60.462 at α = 1, b = 2000).
func TestHuE1C(t *testing.T) {
	cases := []struct {
		alpha float64
		b     int
		want  string
	}{
		{0, 0, "2.3560"}, {0, 1, "1.1780"},
		{1, 0, "120985"}, {1, 1, "60493"}, {1, 500, "241.49"}, {1, 1000, "120.86"},
		{1, 2000, "60.462"}, {1, 5000, "24.192"}, {1, 100000, "1.2098"},
	}
	for _, c := range cases {
		matchPrinted(t, fmt.Sprintf("HuE1C(α=%v, b=%d)", c.alpha, c.b), HuE1C(1e6, c.alpha, c.b, DefaultC0), c.want)
	}
	// A8: the main text's square-root version gives 1.085 and 7.776 instead.
	matchPrinted(t, "sqrt version α=0 b=1", math.Sqrt(HuE1C(1e6, 0, 1, DefaultC0)), "1.085")
	matchPrinted(t, "sqrt version α=1 b=2000", math.Sqrt(HuE1C(1e6, 1, 2000, DefaultC0)), "7.776")
}

// TestHuE1CIsPaperCalibration checks that E.1's c is M-TS's paper-basis
// calibration at the target μ = DP-TS-UCB's Thm 4.4 value.
func TestHuE1CIsPaperCalibration(t *testing.T) {
	const T = 1_000_000
	s := bandit.Setting{K: 5, Horizon: T}
	for _, alpha := range []float64{0, 0.25, 0.5, 0.75, 1} {
		paper, _ := dptsucbValues(T, alpha, DefaultC0)
		for _, b := range []int{0, 1, 500, 2000, 100000} {
			got, err := calibrateMTS(s, bandit.Target{Mu: paper}, bandit.Params{"b": float64(b)})
			if err != nil {
				t.Fatal(err)
			}
			want := HuE1C(T, alpha, b, DefaultC0)
			if math.Abs(got["c"]-want) > 1e-12*want {
				t.Errorf("α=%v b=%d: calibrated c = %v, E.1 gives %v", alpha, b, got["c"], want)
			}
		}
	}
}

// TestMTSGridE1 checks docs/reproductions.md E1 ([OU] §5.1): T = 1e5, K = 5, η ∈ {1, 2, 5}, the b grid
// kept where c ≥ 1 and 5b < T; for η = 5 that leaves b ≤ 3999. Every pair
// satisfies c(b+1) = T/η² and its paper value meets η; on the certified basis
// the tight value equals η.
func TestMTSGridE1(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 100_000}
	wantMaxB := map[float64]int{1: 19999, 2: 19999, 5: 3999}
	for _, eta := range []float64{1, 2, 5} {
		for _, basis := range []string{"", bandit.BasisPaper, bandit.BasisCertified} {
			grid, err := MTSGrid(s, bandit.Target{Mu: eta, Basis: basis}, 1)
			if err != nil {
				t.Fatal(err)
			}
			last := grid[len(grid)-1]
			if basis != bandit.BasisCertified && int(last["b"]) != wantMaxB[eta] {
				t.Errorf("η=%v: largest b = %v, want %d", eta, last["b"], wantMaxB[eta])
			}
			for _, p := range grid {
				b, c := int(p["b"]), p["c"]
				if c < 1 || b*s.K >= s.Horizon {
					t.Errorf("η=%v: pair (b=%d, c=%v) breaks c ≥ 1 or bK < T", eta, b, c)
				}
				rep := mtsReport(s.K, s.Horizon, b, c)
				v := rep.Paper.Value
				if basis == bandit.BasisCertified {
					v = rep.Certified.Value
				} else if want := float64(s.Horizon) / (eta * eta); math.Abs(c*float64(b+1)-want) > 1e-12*want {
					t.Errorf("η=%v b=%d: c(b+1) = %v, want T/η² = %v", eta, b, c*float64(b+1), want)
				}
				if v > eta || v < eta*(1-1e-12) {
					t.Errorf("η=%v basis %q b=%d c=%v: value %v does not meet the target tightly", eta, basis, b, c, v)
				}
				if rep.Certified.Value > eta {
					t.Errorf("η=%v b=%d: certified %v above the target", eta, b, rep.Certified.Value)
				}
			}
		}
	}
	if _, err := MTSGrid(s, bandit.Target{Mu: 1e4}, 1); err == nil {
		t.Errorf("MTSGrid accepted a target no grid point can meet with c ≥ 1")
	}
}

// TestCalibrateMTS covers the user-given cases and the (ε, δ) route.
func TestCalibrateMTS(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 100_000}
	// b = 0 by default: c = T/μ² on the paper basis.
	p, err := calibrateMTS(s, bandit.Target{Mu: 2}, nil)
	if err != nil || p["b"] != 0 || math.Abs(p["c"]-25000) > 1e-9 {
		t.Errorf("default calibration: %v, %v; want b=0, c=25000", p, err)
	}
	// c given: smallest b meeting the target.
	p, err = calibrateMTS(s, bandit.Target{Mu: 5}, bandit.Params{"c": 2})
	if err != nil || p["b"] != 1999 || p["c"] != 2 {
		t.Errorf("c given: %v, %v; want b=1999 (2·2000 = T/25)", p, err)
	}
	// (ε, δ) target: the calibrated policy's ε at δ is ≤ the target ε.
	for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
		target := bandit.Target{Epsilon: 4.887, Delta: 1e-6, Basis: basis}
		p, err = calibrateMTS(s, target, bandit.Params{"b": 99})
		if err != nil {
			t.Fatal(err)
		}
		st, err := mtsReport(s.K, s.Horizon, 99, p["c"]).At(1e-6)
		if err != nil {
			t.Fatal(err)
		}
		eps := *st.Epsilon
		if basis == bandit.BasisPaper {
			eps = *st.PaperEpsilon
		}
		if eps > 4.887*(1+1e-12) || eps < 4.887*(1-1e-6) {
			t.Errorf("basis %s: calibrated ε = %v, target 4.887", basis, eps)
		}
	}
	for _, bad := range []struct {
		tg   bandit.Target
		p    bandit.Params
		want string
	}{
		{bandit.Target{Mu: 1}, bandit.Params{"b": 1, "c": 2}, "both given"},
		{bandit.Target{Mu: 1, Basis: "tight"}, nil, "basis"},
		{bandit.Target{}, nil, "epsilon"},
		{bandit.Target{Epsilon: 1}, nil, "delta"},
		{bandit.Target{Mu: 1}, bandit.Params{"b": 30000}, "bK ≤ T"},
		{bandit.Target{Mu: 1e-3}, bandit.Params{"c": 1}, "increase c"},
	} {
		if _, err := calibrateMTS(s, bad.tg, bad.p); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("calibrateMTS(%+v, %v): error %v, want one mentioning %q", bad.tg, bad.p, err, bad.want)
		}
	}
}

// TestCalibrateDPTSUCB: the smallest α whose value meets the target, on both
// bases; α = 0 for a loose target; an error naming the reachable range when
// even α = 1 is above the target.
func TestCalibrateDPTSUCB(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 1_000_000}
	for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
		for _, mu := range []float64{3, 10, 100, 400} {
			p, err := calibrateDPTSUCB(s, bandit.Target{Mu: mu, Basis: basis}, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := p["alpha"]
			value := func(a float64) float64 {
				paper, cert := dptsucbValues(s.Horizon, a, DefaultC0)
				if basis == bandit.BasisCertified {
					return cert
				}
				return paper
			}
			if value(a) > mu {
				t.Errorf("%s μ=%v: α=%v has value %v above the target", basis, mu, a, value(a))
			}
			if a > 0 && value(a-1e-9) <= mu && value(a-1e-9) < value(a) {
				t.Errorf("%s μ=%v: α=%v is not the smallest (α−1e-9 gives %v)", basis, mu, a, value(a-1e-9))
			}
		}
	}
	p, err := calibrateDPTSUCB(s, bandit.Target{Mu: 1000}, nil)
	if err != nil || p["alpha"] != 0 {
		t.Errorf("loose target: %v, %v; want α = 0", p, err)
	}
	if _, err := calibrateDPTSUCB(s, bandit.Target{Mu: 2}, nil); err == nil || !strings.Contains(err.Error(), "reaches") {
		t.Errorf("target below the α = 1 value 2.875: error %v", err)
	}
	// A smaller c0 reaches it (α = 1 gives sqrt(2c0)).
	if p, err := calibrateDPTSUCB(s, bandit.Target{Mu: 2}, bandit.Params{"c0": 1}); err != nil || p["alpha"] > 1 {
		t.Errorf("c0 = 1, μ = 2: %v, %v", p, err)
	}
	if _, err := calibrateDPTSUCB(s, bandit.Target{Mu: 10}, bandit.Params{"alpha": 0.5}); err == nil {
		t.Errorf("calibration accepted a user-given alpha")
	}
	// (ε, δ): the certified ε of the calibrated policy is ≤ the target.
	p, err = calibrateDPTSUCB(s, bandit.Target{Epsilon: 35.567, Delta: 1e-6, Basis: bandit.BasisCertified}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := dptsucbReport(s.Horizon, p["alpha"], DefaultC0).At(1e-6)
	if *st.Epsilon > 35.567*(1+1e-12) {
		t.Errorf("calibrated certified ε = %v > 35.567", *st.Epsilon)
	}
}

// TestTargetMu checks the (ε, δ) → μ conversion against docs/reproductions.md §3.0:
// 5-GDP is (35.5663, 1e-6)-DP.
func TestTargetMu(t *testing.T) {
	mu, basis, err := targetMu(bandit.Target{Epsilon: 35.5663, Delta: 1e-6})
	if err != nil || basis != bandit.BasisPaper {
		t.Fatal(mu, basis, err)
	}
	if math.Abs(mu-5) > 1e-4 {
		t.Errorf("μ(35.5663, 1e-6) = %v, want 5", mu)
	}
	if e, _ := privacy.GDPEpsilon(mu, 1e-6); e > 35.5663 {
		t.Errorf("μ = %v overshoots: ε = %v", mu, e)
	}
}
