package server

import (
	"math"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/privacy"
)

// blockSize: a block pays for the step that asks, is c·sqrt(n) under GDP
// while that is under a quarter of what is left (PerStep(4) = remaining/2
// in μ), shrinks with what is left near exhaustion, and takes exactly the
// rest when even the step no longer leaves room for a quarter.
func TestReplicaBlockSize(t *testing.T) {
	g, err := privacy.NewFilter(privacy.NotionGDP, 10)
	if err != nil {
		t.Fatal(err)
	}
	if b := blockSize(g, 0.1, 100); b != 0.1*math.Sqrt(100) {
		t.Errorf("fresh budget μ = 10, step 0.1, 100 steps: block %v; want 1 (c·sqrt(n))", b)
	}
	if b := blockSize(g, 0.1, 1e6); b != g.PerStep(4) || math.Abs(b-5) > 1e-12 {
		t.Errorf("a block larger than a quarter of the rest: %v; want PerStep(4) = %v", b, g.PerStep(4))
	}
	// Spend all but μ = 0.3 (μ² = 100 − 0.09 spent).
	if err := g.Spend(math.Sqrt(100 - 0.09)); err != nil {
		t.Fatal(err)
	}
	rem := g.Remaining()
	if b := blockSize(g, 0.1, 100); b != max(g.PerStep(4), 0.1) || b > rem {
		t.Errorf("near exhaustion: block %v with %v left; want max(PerStep(4), step) = %v", b, rem, max(g.PerStep(4), 0.1))
	}
	if b := blockSize(g, rem, 100); b != rem || !g.CanSpend(b) {
		t.Errorf("a step of exactly the rest: block %v; want the rest %v", b, rem)
	}
	// Additive notions: c·n.
	z, _ := privacy.NewFilter(privacy.NotionZCDP, 1)
	if b := blockSize(z, 1e-4, 100); math.Abs(b-1e-2) > 1e-15 {
		t.Errorf("zCDP ρ = 1, step 1e-4, 100 steps: block %v; want 0.01", b)
	}
}

// checkReplicable refuses, at creation, everything replica mode cannot
// serve, naming the reason and what it does serve.
func TestReplicaRefusals(t *testing.T) {
	zero := 0.0
	dim := 3
	for _, c := range []struct {
		req  createRequest
		want string
	}{
		{createRequest{Policy: "auto"}, `"auto" is not available`},
		{createRequest{Policy: "dp-se"}, `"dp-se" cannot be served by replicas`},
		{createRequest{Policy: "mts-gaussian"}, "cannot be served by replicas"},
		{createRequest{Policy: "adaprivate-ts"}, "cannot be served by replicas"},
		{createRequest{Policy: "ts-gaussian", DefaultReward: &zero}, "default_reward"},
		{createRequest{Policy: "ts-gaussian", Arms: []string{"a"}, Dim: &dim}, "K-armed"},
		{createRequest{Policy: "ts-gaussian", RewardRetention: "1h"}, "keeps every reward value"},
	} {
		err := checkReplicable(c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error saying %q", c.req, err, c.want)
		}
	}
	for _, p := range []string{"ts-gaussian", "gaussian-ts"} {
		if err := checkReplicable(createRequest{Policy: p}); err != nil {
			t.Errorf("%s: %v; want it served", p, err)
		}
	}
}
