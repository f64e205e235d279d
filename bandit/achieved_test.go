package bandit_test

import (
	"math"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

func TestAchieved(t *testing.T) {
	gdp := func(mu float64) privacy.Guarantee { return privacy.Guarantee{Notion: privacy.NotionGDP, Value: mu} }
	pure := func(eps float64) privacy.Guarantee { return privacy.Guarantee{Notion: privacy.NotionPure, Value: eps} }
	eps1, err := privacy.GDPEpsilon(1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	paper := pure(0.5)
	cases := []struct {
		name   string
		rep    privacy.Report
		target bandit.Target
		delta  float64
		want   bandit.Achievement
	}{
		{"pure within (ε, δ)", privacy.Report{Certified: pure(0.9)}, bandit.Target{Epsilon: 1, Delta: 1e-6}, 1e-6,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 0.9, Target: 1, Meets: true}},
		{"pure over (ε, δ)", privacy.Report{Certified: pure(1.5)}, bandit.Target{Epsilon: 1, Delta: 1e-6}, 1e-6,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 1.5, Target: 1, Meets: false}},
		{"within the 1e-9 tolerance", privacy.Report{Certified: pure(1 + 1e-12)}, bandit.Target{Epsilon: 1}, 1e-6,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 1 + 1e-12, Target: 1, Meets: true}},
		{"GDP against a μ budget compares μ", privacy.Report{Certified: gdp(0.8)}, bandit.Target{Mu: 1}, 1e-5,
			bandit.Achievement{Basis: "certified", Notion: "gdp", Value: 0.8, Target: 1, Meets: true}},
		{"GDP against an (ε, δ) budget compares ε at the target's δ", privacy.Report{Certified: gdp(1)}, bandit.Target{Epsilon: 5, Delta: 1e-5}, 0.1,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: eps1, Target: 5, Meets: true}},
		{"pure against a μ budget compares ε at the caller's δ", privacy.Report{Certified: pure(4)}, bandit.Target{Mu: 1}, 1e-5,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 4, Target: eps1, Meets: true}},
		{"paper basis uses a valid paper value", privacy.Report{Certified: pure(0.9), Paper: &paper, PaperValid: true},
			bandit.Target{Epsilon: 0.6, Basis: bandit.BasisPaper}, 1e-6,
			bandit.Achievement{Basis: "paper", Notion: "epsilon", Value: 0.5, Target: 0.6, Meets: true}},
		{"paper basis ignores an invalid paper value", privacy.Report{Certified: pure(0.9), Paper: &paper, PaperValid: false},
			bandit.Target{Epsilon: 0.6, Basis: bandit.BasisPaper}, 1e-6,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 0.9, Target: 0.6, Meets: false}},
		{"certified basis ignores the paper", privacy.Report{Certified: pure(0.9), Paper: &paper, PaperValid: true},
			bandit.Target{Epsilon: 0.6, Basis: bandit.BasisCertified}, 1e-6,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 0.9, Target: 0.6, Meets: false}},
		{"not private never meets", privacy.NotPrivate("x", "none"), bandit.Target{Epsilon: 1e300}, 1e-6,
			bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: math.Inf(1), Target: 1e300, Meets: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := bandit.Achieved(c.rep, c.target, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := bandit.Achieved(privacy.Report{Certified: gdp(1)}, bandit.Target{Epsilon: 1}, 0); err == nil {
		t.Error("δ = 0 with a GDP guarantee: want an error")
	}
}

func TestAchievementString(t *testing.T) {
	for _, c := range []struct {
		a    bandit.Achievement
		want string
	}{
		{bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: 0.987654321, Target: 1, Meets: true}, "certified ε = 0.987654 ≤ 1"},
		{bandit.Achievement{Basis: "paper", Notion: "gdp", Value: 2, Target: 1.5}, "paper μ = 2 > 1.5"},
		{bandit.Achievement{Basis: "certified", Notion: "epsilon", Value: math.Inf(1), Target: 1}, "certified ε = ∞ > 1"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.a, got, c.want)
		}
	}
}
