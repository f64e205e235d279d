package repro

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The ada reproductions register their docs/reproductions.md targets with the shared
// tables of repro_test.go (specTargets, expectedToFail), so that
// TestRegistry and TestQuick cover them like the K-armed ones.
func init() {
	adaSpec := map[string][]string{
		"ada-synthetic": {"E12.sigma", "E12.sigma-amp", "E12.lints-vs-linucb",
			"E12.ts-eps0.5", "E12.ts-eps1", "E12.ts-eps2", "E12.ts-eps5",
			"E12.ucb-eps0.5", "E12.ucb-eps1", "E12.ucb-eps2", "E12.ucb-eps5",
			"E12.gap-eps0.5", "E12.gap-eps1", "E12.gap-eps2",
			"E12.amp-q0.3", "E12.amp-q0.5", "E12.adaptive", "E12.A13", "E12.coreset", "E12.batched",
			"E12.robust-B", "E12.robust-v", "E12.scaling-eps1", "E12.scaling-eps5"},
		"ada-ablation": {"E14.ablation-baseline", "E14.ablation-bonly", "E14.ablation-ts", "E14.ablation-amp",
			"E14.ablation-adaptive", "E14.ablation-increments", "E14.forced"},
		"ada-ope": {"E14.ope-linucb", "E14.ope-eps1", "E14.ope-eps5", "E14.ope-eps10", "E14.ope-ranking",
			"E14.ope-coverage", "E14.ope-dr-beats-naive"},
		"ada-user-level": {"E14.group-rho", "E14.group-k1", "E14.group-k5", "E14.group-k10",
			"E14.clip-k10", "E14.naive-k10", "E14.clip-k20", "E14.naive-k20", "E14.clip-gain"},
	}
	for k, v := range adaSpec {
		specTargets[k] = v
	}
	expectedToFail = append(expectedToFail, adaExpectedToFail...)
	closedForm = append(closedForm, adaClosedForm...)
}

// adaExpectedToFail are the ada targets docs/reproduction-decisions.md A13 and A28 expect not to
// reproduce.
var adaExpectedToFail = []string{"E12.amp-q0.3", "E12.amp-q0.5", "E12.adaptive", "E14.ablation-amp", "E14.ablation-adaptive",
	"E12.coreset", "E12.batched", "E12.scaling-eps1", "E12.scaling-eps5", "E14.group-k1", "E14.group-k5", "E14.group-k10"}

// adaClosedForm are the ada checks that do not depend on simulation.
var adaClosedForm = []string{"E12.sigma", "E12.sigma-amp", "E14.group-rho"}

// TestAdaQuickFiles runs ada-synthetic at its quick size and checks the
// extra outputs (results.md) and that the closed-form checks pass.
func TestAdaQuickFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reproduction at its quick size")
	}
	r, err := Lookup("ada-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	if s := r.EffectiveSize(Options{}); s.Runs != 12 || s.Horizons[0] != 10000 {
		t.Errorf("full size %v, want docs/reproductions.md E12's T = 1e4, 12 runs", s)
	}
	dir := t.TempDir()
	out, err := Run(context.Background(), r, Options{Out: dir, Quick: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Checks {
		t.Logf("%-22s %-26s %s", c.ID, c.Verdict(), c.Measured)
		if slices.Contains(adaClosedForm, c.ID) && !c.Pass {
			t.Errorf("%s: %s", c.ID, c.Measured)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LinTS", "AdaPrivate-TS ε=1", "% of LinUCB", "R(T)/√T"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("results.md lacks %q", want)
		}
	}
}

// TestAdaFull runs the three ada reproductions at full size into
// $ADA_FULL_OUT/NAME (skipped unless set): the same outputs as
// `dpbandit reproduce NAME --out $ADA_FULL_OUT/NAME`.
func TestAdaFull(t *testing.T) {
	root := os.Getenv("ADA_FULL_OUT")
	if root == "" {
		t.Skip("set ADA_FULL_OUT to run the ada reproductions at full size")
	}
	for _, name := range []string{"ada-synthetic", "ada-ablation", "ada-user-level"} {
		r, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, name)
		out, err := Run(context.Background(), r, Options{Out: dir, Log: os.Stderr,
			Command: "dpbandit reproduce " + name + " --out " + dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out.Checks {
			t.Logf("%-24s %-26s %s", c.ID, c.Verdict(), c.Measured)
		}
	}
}
