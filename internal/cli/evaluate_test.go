package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code := Main([]string{"evaluate", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "dpbandit evaluate --log logged.csv") {
		t.Errorf("exit %d, help:\n%s", code, out.String())
	}
}
