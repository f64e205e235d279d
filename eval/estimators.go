package eval

import (
	"fmt"
	"math"
	"strings"
)

// Estimator names an off-policy estimator.
type Estimator string

// The estimators, as in the Open Bandit Pipeline (obp/ope/estimators.py).
// With w_i = π_e(a_i | x_i, p_i) / pscore_i the importance weight of round
// i, q̂ the reward model and p_i the logged position:
//
//	IPS       (1/n) Σ w_i r_i
//	SNIPS     Σ w_i r_i / Σ w_i
//	DM        (1/n) Σ_i Σ_a π_e(a | x_i, p_i) q̂(x_i, a, p_i)
//	DR        DM_i + w_i (r_i − q̂(x_i, a_i, p_i)), averaged
//	Switch-DR DM_i + 1[w_i ≤ τ] w_i (r_i − q̂(x_i, a_i, p_i)), averaged
//
// Switch-DR follows OBP's SwitchDoublyRobust: a round whose weight exceeds
// τ keeps only its DM term; a weight equal to τ keeps the DR correction
// (the comparison is w ≤ τ). So τ = +Inf gives DR and τ = 0 gives DM (a
// zero weight's correction is zero). Wang, Agarwal & Dudík (2017) switch
// per action inside the DM sum as well; OBP's per-round form is the one
// implemented here.
const (
	IPS      Estimator = "ips"
	SNIPS    Estimator = "snips"
	DM       Estimator = "dm"
	DR       Estimator = "dr"
	SwitchDR Estimator = "switch-dr"
)

// Estimators lists every estimator in display order.
func Estimators() []Estimator { return []Estimator{IPS, SNIPS, DM, DR, SwitchDR} }

// ParseEstimators parses a comma-separated list ("all" for every one).
func ParseEstimators(s string) ([]Estimator, error) {
	if strings.TrimSpace(s) == "all" {
		return Estimators(), nil
	}
	var out []Estimator
	seen := map[Estimator]bool{}
	for _, f := range strings.Split(s, ",") {
		e := Estimator(strings.ToLower(strings.TrimSpace(f)))
		switch e {
		case "switchdr", "switch_dr":
			e = SwitchDR
		case "ipw":
			e = IPS
		case "snipw":
			e = SNIPS
		}
		if !e.valid() {
			return nil, fmt.Errorf("unknown estimator %q (want ips, snips, dm, dr, switch-dr)", f)
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

func (e Estimator) valid() bool {
	switch e {
	case IPS, SNIPS, DM, DR, SwitchDR:
		return true
	}
	return false
}

// needsModel reports whether e uses the reward model.
func (e Estimator) needsModel() bool { return e == DM || e == DR || e == SwitchDR }

// Terms are the per-round quantities every estimator is built from.
type Terms struct {
	W  []float64 // importance weights π_e(a_i | x_i, p_i) / pscore_i
	R  []float64 // rewards (the log's column)
	DM []float64 // Σ_a π_e(a | x_i, p_i) q̂(x_i, a, p_i); nil without a model
	Q  []float64 // q̂(x_i, a_i, p_i); nil without a model
}

// ComputeTerms computes the importance weights and, when qhat is not nil,
// the model terms, in one pass over the log. target and qhat are indexed by
// the logged position.
func ComputeTerms(l *Log, target, qhat *ActionDist) *Terms {
	t := &Terms{W: make([]float64, l.N), R: l.Reward}
	if qhat != nil {
		t.DM = make([]float64, l.N)
		t.Q = make([]float64, l.N)
	}
	a := l.A
	for i := range l.N {
		p := l.Pos(i)
		act := int(l.Action[i])
		to := target.offset(i, p)
		tp := target.P
		t.W[i] = target.Values[to+act*tp] / l.PScore[i]
		if qhat != nil {
			qo, qp := qhat.offset(i, p), qhat.P
			var s float64
			for k := range a {
				s += target.Values[to+k*tp] * qhat.Values[qo+k*qp]
			}
			t.DM[i] = s
			t.Q[i] = qhat.Values[qo+act*qp]
		}
	}
	return t
}

// Contributions returns the per-round terms whose mean is e's estimate
// (tau is Switch-DR's threshold). For SNIPS, whose estimate is a ratio,
// they are its linearisation (delta method):
// V̂ + w_i (r_i − V̂) / w̄, with w̄ the mean weight; their mean is V̂.
func (t *Terms) Contributions(e Estimator, tau float64) ([]float64, error) {
	if e.needsModel() && t.DM == nil {
		return nil, fmt.Errorf("%s needs a reward model", e)
	}
	n := len(t.W)
	c := make([]float64, n)
	switch e {
	case IPS:
		for i := range n {
			c[i] = t.W[i] * t.R[i]
		}
	case SNIPS:
		v, wbar := t.snips()
		for i := range n {
			c[i] = v + t.W[i]*(t.R[i]-v)/wbar
		}
	case DM:
		copy(c, t.DM)
	case DR:
		for i := range n {
			c[i] = t.DM[i] + t.W[i]*(t.R[i]-t.Q[i])
		}
	case SwitchDR:
		for i := range n {
			c[i] = t.DM[i]
			if t.W[i] <= tau {
				c[i] += t.W[i] * (t.R[i] - t.Q[i])
			}
		}
	default:
		return nil, fmt.Errorf("unknown estimator %q", e)
	}
	return c, nil
}

// snips returns Σ w r / Σ w and the mean weight.
func (t *Terms) snips() (v, wbar float64) {
	var swr, sw kahan
	for i, w := range t.W {
		swr.add(w * t.R[i])
		sw.add(w)
	}
	return swr.sum() / sw.sum(), sw.sum() / float64(len(t.W))
}

// Estimate returns e's point estimate.
func (t *Terms) Estimate(e Estimator, tau float64) (float64, error) {
	if e == SNIPS {
		v, _ := t.snips()
		return v, nil
	}
	c, err := t.Contributions(e, tau)
	if err != nil {
		return 0, err
	}
	return mean(c), nil
}

// ESS returns the effective sample size (Σw)²/Σw² of the weights e applies
// to the observed rewards: all of them for IPS, SNIPS and DR; those at most
// tau for Switch-DR; NaN for DM, which applies none.
func (t *Terms) ESS(e Estimator, tau float64) float64 {
	if e == DM {
		return math.NaN()
	}
	var s, s2 kahan
	for _, w := range t.W {
		if e == SwitchDR && !(w <= tau) {
			continue
		}
		s.add(w)
		s2.add(w * w)
	}
	if s2.sum() == 0 {
		return 0
	}
	return s.sum() * s.sum() / s2.sum()
}

// kahan is a compensated (Neumaier) sum.
type kahan struct{ s, c float64 }

func (k *kahan) add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

func (k *kahan) sum() float64 { return k.s + k.c }

func mean(x []float64) float64 {
	var k kahan
	for _, v := range x {
		k.add(v)
	}
	return k.sum() / float64(len(x))
}
