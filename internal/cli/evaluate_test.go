package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/ctxenv"
)

// A small log with pi_e and qhat columns; the target's weights are 0.4/0.5
// = 0.8 (action 0) and 0.6/0.5 = 1.2 (action 1).
const evalLog = `action,reward,pscore,context_0,pi_e_0,pi_e_1,qhat_0,qhat_1
0,1,0.5,0.1,0.4,0.6,0.5,0.5
1,0,0.5,0.2,0.4,0.6,0.5,0.5
1,1,0.5,0.3,0.4,0.6,0.5,0.5
0,0,0.5,0.4,0.4,0.6,0.5,0.5
`

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The table names every estimator and the rows used, and shows IPS's
// value (0.8·1 + 1.2·1)/4 = 0.5.
func TestEvaluateTable(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--log", p, "--bootstrap", "200"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"4 rows used", "ips", "snips", "dm", "dr", "switch-dr (τ=10)", "95% bootstrap", "the log's qhat columns"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(s, "\nips ") || !strings.Contains(s, " 0.5 ") {
		t.Errorf("table:\n%s", s)
	}
}

// --json carries the estimates under the keys (ipw, snipw, ...);
// uniform and probs:FILE targets agree when the file holds the uniform
// distribution, in separate runs and as two targets of one run.
func TestEvaluateJSONTargets(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	probs := writeTemp(t, "probs.csv", "item_id,pos0\n0,0.5\n1,0.5\n")
	run := func(targets ...string) evaluateJSONOut {
		args := []string{"evaluate", "--log", p, "--estimators", "ips,snips", "--bootstrap", "0", "--json"}
		for _, tg := range targets {
			args = append(args, "--target", tg)
		}
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", targets, code, errb.String())
		}
		var o evaluateJSONOut
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	u, f := run("uniform"), run("probs:"+probs)
	if len(u.Targets) != 1 || len(u.Targets[0].Estimates) != 2 || u.Targets[0].Estimates["ipw"].Value != 0.5 || u.Targets[0].Estimates["ipw"].Bootstrap95 != nil {
		t.Errorf("uniform: %+v", u.Targets)
	}
	for _, k := range []string{"ipw", "snipw"} {
		if f.Targets[0].Estimates[k] != u.Targets[0].Estimates[k] {
			t.Errorf("%s: probs:FILE %+v, uniform %+v", k, f.Targets[0].Estimates[k], u.Targets[0].Estimates[k])
		}
	}
	both := run("uniform", "probs:"+probs, "columns")
	if len(both.Targets) != 3 || both.Targets[1].Estimates["ipw"] != u.Targets[0].Estimates["ipw"] || both.Targets[2].Estimates["ipw"].Value != 0.5 || both.N != 4 {
		t.Errorf("three targets: %+v", both)
	}
	if e := both.Targets[0].ESS; e == nil || *e != 4 {
		t.Errorf("uniform target on a uniform log: ESS %v, want 4 (all weights 1)", e)
	}
}

// The raw --json has exactly the documented shape.
func TestEvaluateJSONShape(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--log", p, "--target", "uniform", "--bootstrap", "50", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var raw struct {
		N       int `json:"n"`
		Targets []struct {
			Target    string `json:"target"`
			Estimates map[string]struct {
				Value float64    `json:"value"`
				CI    [2]float64 `json:"ci"`
			} `json:"estimates"`
			ESS float64 `json:"ess"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.N != 4 || len(raw.Targets) != 1 || raw.Targets[0].Target != "uniform" || raw.Targets[0].ESS != 4 {
		t.Fatalf("json: %s", out.String())
	}
	for _, k := range []string{"ipw", "snipw", "dm", "dr", "switch-dr"} {
		e, ok := raw.Targets[0].Estimates[k]
		if !ok || !(e.CI[0] <= e.Value && e.Value <= e.CI[1]) {
			t.Errorf("%s: %+v (present %v)", k, e, ok)
		}
	}
}

// --out writes results.json (the --json document), results.md and the plot.
func TestEvaluateOut(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	dir := filepath.Join(t.TempDir(), "ope")
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--log", p, "--target", "uniform", "--target", "columns", "--bootstrap", "100", "--out", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var js bytes.Buffer
	Main([]string{"evaluate", "--log", p, "--target", "uniform", "--target", "columns", "--bootstrap", "100", "--json"}, &js, &errb)
	got, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil || !bytes.Equal(got, js.Bytes()) {
		t.Errorf("results.json differs from --json (%v):\n%s\n%s", err, got, js.String())
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "target: uniform over 2 actions") || !strings.Contains(string(md), "target: the log's pi_e columns") {
		t.Errorf("results.md:\n%s", md)
	}
	for _, f := range []string{"estimates.svg", "estimates.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Errors: a bad target, a log without pi_e columns, a bad estimator, a
// bad pscore (with its line and column).
func TestEvaluateErrors(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	noPi := writeTemp(t, "nopi.csv", "action,reward,pscore\n0,1,0.5\n")
	bad := writeTemp(t, "bad.csv", "action,reward,pscore\n0,1,0\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--log", p, "--target", "greedy"}, 2, `--target "greedy"`},
		{[]string{"--log", noPi}, 2, "no pi_e_<a> columns"},
		{[]string{"--log", p, "--estimators", "ips,foo"}, 2, `unknown estimator "foo"`},
		{[]string{"--log", bad, "--target", "uniform"}, 1, "bad.csv:line 2, column 3 (pscore)"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"evaluate"}, c.args...), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

func TestEvaluateHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "dpbandit evaluate --log logged.csv") || !strings.Contains(out.String(), "--format obd --log open-bandit-dataset-sample/random") {
		t.Errorf("exit %d, help:\n%s", code, out.String())
	}
}

// uniformCSV is a uniform logger's log over 2 arms: arm 1 always pays.
func uniformCSV(n int) string {
	var b strings.Builder
	b.WriteString("action,reward,pscore,context_0\n")
	for i := range n {
		a := (i * 7 / 3) % 2
		fmt.Fprintf(&b, "%d,%d,0.5,%d\n", a, a, i%3)
	}
	return b.String()
}

// --target policy:SPEC on a uniform log runs replay and prints its row; on a
// log whose logger is not uniform it freezes the policy instead.
func TestEvaluatePolicyTarget(t *testing.T) {
	p := writeTemp(t, "u.csv", uniformCSV(400))
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--log", p, "--target", "policy:ucb1", "--replay-delay", "5"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"evaluated by replay", "feedback delay 5", "\nreplay "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := Main([]string{"evaluate", "--log", p, "--target", "policy:linucb", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("linucb: exit %d: %s", code, errb.String())
	}
	var o evaluateJSONOut
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	if tg := o.Targets[0]; tg.Replay == nil || tg.Replay.Matches < 100 || len(tg.Estimates) != 1 || tg.Estimates["replay"].Value < 0.5 {
		t.Errorf("linucb replay: %+v %+v", tg.Replay, tg.Estimates)
	}
	out.Reset()
	// evalLog's pscores are all 1/2 (uniform); one changed to 0.4 is not.
	nonU := writeTemp(t, "n.csv", strings.Replace(evalLog, "0,1,0.5,0.1", "0,1,0.4,0.1", 1))
	if code := Main([]string{"evaluate", "--log", nonU, "--target", "policy:ucb1", "--estimators", "ips", "--bootstrap", "0"}, &out, &errb); code != 0 {
		t.Fatalf("frozen: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "frozen as first built") || !strings.Contains(out.String(), "exact probabilities") {
		t.Errorf("frozen ucb1:\n%s", out.String())
	}
}

// --format obd reads the Open Bandit Dataset sample (skipped when absent).
func TestEvaluateOBD(t *testing.T) {
	root, err := ctxenv.DataDir()
	if err != nil {
		t.Skipf("Open Bandit Dataset sample absent: %v", err)
	}
	dir := filepath.Join(root, "open-bandit-dataset-sample", "random")
	if _, err := os.Stat(filepath.Join(dir, "men", "men.csv")); err != nil {
		t.Skipf("Open Bandit Dataset sample absent: %s", dir)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--format", "obd", "--log", dir, "--campaign", "men", "--target", "uniform", "--estimators", "ips,snips", "--bootstrap", "0"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "10000 rows used, 34 actions, 3 position(s)") || !strings.Contains(out.String(), "0.0046") {
		t.Errorf("obd uniform:\n%s", out.String())
	}
	out.Reset()
	if code := Main([]string{"evaluate", "--format", "obd", "--log", dir, "--campaign", "women", "--target", "policy:beta-ts", "--delay", "100"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "\nreplay ") || !strings.Contains(out.String(), "delay 100") {
		t.Errorf("obd replay:\n%s", out.String())
	}
}

func TestEvaluateOBDErrors(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "obd", "--log", t.TempDir()}, "needs --campaign"},
		{[]string{"--log", p, "--campaign", "men"}, "--format obd only"},
		{[]string{"--log", p, "--target", "policy:nope"}, "--target policy:nope"},
		{[]string{"--log", p, "--target", "policy:ucb1", "--replay-delay=-1"}, "--delay (--replay-delay) must be ≥ 0, got -1"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"evaluate"}, c.args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--format", "obd", "--log", t.TempDir(), "--campaign", "men"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "men.csv") {
		t.Errorf("missing OBD files: exit %d, %q", code, errb.String())
	}
}

// --format service reads the decision service's exported log: lines
// without a reward or a released propensity are counted and left out; a
// private policy target states its certified guarantee.
func TestEvaluateServiceFormat(t *testing.T) {
	var b strings.Builder
	n := 0
	for i := range 40 {
		switch {
		case i%10 == 3: // no reward yet
			fmt.Fprintf(&b, `{"seq":%d,"event_id":"e%d","time":"2026-11-26T07:00:00Z","arm":"a","arm_index":0,"propensity":0.5,"propensity_released":true}`+"\n", i+1, i)
		case i%10 == 7: // no propensity asked
			fmt.Fprintf(&b, `{"seq":%d,"event_id":"e%d","time":"2026-11-26T07:00:00Z","arm":"b","arm_index":1,"propensity_released":false,"reward":1}`+"\n", i+1, i)
		default:
			a := i % 2
			fmt.Fprintf(&b, `{"seq":%d,"event_id":"e%d","time":"2026-11-26T07:00:00Z","arm":"x","arm_index":%d,"propensity":0.5,"propensity_released":true,"reward":%d}`+"\n", i+1, i, a, a)
			n++
		}
	}
	p := writeTemp(t, "decisions.jsonl", b.String())
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--format", "service", "--log", p, "--target", "uniform", "--target", "policy:ts-gaussian", "--estimators", "ips", "--bootstrap", "0"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{fmt.Sprintf("%d rows used, 2 actions", n), "decision log: 40 lines, 32 used; not used: 4 no reward yet, 4 no released propensity",
		"privacy: ts-gaussian", "certified gdp"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	bad := writeTemp(t, "bad.jsonl", `{"seq":1,"arm_index":0,"propensity":1.5,"propensity_released":true,"reward":1}`+"\n")
	errb.Reset()
	if code := Main([]string{"evaluate", "--format", "service", "--log", bad, "--target", "uniform"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "line 1") || !strings.Contains(errb.String(), "outside (0, 1]") {
		t.Errorf("propensity 1.5: exit %d, %s", code, errb.String())
	}
}

// --format r6 replays a contextual policy through Yahoo! R6 events, and
// refuses anything but policy targets.
func TestEvaluateR6Format(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		shown := 100 + i%3
		fmt.Fprintf(&b, "%d %d %d |user 1:1 2:0.%d |100 1:1 2:0.9 |101 1:1 3:0.5 |102 1:1 4:0.2\n", 1241160900+i, shown, i%2, i%10)
	}
	p := writeTemp(t, "r6.txt", b.String())
	var out, errb bytes.Buffer
	if code := Main([]string{"evaluate", "--format", "r6", "--log", p, "--target", "policy:linucb", "--target", "policy:mt-linucb:epsilon0=0.1", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var o evaluateJSONOut
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	if o.N != 300 || len(o.Targets) != 2 || o.Targets[0].Replay == nil || o.Targets[0].Replay.Matches < 50 || o.Targets[1].Privacy == nil {
		t.Errorf("r6: %s", out.String())
	}
	errb.Reset()
	if code := Main([]string{"evaluate", "--format", "r6", "--log", p, "--target", "uniform"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "replays policies only") {
		t.Errorf("r6 uniform: exit %d, %s", code, errb.String())
	}
}
