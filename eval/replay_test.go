package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// uniformLog draws n rounds from a uniform logger over len(mu) Bernoulli
// arms with means mu; with d > 0 it adds d uniform context features.
func uniformLog(n int, mu []float64, d int, seed uint64) *Log {
	r := rand.New(rand.NewPCG(seed, 7))
	k := len(mu)
	l := &Log{N: n, A: k, P: 1, D: d, Action: make([]int32, n), Reward: make([]float64, n), PScore: make([]float64, n)}
	if d > 0 {
		l.Context = make([]float64, n*d)
	}
	for i := range n {
		a := r.IntN(k)
		l.Action[i] = int32(a)
		if r.Float64() < mu[a] {
			l.Reward[i] = 1
		}
		l.PScore[i] = 1 / float64(k)
		for j := range d {
			l.Context[i*d+j] = r.Float64()
		}
	}
	return l
}

type alwaysArm int

func (a alwaysArm) Select() int       { return int(a) }
func (alwaysArm) Update(int, float64) {}

// A fixed policy (always arm 0) matches exactly the rounds that logged arm
// 0: its replay CTR is their mean reward, and it has ≈ n/K of them.
func TestReplayFixedPolicy(t *testing.T) {
	mu := []float64{0.3, 0.5, 0.7, 0.2}
	l := uniformLog(40000, mu, 0, 1)
	m := ReplayPolicy(l, alwaysArm(0), 0)
	var want []float64
	for i := range l.N {
		if l.Action[i] == 0 {
			want = append(want, l.Reward[i])
		}
	}
	if len(m) != len(want) {
		t.Fatalf("%d matches, want %d", len(m), len(want))
	}
	for i := range m {
		if m[i] != want[i] {
			t.Fatalf("match %d: reward %v, want %v", i, m[i], want[i])
		}
	}
	var res ReplayResult
	res.fill(l.N, m)
	if res.CTR != mean(want) {
		t.Errorf("CTR %v, want %v", res.CTR, mean(want))
	}
	// Matches ~ Binomial(n, 1/K): within 4 standard deviations of n/K.
	exp, sd := float64(l.N)/4, math.Sqrt(float64(l.N)*0.25*0.75)
	if math.Abs(float64(res.Matches)-exp) > 4*sd {
		t.Errorf("%d matches, want %v ± %v", res.Matches, exp, 4*sd)
	}
	if !(res.Normal.Lo < res.CTR && res.CTR < res.Normal.Hi) {
		t.Errorf("interval %v", res.Normal)
	}
}

// UCB1 replayed on a uniform log of Bernoulli arms finds the best arm: with
// K = 5, gaps ≥ 0.3 and ≈ 20,000 matched rounds, its CTR is within 0.04 of
// the best mean (UCB1's regret, Σ 8 ln T / Δ ≈ 1,000 lost pulls at most by
// Auer, Cesa-Bianchi & Fischer 2002, Thm 1, costs < 0.03; the rest is
// sampling noise, s.e. ≈ 0.003). Seed fixed.
func TestReplayUCB1FindsBest(t *testing.T) {
	mu := []float64{0.1, 0.2, 0.3, 0.4, 0.7}
	l := uniformLog(100000, mu, 0, 2)
	res, err := Replay(l, "ucb1", ReplayOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ucb1: CTR %.4f %v over %d matches of %d rounds", res.CTR, res.Normal, res.Matches, res.Rounds)
	if math.Abs(res.CTR-0.7) > 0.04 {
		t.Errorf("CTR %v, want 0.7 ± 0.04", res.CTR)
	}
	if !res.Uniform || res.Warning != "" {
		t.Errorf("uniform log flagged: %+v", res)
	}
	if res.Policy != "ucb1" {
		t.Errorf("policy %q", res.Policy)
	}
}

// Delay can only slow learning. Two checks:
//   - with D ≥ the number of matches the policy is never updated, so UCB1
//     (which plays its first unseen arm, arm 0, until it has feedback)
//     matches exactly the rounds that logged arm 0: the CTR of the frozen
//     policy;
//   - D = 100 loses reward against D = 0: on a short log (≈ 2,000 matched
//     rounds) the CTR averaged over 8 logs is lower with D = 100 (the
//     first 100 matched rounds all play arm 0, and every later choice
//     uses 100 fewer observations).
func TestReplayDelay(t *testing.T) {
	mu := []float64{0.1, 0.2, 0.3, 0.4, 0.7}
	l := uniformLog(10000, mu, 0, 3)
	res, err := Replay(l, "ucb1", ReplayOptions{Delay: l.N})
	if err != nil {
		t.Fatal(err)
	}
	frozen := ReplayPolicy(l, alwaysArm(0), 0)
	if res.Matches != len(frozen) || res.CTR != mean(frozen) {
		t.Errorf("never-updated ucb1: %d matches CTR %v, want %d, %v", res.Matches, res.CTR, len(frozen), mean(frozen))
	}
	var c0, c100 float64
	const runs = 8
	for s := range uint64(runs) {
		l := uniformLog(10000, mu, 0, 100+s)
		r0, err := Replay(l, "ucb1", ReplayOptions{Delay: 0})
		if err != nil {
			t.Fatal(err)
		}
		r100, err := Replay(l, "ucb1", ReplayOptions{Delay: 100})
		if err != nil {
			t.Fatal(err)
		}
		c0 += r0.CTR / runs
		c100 += r100.CTR / runs
	}
	t.Logf("ucb1, mean CTR over %d logs: D=0 %.4f, D=100 %.4f", runs, c0, c100)
	if !(c100 < c0) {
		t.Errorf("delay 100 did not cost reward: D=0 %.4f, D=100 %.4f", c0, c100)
	}
	if _, err := Replay(l, "ucb1", ReplayOptions{Delay: -1}); err == nil {
		t.Error("negative delay accepted")
	}
}

// A logger that is not uniform is flagged.
func TestReplayNonUniformWarns(t *testing.T) {
	l := uniformLog(1000, []float64{0.5, 0.5}, 0, 4)
	l.PScore[3] = 0.9
	res, err := Replay(l, "ucb1", ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Uniform || !strings.Contains(res.Warning, "not uniform") {
		t.Errorf("non-uniform log: %+v", res)
	}
	if _, err := Replay(l, "no-such-policy", ReplayOptions{}); err == nil {
		t.Error("unknown policy accepted")
	}
}

// A contextual policy runs on the disjoint candidates of the flat log's
// context, and on fixed item candidates.
func TestReplayContextual(t *testing.T) {
	l := uniformLog(6000, []float64{0.2, 0.6, 0.4}, 2, 5)
	res, err := Replay(l, "linucb", ReplayOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Matches < 1500 || res.Matches > 2500 {
		t.Errorf("linucb (disjoint): %d matches of %d", res.Matches, l.N)
	}
	items := [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	res2, err := Replay(l, "linucb", ReplayOptions{Seed: 1, Candidates: ItemCandidates(items), Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("linucb: disjoint CTR %.3f (%d matches), one-hot items CTR %.3f (%d matches)", res.CTR, res.Matches, res2.CTR, res2.Matches)
	if res2.CTR < 0.5 {
		t.Errorf("linucb on one-hot items: CTR %v, want near 0.6", res2.CTR)
	}
	noCtx := uniformLog(100, []float64{0.5, 0.5}, 0, 6)
	if _, err := Replay(noCtx, "linucb", ReplayOptions{}); err == nil {
		t.Error("contextual policy on a log without context: no error")
	}
}

// Replay on the Open Bandit Dataset's uniform-random logs (a smoke test:
// ≈ 10,000/items matched rounds).
func TestReplayOBD(t *testing.T) {
	dir := obdDir(t, "random")
	for _, c := range []string{"men", "women"} {
		l, err := ReadOBD(dir, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []string{"ucb1", "beta-ts"} {
			res, err := Replay(l, spec, ReplayOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Uniform {
				t.Errorf("%s: random logger flagged: %s", c, res.Warning)
			}
			t.Logf("%s %s: CTR %.4f [%.4f, %.4f], %d matches of %d", c, spec, res.CTR, res.Normal.Lo, res.Normal.Hi, res.Matches, res.Rounds)
			exp := float64(l.N) / float64(l.A)
			if math.Abs(float64(res.Matches)-exp) > 5*math.Sqrt(exp) {
				t.Errorf("%s %s: %d matches, want ≈ %v", c, spec, res.Matches, exp)
			}
		}
		items, err := ReadOBDItems(dir, c)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(l, "linucb", ReplayOptions{Seed: 1, Candidates: ItemCandidates(items), Dim: len(items[0])})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s linucb (item features): CTR %.4f [%.4f, %.4f], %d matches", c, res.CTR, res.Normal.Lo, res.Normal.Hi, res.Matches)
	}
}

// LinUCB with one model per action on the context (disjoint=1) is the
// shared model on the disjoint candidates e_a ⊗ x: the Gram matrix of the
// latter is block diagonal, so both score every candidate the same up to
// rounding and make the same choices. Under a delay the per-action model
// must train the delayed reward's action (UpdateArm), not the action its
// last Select returned; training the wrong one changes the choices.
func TestReplayDisjointEqualsShared(t *testing.T) {
	l := uniformLog(20000, []float64{0.2, 0.6, 0.4, 0.5}, 3, 11)
	for _, delay := range []int{0, 7} {
		shared, err := Replay(l, "linucb:alpha=0.5", ReplayOptions{Seed: 1, Delay: delay})
		if err != nil {
			t.Fatal(err)
		}
		disj, err := Replay(l, "linucb:alpha=0.5,disjoint=1", ReplayOptions{Seed: 1, Delay: delay})
		if err != nil {
			t.Fatal(err)
		}
		if shared.Matches != disj.Matches || shared.Clicks != disj.Clicks {
			t.Errorf("delay %d: shared model on e_a⊗x: %d matches, %v clicks; per-action models: %d matches, %v clicks",
				delay, shared.Matches, shared.Clicks, disj.Matches, disj.Clicks)
		}
		if shared.Matches < 4000 {
			t.Errorf("delay %d: only %d matches", delay, shared.Matches)
		}
	}
}
