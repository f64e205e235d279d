package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

func linearLog(n int, seed uint64, binary bool) *Log {
	r := rand.New(rand.NewPCG(seed, 5))
	l := &Log{N: n, A: 2, P: 1, D: 2, Action: make([]int32, n), Reward: make([]float64, n),
		PScore: make([]float64, n), Context: make([]float64, 2*n)}
	for i := range n {
		x0, x1 := r.Float64(), r.Float64()
		l.Context[2*i], l.Context[2*i+1] = x0, x1
		a := r.IntN(2)
		l.Action[i], l.PScore[i] = int32(a), 0.5
		mu := 0.2 + 0.5*x0 - 0.1*x1
		if a == 1 {
			mu = 0.7 - 0.4*x1
		}
		if binary {
			if r.Float64() < mu {
				l.Reward[i] = 1
			}
		} else {
			l.Reward[i] = mu + 0.01*r.NormFloat64()
		}
	}
	return l
}

// Ridge recovers a linear reward per action; cross-fitting means changing
// a round's reward leaves its own prediction unchanged.
func TestRewardModelRidge(t *testing.T) {
	l := linearLog(4000, 1, false)
	q, desc, err := FitRewardModel(l, ModelOptions{Lambda: 1e-3})
	if err != nil || desc == "" {
		t.Fatal(err)
	}
	for i := range 50 {
		x0, x1 := l.Context[2*i], l.Context[2*i+1]
		if math.Abs(q.At(i, 0, 0)-(0.2+0.5*x0-0.1*x1)) > 0.01 || math.Abs(q.At(i, 1, 0)-(0.7-0.4*x1)) > 0.01 {
			t.Fatalf("round %d: q̂ %v %v", i, q.At(i, 0, 0), q.At(i, 1, 0))
		}
	}
	before := q.At(0, int(l.Action[0]), 0)
	l.Reward[0] += 100
	q2, _, _ := FitRewardModel(l, ModelOptions{Lambda: 1e-3})
	if !near(q2.At(0, int(l.Action[0]), 0), before, 1e-12) { // equal up to the rounding of the fold means
		t.Errorf("round 0's prediction moved with its own reward: %v → %v", before, q2.At(0, int(l.Action[0]), 0))
	}
}

// Logistic (auto for 0/1 rewards) gives probabilities near the truth.
func TestRewardModelLogistic(t *testing.T) {
	l := linearLog(20000, 2, true)
	q, desc, err := FitRewardModel(l, ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var se float64
	for i := range l.N {
		x0, x1 := l.Context[2*i], l.Context[2*i+1]
		d := q.At(i, 0, 0) - (0.2 + 0.5*x0 - 0.1*x1)
		se += d * d
	}
	if rmse := math.Sqrt(se / float64(l.N)); rmse > 0.03 || desc[:8] != "logistic" {
		t.Errorf("%s: RMSE %v", desc, rmse)
	}
}

// Evaluate fits the model when the log has no qhat: DR is then close to
// the truth on a well-specified problem.
func TestEvaluateWithFittedModel(t *testing.T) {
	l := linearLog(20000, 3, false)
	rep, err := Evaluate(l, shared([]float64{0, 1}), Options{Estimators: []Estimator{DM, DR}, Bootstrap: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	truth := 0.7 - 0.4*0.5
	for _, r := range rep.Results {
		if math.Abs(r.Estimate-truth) > 0.01 || !(r.Bootstrap.Lo < r.Estimate && r.Estimate < r.Bootstrap.Hi) {
			t.Errorf("%s: %v (truth %v), bootstrap %v", r.Estimator, r.Estimate, truth, r.Bootstrap)
		}
	}
}
