package mab

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpbandit/dpbandit/mab/policytest"
)

// TestTSGaussianReport: paper sqrt(T/2) ([OU] Lemma 3) and certified
// sqrt((T−1)/2); at T = 1e5 the paper's μ = 223.607 gives ε = 25952.668 at
// δ = 1e-5 and 26061.908 at δ = 1e-6 (docs/accountant.md oracle).
func TestTSGaussianReport(t *testing.T) {
	rep := tsGaussianReport(100_000)
	matchPrinted(t, "paper", rep.Paper.Value, "223.606797749979")
	if want := math.Sqrt(49999.5); rep.Certified.Value < want || rep.Certified.Value > want*(1+1e-15) {
		t.Errorf("certified %v, want sqrt((T−1)/2) = %v rounded up", rep.Certified.Value, want)
	}
	for _, c := range []struct {
		delta float64
		want  float64
	}{{1e-5, 25952.6679965582}, {1e-6, 26061.9084750583}} {
		st, err := rep.At(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(*st.PaperEpsilon-c.want) > 1e-9*c.want {
			t.Errorf("paper ε at δ=%g = %v, oracle %v", c.delta, *st.PaperEpsilon, c.want)
		}
		if *st.Epsilon > *st.PaperEpsilon {
			t.Errorf("certified ε above paper ε")
		}
	}
	// Beyond the horizon the report covers the rounds played.
	p, _ := NewTSGaussian(TSGaussianOptions{K: 2, Horizon: 10}, rand.New(rand.NewPCG(1, 2)))
	for range 50 {
		p.Update(p.Select(), 1)
	}
	if got, want := p.Privacy().Certified.Value, math.Sqrt(49.0/2); got < want {
		t.Errorf("after 50 rounds of a T = 10 policy: certified %v < %v", got, want)
	}
}

// TestTSGaussianLogRegret is issue 3's statistical target: TS-Gaussian on
// Bernoulli means (0.6, 0.4) has mean pseudo-regret at T = 1e5 less than
// twice that at T = 1e4 (linear growth would give 10). 20 runs with fixed
// seeds; the regret at 1e4 is read from the same runs (the policy is anytime,
// so its first 1e4 rounds are a T = 1e4 run). Pseudo-regret Δ·(pulls of arm
// 1) is used: the realised regret's reward noise (s.d. ≈ 150 at 1e5) would
// swamp a logarithmic regret of a few tens. Ten other seed sets gave ratios
// 1.43–1.67 (regret ≈ 35 at 1e4, ≈ 56 at 1e5), so the bound 2 is not marginal.
func TestTSGaussianLogRegret(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical test")
	}
	const runs = 20
	var r4, r5 float64
	for run := range runs {
		p, err := NewTSGaussian(TSGaussianOptions{K: 2, Horizon: 100_000}, rand.New(rand.NewPCG(uint64(run), 1)))
		if err != nil {
			t.Fatal(err)
		}
		env := policytest.NewBernoulli([]float64{0.6, 0.4}, rand.New(rand.NewPCG(uint64(run), 2)))
		var regret float64
		for round := 1; round <= 100_000; round++ {
			a := p.Select()
			p.Update(a, env.Pull(a))
			if a == 1 {
				regret += 0.2
			}
			if round == 10_000 {
				r4 += regret / runs
			}
		}
		r5 += regret / runs
	}
	ratio := r5 / r4
	t.Logf("mean pseudo-regret: %.2f at T=1e4, %.2f at T=1e5, ratio %.3f", r4, r5, ratio)
	if !(ratio < 2) {
		t.Errorf("regret(1e5)/regret(1e4) = %v, want < 2 (logarithmic growth)", ratio)
	}
}

// TestTSGaussianPosterior: the cached posterior is N(S/(n+1), 1/(n+1)) from
// the stored S and n, and Select's draws follow it (mean and variance of θ
// for a lone arm, over many draws).
func TestTSGaussianPosterior(t *testing.T) {
	p, _ := NewTSGaussian(TSGaussianOptions{K: 3, Horizon: 100}, rand.New(rand.NewPCG(1, 2)))
	for i, x := range []float64{1, 0.25, 0.5, 1, 0} {
		p.Update(i%3, x)
	}
	for i := range 3 {
		n, s := p.st.Pulls[i], p.st.Sum[i]
		if p.post[i].mean != s/float64(n+1) || p.post[i].sd != 1/math.Sqrt(float64(n+1)) {
			t.Errorf("arm %d: posterior %+v, want N(%v, 1/%d)", i, p.post[i], s/float64(n+1), n+1)
		}
	}
	// Select's law: arm 0 with n = 3, S = 1.5 (θ0 ~ N(0.375, 1/4)) against an
	// unplayed arm 1 (θ1 ~ N(0, 1)) wins with probability
	// Φ(0.375/sqrt(1.25)) = 0.631342.
	q, _ := NewTSGaussian(TSGaussianOptions{K: 2, Horizon: 100}, rand.New(rand.NewPCG(3, 4)))
	for _, x := range []float64{0.5, 0.5, 0.5} {
		q.Update(0, x)
	}
	const draws = 200_000
	wins := 0
	for range draws {
		if q.Select() == 0 {
			wins++
		}
	}
	want := 0.5 * math.Erfc(-0.375/math.Sqrt(1.25)/math.Sqrt2)
	se := math.Sqrt(want * (1 - want) / draws)
	if got := float64(wins) / draws; math.Abs(got-want) > 4*se {
		t.Errorf("P(arm 0) = %v, want %v ± 4·%v", got, want, se)
	}
}

// TestTSGaussianNextCost: zero before any data, then 1/sqrt(n+1) for the
// smallest n ≥ 1; Σ NextCost² over a run ≤ certified² = (T−1)/2.
func TestTSGaussianNextCost(t *testing.T) {
	const T = 10_000
	p, _ := NewTSGaussian(TSGaussianOptions{K: 10, Horizon: T}, rand.New(rand.NewPCG(1, 2)))
	if c := p.NextCost(); c.Value != 0 {
		t.Fatalf("first round costs %v", c.Value)
	}
	env := policytest.NewBernoulli(policytest.SpreadMeans(10), rand.New(rand.NewPCG(3, 4)))
	var sum float64
	for range T {
		c := p.NextCost().Value
		if c > 1/math.Sqrt2 {
			t.Fatalf("per-round cost %v above 1/√2", c)
		}
		sum += c * c
		a := p.Select()
		p.Update(a, env.Pull(a))
	}
	cert := p.Privacy().Certified.Value
	if sum > cert*cert*(1+1e-9) {
		t.Errorf("Σ NextCost² = %v > certified² = %v", sum, cert*cert)
	}
	total := 0
	for _, n := range p.st.Pulls {
		total += n
	}
	if total != T || p.st.Rounds != T {
		t.Errorf("pulls sum to %d over %d rounds, want %d", total, p.st.Rounds, T)
	}
}

// TestTSGaussianStateRejects: a state that breaks 0 ≤ S ≤ n, a wrong K, other
// options or unknown fields is refused, and a refused state leaves the
// policy unchanged.
func TestTSGaussianStateRejects(t *testing.T) {
	p, _ := NewTSGaussian(TSGaussianOptions{K: 2, Horizon: 100}, rand.New(rand.NewPCG(1, 2)))
	p.Update(0, 1)
	before, _ := p.MarshalJSON()
	for _, bad := range []string{
		`{"policy":"ts-gaussian","options":{"K":2,"Horizon":100},"state":{"rounds":5,"sum":[3,0],"pulls":[2,0]}}`,
		`{"policy":"ts-gaussian","options":{"K":2,"Horizon":100},"state":{"rounds":5,"sum":[0],"pulls":[0]}}`,
		`{"policy":"ts-gaussian","options":{"K":2,"Horizon":100},"state":{"rounds":1,"sum":[1,1],"pulls":[1,1]}}`,
		`{"policy":"ts-gaussian","options":{"K":2,"Horizon":99},"state":{"rounds":0,"sum":[0,0],"pulls":[0,0]}}`,
		`{"policy":"mts-gaussian","options":{"K":2,"Horizon":100},"state":{"rounds":0,"sum":[0,0],"pulls":[0,0]}}`,
		`{"policy":"ts-gaussian","options":{"K":2,"Horizon":100},"state":{"rounds":0,"sum":[0,0],"pulls":[0,0],"x":1}}`,
	} {
		if err := p.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	after, _ := p.MarshalJSON()
	if string(before) != string(after) {
		t.Errorf("a refused state changed the policy: %s → %s", before, after)
	}
	var v map[string]any
	if err := json.Unmarshal(after, &v); err != nil || v["policy"] != "ts-gaussian" {
		t.Errorf("state JSON %s: %v", after, err)
	}
}
