package cli

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestIncompleteCommandPrintsUsage: a command that only groups subcommands,
// given without one, prints its usage with every subcommand on stderr and
// exits 2 like any other usage error; --help prints on stdout and exits 0.
func TestIncompleteCommandPrintsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"privacy"}, []string{"Usage: dpbandit privacy <command>", "privacy convert", "privacy calibrate", "privacy sgm",
			"privacy compose", "privacy rnm", "privacy policy", "dpbandit: expected one of"}},
		{nil, []string{"Usage: dpbandit <command>", "simulate", "merge", "policies", "reproduce", "privacy convert", "loadtest",
			"serve", "version", "dpbandit: expected one of"}},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, &out, &errb)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed on stdout:\n%s", c.args, out.String())
		}
		for _, w := range c.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errb.String())
			}
		}
	}

	// A complete command with a bad flag prints only the error line.
	var out, errb bytes.Buffer
	if code := Main([]string{"privacy", "convert", "--bogus"}, &out, &errb); code != 2 || strings.Contains(errb.String(), "Usage:") {
		t.Errorf("privacy convert --bogus: exit %d, stderr:\n%s", code, errb.String())
	}

	out.Reset()
	errb.Reset()
	if code := Main([]string{"privacy", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "privacy convert") {
		t.Errorf("privacy --help: exit %d, stdout:\n%s", code, out.String())
	}
}

// TestLoadtestHelpShowsDefaults: the flags with placeholders still show
// their defaults.
func TestLoadtestHelpShowsDefaults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"loadtest", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	help := strings.Join(strings.Fields(out.String()), " ")
	for _, w := range []string{"(default: http://127.0.0.1:8080)", "(default: 10s)", "(default: 32)", `--mode="all"`, "($DPBANDIT_KEY)"} {
		if !strings.Contains(help, w) {
			t.Errorf("loadtest --help lacks %q:\n%s", w, out.String())
		}
	}
}

// TestPrivacyConvertHelpExamples runs every example in `privacy convert
// --help` and checks that it prints what the help shows: the same text,
// numbers equal to a relative 1e-9 (the accountant's outward rounding may
// move the last digits).
func TestPrivacyConvertHelpExamples(t *testing.T) {
	lines := strings.Split(privacyConvertCmd{}.Help(), "\n")
	n := 0
	for i := 0; i < len(lines); i++ {
		cmd, ok := strings.CutPrefix(lines[i], "  $ dpbandit ")
		if !ok {
			continue
		}
		var want strings.Builder
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "  "); i++ {
			want.WriteString(strings.TrimPrefix(lines[i], "  ") + "\n")
		}
		var out, errb bytes.Buffer
		if code := Main(strings.Fields(cmd), &out, &errb); code != 0 {
			t.Errorf("%s: exit %d: %s", cmd, code, errb.String())
		}
		if !sameOutput(out.String(), want.String()) {
			t.Errorf("%s printed\n%s\nbut the help shows\n%s", cmd, out.String(), want.String())
		}
		n++
	}
	if n < 3 {
		t.Errorf("found %d examples in the help, want 3", n)
	}
}

// sameOutput compares two outputs word by word (after trimming JSON
// punctuation), numbers to a relative 1e-9.
func sameOutput(got, want string) bool {
	if strings.Count(got, "\n") != strings.Count(want, "\n") {
		return false
	}
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if g[i] == w[i] {
			continue
		}
		a, err1 := strconv.ParseFloat(strings.TrimRight(g[i], ","), 64)
		b, err2 := strconv.ParseFloat(strings.TrimRight(w[i], ","), 64)
		if err1 != nil || err2 != nil || strings.HasSuffix(g[i], ",") != strings.HasSuffix(w[i], ",") ||
			math.Abs(a-b) > 1e-9*math.Max(math.Abs(a), math.Abs(b)) {
			return false
		}
	}
	return true
}
