package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// contextFree builds a log of n rounds of a context-free problem: the
// logger draws actions from logp, rewards are Bernoulli(mu[a]).
func contextFree(n int, logp, mu []float64, seed uint64) *Log {
	r := rand.New(rand.NewPCG(seed, 1))
	a := len(logp)
	l := &Log{N: n, A: a, P: 1, Action: make([]int32, n), Reward: make([]float64, n), PScore: make([]float64, n)}
	for i := range n {
		u, k := r.Float64(), 0
		for k < a-1 && u >= logp[k] {
			u -= logp[k]
			k++
		}
		l.Action[i] = int32(k)
		l.PScore[i] = logp[k]
		if r.Float64() < mu[k] {
			l.Reward[i] = 1
		}
	}
	return l
}

func shared(p []float64) *ActionDist {
	return &ActionDist{N: 1, A: len(p), P: 1, Shared: true, Values: append([]float64(nil), p...)}
}

func estimate(t *testing.T, l *Log, target, qhat *ActionDist, e Estimator, tau float64) float64 {
	t.Helper()
	v, err := ComputeTerms(l, target, qhat).Estimate(e, tau)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b), 1e-300)
}

// IPS is unbiased: over 1000 independent logs its mean is within 3
// standard errors of the target's true value Σ_a π_e(a) μ_a.
func TestIPSUnbiased(t *testing.T) {
	logp := []float64{0.5, 0.3, 0.2}
	mu := []float64{0.3, 0.5, 0.7}
	pe := []float64{0.2, 0.2, 0.6}
	truth := 0.2*0.3 + 0.2*0.5 + 0.6*0.7
	const seeds = 1000
	var s, s2 float64
	for seed := range uint64(seeds) {
		v := estimate(t, contextFree(200, logp, mu, seed), shared(pe), nil, IPS, 0)
		s += v
		s2 += v * v
	}
	m := s / seeds
	se := math.Sqrt((s2/seeds - m*m) / (seeds - 1))
	if math.Abs(m-truth) > 3*se {
		t.Errorf("mean IPS %v, truth %v, 3 s.e. = %v", m, truth, 3*se)
	}
}

// With q̂ ≡ 0 the DR correction is all of DR and DM is 0: DR = IPS.
func TestDRWithZeroModelIsIPS(t *testing.T) {
	l := contextFree(500, []float64{0.5, 0.3, 0.2}, []float64{0.3, 0.5, 0.7}, 1)
	pe := shared([]float64{0.2, 0.2, 0.6})
	zero := NewActionDist(l.N, l.A, 1)
	if dr, ips := estimate(t, l, pe, zero, DR, 0), estimate(t, l, pe, nil, IPS, 0); !near(dr, ips, 1e-14) {
		t.Errorf("DR %v, IPS %v", dr, ips)
	}
}

// Under uniform logging with the uniform target every weight is 1, so
// SNIPS (and IPS) is the plain mean reward.
func TestSNIPSUniformIsMeanReward(t *testing.T) {
	u := []float64{0.25, 0.25, 0.25, 0.25}
	l := contextFree(1000, u, []float64{0.1, 0.4, 0.6, 0.9}, 2)
	var s float64
	for _, r := range l.Reward {
		s += r
	}
	if v := estimate(t, l, Uniform(4), nil, SNIPS, 0); !near(v, s/1000, 1e-14) {
		t.Errorf("SNIPS %v, mean reward %v", v, s/1000)
	}
}

// When q̂ is exact on the logged actions (q̂(x_i, a_i) = r_i) every DR
// correction w_i (r_i − q̂(x_i, a_i)) is zero: DR = DM.
func TestDRIsDMWhenModelExactOnLogged(t *testing.T) {
	l := contextFree(500, []float64{0.5, 0.3, 0.2}, []float64{0.3, 0.5, 0.7}, 3)
	pe := shared([]float64{0.2, 0.2, 0.6})
	q := NewActionDist(l.N, l.A, 1)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range q.Values {
		q.Values[i] = r.Float64()
	}
	for i := range l.N {
		q.Values[i*l.A+int(l.Action[i])] = l.Reward[i]
	}
	if dr, dm := estimate(t, l, pe, q, DR, 0), estimate(t, l, pe, q, DM, 0); !near(dr, dm, 1e-14) {
		t.Errorf("DR %v, DM %v", dr, dm)
	}
}

// Switch-DR keeps the DR correction where w ≤ τ (OBP's tie convention):
// τ = +Inf keeps every round (DR); τ = 0 keeps only zero weights, whose
// correction is zero (DM). Here the target gives action 0 probability 0,
// so some weights are exactly 0 = τ.
func TestSwitchDRLimits(t *testing.T) {
	l := contextFree(500, []float64{0.5, 0.3, 0.2}, []float64{0.3, 0.5, 0.7}, 4)
	pe := shared([]float64{0, 0.4, 0.6})
	q := NewActionDist(l.N, l.A, 1)
	for i := range q.Values {
		q.Values[i] = 0.5
	}
	if sw, dr := estimate(t, l, pe, q, SwitchDR, math.Inf(1)), estimate(t, l, pe, q, DR, 0); sw != dr {
		t.Errorf("Switch-DR(τ=Inf) %v, DR %v", sw, dr)
	}
	if sw, dm := estimate(t, l, pe, q, SwitchDR, 0), estimate(t, l, pe, q, DM, 0); sw != dm {
		t.Errorf("Switch-DR(τ=0) %v, DM %v", sw, dm)
	}
	// Between: weights are 0.8 (action 1) and 3 (action 2); τ = 1 drops
	// the corrections of action 2's rounds only.
	terms := ComputeTerms(l, pe, q)
	var want float64
	for i := range l.N {
		want += terms.DM[i]
		if terms.W[i] <= 1 {
			want += terms.W[i] * (l.Reward[i] - 0.5)
		}
	}
	if sw := estimate(t, l, pe, q, SwitchDR, 1); !near(sw, want/float64(l.N), 1e-12) {
		t.Errorf("Switch-DR(τ=1) %v, want %v", sw, want/float64(l.N))
	}
}

// With the logging policy as the target every weight is 1: ESS = n.
func TestESSIsNUnderOnPolicyTarget(t *testing.T) {
	u := []float64{0.25, 0.25, 0.25, 0.25}
	l := contextFree(777, u, []float64{0.1, 0.4, 0.6, 0.9}, 5)
	if e := ComputeTerms(l, Uniform(4), nil).ESS(IPS, 0); !near(e, 777, 1e-12) {
		t.Errorf("ESS %v, want 777", e)
	}
	if e := ComputeTerms(l, Uniform(4), nil).ESS(DM, 0); !math.IsNaN(e) {
		t.Errorf("DM's ESS %v, want NaN", e)
	}
}

// The SNIPS contributions (delta method) average to the SNIPS estimate.
func TestSNIPSContributionsMeanIsEstimate(t *testing.T) {
	l := contextFree(300, []float64{0.5, 0.3, 0.2}, []float64{0.3, 0.5, 0.7}, 6)
	tm := ComputeTerms(l, shared([]float64{0.2, 0.2, 0.6}), nil)
	c, _ := tm.Contributions(SNIPS, 0)
	v, _ := tm.Estimate(SNIPS, 0)
	if !near(mean(c), v, 1e-12) {
		t.Errorf("mean contribution %v, SNIPS %v", mean(c), v)
	}
}

// Position-aware: with P = 2 the weight and the DM sum use the target's
// distribution at the logged position.
func TestPositionIndexing(t *testing.T) {
	l := &Log{N: 2, A: 2, P: 2, Action: []int32{0, 1}, Position: []int32{0, 1},
		Reward: []float64{1, 1}, PScore: []float64{0.5, 0.5}}
	// Layout [round][action][position].
	pe := &ActionDist{N: 1, A: 2, P: 2, Shared: true, Values: []float64{
		0.9, 0.2, // action 0 at positions 0, 1
		0.1, 0.8, // action 1
	}}
	tm := ComputeTerms(l, pe, nil)
	if tm.W[0] != 0.9/0.5 || tm.W[1] != 0.8/0.5 {
		t.Errorf("weights %v, want [1.8 1.6]", tm.W)
	}
}
