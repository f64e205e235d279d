package sim

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
)

// Tests and benchmarks with the real policies of package mab.

const e1Env = "bernoulli:0.75,0.625,0.5,0.375,0.25"

func TestEqualBudgetMab(t *testing.T) {
	t.Parallel()
	for _, target := range []bandit.Target{
		{Epsilon: 35.57, Delta: 1e-6, Basis: bandit.BasisPaper},
		{Epsilon: 35.57, Delta: 1e-6, Basis: bandit.BasisCertified},
		{Mu: 5, Basis: bandit.BasisPaper},
		{Mu: 3, Delta: 1e-5, Basis: bandit.BasisCertified},
	} {
		t.Run(FormatBudget(target), func(t *testing.T) {
			spec := Spec{Env: e1Env, Horizon: 100000, Runs: 1, Budget: &target,
				Policies: mustParse("mts-gaussian", "mts-gaussian:b=100", "ts-gaussian", "dp-ts-ucb", "dp-se", "ucb1")}
			p, err := NewPlan(spec, Default)
			if err != nil {
				t.Fatal(err)
			}
			grid := 0
			for _, en := range p.Entries {
				switch {
				case !en.Private:
					if en.Note != "not private" {
						t.Errorf("%s: note %q", en.Name, en.Note)
					}
					continue
				case en.Spec.Name == "ts-gaussian": // nothing to calibrate
					if len(en.Calibrated) != 0 || !strings.Contains(en.Note, "nothing to calibrate") {
						t.Errorf("%s: calibrated %v, note %q", en.Name, en.Calibrated, en.Note)
					}
					continue
				case en.From.String() == "mts-gaussian":
					grid++
					if en.Params["c"] < MinC || !strings.HasPrefix(en.Name, "mts-gaussian:b=") {
						t.Errorf("grid entry %s: c = %g", en.Name, en.Params["c"])
					}
				}
				if len(en.Calibrated) == 0 {
					t.Errorf("%s: nothing calibrated", en.Name)
				}
				a, err := bandit.Achieved(en.Report, target, p.Spec.Delta)
				if err != nil {
					t.Fatal(err)
				}
				if !a.Meets {
					t.Errorf("%s: %s does not meet the budget", en.Name, a)
				}
				// Whatever the basis, the certified value meets the target too
				// (the paper's values used for calibration are valid bounds).
				cert := target
				cert.Basis = bandit.BasisCertified
				if c, _ := bandit.Achieved(en.Report, cert, p.Spec.Delta); !c.Meets {
					t.Errorf("%s: certified %s exceeds the budget", en.Name, c)
				}
				// And the calibration is not wasteful: on its basis the value is
				// within 1% of the target for the continuous parameters.
				if en.Spec.Name == "mts-gaussian" && a.Value < 0.99*a.Target {
					t.Errorf("%s: %s is far below the target", en.Name, a)
				}
			}
			if grid < 3 {
				t.Errorf("mts-gaussian expanded into %d grid entries", grid)
			}
		})
	}
}

// TestSweepRealPolicies runs a small sweep of real policies and checks
// pulls and determinism across workers.
func TestSweepRealPolicies(t *testing.T) {
	t.Parallel()
	spec := Spec{Env: e1Env, Horizon: 2000, Runs: 4, Seed: 3,
		Policies: mustParse("ts-gaussian", "mts-gaussian:b=10,c=5", "ucb1", "dp-ts-ucb:alpha=0.5", "dp-se")}
	p, err := NewPlan(spec, Default)
	if err != nil {
		t.Fatal(err)
	}
	a := runSummary(t, p, Options{Workers: 1})
	b := runSummary(t, p, Options{Workers: 4})
	if string(a) != string(b) {
		t.Fatal("results differ between 1 and 4 workers")
	}
}

// BenchmarkSweep is the acceptance sweep of issue 3: T = 1e6, 20 runs,
// ts-gaussian and mts-gaussian on the 5-arm Bernoulli instance of E1
// (target: under 30 s on 2 cores).
//
//	go test ./sim/ -run '^$' -bench Sweep -benchtime 1x -cpu 2
func BenchmarkSweep(b *testing.B) {
	spec := Spec{Env: e1Env, Horizon: 1000000, Runs: 20, Seed: 1,
		Policies: mustParse("ts-gaussian", "mts-gaussian")}
	p, err := NewPlan(spec, Default)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	rounds := float64(p.Cells()) * float64(spec.Horizon)
	n := 0
	for b.Loop() {
		if _, err := p.Run(context.Background(), Options{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(n), "s/sweep")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/rounds, "ns/round")
}

// BenchmarkRound measures one round of the simulation loop (Select, Pull,
// Update, bookkeeping) for a policy on a K-armed Bernoulli instance. "fixed"
// (always arm 0; test registry) is the loop's own overhead.
//
//	go test ./sim/ -run '^$' -bench Round
func BenchmarkRound(b *testing.B) {
	for _, k := range []int{5, 100} {
		means := make([]string, k)
		for a := range means {
			means[a] = fmt.Sprint(math.Round(100*(0.9-0.8*float64(a)/float64(k))) / 100)
		}
		envSpec := "bernoulli:" + strings.Join(means, ",")
		for _, pol := range []string{"fixed", "ts-gaussian", "mts-gaussian", "ucb1"} {
			b.Run(fmt.Sprintf("%s/K=%d", pol, k), func(b *testing.B) {
				reg := Default
				if pol == "fixed" {
					reg = fakeRegistry
				}
				const T = 100000
				p, err := NewPlan(Spec{Env: envSpec, Horizon: T, Runs: 1, Policies: mustParse(pol)}, reg)
				if err != nil {
					b.Fatal(err)
				}
				out := RunResult{Pseudo: make([]float64, len(p.Checkpoints)), Realised: make([]float64, len(p.Checkpoints)),
					Pulls: make([]int64, k)}
				gaps := make([]float64, k)
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					b.StopTimer()
					er, pr := p.Streams(0, n)
					en := p.Entries[0]
					pl, err := en.desc.New(p.Setting, en.Params, pr)
					if err != nil {
						b.Fatal(err)
					}
					clear(out.Pulls)
					b.StartTimer()
					if err := play(pl, p.Env, er, p.Checkpoints, gaps, p.Best, &out, nil); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/T, "ns/round")
			})
		}
	}
}
