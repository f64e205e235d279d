package audit

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

func gaussianConfig(t *testing.T, spec string, runs int) Config {
	t.Helper()
	sp, err := bandit.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := Resolve(sp, bandit.Setting{}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Mechanism: tg.Name, Candidates: tg.Candidates, Report: tg.Report, Delta: 1e-6,
		Runs: runs, Confidence: 0.95, Seed: 7, Workers: 2}
}

// TestPowerGaussianRelease: on the one-step Gaussian release of a TS round
// (n = 1: μ = 1/√2 certified, and exactly that is the truth) the audit's
// lower bound at 95% confidence reaches at least half the certified μ with
// 20,000 runs per input and phase; it never exceeds it.
func TestPowerGaussianRelease(t *testing.T) {
	res, err := Run(context.Background(), gaussianConfig(t, "gaussian-release", 20000))
	if err != nil {
		t.Fatal(err)
	}
	cert := 1 / math.Sqrt2
	if math.Abs(res.Certified-cert) > 1e-15 || res.Param != "mu" {
		t.Fatalf("certified %s = %v, want mu = %v", res.Param, res.Certified, cert)
	}
	if res.LowerBound < 0.5*cert || res.LowerBound > cert {
		t.Errorf("μ lower bound %v, want in [%v, %v] (ratio %v)", res.LowerBound, 0.5*cert, cert, res.Ratio)
	}
	if res.Violated || res.EpsilonLower > res.EpsilonCertified {
		t.Errorf("sound mechanism flagged: %+v", res)
	}
	t.Logf("μ ≥ %.4f of %.4f (ratio %.3f), ε ≥ %.4f of %.4f, event %s", res.LowerBound, res.Certified, res.Ratio,
		res.EpsilonLower, res.EpsilonCertified, res.Event)
}

// TestCatchesHalvedNoise: a Gaussian release whose noise s.d. is halved but
// which still reports μ = 1/√2 (its true μ is √2) is caught: the lower bound
// exceeds the certified value.
func TestCatchesHalvedNoise(t *testing.T) {
	res, err := Run(context.Background(), gaussianConfig(t, "gaussian-release:noise=0.5", 20000))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Violated || res.LowerBound <= res.Certified {
		t.Fatalf("halved noise not caught: μ ≥ %v, certified %v", res.LowerBound, res.Certified)
	}
	if res.LowerBound > math.Sqrt2 {
		t.Errorf("μ lower bound %v exceeds the true μ √2", res.LowerBound)
	}
	t.Logf("μ ≥ %.4f > certified %.4f (true %.4f)", res.LowerBound, res.Certified, math.Sqrt2)
}

// auditPolicy runs a small audit of a registered policy.
func auditPolicy(t *testing.T, spec string, s bandit.Setting, budget *bandit.Target, runs int) *Result {
	t.Helper()
	sp, err := bandit.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := Resolve(sp, s, budget, 3)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	res, err := Run(context.Background(), Config{Mechanism: tg.Name, Candidates: tg.Candidates, Report: tg.Report,
		Delta: 1e-6, Runs: runs, Confidence: 0.95, Seed: 11, Workers: 2})
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return res
}

// TestSoundnessPolicies: for every served Gaussian-TS-family policy, the
// pure-DP lazy-dp-ts and adaprivate-ts, at small sizes the audit's lower
// bound (μ for GDP, ε otherwise) and its ε at δ never exceed the certified
// values, and the audit found some evidence of leakage (a positive bound)
// where the certificate is small enough to leave room for it.
func TestSoundnessPolicies(t *testing.T) {
	cases := []struct {
		spec     string
		s        bandit.Setting
		budget   *bandit.Target
		positive bool // a positive lower bound is expected at these sizes
	}{
		{"ts-gaussian", bandit.Setting{K: 2, Horizon: 8}, nil, true},
		{"mts-gaussian:b=1,c=1", bandit.Setting{K: 2, Horizon: 8}, nil, true},
		{"dp-ts-ucb", bandit.Setting{K: 2, Horizon: 21}, nil, true},
		{"lazy-dp-ts", bandit.Setting{K: 2, Horizon: 8}, &bandit.Target{Epsilon: 2, Delta: 1e-6, Basis: bandit.BasisCertified}, false},
		{"lazy-dp-ts:c=0", bandit.Setting{K: 2, Horizon: 8}, &bandit.Target{Epsilon: 4, Delta: 1e-6, Basis: bandit.BasisCertified}, true},
		{"adaprivate-ts:b=2", bandit.Setting{K: 3, Dim: 2, Horizon: 10}, &bandit.Target{Epsilon: 4, Delta: 1e-6, Basis: bandit.BasisCertified}, false},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			res := auditPolicy(t, c.spec, c.s, c.budget, 3000)
			if res.LowerBound > res.Certified || res.Violated {
				t.Errorf("lower bound %s %v exceeds certified %v", res.Param, res.LowerBound, res.Certified)
			}
			if res.EpsilonLower > res.EpsilonCertified {
				t.Errorf("ε lower bound %v exceeds certified ε %v", res.EpsilonLower, res.EpsilonCertified)
			}
			if c.positive && !(res.LowerBound > 0) {
				t.Errorf("no leakage found (lower bound %v); the audit lost its power", res.LowerBound)
			}
			t.Logf("%s ≥ %.4g of %.4g (ratio %.3g), ε ≥ %.4g of %.4g, %d runs, event %s", res.Param, res.LowerBound,
				res.Certified, res.Ratio, res.EpsilonLower, res.EpsilonCertified, res.TotalRuns, res.Event)
		})
	}
}

// TestDeterministicAcrossWorkers: results depend on the seed, not on the
// number of workers.
func TestDeterministicAcrossWorkers(t *testing.T) {
	c := gaussianConfig(t, "gaussian-release:n=3", 1500)
	c.Workers = 1
	a, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Workers = 3
	b, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if a.LowerBound != b.LowerBound || a.KA != b.KA || a.KB != b.KB || a.Event.Threshold != b.Event.Threshold {
		t.Errorf("workers 1: %v (%d, %d), workers 3: %v (%d, %d)", a.LowerBound, a.KA, a.KB, b.LowerBound, b.KA, b.KB)
	}
}

// TestMaxTimeStopsCleanly: a run far too large for its time limit stops
// within the limit (plus a margin), says so, and reports a valid bound on
// the runs it made.
func TestMaxTimeStopsCleanly(t *testing.T) {
	c := gaussianConfig(t, "gaussian-release", 1<<27)
	c.MaxTime = 200 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), c)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v with a 200ms limit", el)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.EvalRuns < 1 || res.EvalRuns >= 1<<27 {
		t.Errorf("stopped %v after %d evaluation runs", res.Stopped, res.EvalRuns)
	}
	if res.LowerBound > res.Certified {
		t.Errorf("lower bound %v > certified %v", res.LowerBound, res.Certified)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, c); !errors.Is(err, ErrNoRuns) {
		t.Errorf("cancelled audit: %v, want ErrNoRuns", err)
	}
}

// TestConfigErrors: hostile configurations are refused with the value named.
func TestConfigErrors(t *testing.T) {
	c := gaussianConfig(t, "gaussian-release", 10)
	bad := []func(*Config){
		func(c *Config) { c.Runs = 0 },
		func(c *Config) { c.Confidence = 1 },
		func(c *Config) { c.Confidence = math.NaN() },
		func(c *Config) { c.Delta = 0 },
		func(c *Config) { c.Candidates = nil },
		func(c *Config) { c.Report = privacy.NotPrivate("x", "none") },
		func(c *Config) { c.Runs = 1 << 30 }, // 16 GiB of selection statistics
	}
	for i, f := range bad {
		cc := c
		f(&cc)
		if _, err := Run(context.Background(), cc); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	for _, spec := range []string{"gaussian-release:n=0", "gaussian-release:noise=0", "gaussian-release:x=1", "ucb1", "no-such-policy"} {
		sp, _ := bandit.ParseSpec(spec)
		if _, err := Resolve(sp, bandit.Setting{K: 2, Horizon: 5}, nil, 1); err == nil {
			t.Errorf("Resolve(%s): no error", spec)
		}
	}
	if _, err := Family(1); err == nil {
		t.Error("Family(1): no error")
	}
}

// TestFamily: the neighbouring pairs searched are τ ∈ {1, ⌈T/2⌉, T−1} ×
// background {0, 1}, duplicates dropped, and each pair differs in round τ
// only, by the full reward range.
func TestFamily(t *testing.T) {
	f, err := Family(10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tau int
		bg  float64
	}{{1, 0}, {1, 1}, {5, 0}, {5, 1}, {9, 0}, {9, 1}}
	if len(f) != len(want) {
		t.Fatalf("Family(10) = %v", f)
	}
	for i, w := range want {
		if f[i].Tau != w.tau || f[i].Background != w.bg {
			t.Errorf("pair %d = %+v, want τ=%d, background %g", i, f[i], w.tau, w.bg)
		}
		for r := 1; r <= 10; r++ {
			d := math.Abs(f[i].reward(r, 0) - f[i].reward(r, 1))
			if (r == w.tau && d != 1) || (r != w.tau && d != 0) {
				t.Errorf("pair %d round %d: streams differ by %v", i, r, d)
			}
		}
	}
	if f2, _ := Family(2); len(f2) != 2 || f2[0].Tau != 1 || f2[1].Tau != 1 {
		t.Errorf("Family(2) = %v, want τ = 1 twice", f2)
	}
}

// codeMech outputs one categorical statistic: a code in {0, 1, 2, 3},
// uniform in world 0 and with probabilities (0.1, 0.4, 0.1, 0.4) in world
// 1. Its exact pure-DP ε is ln(0.25/0.1) = ln 2.5, attained by the set
// {1, 3} (0.8 vs 0.5) and its complement (0.2 vs 0.5); no threshold on the
// code's value separates the worlds as well.
type codeMech struct{}

func (codeMech) Stats() []string     { return []string{"code"} }
func (codeMech) Categorical() []bool { return []bool{true} }
func (codeMech) Run(world int, r *rand.Rand, out []float64) {
	u := r.Float64()
	if world == 0 {
		out[0] = math.Floor(4 * u)
		return
	}
	switch {
	case u < 0.1:
		out[0] = 0
	case u < 0.5:
		out[0] = 1
	case u < 0.6:
		out[0] = 2
	default:
		out[0] = 3
	}
}

// TestSequenceEvent: for a categorical statistic the audit builds the event
// from the likelihood-ratio ranking of the codes: it finds the set {1, 3}
// and a pure-DP lower bound within 30% of the exact ln 2.5, never above it.
func TestSequenceEvent(t *testing.T) {
	want := math.Log(2.5)
	rep := privacy.Report{Mechanism: "code", Certified: privacy.Guarantee{Notion: privacy.NotionPure, Value: want}}
	res, err := Run(context.Background(), Config{Mechanism: "code", Candidates: []Candidate{{Name: "codes", Mech: codeMech{}}},
		Report: rep, Runs: 20000, Confidence: 0.95, Seed: 5, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.SetSize != 2 || len(res.Event.set) != 2 || !(res.Event.set[1] && res.Event.set[3] || res.Event.set[0] && res.Event.set[2]) {
		t.Errorf("event %v (set %v), want {1, 3} or its complement", res.Event, res.Event.set)
	}
	if res.LowerBound > want || res.LowerBound < 0.7*want || res.Delta != 0 {
		t.Errorf("ε lower bound %v at δ = %v, want in [%v, %v] at δ = 0", res.LowerBound, res.Delta, 0.7*want, want)
	}
}
