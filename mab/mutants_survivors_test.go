package mab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// Tests for the mutants that survived a gremlins run on package mab
// (docs/mutation-testing.md). Each test names the mutants (file:line) it
// kills and why its assertion holds for the code as documented.

// ---------------------------------------------------------------------------
// calibrate.go

// TestSurvTargetMuRejects: a target given as (ε, δ) needs ε > 0 and δ in
// (0, 1) (targetMu's doc). ε = 0 is refused by targetMu itself, although
// privacy.GDPMu would convert it (kills calibrate.go:60 `>`→`>=`); δ = 1 is
// refused with targetMu's own message, not GDPMu's (kills calibrate.go:63
// `<`→`<=`).
func TestSurvTargetMuRejects(t *testing.T) {
	if mu, _, err := targetMu(bandit.Target{Epsilon: 0, Delta: 1e-6}); err == nil {
		t.Errorf("targetMu(ε = 0, δ = 1e-6) = %v, want an error (ε must be > 0)", mu)
	}
	_, _, err := targetMu(bandit.Target{Epsilon: 1, Delta: 1})
	if err == nil || !strings.Contains(err.Error(), "delta = 1 must lie in (0, 1)") {
		t.Errorf("targetMu(ε = 1, δ = 1): error %v, want targetMu's delta message", err)
	}
}

// TestSurvMTSCalibrationUnnudged: mtsCForTarget starts from c = T/(μ²(b+1))
// (paper basis) and nudges c up only while the reported value is above μ.
// Where that c already meets μ exactly (T = 1e5, μ = 2, b = 0: c = 25000,
// value sqrt(1e5/25000) = 2; μ = 5, b = 3: c = 1000, value sqrt(1e5/4000)
// = 5) the result is that c, bit for bit. Kills calibrate.go:115 (`>`→`>=`
// and `>`→`<=`: nudge at equality) and calibrate.go:118:33 (`>`→`>=`: one
// Nextafter step at equality; `>`→`<=`: 64 steps).
func TestSurvMTSCalibrationUnnudged(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 100_000}
	for _, c := range []struct {
		mu    float64
		b     int
		wantC float64
	}{{2, 0, 25000}, {5, 3, 1000}, {10, 9, 100}} {
		p, err := calibrateMTS(s, bandit.Target{Mu: c.mu}, bandit.Params{"b": float64(c.b)})
		if err != nil {
			t.Fatal(err)
		}
		if p["c"] != c.wantC || p["b"] != float64(c.b) {
			t.Errorf("μ = %v, b = %d: calibrated %v, want c = T/(μ²(b+1)) = %v exactly", c.mu, c.b, p, c.wantC)
		}
	}
}

// TestSurvMTSCalibrationTight: the calibrated c meets the target and lies
// within a few ulps of the smallest c that does (mtsCForTarget's doc):
// c·(1 − 2⁻⁴⁴) (about 256 ulps lower) no longer meets it, over a grid of
// settings on both bases, many of which need the nudge (the certified value
// is reported rounded up). Kills calibrate.go:118:16 `<`→`>=` (the
// one-ulp loop skipped, so the 2⁻⁴⁰-relative loop overshoots).
func TestSurvMTSCalibrationTight(t *testing.T) {
	checked := 0
	for _, k := range []int{1, 2, 5} {
		for _, T := range []int{10, 100, 1000, 12345, 100000} {
			for _, b := range []int{0, 1, 3, 7} {
				if b*k > T {
					continue
				}
				for _, mu := range []float64{0.1, 0.3, 1, 1.7, 2, 3.3, 5, 10, 31.4} {
					for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
						c, err := mtsCForTarget(k, T, b, mu, basis)
						if err != nil {
							t.Fatal(err)
						}
						if c == 0 {
							continue
						}
						value := func(c float64) float64 {
							paper, cert := mtsValues(k, T, b, c)
							if basis == bandit.BasisCertified {
								return roundUp(cert)
							}
							return paper
						}
						if value(c) > mu {
							t.Fatalf("K=%d T=%d b=%d μ=%v %s: c = %v has value %v > μ", k, T, b, mu, basis, c, value(c))
						}
						if lower := c * (1 - 0x1p-44); value(lower) <= mu {
							t.Fatalf("K=%d T=%d b=%d μ=%v %s: c = %v is not within a few ulps of the smallest (%v also meets μ)", k, T, b, mu, basis, c, lower)
						}
						checked++
					}
				}
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d cases checked", checked)
	}
}

// TestSurvMTSOutOfReachMessage: the out-of-reach error states the unreachable
// c = T/(μ²(b+1)) and the valid range sqrt(T/(b+1)/MaxFloat64) ≤ μ ≤
// sqrt(MaxFloat64) (paper basis). T = 100, b = 1, μ = 1.5e154 (> √Max): c =
// 100/(2.25e308·2) ≈ 2.2222e-307, range lower end sqrt(50)/√Max ≈
// 5.274e-154, both computed here independently (math/big for c). Kills
// calibrate.go:128 (all five operators of the message's two expressions).
func TestSurvMTSOutOfReachMessage(t *testing.T) {
	const mu = 1.5e154
	_, err := calibrateMTS(bandit.Setting{K: 1, Horizon: 100}, bandit.Target{Mu: mu}, bandit.Params{"b": 1})
	if err == nil {
		t.Fatal("μ = 1.5e154 above √MaxFloat64 was accepted")
	}
	msg := err.Error()
	const key = "c = T/(μ²(b+1)) = "
	i := strings.Index(msg, key)
	if i < 0 {
		t.Fatalf("error %q does not state c", msg)
	}
	rest := msg[i+len(key):]
	got, perr := strconv.ParseFloat(rest[:strings.IndexByte(rest, ' ')], 64)
	if perr != nil {
		t.Fatalf("error %q: %v", msg, perr)
	}
	m := new(big.Float).SetPrec(200).SetFloat64(mu)
	want, _ := new(big.Float).SetPrec(200).Quo(big.NewFloat(100), m.Mul(m, m).Mul(m, big.NewFloat(2))).Float64()
	if !(math.Abs(got-want) <= 1e-12*want) {
		t.Errorf("error states c = %v, want T/(μ²(b+1)) = %v", got, want)
	}
	lo := math.Sqrt(50) / math.Sqrt(math.MaxFloat64)
	if wantRange := fmt.Sprintf("valid: %.4g ≤ μ ≤ %.4g", lo, math.Sqrt(math.MaxFloat64)); !strings.Contains(msg, wantRange) {
		t.Errorf("error %q does not state the range %q", msg, wantRange)
	}
}

// TestSurvCalibrateMTSSmallSettings: K = 1 and T = 1 are valid settings
// (K ≥ 1, T ≥ 1) for calibrateMTS and MTSGrid (kills calibrate.go:143 and
// calibrate.go:211, `<`→`<=` on K and on T); b = T/K is a valid user b
// (bK ≤ T; kills calibrate.go:185 `>`→`>=`); MTSGrid keeps exactly the grid
// b with bK < T: for K = 1, T = 9 that is b ∈ {0, 1}, not b = 9 (kills
// calibrate.go:216 `>=`→`>`).
func TestSurvCalibrateMTSSmallSettings(t *testing.T) {
	one := bandit.Setting{K: 1, Horizon: 1}
	for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
		p, err := calibrateMTS(one, bandit.Target{Mu: 1, Basis: basis}, nil)
		if err != nil || p["b"] != 0 || p["c"] != 1 {
			t.Errorf("K = T = 1, μ = 1, %s: %v, %v; want b = 0, c = 1", basis, p, err)
		}
		if g, err := MTSGrid(one, bandit.Target{Mu: 1, Basis: basis}, 0); err != nil || len(g) != 1 || g[0]["b"] != 0 {
			t.Errorf("MTSGrid K = T = 1, %s: %v, %v; want the single pair b = 0", basis, g, err)
		}
	}
	if p, err := calibrateMTS(bandit.Setting{K: 5, Horizon: 100}, bandit.Target{Mu: 1}, bandit.Params{"b": 20}); err != nil || p["b"] != 20 {
		t.Errorf("b = T/K = 20: %v, %v; want it accepted", p, err)
	}
	g, err := MTSGrid(bandit.Setting{K: 1, Horizon: 9}, bandit.Target{Mu: 0.1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var bs []float64
	for _, p := range g {
		bs = append(bs, p["b"])
	}
	if fmt.Sprint(bs) != "[0 1]" {
		t.Errorf("MTSGrid K = 1, T = 9: b = %v, want [0 1] (bK < T)", bs)
	}
}

// TestSurvCalibrateMTSGivenC: a user c must be > 0, and is refused as such
// (kills calibrate.go:152 `>`→`>=`, where c = 0 fails later as "increase
// c"); with c given, b is the smallest b whose reported value is ≤ μ, so a
// target equal to the reported certified value at b0 gives b0 (kills
// calibrate.go:160 `<=`→`<`).
func TestSurvCalibrateMTSGivenC(t *testing.T) {
	s := bandit.Setting{K: 2, Horizon: 1000}
	if _, err := calibrateMTS(s, bandit.Target{Mu: 1}, bandit.Params{"c": 0}); err == nil || !strings.Contains(err.Error(), "must be finite and > 0") {
		t.Errorf("c = 0: error %v, want the parameter refused", err)
	}
	for _, b0 := range []int{3, 10, 200} {
		_, cert := mtsValues(s.K, s.Horizon, b0, 0.5)
		mu := roundUp(cert) // the reported certified value at b0
		p, err := calibrateMTS(s, bandit.Target{Mu: mu, Basis: bandit.BasisCertified}, bandit.Params{"c": 0.5})
		if err != nil || p["b"] != float64(b0) {
			t.Errorf("target = reported value at b = %d: %v, %v; want b = %d", b0, p, err, b0)
		}
	}
}

// TestSurvMTSGridMinCSlack: MTSGrid drops a pair only when c <
// minC·(1 − 1e-12); a pair with c equal to that product is kept. With minC
// chosen so that minC·(1 − 1e-12) equals b = 0's c exactly (and every
// larger b has a smaller c) the grid is exactly {b = 0}. Kills
// calibrate.go:225 `<`→`<=`.
func TestSurvMTSGridMinCSlack(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 100_000}
	c0, err := mtsCForTarget(s.K, s.Horizon, 0, 3, bandit.BasisPaper)
	if err != nil {
		t.Fatal(err)
	}
	minC := c0 / (1 - 1e-12)
	for i := 0; i < 64 && minC*(1-1e-12) != c0; i++ {
		if minC*(1-1e-12) > c0 {
			minC = math.Nextafter(minC, 0)
		} else {
			minC = math.Nextafter(minC, math.Inf(1))
		}
	}
	if minC*(1-1e-12) != c0 {
		t.Fatalf("no minC with minC·(1−1e-12) = %v", c0)
	}
	g, err := MTSGrid(s, bandit.Target{Mu: 3}, minC)
	if err != nil || len(g) != 1 || g[0]["b"] != 0 || g[0]["c"] != c0 {
		t.Errorf("minC·(1−1e-12) = c(b=0) = %v: grid %v, %v; want exactly b = 0", c0, g, err)
	}
}

// TestSurvCalibrateDPTSUCBTight: calibrateDPTSUCB returns the smallest α
// (to one ulp) whose value is ≤ μ: value(α) ≤ μ < value(α⁻), α⁻ the float
// below α, on both bases, for targets strictly inside the reachable range,
// at the bisection's first midpoint (μ = value(0.5)), and at both ends: μ =
// value(0) gives α = 0, μ = value(1) is reachable. Kills calibrate.go:293
// (all mutants of lo + (hi−lo)/2), calibrate.go:294 (the two negations,
// which stop the bisection at once), calibrate.go:297 `<=`→`<` (the tie at
// μ = value(0.5) moves lo to 0.5), calibrate.go:284 `<=`→`<` and
// calibrate.go:287 `>`→`>=`.
func TestSurvCalibrateDPTSUCBTight(t *testing.T) {
	s := bandit.Setting{K: 5, Horizon: 1_000_000}
	for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
		value := func(a float64) float64 {
			paper, cert := dptsucbValues(s.Horizon, a, DefaultC0)
			if basis == bandit.BasisCertified {
				return roundUp(cert)
			}
			return paper
		}
		v0, v1 := value(0), value(1)
		mus := []float64{value(0.5), value(0.25), v1 * 1.01, (v0 + v1) / 2, v0 * 0.99, 3.3, 100}
		for _, mu := range mus {
			p, err := calibrateDPTSUCB(s, bandit.Target{Mu: mu, Basis: basis}, nil)
			if err != nil {
				t.Fatalf("%s μ = %v: %v", basis, mu, err)
			}
			a := p["alpha"]
			if !(a > 0 && a <= 1) || value(a) > mu || !(value(math.Nextafter(a, 0)) > mu) {
				t.Errorf("%s μ = %v: α = %v is not the smallest α with value ≤ μ (value(α) = %v, value(α⁻) = %v)",
					basis, mu, a, value(a), value(math.Nextafter(a, 0)))
			}
		}
		if p, err := calibrateDPTSUCB(s, bandit.Target{Mu: v0, Basis: basis}, nil); err != nil || p["alpha"] != 0 {
			t.Errorf("%s μ = value(0): %v, %v; want α = 0", basis, p, err)
		}
		if p, err := calibrateDPTSUCB(s, bandit.Target{Mu: v1, Basis: basis}, nil); err != nil || value(p["alpha"]) > v1 {
			t.Errorf("%s μ = value(1) = %v: %v, %v; want a reachable target", basis, v1, p, err)
		}
	}
}

// TestSurvGDPReportZeroPaper: gdpReport's paper < 0 means "no stated
// value"; a stated paper value of 0 is reported (kills calibrate.go:324
// `>=`→`>`).
func TestSurvGDPReportZeroPaper(t *testing.T) {
	r := gdpReport("x", 1, 0, true, "d")
	if r.Paper == nil || r.Paper.Value != 0 || r.Paper.Notion != privacy.NotionGDP {
		t.Errorf("paper value 0: Paper = %+v, want a GDP guarantee of 0", r.Paper)
	}
	if r := gdpReport("x", 1, -1, true, "d"); r.Paper != nil {
		t.Errorf("paper value −1: Paper = %+v, want none", r.Paper)
	}
}

// TestSurvCheckRewardArmK: arm K is outside [0, K) (kills calibrate.go:338
// `>=`→`>`).
func TestSurvCheckRewardArmK(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("checkReward accepted arm 3 with K = 3")
		}
	}()
	checkReward("p", 3, 3, 0.5)
}

// ---------------------------------------------------------------------------
// dpse.go

// TestSurvDPSERe: R_e = ⌈max(32·ln(8se²/β)·4^e, 8·ln(4se²/β)·2^e/ε)⌉ + 1,
// checked against values computed with 50-digit arithmetic (mpmath), at
// epochs e ≥ 2 (where e² ≠ e) and with either term the larger (the second
// at small ε). Kills dpse.go:174 and dpse.go:175 (every operator of both
// terms).
func TestSurvDPSERe(t *testing.T) {
	for _, c := range []struct {
		s, e      int
		eps, beta float64
		want      int
	}{
		{2, 1, 1, 0.01, 946},        // a = 944.353, b = 106.95
		{3, 2, 1, 0.001, 5875},      // a = 5873.717
		{4, 3, 0.5, 1e-3, 25746},    // a = 25744.826
		{5, 2, 0.01, 0.01, 28761},   // b = 28759.030
		{3, 3, 0.001, 1e-4, 889120}, // b = 889118.182
		{7, 1, 0.002, 0.05, 50625},  // b = 50623.494
		{2, 4, 0.003, 1e-3, 501752}, // b = 501750.850
	} {
		if got := dpseRe(c.s, c.e, c.eps, c.beta); got != c.want {
			t.Errorf("dpseRe(s=%d, e=%d, ε=%v, β=%v) = %d, want %d", c.s, c.e, c.eps, c.beta, got, c.want)
		}
	}
}

// TestSurvDPSEEliminationThreshold: at the end of epoch e arm a is dropped
// exactly when max μ̃ − μ̃_a > 2(h_e + c_e), h_e = sqrt(ln(8|S|e²/β)/(2R_e)),
// c_e = ln(4|S|e²/β)/(R_e·ε). With the release noise replaced by the
// identity (recNoise) the released means are the epoch means, and at e = 3
// with 4 arms: a gap of exactly the threshold keeps the arm, a gap 1e-6
// (relative) above drops it, one 1e-6 below keeps it. Also checks the
// release's sensitivity 1/R_e. Kills dpse.go:249 (e² → 1), dpse.go:256 and
// dpse.go:257 (every operator of h and c), dpse.go:260 (`>`→`>=`, h+c →
// h−c).
func TestSurvDPSEEliminationThreshold(t *testing.T) {
	const eps, beta = 0.5, 0.01
	// run plays the end of epoch 3 of a 4-arm DP-SE with the given epoch
	// sums and identity release noise; it returns the survivors and drops.
	run := func(sums func(re float64) []float64) string {
		p, err := NewDPSE(DPSEOptions{K: 4, Epsilon: eps, Beta: beta}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		rec := &recNoise{}
		p.noise = &pureNoiseCache{n: rec}
		p.startEpoch(3)
		re := float64(p.st.Re)
		copy(p.st.Sums, sums(re))
		p.eliminate()
		if len(rec.d) == 0 {
			t.Error("no release")
		}
		for i, d := range rec.d {
			if d != 1/re || rec.b[i] != pureLapScale(1/re, eps) {
				t.Errorf("release %d: sensitivity %v, scale %v; want 1/R_e = %v, %v", i, d, rec.b[i], 1/re, pureLapScale(1/re, eps))
			}
		}
		return fmt.Sprint(p.Survivors(), p.st.Drops)
	}
	thrOf := func(re float64) float64 {
		s, e := 4.0, 3.0
		h := math.Sqrt(math.Log(8*s*e*e/beta) / (2 * re))
		c := math.Log(4*s*e*e/beta) / (re * eps)
		return 2 * (h + c)
	}
	// Gaps 1e-6 (relative) above and below the threshold from the best mean 0.9.
	got := run(func(re float64) []float64 {
		thr := thrOf(re)
		if !(thr > 0 && thr < 0.5) {
			t.Fatalf("threshold %v", thr)
		}
		return []float64{0.9 * re, (0.9 - thr*(1+1e-6)) * re, 0.9 * re, (0.9 - thr*(1-1e-6)) * re}
	})
	if got != "[0 2 3] [0 3 0 0]" {
		t.Errorf("gaps thr·(1±1e-6): survivors, drops = %s, want [0 2 3] [0 3 0 0]", got)
	}
	// A gap of exactly the threshold: best mean = thr, the others 0.
	got = run(func(re float64) []float64 {
		thr := thrOf(re)
		x := thr * re
		for i := 0; i < 64 && x/re != thr; i++ {
			if x/re > thr {
				x = math.Nextafter(x, 0)
			} else {
				x = math.Nextafter(x, math.Inf(1))
			}
		}
		if x/re != thr {
			t.Fatalf("no sum has mean %v", thr)
		}
		return []float64{0, x, 0, 0}
	})
	if got != "[0 1 2 3] [0 0 0 0]" {
		t.Errorf("gap exactly 2(h+c): survivors, drops = %s, want every arm kept", got)
	}
}

// survPatchState marshals policy p, applies edit to its JSON "state"
// object and returns the new JSON.
func survPatchState(t *testing.T, p json.Marshaler, edit func(st map[string]any)) []byte {
	t.Helper()
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&j); err != nil {
		t.Fatal(err)
	}
	edit(j["state"].(map[string]any))
	out, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSurvDPSEStateCheck: UnmarshalJSON accepts every state DP-SE can reach
// and refuses the others (dpseState.check):
//   - reachable: one survivor left (kills dpse.go:330 `<`→`<=`); epoch 1000
//     (kills dpse.go:338 `>`→`>=`); an epoch sum of Rounds+1 after an arm's
//     pull in the running cycle (kills dpse.go:355 `>`→`>=`);
//   - refused: an alive arm = K (kills dpse.go:334:17 `>=`→`>`), a repeated
//     alive arm (dpse.go:334:37 `<=`→`<`), pos = |alive| (dpse.go:344:26),
//     rounds = R_e (dpse.go:344:73), an arm dropped in the current epoch
//     (dpse.go:362 `>=`→`>`); the message on a too-large sum states the
//     bound Rounds+1 (dpse.go:356 `+`→`-`).
func TestSurvDPSEStateCheck(t *testing.T) {
	opts := DPSEOptions{K: 2, Epsilon: 10, Beta: 0.01}
	fresh := func(o DPSEOptions) *DPSE {
		p, err := NewDPSE(o, rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// One survivor: arm 0 always pays 1, arm 1 never.
	p := fresh(opts)
	for len(p.Survivors()) > 1 {
		a := p.Select()
		p.Update(a, float64(1-a))
	}
	b, _ := p.MarshalJSON()
	if err := fresh(opts).UnmarshalJSON(b); err != nil {
		t.Errorf("state with one survivor refused: %v", err)
	}
	// Sums[0] = Rounds+1 = 1 after one pull of reward 1.
	p = fresh(opts)
	p.Update(p.Select(), 1)
	b, _ = p.MarshalJSON()
	if err := fresh(opts).UnmarshalJSON(b); err != nil {
		t.Errorf("epoch sum 1 after one pull refused: %v", err)
	}
	b = survPatchState(t, p, func(st map[string]any) { st["sums"] = []any{5, 0} })
	if err := fresh(opts).UnmarshalJSON(b); err == nil || !strings.Contains(err.Error(), "epoch sum 5 outside [0, 1]") {
		t.Errorf("epoch sum 5 at rounds 0: error %v, want one stating [0, 1]", err)
	}
	// Epoch 1000 (R_e capped at 2⁵⁰).
	p = fresh(opts)
	b = survPatchState(t, p, func(st map[string]any) {
		st["epoch"], st["re"] = 1000, dpseRe(2, 1000, opts.Epsilon, opts.Beta)
	})
	if err := fresh(opts).UnmarshalJSON(b); err != nil {
		t.Errorf("epoch 1000 refused: %v", err)
	}
	bad := func(what string, o DPSEOptions, edit func(st map[string]any)) {
		t.Helper()
		b := survPatchState(t, fresh(o), edit)
		if err := fresh(o).UnmarshalJSON(b); err == nil {
			t.Errorf("%s: state accepted", what)
		}
	}
	bad("pos = |alive|", opts, func(st map[string]any) { st["pos"] = 2 })
	bad("rounds = R_e", opts, func(st map[string]any) { st["rounds"] = st["re"] })
	bad("alive arm = K", opts, func(st map[string]any) {
		st["alive"], st["epoch"], st["dropped"] = []any{0, 2}, 2, []any{0, 1}
		st["re"] = dpseRe(2, 2, opts.Epsilon, opts.Beta)
	})
	o3 := DPSEOptions{K: 3, Epsilon: 10, Beta: 0.01}
	bad("repeated alive arm", o3, func(st map[string]any) {
		st["alive"], st["epoch"], st["dropped"] = []any{1, 1}, 2, []any{1, 0, 1}
		st["re"] = dpseRe(2, 2, o3.Epsilon, o3.Beta)
	})
	bad("dropped in the current epoch", o3, func(st map[string]any) {
		st["alive"], st["epoch"], st["dropped"] = []any{0, 1}, 2, []any{0, 0, 2}
		st["re"] = dpseRe(2, 2, o3.Epsilon, o3.Beta)
	})
	// The same edit with the arm dropped in epoch 1 is a reachable state.
	b = survPatchState(t, fresh(o3), func(st map[string]any) {
		st["alive"], st["epoch"], st["dropped"] = []any{0, 1}, 2, []any{0, 0, 1}
		st["re"] = dpseRe(2, 2, o3.Epsilon, o3.Beta)
	})
	if err := fresh(o3).UnmarshalJSON(b); err != nil {
		t.Errorf("arm dropped in epoch 1, now epoch 2: refused: %v", err)
	}
}

// TestSurvPureTargetDelta: a GDP target converts to ε only with δ in
// (0, 1), refused with pureTargetEpsilon's own message (kills dpse.go:444,
// `>`→`>=` at δ = 0 and `<`→`<=` at δ = 1, where GDPEpsilon's message
// would be returned instead).
func TestSurvPureTargetDelta(t *testing.T) {
	for _, d := range []float64{0, 1} {
		_, err := pureTargetEpsilon("x", bandit.Target{Mu: 1, Delta: d})
		if err == nil || !strings.Contains(err.Error(), "needs δ in (0, 1)") {
			t.Errorf("δ = %v: error %v, want the δ range stated", d, err)
		}
	}
}

// TestSurvPureLogBase: log base 10 is valid ([2, 10], kills dpse.go:566
// `<=`→`<`), and pureLog(base, x) is log_base x (kills dpse.go:579
// `/`→`*`): log₁₀ 1000 = 3, log_e x = ln x.
func TestSurvPureLogBase(t *testing.T) {
	if b, err := pureCheckLogBase("x", 10); err != nil || b != 10 {
		t.Errorf("logbase 10: %v, %v", b, err)
	}
	if got := pureLog(10, 1000); !(math.Abs(got-3) <= 1e-14) {
		t.Errorf("log₁₀ 1000 = %v, want 3", got)
	}
	if got := pureLog(math.E, 5); got != math.Log(5) {
		t.Errorf("log_e 5 = %v, want %v", got, math.Log(5))
	}
}

// ---------------------------------------------------------------------------
// dpts.go

// TestSurvDPTSLargeHorizon: the constructor builds the trees of every chunk
// that can start within T: for T = 2⁶¹ that is chunks 1..61, and chunk 61
// (capacity 2⁶¹) is the largest tree buildTree makes, chunk 62 is refused.
// T = 1 builds none. Kills dpts.go:188 (`-`→`+`: chunks 62, 63 requested),
// dpts.go:203 (`>`→`>=`: chunk 61 refused) and dpts.go:190 (`rmax+1` →
// `rmax-1`: a negative length at T = 1).
func TestSurvDPTSLargeHorizon(t *testing.T) {
	p, err := NewDPTS(DPTSOptions{K: 1, Horizon: 1 << 61, Epsilon: 1, C: 6}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatalf("T = 2⁶¹: %v", err)
	}
	if len(p.trees[0]) != 62 || p.trees[0][61].Capacity() != 1<<61 || p.trees[0][1].Capacity() != 2 {
		t.Errorf("T = 2⁶¹: %d trees, want chunks 1..61", len(p.trees[0]))
	}
	if err := p.buildTree(0, 62); err == nil {
		t.Error("chunk 62 was built")
	}
	q, err := NewDPTS(DPTSOptions{K: 2, Horizon: 1, Epsilon: 1, C: 6}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatalf("T = 1: %v", err)
	}
	if len(q.trees[0]) != 1 || q.trees[0][0] != nil {
		t.Errorf("T = 1: trees %v, want none built", q.trees[0])
	}
}

// TestSurvDPTSSampleRule: a DP-TS Select after the initial pulls draws, on
// the policy's generator and in arm order, θ_a ~ Beta(μ·O+1, (1−μ)·O+1)
// with μ = clip(μ̃ + c·√8·log₂(O+1)·log₂(t)/(ε·O), 0, 1), t = Steps + 1, and
// returns the argmax. Replayed on a copy of the generator with μ̃ from
// PrivateMean and the offset from dptsOffset, the draws match bit for bit;
// c and ε are chosen so that μ lies inside (0, 1). Kills dpts.go:256
// (`Steps+1` → `Steps-1`) and dpts.go:260 (μ̃ − offset). PrivateMean is
// NaN before an arm's first pull and finite after (kills dpts.go:357).
func TestSurvDPTSSampleRule(t *testing.T) {
	src := rand.NewPCG(5, 6)
	opts := DPTSOptions{K: 3, Horizon: 1000, Epsilon: 1e4, C: 300}
	p, err := NewDPTS(opts, rand.New(src))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(p.PrivateMean(0)) {
		t.Errorf("PrivateMean before the first pull = %v, want NaN", p.PrivateMean(0))
	}
	rewards := []float64{0.2, 0.5, 0.4}
	for range 3 {
		a := p.Select()
		p.Update(a, rewards[a])
	}
	for round := 0; round < 20; round++ {
		state, _ := src.MarshalBinary()
		rep := rand.NewPCG(0, 0)
		if err := rep.UnmarshalBinary(state); err != nil {
			t.Fatal(err)
		}
		rr := rand.New(rep)
		tt := p.st.Steps + 1
		want, wv := 0, 0.0
		inside := 0
		wantTh := make([]float64, opts.K)
		for a := range opts.K {
			m := p.PrivateMean(a)
			if math.IsNaN(m) {
				t.Fatalf("arm %d: PrivateMean NaN after its pull", a)
			}
			o := p.st.O[a]
			mu := min(max(m+dptsOffset(opts.Offset, opts.C, opts.Epsilon, o, tt), 0), 1)
			if mu > 0 && mu < 1 {
				inside++
			}
			v := noise.Beta(rr, mu*float64(o)+1, (1-mu)*float64(o)+1)
			wantTh[a] = v
			if a == 0 || v > wv {
				want, wv = a, v
			}
		}
		if inside == 0 {
			t.Fatalf("round %d: every μ clipped; the test would not see the offset", round)
		}
		got := p.Select()
		if got != want || fmt.Sprint(p.th) != fmt.Sprint(wantTh) {
			t.Fatalf("round %d (t = %d): Select = %d with θ = %v, replay of the stated rule gives %d with θ = %v", round, tt, got, p.th, want, wantTh)
		}
		p.Update(got, rewards[got])
	}
}

// TestSurvDPTSTieToLowest: DP-TS's argmax breaks ties to the lowest index
// (type doc). Two arms with O = C = 2⁶⁰ have μ = 1 and θ ~ Beta(2⁶⁰+1, 1),
// which is exactly 1.0 in float64 (x/(x+y) with y ~ Gamma(1) far below
// ulp(x)/2 = 128): an exact tie, won by arm 0 (kills dpts.go:265 `>`→`>=`).
func TestSurvDPTSTieToLowest(t *testing.T) {
	p, err := NewDPTS(DPTSOptions{K: 2, Epsilon: 1, C: 6}, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	for a := range 2 {
		p.st.O[a], p.st.C[a], p.st.R[a], p.st.Pulls[a] = 1<<60, 1<<60, 60, 1<<60
		p.setOff(a)
	}
	p.st.Init, p.st.Steps = 2, 1<<61
	for i := range 20 {
		if a := p.Select(); a != 0 || p.th[0] != 1 || p.th[1] != 1 {
			t.Fatalf("draw %d: Select = %d with θ = %v, want a tie at 1 won by arm 0", i, a, p.th)
		}
	}
}

// TestSurvDPTSRestoreAnytime: with Horizon = 0 (trees built on demand) the
// state round-trips right after a chunk completes (the next chunk's tree
// not built yet: kills dpts.go:388 `<`→`<=`, an index past the trees, and
// dpts.go:439:29 `>`→`>=` / `>`→`<=`, a missing tree for an empty chunk
// refused) and with a running chunk's tree (kills dpts.go:455 `<=`→`<`);
// the restored private means equal the saved ones.
func TestSurvDPTSRestoreAnytime(t *testing.T) {
	opts := DPTSOptions{K: 1, Epsilon: 1, C: 6}
	p, _ := NewDPTS(opts, rand.New(rand.NewPCG(9, 10)))
	for n := 1; n <= 6; n++ {
		p.Update(p.Select(), 0.5)
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatalf("after %d pulls: %v", n, err)
		}
		q, _ := NewDPTS(opts, rand.New(rand.NewPCG(1, 1)))
		if err := q.UnmarshalJSON(b); err != nil {
			t.Fatalf("after %d pulls (chunk %d, %d in it): %v", n, p.st.R[0], p.st.ChunkN[0], err)
		}
		if q.PrivateMean(0) != p.PrivateMean(0) {
			t.Errorf("after %d pulls: restored mean %v, saved %v", n, q.PrivateMean(0), p.PrivateMean(0))
		}
	}
}

// TestSurvDPTSRestoreOptions: a state restores only into a policy built
// with the same options, and into a zero-value DPTS whatever they are
// (UnmarshalJSON's doc; kills dpts.go:410 `!=`→`==`).
func TestSurvDPTSRestoreOptions(t *testing.T) {
	p, _ := NewDPTS(DPTSOptions{K: 2, Epsilon: 1, C: 6}, rand.New(rand.NewPCG(1, 2)))
	p.Update(p.Select(), 1)
	b, _ := p.MarshalJSON()
	q, _ := NewDPTS(DPTSOptions{K: 2, Epsilon: 2, C: 6}, rand.New(rand.NewPCG(1, 2)))
	if err := q.UnmarshalJSON(b); err == nil {
		t.Error("state saved at ε = 1 restored into a policy built with ε = 2")
	}
	var z DPTS
	if err := z.UnmarshalJSON(b); err != nil || z.opts.Epsilon != 1 {
		t.Errorf("restore into a zero DPTS: %v (ε = %v)", err, z.opts.Epsilon)
	}
}

// TestSurvDPTSStateCheck: the chunk-schedule checks of UnmarshalJSON.
// Accepted: chunk 61 (the largest) with no observation in it (kills
// dpts.go:429:47 `>`→`>=`). Refused: a running chunk holding 2^r
// observations (complete but not released; kills dpts.go:429:88
// `>=`→`>`), O inconsistent with the chunk (kills dpts.go:430 `>`→`<=`),
// observations in a chunk without its tree (kills dpts.go:439:9
// `>`→`<=`).
func TestSurvDPTSStateCheck(t *testing.T) {
	opts := DPTSOptions{K: 1, Epsilon: 1, C: 6}
	fresh := func() *DPTS {
		p, _ := NewDPTS(opts, rand.New(rand.NewPCG(1, 2)))
		return p
	}
	p := fresh()
	p.Update(p.Select(), 1) // O = 1, chunk 1 empty
	const o61 = 1<<61 - 1
	b := survPatchState(t, p, func(st map[string]any) {
		st["o"], st["r"], st["pulls"], st["steps"] = []any{o61}, []any{61}, []any{o61}, o61
	})
	if err := fresh().UnmarshalJSON(b); err != nil {
		t.Errorf("chunk 61 with O = 2⁶¹−1: refused: %v", err)
	}
	b = survPatchState(t, p, func(st map[string]any) {
		st["o"], st["r"], st["pulls"], st["steps"] = []any{1<<62 - 1}, []any{62}, []any{1<<62 - 1}, 1<<62-1
	})
	if err := fresh().UnmarshalJSON(b); err == nil {
		t.Error("chunk 62 accepted")
	}
	b = survPatchState(t, p, func(st map[string]any) {
		st["o"], st["pulls"], st["steps"] = []any{5}, []any{5}, 5
	})
	if err := fresh().UnmarshalJSON(b); err == nil {
		t.Error("O = 5 in chunk 1 with no observation in it accepted")
	}
	b = survPatchState(t, p, func(st map[string]any) {
		st["o"], st["pulls"], st["steps"], st["chunk_n"], st["chunk_sum"] = []any{2}, []any{2}, 2, []any{1}, []any{0.5}
	})
	if err := fresh().UnmarshalJSON(b); err == nil || !strings.Contains(err.Error(), "lacks its chunk tree") {
		t.Errorf("an observation in chunk 1 without its tree: error %v", err)
	}
	// A full running chunk: two observations in chunk 1 (capacity 2).
	p.Update(p.Select(), 1) // O = 2, one leaf in chunk 1's tree
	if !mtInsert(p.trees[0][1], 1) {
		t.Fatal("tree full")
	}
	p.st.O[0], p.st.Pulls[0], p.st.Steps, p.st.ChunkN[0], p.st.ChunkSum[0] = 3, 3, 3, 2, 2
	b, _ = p.MarshalJSON()
	if err := fresh().UnmarshalJSON(b); err == nil {
		t.Error("a complete, unreleased chunk accepted")
	}
}

// ---------------------------------------------------------------------------
// betats.go

// survConstSource is a rand.Source returning one value forever.
type survConstSource uint64

func (s survConstSource) Uint64() uint64 { return uint64(s) }

// TestSurvBetaTS: Select returns the argmax of the posterior draws, ties to
// the lowest index like the package's other argmaxes: arm 1 with 1000
// successes against arm 0 with 1000 failures (kills betats.go:72
// Inf(−1) → Inf(+1), and betats.go:75 `>`→`<=`), two arms with S = 2⁶⁰
// whose draws Beta(2⁶⁰+1, 1) are both exactly 1 (kills betats.go:75
// `>`→`>=`). The Bernoulli(x) coin succeeds with probability x: with the
// uniform U = Float64() = 0.5 the coin for x = 0.5 fails (U < x) (kills
// betats.go:96 `<`→`<=`). A state with no failures restores (kills
// betats.go:133 `<`→`<=`).
func TestSurvBetaTS(t *testing.T) {
	p, _ := NewBetaTS(BetaTSOptions{K: 2}, rand.New(rand.NewPCG(1, 2)))
	p.st.Failures[0], p.st.Successes[1] = 1000, 1000
	for i := range 20 {
		if a := p.Select(); a != 1 {
			t.Fatalf("draw %d: Select = %d, want the dominant arm 1", i, a)
		}
	}
	p.st = BetaTSState{Successes: []int{1 << 60, 1 << 60}, Failures: []int{0, 0}}
	for i := range 20 {
		if a := p.Select(); a != 0 {
			t.Fatalf("draw %d: Select = %d on an exact tie, want arm 0", i, a)
		}
	}
	c, _ := NewBetaTS(BetaTSOptions{K: 1}, rand.New(survConstSource(1<<52)))
	if u := c.r.Float64(); u != 0.5 {
		t.Fatalf("Float64 = %v, want 0.5", u)
	}
	c.Update(0, 0.5)
	if c.st.Successes[0] != 0 || c.st.Failures[0] != 1 {
		t.Errorf("coin for x = 0.5 with U = 0.5: %+v, want a failure (success iff U < x)", c.st)
	}
	q, _ := NewBetaTS(BetaTSOptions{K: 1}, rand.New(rand.NewPCG(1, 2)))
	q.Update(0, 1)
	b, _ := q.MarshalJSON()
	r, _ := NewBetaTS(BetaTSOptions{K: 1}, rand.New(rand.NewPCG(1, 2)))
	if err := r.UnmarshalJSON(b); err != nil || r.st.Successes[0] != 1 {
		t.Errorf("state with one success and no failure: %v", err)
	}
}

// ---------------------------------------------------------------------------
// adapucb.go

// TestSurvAdaPUCBIndex: arm j's index is μ̃_j + sqrt(α·ln(2t)/(2n_j)) +
// α·ln(t)/(ε·n_j), t = steps + 1: with μ̃ = 0.3, n = 2, α = 2, ε = 0.5, t =
// 8 it is 0.3 + sqrt(2·ln 16/4) + 2·ln 8/1 = 5.636293105875147 (mpmath)
// (kills adapucb.go:154 ln(2t) → ln(2/t)). SelectProbs breaks an exact tie
// like Select, to the lowest index (kills adapucb.go:179 `>`→`>=`).
func TestSurvAdaPUCBIndex(t *testing.T) {
	p, _ := NewAdaPUCB(AdaPUCBOptions{K: 2, Epsilon: 0.5, Alpha: 2}, rand.New(rand.NewPCG(1, 2)))
	p.st.Mu[0], p.st.N[0], p.st.Steps = 0.3, 2, 7
	const want = 5.636293105875147
	if got := p.index(0); !(math.Abs(got-want) <= 1e-13) {
		t.Errorf("index = %.15g, want %.15g", got, want)
	}
	// A tie: both arms initialised with the same released mean and n.
	q, _ := NewAdaPUCB(AdaPUCBOptions{K: 2, Epsilon: 1, Alpha: 3.1}, rand.New(rand.NewPCG(1, 2)))
	q.st.Mu = []float64{0.5, 0.5}
	q.st.N, q.st.Total, q.st.Pulls = []int{1, 1}, []int{1, 1}, []int{1, 1}
	q.st.Init, q.st.Steps = 2, 2
	out := make([]float64, 2)
	q.SelectProbs(nil, out, 0, nil)
	if out[0] != 1 || out[1] != 0 {
		t.Errorf("SelectProbs on a tie = %v, want the point mass on arm 0", out)
	}
	if a := q.Select(); a != 0 {
		t.Errorf("Select on a tie = %d, want 0", a)
	}
}

// TestSurvAdaPUCBState: a fresh policy's running-episode arm is −1 (none),
// and its state round-trips for K = 1 (kills adapucb.go:121, −1 → +1);
// after the initial pulls (n = total = 1) the state round-trips (kills
// adapucb.go:283, `<`→`<=` on n and on total); refused: Cur = K (kills
// adapucb.go:290 `>=`→`>`), and an episode sum above the rewards read so
// far, Len − Left (kills adapucb.go:296, Len+Left).
func TestSurvAdaPUCBState(t *testing.T) {
	opts := AdaPUCBOptions{K: 1, Epsilon: 1, Alpha: 3.1}
	fresh := func() *AdaPUCB {
		p, _ := NewAdaPUCB(opts, rand.New(rand.NewPCG(1, 2)))
		return p
	}
	p := fresh()
	if p.st.Cur != -1 {
		t.Errorf("fresh Cur = %d, want −1", p.st.Cur)
	}
	b, _ := p.MarshalJSON()
	if err := fresh().UnmarshalJSON(b); err != nil {
		t.Errorf("fresh state refused: %v", err)
	}
	p.Update(p.Select(), 0.5) // initial pull: n = total = 1
	b, _ = p.MarshalJSON()
	if err := fresh().UnmarshalJSON(b); err != nil {
		t.Errorf("state after the initial pull refused: %v", err)
	}
	if err := fresh().UnmarshalJSON(survPatchState(t, p, func(st map[string]any) { st["cur"] = 1 })); err == nil {
		t.Error("cur = K accepted")
	}
	p.Select() // episode of length 1 starts: len = left = 1, sum 0
	if p.st.Len != 1 || p.st.Left != 1 {
		t.Fatalf("episode len %d left %d", p.st.Len, p.st.Left)
	}
	if err := fresh().UnmarshalJSON(survPatchState(t, p, func(st map[string]any) { st["sum"] = 1 })); err == nil {
		t.Error("episode sum 1 before any reward of the episode accepted")
	}
}

// ---------------------------------------------------------------------------
// dptsucb.go

// TestSurvDPTSUCBOptions: T = 21 = K is the smallest valid horizon (T ≥
// max(K, 21); kills dptsucb.go:122, `<`→`<=` on both comparisons), and φ =
// 2⁵² exactly is accepted (φ > 2⁵² is refused; at α = 1, φ = c0·ln T, c0
// chosen so the product is exactly 2⁵²; kills dptsucb.go:131 `>`→`>=`).
func TestSurvDPTSUCBOptions(t *testing.T) {
	if _, err := NewDPTSUCB(DPTSUCBOptions{K: 21, Horizon: 21, Alpha: 1, C0: DefaultC0}, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Errorf("K = T = 21: %v", err)
	}
	const T = 1000
	lt := math.Log(T)
	c0 := 0x1p52 / lt
	for i := 0; i < 64 && dptsucbPhi(T, 1, c0) != 0x1p52; i++ {
		if dptsucbPhi(T, 1, c0) > 0x1p52 {
			c0 = math.Nextafter(c0, 0)
		} else {
			c0 = math.Nextafter(c0, math.Inf(1))
		}
	}
	if dptsucbPhi(T, 1, c0) != 0x1p52 {
		t.Fatalf("no c0 with φ = 2⁵²")
	}
	if err := checkDPTSUCB(DPTSUCBOptions{K: 2, Horizon: T, Alpha: 1, C0: c0}); err != nil {
		t.Errorf("φ = 2⁵²: %v", err)
	}
	if err := checkDPTSUCB(DPTSUCBOptions{K: 2, Horizon: T, Alpha: 1, C0: math.Nextafter(c0, math.Inf(1))}); err == nil {
		t.Errorf("φ above 2⁵² accepted")
	}
}

// TestSurvDPTSUCBEpochAndLoss: after the initial pull (estimate n = 1,
// epoch 1) an arm's epoch closes at the second further observation (O = 2¹):
// not before (O = 1 stays open), then n = 2, mean U/2, epoch 2 (kills
// dptsucb.go:197 `==`→`!=`). The closed estimate's per-record loss, (draws)
// · 1/(n·(ln T)^α), becomes PastLoss: 2 draws from n = 1 at α = 1, T = 100
// give 2/ln 100 (kills dptsucb.go:198 `*`→`/`).
func TestSurvDPTSUCBEpochAndLoss(t *testing.T) {
	p, _ := NewDPTSUCB(DPTSUCBOptions{K: 1, Horizon: 100, Alpha: 1, C0: DefaultC0}, rand.New(rand.NewPCG(1, 2)))
	p.Update(p.Select(), 0.5) // initial estimate
	p.Update(p.Select(), 1)   // draw 1, O = 1
	if a := p.st.Arms[0]; a.N != 1 || a.O != 1 || a.Epoch != 1 || a.Draws != 1 {
		t.Fatalf("after one observation in epoch 1: %+v", a)
	}
	p.Update(p.Select(), 0) // draw 2, O = 2: close
	a := p.st.Arms[0]
	if a.N != 2 || a.Epoch != 2 || a.Mean != 0.5 || a.O != 0 || a.Draws != 0 {
		t.Errorf("after the epoch closed: %+v, want n = 2, epoch 2, mean 0.5", a)
	}
	if want := 2 / math.Log(100); !(math.Abs(p.st.PastLoss-want) <= 1e-15*want) {
		t.Errorf("PastLoss = %v, want 2/ln 100 = %v", p.st.PastLoss, want)
	}
}

// TestSurvMTSCalibrationSubnormal: near the top of the valid range (μ close
// to √MaxFloat64 ≈ 1.34e154) the certified-basis c is subnormal; the
// calibration still meets the target with the smallest float c (one ulp
// there is a large relative step, and the first of mtsCForTarget's two
// nudging loops steps by one ulp). Kills calibrate.go:118:16 `<`→`>=` (that
// loop skipped: the relative 2⁻⁴⁰ steps of the second loop round to zero on
// a subnormal c and the target is refused).
func TestSurvMTSCalibrationSubnormal(t *testing.T) {
	for _, c := range []struct {
		k, T, b int
		mu      float64
	}{
		{4, 3341, 834, 1.339598652606707e+154},
		{1, 90, 88, 7.981309505817376e+153},
		{2, 459, 228, 1.3398315280383295e+154},
		{1, 243298, 243297, 1.340005417757474e+154},
		{3, 610364, 203452, 1.340751466266432e+154},
	} {
		got, err := mtsCForTarget(c.k, c.T, c.b, c.mu, bandit.BasisCertified)
		if err != nil {
			t.Errorf("K=%d T=%d b=%d μ=%v: %v", c.k, c.T, c.b, c.mu, err)
			continue
		}
		value := func(x float64) float64 { _, cert := mtsValues(c.k, c.T, c.b, x); return roundUp(cert) }
		if got >= 0x1p-1022 || value(got) > c.mu || !(value(math.Nextafter(got, 0)) > c.mu) {
			t.Errorf("K=%d T=%d b=%d μ=%v: c = %v (value %v) is not the smallest subnormal c meeting μ", c.k, c.T, c.b, c.mu, got, value(got))
		}
	}
}
