package server_test

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/eval"
)

// TestE2EOffPolicy: issue 12's end-to-end test. An experiment on the real
// service logs its decisions with propensities (beta-ts: Thompson sampling
// gives every arm a positive probability each round); `dpbandit export`
// writes the log as a CSV; package eval estimates two candidate policies on
// it whose true values are known from the Bernoulli means (0.45, 0.5,
// 0.55): always-the-best-arm (0.55) and the mixture of the arms in the
// log's own frequencies (Σ f_a μ_a). The logger's Thompson draws come from
// the service's secure generator and cannot be seeded (the rewards are:
// PCG(12, 2026)), so each estimate (IPS, SNIPS, DR) must lie within 4
// standard errors of the true value (its 95% normal interval widened by
// 4/1.96): a false failure has probability below 1e-3 over the six checks.
// The logging policy's own value as the log states it (its mean reward)
// must equal the on-policy mean of the rewards posted exactly, and
// `dpbandit evaluate` runs on the same file.
func TestE2EOffPolicy(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	arms := []string{"a", "b", "c"}
	means := []float64{0.45, 0.5, 0.55}
	id := create(t, p, map[string]any{"name": "ope", "arms": arms, "policy": "beta-ts", "horizon": 3000, "budget": nil})
	rng := rand.New(rand.NewPCG(12, 2026))
	var sum float64
	n := 0
	for range 150 {
		code, m := call(t, "POST", p.url+"/v1/experiments/"+id+"/decisions", adminKey, map[string]any{"count": 20, "propensity": true})
		if code != 200 {
			t.Fatalf("decisions: %d %v", code, m)
		}
		var rs []map[string]any
		for _, d := range m["decisions"].([]any) {
			d := d.(map[string]any)
			a := strings.Index("abc", d["arm"].(string))
			r := 0.0
			if rng.Float64() < means[a] {
				r = 1
			}
			sum += r
			n++
			rs = append(rs, map[string]any{"event_id": d["event_id"], "reward": r})
		}
		if code, m := call(t, "POST", p.url+"/v1/experiments/"+id+"/rewards", adminKey, map[string]any{"rewards": rs}); code != 202 {
			t.Fatalf("rewards: %d %v", code, m)
		}
	}

	csvPath := filepath.Join(t.TempDir(), "log.csv")
	cmd := exec.Command(binary(t), "export", "--url", p.url, "--experiment", id, "--format", "csv", "--out", csvPath)
	cmd.Env = append(os.Environ(), "DPBANDIT_KEY="+adminKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dpbandit export: %v\n%s", err, out)
	}
	l, err := eval.ReadFile(csvPath, "")
	if err != nil {
		t.Fatal(err)
	}
	if l.N < n*9/10 {
		t.Fatalf("the export has %d rows of %d decisions (rows without a released propensity or with a Monte Carlo propensity of 0 are skipped)", l.N, n)
	}
	best := &eval.ActionDist{N: 1, A: 3, P: 1, Shared: true, Values: []float64{0, 0, 1}}
	freq := &eval.ActionDist{N: 1, A: 3, P: 1, Shared: true, Values: make([]float64, 3)}
	for _, a := range l.Action {
		freq.Values[a] += 1 / float64(l.N)
	}
	mix := 0.0
	for a, f := range freq.Values {
		mix += f * means[a]
	}
	for _, c := range []struct {
		name   string
		target *eval.ActionDist
		truth  float64
	}{{"best arm", best, 0.55}, {"the log's arm frequencies", freq, mix}} {
		rep, err := eval.Evaluate(l, c.target, eval.Options{Estimators: []eval.Estimator{eval.IPS, eval.SNIPS, eval.DR}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			t.Logf("%s: %s %.4f [%.4f, %.4f] (true %.4f, ESS %.0f of %d)", c.name, r.Estimator, r.Estimate, r.Normal.Lo, r.Normal.Hi, c.truth, r.ESS, l.N)
			se := (r.Normal.Hi - r.Normal.Lo) / (2 * 1.96)
			if math.Abs(r.Estimate-c.truth) > 4*se {
				t.Errorf("%s: %s = %.4f is %.1f standard errors from the true value %.4f", c.name, r.Estimator, r.Estimate, math.Abs(r.Estimate-c.truth)/se, c.truth)
			}
		}
		if l.N == n {
			if want := sum / float64(n); rep.MeanReward != want {
				t.Errorf("the log's mean reward %v differs from the on-policy mean %v of the rewards posted", rep.MeanReward, want)
			}
		}
	}
	out, err := exec.Command(binary(t), "evaluate", "--log", csvPath, "--target", "uniform", "--bootstrap", "200").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ips") {
		t.Errorf("dpbandit evaluate: %v\n%s", err, out)
	}
}
