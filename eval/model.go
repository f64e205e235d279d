package eval

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
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
	dEff    int       // context features that vary over the log
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
			m.dEff++
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
// parallel. The offset is the training folds' pooled click rate with a
// Jeffreys prior, logit((Σr + ½)/(n + 1)): finite even without a click.
func (m *cellModel) fitLogistic() {
	K, l := m.o.Folds, m.l
	m.offsets = make([]float64, K)
	sum := make([]float64, K)
	cnt := make([]float64, K)
	for i, r := range l.Reward {
		sum[m.fold[i]] += r
		cnt[m.fold[i]]++
	}
	var tot, totc float64
	for f := range K {
		tot += sum[f]
		totc += cnt[f]
	}
	for f := range K {
		s, n := tot, totc
		if K > 1 {
			s, n = tot-sum[f], totc-cnt[f]
		}
		m.offsets[f] = math.Log((s + 0.5) / (n - s + 0.5))
	}
	cen := m.cellCentres()
	// Each (fold, cell) is its own Newton problem on the cell's rounds: the
	// cells are shared out among the cores, and each gathers its rounds'
	// standardised features once for all K folds. Fold f > 0 starts from
	// fold f−1's fit of the cell (their training sets share all but 2/K of
	// the rounds), which saves about half of its Newton passes; the
	// objective is concave, so the start changes only the path.
	byCell := m.cellIndex()
	var wg sync.WaitGroup
	next := make(chan int, m.cells)
	for c := range m.cells {
		next <- c
	}
	close(next)
	for range min(runtime.GOMAXPROCS(0), m.cells) {
		wg.Go(func() {
			var rows cellRows
			for c := range next {
				m.gather(c, byCell[c], &rows)
				for f := range K {
					if f > 0 {
						m.warmStart(f, c, cen[f])
					}
					m.newton(f, c, cen[f], &rows)
				}
			}
		})
	}
	wg.Wait()
}

// warmStart sets fold f's coefficients of cell c, in fold f's centred
// coordinates, to fold f−1's fit (stored uncentred): the same linear
// predictor, less the change of offset, with the slopes of features that
// are constant on fold f's training rounds at 0.
func (m *cellModel) warmStart(f, c int, cen []float64) {
	d1 := m.d1
	src := m.beta[f-1][c*d1 : (c+1)*d1]
	bc := m.beta[f][c*d1 : (c+1)*d1]
	cc := cen[c*d1 : (c+1)*d1]
	copy(bc, src)
	bc[0] += m.offsets[f-1] - m.offsets[f]
	for u := 1; u < d1; u++ {
		if math.IsNaN(cc[u]) {
			bc[u] = 0
		} else {
			bc[0] += cc[u] * bc[u]
		}
	}
}

// cellIndex returns, per cell, its rounds in log order (a counting sort).
func (m *cellModel) cellIndex() [][]int32 {
	cnt := make([]int, m.cells)
	for i := range m.l.N {
		cnt[m.cell(i)]++
	}
	all := make([]int32, m.l.N)
	out := make([][]int32, m.cells)
	at := 0
	for c, k := range cnt {
		out[c] = all[at : at : at+k]
		at += k
	}
	for i := range m.l.N {
		c := m.cell(i)
		out[c] = append(out[c], int32(i))
	}
	return out
}

// cellRows is one cell's rounds in log order: their standardised features
// (d1 per round, the intercept's 1 first), rewards and folds.
type cellRows struct {
	x    []float64
	r    []float64
	fold []uint8
	// One fold's training rounds, centred (newton's scratch).
	xc, rc []float64
}

// gather fills rows with the rounds idx.
func (m *cellModel) gather(c int, idx []int32, rows *cellRows) {
	d1 := m.d1
	rows.x = slices.Grow(rows.x[:0], len(idx)*d1)[:len(idx)*d1]
	rows.r = slices.Grow(rows.r[:0], len(idx))[:len(idx)]
	rows.fold = slices.Grow(rows.fold[:0], len(idx))[:len(idx)]
	for k, i := range idx {
		m.features(int(i), rows.x[k*d1:(k+1)*d1])
		rows.r[k] = m.l.Reward[i]
		rows.fold[k] = m.fold[i]
	}
}

// cellCentres returns, per fold f, each cell's mean standardised feature
// vector over f's training rounds (entry 0, the intercept's, is 0), with
// NaN marking a feature that is constant on those rounds: the slope of such
// a feature is not identified in the cell (it would only duplicate the
// intercept), so the fit leaves it at 0.
func (m *cellModel) cellCentres() [][]float64 {
	K, d1, l, cells := m.o.Folds, m.d1, m.l, m.cells
	s1 := make([]float64, K*cells*d1) // per fold of the round: Σ x (entry 0: count)
	s2 := make([]float64, K*cells*d1) // Σ x²
	x := make([]float64, d1)
	for i := range l.N {
		m.features(i, x)
		o := (int(m.fold[i])*cells + m.cell(i)) * d1
		for u := range d1 {
			s1[o+u] += x[u]
			s2[o+u] += x[u] * x[u]
		}
	}
	cen := make([][]float64, K)
	a := make([]float64, d1)
	b := make([]float64, d1)
	for f := range K {
		cen[f] = make([]float64, cells*d1)
		for c := range cells {
			clear(a)
			clear(b)
			for h := range K {
				if K > 1 && h == f {
					continue
				}
				o := (h*cells + c) * d1
				for u := range d1 {
					a[u] += s1[o+u]
					b[u] += s2[o+u]
				}
			}
			cc := cen[f][c*d1 : (c+1)*d1]
			n := a[0]
			for u := 1; u < d1; u++ {
				if n == 0 {
					cc[u] = math.NaN()
					continue
				}
				mu := a[u] / n
				if b[u]/n-mu*mu <= 1e-10*(1+mu*mu) {
					cc[u] = math.NaN()
				} else {
					cc[u] = mu
				}
			}
		}
	}
	return cen
}

// newton fits fold f's model of cell c from the cell's rounds: the
// intercept b₀ and slopes β on the cell-centred features, maximising the
// logistic log-likelihood with offset m.offsets[f] less (λ/2)b₀² +
// (λD/2)‖β‖², by Newton's method with step halving: a step (its length
// capped at 10) that lowers the penalised log-likelihood is halved until it
// does not, so the objective never decreases and Newton's fast local
// convergence is kept; the fit stops when its step is below 1e-9. The
// result is stored uncentred: beta[0] = b₀ − c·β.
func (m *cellModel) newton(f, c int, cen []float64, rows *cellRows) {
	d1 := m.d1
	lam := m.o.Lambda
	lamS := lam * float64(max(m.dEff, 1))
	bc := m.beta[f][c*d1 : (c+1)*d1]
	cc := cen[c*d1 : (c+1)*d1]
	h := make([]float64, d1*d1)
	g := make([]float64, d1)
	x := make([]float64, d1)
	a := make([]float64, d1*d1)
	rhs := make([]float64, d1)
	pc := make([]float64, d1) // the last accepted coefficients
	lc := make([]float64, d1) // the step taken from them
	best := math.Inf(-1)      // and their penalised log-likelihood
	off := m.offsets[f]
	// The fold's training rounds with their cell-centred features, once.
	trainAll := m.o.Folds == 1
	rows.xc, rows.rc = rows.xc[:0], rows.rc[:0]
	for k, r := range rows.r {
		if !trainAll && int(rows.fold[k]) == f {
			continue
		}
		copy(x, rows.x[k*d1:(k+1)*d1])
		for u := 1; u < d1; u++ {
			if math.IsNaN(cc[u]) {
				x[u] = 0
			} else {
				x[u] -= cc[u]
			}
		}
		rows.xc = append(rows.xc, x...)
		rows.rc = append(rows.rc, r)
	}
	for iter := 0; iter < 100; iter++ {
		clear(h)
		clear(g)
		var ll float64
		for k, r := range rows.rc {
			x := rows.xc[k*d1 : (k+1)*d1 : (k+1)*d1]
			eta := off
			for u := range d1 {
				eta += x[u] * bc[u]
			}
			// One exponential gives both σ(η) and log(1 + e^η).
			e := math.Exp(-math.Abs(eta))
			p := 1 / (1 + e)
			if eta < 0 {
				p = e / (1 + e)
			}
			ll += r*eta - max(eta, 0) - math.Log1p(e)
			wt := p * (1 - p)
			res := r - p
			for u := range d1 {
				g[u] += x[u] * res
				xw := x[u] * wt
				for v := u; v < d1; v++ {
					h[u*d1+v] += xw * x[v]
				}
			}
		}
		obj := ll - lam/2*bc[0]*bc[0]
		for u := 1; u < d1; u++ {
			obj -= lamS / 2 * bc[u] * bc[u]
		}
		if obj < best-1e-12*math.Abs(best) {
			// The step overshot: halve it.
			var big float64
			for u := range d1 {
				lc[u] /= 2
				bc[u] = pc[u] + lc[u]
				big = max(big, math.Abs(lc[u]))
			}
			if big < 1e-9 {
				copy(bc, pc)
				break
			}
			continue
		}
		best = obj
		copy(pc, bc)
		for u := range d1 {
			pen := lamS
			if u == 0 {
				pen = lam
			}
			for v := u; v < d1; v++ {
				a[u*d1+v] = h[u*d1+v]
				a[v*d1+u] = h[u*d1+v]
			}
			a[u*d1+u] += pen
			rhs[u] = g[u] - pen*bc[u]
		}
		step := solveSPD(a, rhs, d1)
		var big, norm float64
		for u := range d1 {
			big = max(big, math.Abs(step[u]))
			norm += step[u] * step[u]
		}
		scale := 1.0
		if norm = math.Sqrt(norm); norm > 10 {
			scale = 10 / norm
		}
		for u := range d1 {
			lc[u] = scale * step[u]
			bc[u] += lc[u]
		}
		if big < 1e-9 {
			break
		}
	}
	// Uncentre: b₀ + (x − c)·β = (b₀ − c·β) + x·β.
	for u := 1; u < d1; u++ {
		if math.IsNaN(cc[u]) {
			bc[u] = 0
		} else {
			bc[0] -= cc[u] * bc[u]
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
	logistic := m.offsets != nil
	workers := min(runtime.GOMAXPROCS(0), max(l.N/4096, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			x := make([]float64, d1)
			for i := w * l.N / workers; i < (w+1)*l.N/workers; i++ {
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
		})
	}
	wg.Wait()
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
