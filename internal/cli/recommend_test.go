package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/recommend"
)

// TestRecommendJSON: --json prints the whole result, parseable, with ranked
// rows, the reference at ratio 1 and a recommendation.
func TestRecommendJSON(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, "recommend", "--arms", "2", "--horizon", "2e3", "--budget", "epsilon=1,delta=1e-6",
		"--means", "0.9,0.1", "--runs", "3", "--seed", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res recommend.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not the result JSON: %v\n%s", err, stdout)
	}
	if res.Arms != 2 || res.Horizon != 2000 || res.Runs != 3 || res.Seed != 4 || res.Budget.Basis != "certified" || res.Panel {
		t.Errorf("result header %+v", res)
	}
	if len(res.Rows) < 2 || res.Recommendation.Policy == "" || res.Recommendation.Reason == "" {
		t.Fatalf("rows %d, recommendation %+v", len(res.Rows), res.Recommendation)
	}
	for i, r := range res.Rows {
		if r.Rank != i+1 {
			t.Errorf("row %d: rank %d", i, r.Rank)
		}
		if r.Policy == recommend.Reference && r.Ratio != 1 {
			t.Errorf("reference ratio %v", r.Ratio)
		}
	}
	if !strings.Contains(stdout, `"median_regret"`) || !strings.Contains(stdout, `"best_share"`) {
		t.Errorf("JSON lacks the regret fields:\n%s", stdout)
	}
}

// TestRecommendTable: without --json the table, the skipped list and the
// recommendation line are printed on stdout; --policy restricts the rows.
func TestRecommendTable(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, "recommend", "--arms", "3", "--horizon", "1000", "--budget", "epsilon=1,delta=1e-6",
		"--runs", "2", "--policy", "mts-gaussian")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"rank", "× UCB1", "best arm, last 20%", "mts-gaussian", "ucb1", "not private",
		"4 panel instances", "Recommendation: mts-gaussian"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}

// TestRecommendUsageErrors: bad flags exit 2 with one line naming the value.
func TestRecommendUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--arms", "1", "--horizon", "100", "--budget", "epsilon=1,delta=1e-6"}, "K = 1"},
		{[]string{"--arms", "3", "--horizon", "100", "--budget", "epsilon=1,delta=1e-6", "--means", "0.5,0.2"}, "2 values"},
		{[]string{"--arms", "3", "--horizon", "100", "--budget", "epsilon=1,delta=1e-6,basis=paper"}, "certified basis"},
		{[]string{"--arms", "3", "--horizon", "100", "--budget", "gdp=1"}, "epsilon=E,delta=D"},
		{[]string{"--arms", "3", "--horizon", "100", "--budget", "epsilon=1"}, "delta"},
		{[]string{"--arms", "3", "--horizon", "100", "--budget", "epsilon=1,delta=1e-6", "--policy", "nope"}, `"nope"`},
		{[]string{"--arms", "3", "--horizon", "100", "--budget", "epsilon=1,delta=1e-6", "--runs", "0"}, "--runs 0"},
	} {
		code, stdout, stderr := run(t, append([]string{"recommend"}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestRecommendHelpTeaches: --help says what it does, how long it takes,
// and gives an example.
func TestRecommendHelpTeaches(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, "recommend", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"Which private policy learns", "Time:", "Examples:", "dpbandit recommend --arms 3", "--max-time"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("help lacks %q:\n%s", w, stdout)
		}
	}
}
