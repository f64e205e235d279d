package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// runPrivacyCLI runs dpbandit in-process and returns stdout, stderr and the exit code.
func runPrivacyCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return out.String(), errb.String(), code
}

// runPrivacyJSON runs a command with --json and decodes the object it prints.
func runPrivacyJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errs, code := runPrivacyCLI(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	return m
}

func privacyNum(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Fatalf("key %q missing or not a number in %v", k, m)
	}
	return v
}

// The values are the oracles of docs/accountant.md (mpmath, privacy/testdata).
func TestPrivacyCLIValues(t *testing.T) {
	tests := []struct {
		args   []string
		key    string
		want   float64
		tol    float64
		method string
	}{
		// T2: exact GDP.
		{[]string{"privacy", "convert", "--gdp", "1", "--delta", "1e-5"}, "epsilon", 4.37717809568122, 1e-9, "gdp-exact"},
		{[]string{"privacy", "convert", "--gdp", "22.360679774997898", "--delta", "1e-6"}, "epsilon", 355.383477641252, 1e-9, "gdp-exact"},
		// T1: δ for ε.
		{[]string{"privacy", "convert", "--gdp", "1", "--epsilon", "1"}, "delta", 0.126936737506644, 1e-12, "gdp-exact"},
		// T4: CKS20.
		{[]string{"privacy", "convert", "--zcdp", "0.5", "--delta", "1e-5"}, "epsilon", 4.72838698494331, 1e-9, "cks20"},
		{[]string{"privacy", "convert", "--zcdp", "0.025", "--epsilon", "1"}, "delta", 1.33613190640322e-6, 1e-9, "cks20"},
		// T3 and T4 calibrations.
		{[]string{"privacy", "calibrate", "--epsilon", "1", "--delta", "1e-5", "--notion", "gdp"}, "gdp", 0.268051123211294, 1e-9, "gdp-exact"},
		{[]string{"privacy", "calibrate", "--epsilon", "1", "--delta", "1e-5"}, "sigma", 3.73063163481594, 1e-9, "gdp-exact"},
		{[]string{"privacy", "calibrate", "--epsilon", "1", "--delta", "1e-5", "--notion", "zcdp"}, "rho", 0.0305565951976396, 1e-9, "cks20"},
		{[]string{"privacy", "calibrate", "--epsilon", "0.1", "--delta", "1e-5", "--sensitivity", "2"}, "sigma", 2 * 30.7495661319775, 1e-9, "gdp-exact"},
		// T6: subsampled Gaussian, 1000 steps.
		{[]string{"privacy", "sgm", "--q", "0.01", "--sigma", "1.1", "--steps", "1000", "--delta", "1e-5"}, "epsilon", 1.72529081804495, 1e-9, "rdp-bbghs20"},
		{[]string{"privacy", "sgm", "--q", "0.3", "--sigma", "2", "--steps", "1000", "--delta", "1e-5", "--grid", "fractional"}, "epsilon", 35.1703971535904, 1e-9, "rdp-bbghs20"},
		{[]string{"privacy", "sgm", "--q", "0.01", "--sigma", "1.1", "--steps", "1000", "--delta", "1e-5", "--conversion", "classic"}, "epsilon", 2.08679611357430, 1e-9, "rdp-classic"},
		// Composition.
		{[]string{"privacy", "compose", "--gdp", "0.5,0.5,0.5,0.5"}, "gdp", 1, 0, ""},
		{[]string{"privacy", "compose", "--gdp", "3", "--gdp", "4"}, "gdp", 5, 0, ""},
		{[]string{"privacy", "compose", "--zcdp", "0.25,0.25", "--delta", "1e-5"}, "epsilon", 4.72838698494331, 1e-9, "cks20"},
		{[]string{"privacy", "compose", "--pure", "0.5,0.25"}, "pure", 0.75, 0, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			m := runPrivacyJSON(t, tc.args...)
			got := privacyNum(t, m, tc.key)
			if e := math.Abs(got-tc.want) / tc.want; e > tc.tol {
				t.Errorf("%s = %.17g, oracle %.17g (relative error %.2g)", tc.key, got, tc.want, e)
			}
			if tc.method != "" && m["method"] != tc.method {
				t.Errorf("method = %v, want %s", m["method"], tc.method)
			}
		})
	}
}

func TestPrivacyCLISGMReportsOrder(t *testing.T) {
	m := runPrivacyJSON(t, "privacy", "sgm", "--q", "0.01", "--sigma", "1.1", "--steps", "1000", "--delta", "1e-5")
	if privacyNum(t, m, "order") != 9 || m["at_edge"] != false {
		t.Errorf("%v", m)
	}
	// q = 1, σ = 1: the optimum is at α = 2, the grid's edge (docs/accountant.md T6).
	m = runPrivacyJSON(t, "privacy", "sgm", "--q", "1", "--sigma", "1", "--steps", "1000", "--delta", "1e-5")
	if privacyNum(t, m, "order") != 2 || m["at_edge"] != true || m["warning"] == nil {
		t.Errorf("edge not flagged: %v", m)
	}
}

func TestPrivacyCLIHumanTable(t *testing.T) {
	out, _, code := runPrivacyCLI(t, "privacy", "convert", "--gdp", "1", "--delta", "1e-5")
	if code != 0 || !strings.Contains(out, "epsilon  4.3771780956812") || !strings.Contains(out, "method   gdp-exact") {
		t.Errorf("exit %d, table:\n%s", code, out)
	}
}

// Bad input exits 2 with one line on stderr naming the flag and its range.
func TestPrivacyCLIBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"privacy", "sgm", "--q", "0.01", "--sigma=-1", "--steps", "10", "--delta", "1e-5"}, []string{"--sigma", "(0, ∞)"}},
		{[]string{"privacy", "sgm", "--q", "0", "--sigma", "1", "--steps", "10", "--delta", "1e-5"}, []string{"--q", "(0, 1]"}},
		{[]string{"privacy", "sgm", "--q", "1.5", "--sigma", "1", "--steps", "10", "--delta", "1e-5"}, []string{"--q", "(0, 1]"}},
		{[]string{"privacy", "sgm", "--q", "0.5", "--sigma", "1", "--steps", "0", "--delta", "1e-5"}, []string{"--steps", "[1, ∞)"}},
		{[]string{"privacy", "sgm", "--q", "0.5", "--sigma", "1", "--steps", "10", "--delta", "1"}, []string{"--delta", "(0, 1)"}},
		{[]string{"privacy", "convert", "--gdp", "1", "--delta", "0"}, []string{"--delta", "(0, 1)"}},
		{[]string{"privacy", "convert", "--gdp", "1", "--delta", "1.5"}, []string{"--delta", "(0, 1)"}},
		{[]string{"privacy", "convert", "--gdp=-1", "--delta", "0.1"}, []string{"--gdp", "[0, ∞)"}},
		{[]string{"privacy", "convert", "--zcdp=-1", "--epsilon", "1"}, []string{"--zcdp", "[0, ∞)"}},
		{[]string{"privacy", "convert", "--gdp", "1", "--epsilon=-1"}, []string{"--epsilon", "[0, ∞)"}},
		{[]string{"privacy", "convert", "--gdp", "1", "--zcdp", "1", "--delta", "0.1"}, []string{"--gdp", "--zcdp"}},
		{[]string{"privacy", "convert", "--delta", "0.1"}, []string{"--gdp", "--zcdp"}},
		{[]string{"privacy", "convert", "--gdp", "1"}, []string{"--delta", "--epsilon"}},
		{[]string{"privacy", "convert", "--gdp", "1", "--delta", "0.1", "--epsilon", "1"}, []string{"--delta", "--epsilon"}},
		{[]string{"privacy", "calibrate", "--epsilon", "0", "--delta", "1e-5"}, []string{"--epsilon", "(0, ∞)"}},
		{[]string{"privacy", "calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "0"}, []string{"--sensitivity", "(0, ∞)"}},
		{[]string{"privacy", "calibrate", "--epsilon", "1", "--delta", "1e-5", "--notion", "rdp"}, []string{"--notion"}},
		{[]string{"privacy", "compose", "--gdp", "1", "--zcdp", "1"}, []string{"--gdp", "--zcdp", "--pure"}},
		{[]string{"privacy", "compose"}, []string{"--gdp", "--zcdp", "--pure"}},
		{[]string{"privacy", "compose", "--pure=1,-2"}, []string{"--pure", "[0, ∞)"}},
		{[]string{"privacy", "compose", "--gdp", "1", "--delta", "2"}, []string{"--delta", "(0, 1)"}},
		{[]string{"privacy", "sgm", "--q", "abc", "--sigma", "1", "--steps", "10", "--delta", "1e-5"}, []string{"--q"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			out, errs, code := runPrivacyCLI(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stdout %q, stderr %q)", code, out, errs)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 || errs == "" {
				t.Errorf("stderr is not one line: %q", errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q does not mention %q", errs, w)
				}
			}
		})
	}
}

func TestPrivacyCLIHelpTeaches(t *testing.T) {
	out, _, code := runPrivacyCLI(t, "privacy", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"GDP", "zCDP", "Pure DP", "Example", "convert", "calibrate", "sgm", "compose"} {
		if !strings.Contains(out, w) {
			t.Errorf("privacy --help lacks %q:\n%s", w, out)
		}
	}
	out, _, _ = runPrivacyCLI(t, "privacy", "sgm", "--help")
	if !strings.Contains(out, "Mironov") || !strings.Contains(out, "dpbandit privacy sgm") {
		t.Errorf("sgm --help:\n%s", out)
	}
}

// TestPrivacyRNMCLI: `privacy rnm` prints Laplace RNM's s/b (one score) and
// 2s/b (all scores), and a Thompson-sampling round's Gaussian RNM μ = 1/√2
// with ε = 3.308 at δ = 1e-6 (docs/reproduction-decisions.md A5); bad input is a usage error
// naming the flag.
func TestPrivacyRNMCLI(t *testing.T) {
	m := runPrivacyJSON(t, "privacy", "rnm", "--laplace", "2", "--sensitivity", "0.5")
	if privacyNum(t, m, "epsilon") != 0.25 || m["neighbours"] != "one score moves" {
		t.Errorf("laplace, one score: %v", m)
	}
	m = runPrivacyJSON(t, "privacy", "rnm", "--laplace", "2", "--sensitivity", "0.5", "--all-scores")
	if privacyNum(t, m, "epsilon") != 0.5 {
		t.Errorf("laplace, all scores: %v", m)
	}
	m = runPrivacyJSON(t, "privacy", "rnm", "--sigma", "0.7071067811865476,0.5773502691896258", "--sensitivity", "0.5,0.3333333333333333", "--delta", "1e-6")
	if mu := privacyNum(t, m, "gdp"); math.Abs(mu-1/math.Sqrt2) > 1e-15 {
		t.Errorf("TS round μ = %v, want 1/√2", mu)
	}
	if e := privacyNum(t, m, "epsilon"); math.Abs(e-3.308) > 5e-4 {
		t.Errorf("TS round ε = %v at δ = 1e-6, want 3.308", e)
	}
	m = runPrivacyJSON(t, "privacy", "rnm", "--sigma", "1,1", "--all-scores")
	if mu := privacyNum(t, m, "gdp"); math.Abs(mu-math.Sqrt2) > 1e-15 || mu < math.Sqrt2 {
		t.Errorf("all scores, σ = 1, 1: μ = %v, want √2 rounded up", mu)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"privacy", "rnm"}, "exactly one of --laplace"},
		{[]string{"privacy", "rnm", "--laplace", "1", "--sigma", "1"}, "exactly one of --laplace"},
		{[]string{"privacy", "rnm", "--sigma", "1,2", "--sensitivity", "1,2,3"}, "one per score"},
		{[]string{"privacy", "rnm", "--laplace", "1", "--sensitivity", "1,2"}, "one sensitivity for every score"},
		{[]string{"privacy", "rnm", "--sigma", "1,0"}, "--sigma 0 is outside"},
	} {
		_, errs, code := runPrivacyCLI(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", c.args, code, errs, c.want)
		}
	}
}

// TestPrivacyCLICalibrateExtremes (issue 10, item 4): `privacy calibrate`
// at ε = 5e307 used to hang in privacy.GDPMu (gdp) and privacy.ZCDPRho
// (zcdp). Every finite ε now has its noise (μ ≈ √(2ε), σ = Δ/μ), printed at
// once; a σ beyond the float64 range is a one-line error with a non-zero
// exit. Each run is bounded in time, so that a hang fails the test.
func TestPrivacyCLICalibrateExtremes(t *testing.T) {
	type res struct {
		out, errs string
		code      int
	}
	run := func(args ...string) res {
		t.Helper()
		done := make(chan res, 1)
		go func() {
			var r res
			r.out, r.errs, r.code = runPrivacyCLI(t, args...)
			done <- r
		}()
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%v did not return within 10 s", args)
		}
		return res{}
	}
	for _, c := range []struct {
		args      []string
		key       string
		want, tol float64
	}{
		{[]string{"--epsilon", "5e307", "--delta", "1e-6"}, "gdp", 1e154, 1e142},
		{[]string{"--epsilon", "5e307", "--delta", "1e-6"}, "sigma", 1e-154, 1e-166},
		{[]string{"--epsilon", "5e307", "--delta", "1e-6", "--notion", "zcdp"}, "rho", 5e307, 1e295},
		{[]string{"--epsilon", "5e307", "--delta", "1e-6", "--notion", "zcdp"}, "sigma", 1e-154, 1e-166},
		{[]string{"--epsilon", "1.7976931348623157e308", "--delta", "1e-6"}, "gdp", 1.8961503816218e154, 1e142},
		{[]string{"--epsilon", "5e-324", "--delta", "0.5"}, "gdp", 1.3489795003921634, 1e-13},
	} {
		r := run(append([]string{"privacy", "calibrate", "--json"}, c.args...)...)
		if r.code != 0 {
			t.Errorf("%v: exit %d, stderr %q", c.args, r.code, r.errs)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.out), &m); err != nil {
			t.Fatalf("%v: %v in %q", c.args, err, r.out)
		}
		if v := privacyNum(t, m, c.key); math.Abs(v-c.want) > c.tol {
			t.Errorf("%v: %s = %v, want %v", c.args, c.key, v, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--epsilon", "1", "--delta", "1e-6", "--sensitivity", "1e308"}, "beyond the float64 range"},
		{[]string{"--epsilon", "1", "--delta", "1e-6", "--sensitivity", "1e308", "--notion", "zcdp"}, "beyond the float64 range"},
		{[]string{"--epsilon", "1e309", "--delta", "1e-6"}, "--epsilon"},
		{[]string{"--epsilon", "NaN", "--delta", "1e-6"}, "--epsilon NaN is outside its valid range"},
	} {
		r := run(append([]string{"privacy", "calibrate"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.errs, c.want) || strings.Count(strings.TrimRight(r.errs, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line mentioning %q", c.args, r.code, r.errs, c.want)
		}
	}
}
