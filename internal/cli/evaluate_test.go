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

// --json carries the estimates; uniform and probs:FILE targets agree when
// the file holds the uniform distribution.
func TestEvaluateJSONTargets(t *testing.T) {
	p := writeTemp(t, "log.csv", evalLog)
	probs := writeTemp(t, "probs.csv", "item_id,pos0\n0,0.5\n1,0.5\n")
	run := func(target string) evaluateJSONOut {
		var out, errb bytes.Buffer
		if code := Main([]string{"evaluate", "--log", p, "--target", target, "--estimators", "ips,snips", "--bootstrap", "0", "--json"}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", target, code, errb.String())
		}
		var o evaluateJSONOut
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	u, f := run("uniform"), run("probs:"+probs)
	if len(u.Results) != 2 || u.Results[0].Estimate != 0.5 || u.Results[0].Bootstrap95 != nil {
		t.Errorf("uniform: %+v", u.Results)
	}
	if f.Results[0].Estimate != u.Results[0].Estimate || f.Results[1].Estimate != u.Results[1].Estimate {
		t.Errorf("probs:FILE %+v, uniform %+v", f.Results, u.Results)
	}
	c := run("columns")
	if c.Results[0].Estimate != 0.5 || c.Rows != 4 {
		t.Errorf("columns: %+v", c)
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
	if o.Replay == nil || o.Replay.Matches < 100 || len(o.Results) != 1 || o.Results[0].Estimator != "replay" || o.Results[0].Estimate < 0.5 {
		t.Errorf("linucb replay: %+v %+v", o.Replay, o.Results)
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
	if code := Main([]string{"evaluate", "--format", "obd", "--log", dir, "--campaign", "women", "--target", "policy:beta-ts", "--replay-delay", "100"}, &out, &errb); code != 0 {
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
		{[]string{"--log", p, "--target", "policy:ucb1", "--replay-delay", "-1"}, "--replay-delay"},
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
