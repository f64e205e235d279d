package repro

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/sim"
)

// specTargets lists, per reproduction, the check ids that stand for the
// targets docs/reproductions.md (and the §2 items it cites) gives for the experiment.
// Every one must be in the reproduction's checks.json.
var specTargets = map[string][]string{
	"ou2024-bernoulli": {"E1.calibration", "E1.prepull", "E1.b0-linear", "E1.large-b-shape", "E1.intermediate", "E1.eta-order"},
	"ou2024-truncexp":  {"E2.b0-linear", "E2.large-b-shape", "E2.intermediate", "E2.eta-order"},
	"ou2024-privacy-curves": {"E3.gdp-eps-table", "E3.fig1-eta", "E3.fig1-eps", "E3.fig4-gdp", "E3.fig4-rdp", "E3.gdp-le-rdp",
		"E3.stddp-label", "E3.A5-thm7", "E3.A5-lemma12", "E3.A5-valid"},
	"ou2024-vs-pure-dp":   {"E4.eps-values", "E4.A6-printed", "E4.alu-default", "E4.small-eps", "E4.large-eps", "E4.large-eps-ln"},
	"hu2025-alpha":        {"E5.alpha-order", "E5.alpha-order-T1e4", "E5.eta", "E6.paper", "E6.tight", "E6.phi", "E6.eps-alpha1"},
	"hu2025-same-bound":   {"E7.regret", "E7.mts-eta", "E7.privacy-alpha0", "E7.privacy-alpha-pos", "E7.A9-crossover"},
	"hu2025-same-privacy": {"E8.c-values", "E8.A8-sqrt", "E8.equal-privacy", "E8.argmin-alpha0", "E8.argmin-alpha1", "E8.alpha0-gap", "E8.alpha1-dptsucb"},
	"hu2025-pure-dp":      {"E9.alpha0", "E9.alpha1-mts", "E9.alpha1-dptsucb"},
	"mt2015-mab": {"E10.saturates", "E10.ts-below-ucb", "E10.median-ts-below-ucb", "E10.median-saturates",
		"E10.eps-order", "E10.A19"},
	"mt2015-replay": {"E11.uniform-logger", "E11.matches", "E11.private-close", "E11.delay-hurts-nonprivate-more", "E11.privacy"},
}

// expectedToFail are the targets docs/reproduction-decisions.md §2 shows to be wrong or decides
// are expected to fail (A23–A26).
var expectedToFail = []string{"E3.A5-thm7", "E3.A5-lemma12", "E4.A6-printed", "E4.large-eps", "E4.large-eps-ln", "E5.alpha-order-T1e4",
	"E7.privacy-alpha0", "E8.A8-sqrt", "E8.alpha0-gap", "E10.saturates", "E10.ts-below-ucb"}

// closedForm are the checks that do not depend on simulated regret: they
// must come out as docs/reproduction-decisions.md says (pass, or fail when expected to fail) at
// any size.
var closedForm = []string{
	"E1.calibration", "E2.calibration",
	"E3.gdp-eps-table", "E3.fig1-eta", "E3.fig1-eps", "E3.fig4-gdp", "E3.fig4-rdp", "E3.gdp-le-rdp", "E3.stddp-label",
	"E3.stddp-looser", "E3.A5-thm7", "E3.A5-lemma12", "E3.A5-valid",
	"E4.eps-values", "E4.A6-printed", "E4.calibration", "E4.alu-default",
	"E5.eta", "E6.paper", "E6.tight", "E6.phi", "E6.eps-alpha1",
	"E7.mts-eta", "E7.privacy-alpha0", "E7.privacy-alpha-pos", "E7.A9-crossover",
	"E8.c-values", "E8.A8-sqrt", "E8.equal-privacy",
	"E10.A19",
}

func TestRegistry(t *testing.T) {
	names := Names()
	for n := range specTargets {
		if !slices.Contains(names, n) {
			t.Errorf("reproduction %s is missing", n)
		}
	}
	if len(names) != len(specTargets) {
		t.Errorf("reproductions %v, want those of specTargets", names)
	}
	for _, r := range All() {
		if r.Description == "" || r.Paper == "" || r.Experiments == "" || len(r.Targets) == 0 {
			t.Errorf("%s: incomplete declaration", r.Name)
		}
		if !r.ClosedForm() && (len(r.Full.Horizons) == 0 || len(r.Quick.Horizons) == 0 || r.Quick.Runs < 1 || len(r.Stages) == 0) {
			t.Errorf("%s: sizes or stages missing", r.Name)
		}
		ids := map[string]bool{}
		for _, tg := range r.Targets {
			ids[tg.ID] = true
			if tg.Name == "" || tg.Target == "" || tg.Tolerance == "" || tg.Source == "" || tg.Measure == nil {
				t.Errorf("%s: target %s incomplete", r.Name, tg.ID)
			}
			if tg.ExpectedToFail != slices.Contains(expectedToFail, tg.ID) {
				t.Errorf("%s: target %s expected_to_fail = %v", r.Name, tg.ID, tg.ExpectedToFail)
			}
			if tg.ExpectedToFail != (tg.Reason != "") {
				t.Errorf("%s: target %s: expected_to_fail = %v with reason %q (a reason is required exactly for the expected failures)",
					r.Name, tg.ID, tg.ExpectedToFail, tg.Reason)
			}
		}
		for _, id := range specTargets[r.Name] {
			if !ids[id] {
				t.Errorf("%s: no check for SPEC target %s", r.Name, id)
			}
		}
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "ou2024-bernoulli") {
		t.Errorf("Lookup(nope) = %v, want an error listing the names", err)
	}
}

func TestEffectiveSize(t *testing.T) {
	r, _ := Lookup("hu2025-alpha")
	if s := r.EffectiveSize(Options{}); !slices.Equal(s.Horizons, []int{10000, 100000, 1000000}) || s.Runs != 20 {
		t.Errorf("full size %v", s)
	}
	if s := r.EffectiveSize(Options{Quick: true, Runs: 7, Horizon: 5000}); !slices.Equal(s.Horizons, []int{5000}) || s.Runs != 7 {
		t.Errorf("overridden size %v", s)
	}
	e3, _ := Lookup("ou2024-privacy-curves")
	if s := e3.EffectiveSize(Options{Runs: 7, Horizon: 5000}); s.Runs != 0 || !slices.Equal(s.Horizons, []int{1000}) {
		t.Errorf("closed form size %v, want unchanged", s)
	}
}

// checksFile is checks.json as written, decoded loosely so that the test
// sees exactly the keys and types in the file.
type checksFile struct {
	Reproduction string           `json:"reproduction"`
	Checks       []map[string]any `json:"checks"`
	Figures      []string         `json:"figures"`
	Totals       map[string]int   `json:"totals"`
}

func readChecks(t *testing.T, dir string) checksFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ChecksFile))
	if err != nil {
		t.Fatal(err)
	}
	var f checksFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("checks.json is not valid JSON: %v", err)
	}
	return f
}

// TestQuick runs every reproduction at its quick size (about a minute in
// all on 2 cores) and checks its outputs: checks.json well formed with one
// entry per target, the closed-form checks resolved as docs/reproduction-decisions.md says, the
// figures and README written.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every reproduction at its quick size")
	}
	for _, r := range All() {
		t.Run(r.Name, func(t *testing.T) {
			dir := t.TempDir()
			out, err := Run(context.Background(), r, Options{Out: dir, Quick: true, Workers: 2})
			if errors.Is(err, ErrNoOBD) || errors.Is(err, ctxenv.ErrNoData) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %.1fs, %+v", r.Name, out.Elapsed.Seconds(), out.Totals)
			f := readChecks(t, dir)
			if f.Reproduction != r.Name {
				t.Errorf("reproduction %q", f.Reproduction)
			}
			if len(f.Checks) != len(r.Targets) {
				t.Fatalf("%d checks, want one per target (%d)", len(f.Checks), len(r.Targets))
			}
			for i, c := range f.Checks {
				for _, k := range []string{"name", "target", "measured", "tolerance"} {
					if s, ok := c[k].(string); !ok || s == "" {
						t.Errorf("check %d: %s = %v, want a non-empty string", i, k, c[k])
					}
				}
				for _, k := range []string{"pass", "expected_to_fail"} {
					if _, ok := c[k].(bool); !ok {
						t.Errorf("check %d: %s = %v, want a bool", i, k, c[k])
					}
				}
				id, _ := c["id"].(string)
				if id != r.Targets[i].ID {
					t.Errorf("check %d: id %q, want %q", i, id, r.Targets[i].ID)
				}
				if m, _ := c["measured"].(string); strings.HasPrefix(m, "error:") {
					t.Errorf("%s: %s", id, m)
				}
				if slices.Contains(closedForm, id) && c["pass"] == c["expected_to_fail"] {
					t.Errorf("closed-form check %s: pass = %v, expected_to_fail = %v; measured %v", id, c["pass"], c["expected_to_fail"], c["measured"])
				}
			}
			for _, fn := range append(slices.Clone(f.Figures), ReadmeFile) {
				st, err := os.Stat(filepath.Join(dir, fn))
				if err != nil || st.Size() == 0 {
					t.Errorf("output %s missing or empty: %v", fn, err)
				}
			}
			if len(f.Figures) != 2*len(r.Figures) {
				t.Errorf("figures %v", f.Figures)
			}
			md, _ := os.ReadFile(filepath.Join(dir, ReadmeFile))
			for _, tg := range r.Targets {
				if !strings.Contains(string(md), tg.ID) {
					t.Errorf("README.md does not list %s", tg.ID)
				}
			}
		})
	}
}

// TestWorkersInvariance checks that the checks do not depend on the number
// of workers.
func TestWorkersInvariance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small sweep twice")
	}
	r, _ := Lookup("hu2025-alpha")
	var got [2][]Check
	for i, w := range []int{1, 3} {
		out, err := Run(context.Background(), r, Options{Out: t.TempDir(), Runs: 3, Horizon: 5000, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = out.Checks
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("checks differ between 1 and 3 workers:\n%v\n%v", got[0], got[1])
	}
}

func TestFmtInt(t *testing.T) {
	for n, want := range map[int]string{100000: "1e5", 1000000: "1e6", 25000: "25000", 5000: "5e3", 999: "999", 4000: "4e3", 20000: "2e4"} {
		if got := fmtInt(n); got != want {
			t.Errorf("fmtInt(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDigitsClose(t *testing.T) {
	if !digitsClose(4.88655, 4.8866, 4) || digitsClose(4.8870, 4.8866, 4) {
		t.Error("digitsClose")
	}
	m, ok := tableCheck([]string{"a", "b"}, []float64{1.0004, 2}, []float64{1, 3}, []int{3, 0})
	if ok || !strings.Contains(m, "✗") {
		t.Errorf("tableCheck = %q, %v", m, ok)
	}
}

// TestPrepullPrefix checks what E1's pre-pull check relies on: a sweep of
// horizon bK replays exactly the first bK rounds of a longer sweep with the
// same environment and seed (common random numbers), so its final realised
// regret is the longer run's realised regret at t = bK.
func TestPrepullPrefix(t *testing.T) {
	const b, K = 50, 5
	run := func(T, checkpoints int, c float64) *sim.Aggregate {
		plan, err := sim.NewPlan(sim.Spec{Env: ouBernoulli, Horizon: T, Runs: 3, Seed: 7, Checkpoints: checkpoints,
			Policies: []bandit.Spec{spec("mts-gaussian", "b", b, "c", c)}}, sim.Default)
		if err != nil {
			t.Fatal(err)
		}
		res, err := plan.Run(context.Background(), sim.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, err := res.Aggregate()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	long := run(1000, 1000, 7.5) // every round is a checkpoint
	short := run(b*K, 2, 1)
	for r := range 3 {
		got := short.Runs[r].Realised[1]
		want := long.Runs[r].Realised[b*K-1]
		if got != want {
			t.Errorf("run %d: realised regret at t = bK: %v (horizon bK) vs %v (horizon 1000)", r, got, want)
		}
	}
}
