package eval

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// ModelOptions configure FitRewardModel.
type ModelOptions struct {
	// Kind is "ridge", "logistic", or "" / "auto": logistic when every
	// reward is 0 or 1, ridge otherwise.
	Kind string
	// Folds is the number of cross-fitting folds K (default 3, as in OBP's
	// examples; 1 fits and predicts on the whole log, in-sample).
	Folds int
	// Lambda is the ridge penalty on the standardised coefficients
	// (default 1).
	Lambda float64
	// Seed assigns rounds to folds.
	Seed uint64
}

// DefaultFolds is the default number of cross-fitting folds.
const DefaultFolds = 3

// FitRewardModel predicts q̂(x_i, a, p) for every round, action and
// position the log uses, out of fold: rounds are split into K folds at
// random (by Seed), and each fold's predictions come from a model fitted on
// the other K−1 folds (cross-fitting, as in OBP's RegressionModel with
// n_folds = K), so a round's own reward never enters its prediction.
//
// The model is one regression per (action, position) cell on the features
// [1, standardised context] (features standardised over the whole log,
// which uses no rewards), fitted on the rounds that logged that cell:
//
//   - ridge: least squares on r − r̄ (r̄ the training folds' mean reward)
//     with penalty λ‖β‖², prediction r̄ + xβ;
//   - logistic: the logistic likelihood with offset logit(r̄) and penalty
//     (λ/2)‖β‖², by Newton's method (IRLS) to a step below 1e-9; the
//     prediction is σ(logit(r̄) + xβ).
//
// Both shrink a cell with few rounds toward the overall mean r̄ (an empty
// cell predicts r̄). The result is n×A×P (P = 1 without positions).
func FitRewardModel(l *Log, o ModelOptions) (*ActionDist, string, error) {
	if o.Folds == 0 {
		o.Folds = DefaultFolds
	}
	if o.Lambda == 0 {
		o.Lambda = 1
	}
	if o.Folds < 1 || o.Folds > l.N {
		return nil, "", fmt.Errorf("folds must be in [1, %d], got %d", l.N, o.Folds)
	}
	if o.Lambda < 0 || math.IsNaN(o.Lambda) {
		return nil, "", fmt.Errorf("lambda must be ≥ 0, got %v", o.Lambda)
	}
	binary := true
	for _, r := range l.Reward {
		if r != 0 && r != 1 {
			binary = false
			break
		}
	}
	kind := o.Kind
	switch kind {
	case "", "auto":
		kind = "ridge"
		if binary {
			kind = "logistic"
		}
	case "ridge":
	case "logistic":
		if !binary {
			return nil, "", errors.New("the logistic reward model needs rewards in {0, 1}")
		}
	default:
		return nil, "", fmt.Errorf("unknown reward model %q (want auto, ridge or logistic)", o.Kind)
	}
	m := newCellModel(l, o)
	if kind == "ridge" {
		m.fitRidge()
	} else {
		m.fitLogistic()
	}
	desc := fmt.Sprintf("%s per (action, position) on [1, context], λ=%g, cross-fitted over %d folds", kind, o.Lambda, o.Folds)
	if o.Folds == 1 {
		desc = fmt.Sprintf("%s per (action, position) on [1, context], λ=%g, fitted in-sample", kind, o.Lambda)
	}
	return m.predict(), desc, nil
}

// cellModel holds the standardised features and the fold assignment.
type cellModel struct {
	l       *Log
	o       ModelOptions
	d1      int       // features: 1 + D
	mu, sd  []float64 // standardisation
	fold    []uint8
	cells   int
	mean    []float64 // per fold: training mean reward
	beta    [][]float64
	offsets []float64 // per fold: the logistic offset
}

func newCellModel(l *Log, o ModelOptions) *cellModel {
	m := &cellModel{l: l, o: o, d1: 1 + l.D, cells: l.A * l.P}
	m.mu, m.sd = make([]float64, l.D), make([]float64, l.D)
	for j := range l.D {
		var s, s2 float64
		for i := range l.N {
			v := l.Context[i*l.D+j]
			s += v
			s2 += v * v
		}
		mu := s / float64(l.N)
		m.mu[j] = mu
		if v := s2/float64(l.N) - mu*mu; v > 1e-300 {
			m.sd[j] = math.Sqrt(v)
		}
	}
	m.fold = make([]uint8, l.N)
	if o.Folds > 1 {
		for i := range m.fold {
			m.fold[i] = uint8(splitmix(o.Seed^uint64(i)*0x9e3779b97f4a7c15) % uint64(o.Folds))
		}
	}
	// Training mean reward per fold.
	sum := make([]float64, o.Folds)
	cnt := make([]float64, o.Folds)
	var tot, totc float64
	for i, r := range l.Reward {
		sum[m.fold[i]] += r
		cnt[m.fold[i]]++
		tot += r
		totc++
	}
	m.mean = make([]float64, o.Folds)
	for f := range o.Folds {
		if o.Folds == 1 {
			m.mean[f] = tot / totc
		} else if totc-cnt[f] > 0 {
			m.mean[f] = (tot - sum[f]) / (totc - cnt[f])
		}
	}
	m.beta = make([][]float64, o.Folds)
	for f := range m.beta {
		m.beta[f] = make([]float64, m.cells*m.d1)
	}
	return m
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// features writes round i's standardised features into x.
func (m *cellModel) features(i int, x []float64) {
	x[0] = 1
	ctx := m.l.Context[i*m.l.D : (i+1)*m.l.D]
	for j, v := range ctx {
		if m.sd[j] > 0 {
			x[j+1] = (v - m.mu[j]) / m.sd[j]
		} else {
			x[j+1] = 0
		}
	}
}

func (m *cellModel) cell(i int) int { return int(m.l.Action[i])*m.l.P + m.l.Pos(i) }

// trains reports whether round i is in fold f's training set.
func (m *cellModel) trains(i, f int) bool { return m.o.Folds == 1 || int(m.fold[i]) != f }

// fitRidge accumulates each fold's Gram matrices in one pass and solves.
func (m *cellModel) fitRidge() {
	K, d1, l := m.o.Folds, m.d1, m.l
	g := make([]float64, K*m.cells*d1*d1) // per fold f (its own rounds)
	b := make([]float64, K*m.cells*d1)    // Σ x r
	x := make([]float64, d1)
	for i := range l.N {
		m.features(i, x)
		f, c := int(m.fold[i]), m.cell(i)
		gg := g[(f*m.cells+c)*d1*d1:]
		bb := b[(f*m.cells+c)*d1:]
		r := l.Reward[i]
		for u := range d1 {
			bb[u] += x[u] * r
			for v := range d1 {
				gg[u*d1+v] += x[u] * x[v]
			}
		}
	}
	a := make([]float64, d1*d1)
	rhs := make([]float64, d1)
	for f := range K {
		for c := range m.cells {
			clear(a)
			clear(rhs)
			for h := range K {
				if K > 1 && h == f {
					continue
				}
				gg := g[(h*m.cells+c)*d1*d1:]
				bb := b[(h*m.cells+c)*d1:]
				for u := range d1 * d1 {
					a[u] += gg[u]
				}
				for u := range d1 {
					rhs[u] += bb[u]
				}
			}
			// Σ x (r − r̄) = Σ x r − r̄ Σ x; Σ x is the Gram's first row.
			for u := range d1 {
				rhs[u] -= m.mean[f] * a[u]
				a[u*d1+u] += m.o.Lambda
			}
			copy(m.beta[f][c*d1:], solveSPD(a, rhs, d1))
		}
	}
}

// fitLogistic runs Newton's method per fold and cell, the folds in
// parallel.
func (m *cellModel) fitLogistic() {
	K := m.o.Folds
	m.offsets = make([]float64, K)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for f := range K {
		mu := min(max(m.mean[f], 1e-6), 1-1e-6)
		m.offsets[f] = math.Log(mu / (1 - mu))
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			m.newton(f)
		})
	}
	wg.Wait()
}

func (m *cellModel) newton(f int) {
	d1, l, cells := m.d1, m.l, m.cells
	beta := m.beta[f]
	h := make([]float64, cells*d1*d1)
	g := make([]float64, cells*d1)
	done := make([]bool, cells)
	x := make([]float64, d1)
	a := make([]float64, d1*d1)
	rhs := make([]float64, d1)
	for iter := 0; iter < 50; iter++ {
		clear(h)
		clear(g)
		for i := range l.N {
			if !m.trains(i, f) {
				continue
			}
			c := m.cell(i)
			if done[c] {
				continue
			}
			m.features(i, x)
			bc := beta[c*d1 : (c+1)*d1]
			eta := m.offsets[f]
			for u := range d1 {
				eta += x[u] * bc[u]
			}
			p := sigmoid(eta)
			wt := p * (1 - p)
			res := l.Reward[i] - p
			gg := g[c*d1:]
			hh := h[c*d1*d1:]
			for u := range d1 {
				gg[u] += x[u] * res
				xw := x[u] * wt
				for v := u; v < d1; v++ {
					hh[u*d1+v] += xw * x[v]
				}
			}
		}
		all := true
		for c := range cells {
			if done[c] {
				continue
			}
			bc := beta[c*d1 : (c+1)*d1]
			hh := h[c*d1*d1:]
			for u := range d1 {
				for v := u; v < d1; v++ {
					a[u*d1+v] = hh[u*d1+v]
					a[v*d1+u] = hh[u*d1+v]
				}
				a[u*d1+u] += m.o.Lambda
				rhs[u] = g[c*d1+u] - m.o.Lambda*bc[u]
			}
			step := solveSPD(a, rhs, d1)
			var big float64
			for u := range d1 {
				bc[u] += step[u]
				big = max(big, math.Abs(step[u]))
			}
			if big < 1e-9 {
				done[c] = true
			} else {
				all = false
			}
		}
		if all {
			return
		}
	}
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// predict fills q̂ for every round, action and position from the round's
// fold model.
func (m *cellModel) predict() *ActionDist {
	l, d1 := m.l, m.d1
	q := NewActionDist(l.N, l.A, l.P)
	x := make([]float64, d1)
	logistic := m.offsets != nil
	for i := range l.N {
		m.features(i, x)
		f := int(m.fold[i])
		beta := m.beta[f]
		row := q.Values[i*l.A*l.P : (i+1)*l.A*l.P]
		for c := range m.cells {
			bc := beta[c*d1 : (c+1)*d1]
			var eta float64
			for u := range d1 {
				eta += x[u] * bc[u]
			}
			if logistic {
				row[c] = sigmoid(m.offsets[f] + eta)
			} else {
				row[c] = m.mean[f] + eta
			}
		}
	}
	return q
}

// solveSPD solves a·x = b for a symmetric positive definite d×d matrix by
// Cholesky (a is overwritten); a non-positive pivot (λ = 0 on an empty
// cell) gives a zero coefficient.
func solveSPD(a, b []float64, d int) []float64 {
	for j := range d {
		s := a[j*d+j]
		for k := range j {
			s -= a[j*d+k] * a[j*d+k]
		}
		if s <= 1e-12 {
			a[j*d+j] = 0
		} else {
			a[j*d+j] = math.Sqrt(s)
		}
		for i := j + 1; i < d; i++ {
			t := a[i*d+j]
			for k := range j {
				t -= a[i*d+k] * a[j*d+k]
			}
			if a[j*d+j] > 0 {
				a[i*d+j] = t / a[j*d+j]
			} else {
				a[i*d+j] = 0
			}
		}
	}
	y := make([]float64, d)
	for i := range d {
		t := b[i]
		for k := range i {
			t -= a[i*d+k] * y[k]
		}
		if a[i*d+i] > 0 {
			y[i] = t / a[i*d+i]
		}
	}
	for i := d - 1; i >= 0; i-- {
		t := y[i]
		for k := i + 1; k < d; k++ {
			t -= a[k*d+i] * y[k]
		}
		if a[i*d+i] > 0 {
			y[i] = t / a[i*d+i]
		} else {
			y[i] = 0
		}
	}
	return y
}
