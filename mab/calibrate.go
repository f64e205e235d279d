package mab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Equal-budget calibration (the simulator's --budget mode, issue 3) and the
// small helpers the policy files of this package share: GDP reports, reward
// checks, and the JSON envelope of a policy's learning state.
//
// A calibration sets the free parameters of a private policy so that one of
// its two stated values meets a target (bandit.Target):
//
//   - Basis "paper" (the default when empty): the source paper's formula is
//     set equal to the target, as the papers did by hand (M-TS: c(b+1) = T/μ²,
//     [OU] §5.1; [HU] App E.1). The paper's values used here are valid
//     (docs/reproduction-decisions.md A3, A4, A7 call them loose, not wrong), so a paper-basis calibration
//     meets the target with room to spare: its certified value is ≤ target.
//   - Basis "certified": the project's certified (tight) value equals the
//     target; the paper's value is then above the target.
//
// A target given as (ε, δ) is converted to μ-GDP exactly with privacy.GDPMu
// (the largest μ whose GDP curve meets (ε, δ); docs/accountant.md §2.1), so every
// calibration here is done in μ.

// MTSGridB is docs/reproductions.md E1's suggested grid of pre-pull counts b for M-TS at a
// fixed budget ([OU] §5.1 only states that the (b, c) pairs satisfy
// c(b+1) = T/η²; the pairs themselves were in the lost figure legends).
var MTSGridB = []int{0, 1, 9, 49, 99, 199, 499, 999, 1999, 3999, 4999, 9999, 19999}

// targetMu returns the GDP parameter of a target and its normalised basis.
// A target with Mu > 0 is μ-GDP; otherwise (Epsilon, Delta) is converted with
// privacy.GDPMu, which rounds μ down (the target is met, never exceeded).
// Every finite ε > 0 with δ in (0, 1) converts, promptly (GDPMu's search is
// bounded; μ ≤ 1.9e154 at ε = MaxFloat64); NaN, ±Inf, ε ≤ 0 and δ outside
// (0, 1) are errors. Whether a policy can reach that μ is its calibrator's
// question (mtsCForTarget, calibrateDPTSUCB say when it cannot).
func targetMu(t bandit.Target) (mu float64, basis string, err error) {
	switch t.Basis {
	case "", bandit.BasisPaper:
		basis = bandit.BasisPaper
	case bandit.BasisCertified:
		basis = bandit.BasisCertified
	default:
		return 0, "", fmt.Errorf("calibration basis %q: must be %q or %q", t.Basis, bandit.BasisPaper, bandit.BasisCertified)
	}
	if t.Mu != 0 {
		if !(t.Mu > 0) || math.IsInf(t.Mu, 1) {
			return 0, "", fmt.Errorf("privacy target: gdp μ = %v must be finite and > 0", t.Mu)
		}
		return t.Mu, basis, nil
	}
	if !(t.Epsilon > 0) || math.IsInf(t.Epsilon, 1) {
		return 0, "", fmt.Errorf("privacy target: give gdp=μ > 0 or epsilon > 0 with delta in (0, 1) (epsilon = %v)", t.Epsilon)
	}
	if !(t.Delta > 0 && t.Delta < 1) {
		return 0, "", fmt.Errorf("privacy target: delta = %v must lie in (0, 1) when the target is given as (epsilon, delta)", t.Delta)
	}
	mu, err = privacy.GDPMu(t.Epsilon, t.Delta)
	if err != nil {
		return 0, "", fmt.Errorf("privacy target (ε=%v, δ=%v): %w", t.Epsilon, t.Delta, err)
	}
	return mu, basis, nil
}

// given reports whether the user set parameter name in p, and its value.
func given(p bandit.Params, name string) (float64, bool) {
	v, ok := p[name]
	return v, ok
}

// ---------------------------------------------------------------------------
// M-TS-Gaussian ([OU] Alg 2)

// mtsCForTarget returns a c > 0, within a few ulps of the smallest, whose
// M-TS value on the basis (as reported) is ≤ mu, for pre-pulls b. Paper:
// c = T/(μ²(b+1)) (Lemma 4 solved for c). Certified: c = m/(μ²(max(b,1)+1)),
// m the number of data-reading rounds (mtsTSRounds). c is then nudged up
// until the reported value (the certified one is rounded up) is ≤ μ, so the
// calibrated policy never reports more than the target. It returns 0 when no
// c is needed (no round reads data).
//
// It returns an error, never an unchecked c, when the target is out of
// reach in float64: μ so small that c exceeds MaxFloat64, or μ so large
// (above √MaxFloat64 ≈ 1.34e154, i.e. a target ε above about 9e307) that
// the value sqrt(T/(c(b+1))) = μ cannot be evaluated. The nudging is bounded
// (at most 128 steps).
func mtsCForTarget(k, horizon, b int, mu float64, basis string) (float64, error) {
	num, den := float64(horizon), float64(b+1)
	if basis == bandit.BasisCertified {
		m := mtsTSRounds(k, horizon, b)
		if m == 0 {
			return 0, nil
		}
		num, den = float64(m), float64(max(b, 1)+1)
	}
	c := num / (mu * mu * den)
	if c == 0 || math.IsInf(c, 1) { // μ² over- or underflows: divide step by step
		c = num / mu / mu / den
	}
	value := func(c float64) float64 {
		paper, cert := mtsValues(k, horizon, b, c)
		if basis == bandit.BasisCertified {
			return roundUp(cert) // as reported
		}
		return paper
	}
	if value(c) > mu {
		c = c + c*0x1p-48 // covers roundUp's 2⁻⁵⁰ (μ ∝ c^{−1/2})
	}
	for i := 0; i < 64 && value(c) > mu; i++ {
		c = math.Nextafter(c, math.Inf(1))
	}
	// A subnormal c (μ near 1e154) has few significant bits: step relatively.
	for i := 0; i < 64 && value(c) > mu; i++ {
		c += c * 0x1p-40
	}
	if !(c > 0) || math.IsInf(c, 1) || !(value(c) <= mu) {
		return 0, fmt.Errorf("target %v-GDP is out of reach for M-TS with b = %d at T = %d: c = T/(μ²(b+1)) = %v is outside what "+
			"float64 can evaluate (valid: %.4g ≤ μ ≤ %.4g on the %s basis)",
			mu, b, horizon, num/mu/mu/den, math.Sqrt(num/den/math.MaxFloat64), math.Sqrt(math.MaxFloat64), basis)
	}
	return c, nil
}

// calibrateMTS implements Descriptor.Calibrate for mts-gaussian. p holds only
// the parameters the user gave (not completed with defaults). If the user
// gave b, c is solved for it; if the user gave c (and not b), b is the
// smallest integer meeting the target; otherwise b = 0 and c is solved.
// Giving both leaves nothing to calibrate and is an error.
func calibrateMTS(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
	mu, basis, err := targetMu(t)
	if err != nil {
		return nil, fmt.Errorf("mts-gaussian: %w", err)
	}
	if s.K < 1 || s.Horizon < 1 {
		return nil, fmt.Errorf("mts-gaussian: calibration needs K ≥ 1 and horizon T ≥ 1 (K = %d, T = %d)", s.K, s.Horizon)
	}
	bv, bGiven := given(p, "b")
	cv, cGiven := given(p, "c")
	switch {
	case bGiven && cGiven:
		return nil, fmt.Errorf("mts-gaussian: b = %v and c = %v are both given, so nothing is left to calibrate to the budget; drop one of them", bv, cv)
	case cGiven:
		if !(cv > 0) || math.IsInf(cv, 1) {
			return nil, fmt.Errorf("mts-gaussian: parameter c = %v must be finite and > 0", cv)
		}
		// The smallest b whose value is ≤ μ; the value decreases in b.
		maxB := s.Horizon / s.K
		ok := func(b int) bool {
			paper, cert := mtsValues(s.K, s.Horizon, b, cv)
			if basis == bandit.BasisCertified {
				return roundUp(cert) <= mu // as reported
			}
			return paper <= mu
		}
		if !ok(maxB) {
			return nil, fmt.Errorf("mts-gaussian: with c = %v no b in [0, %d] (bK ≤ T) meets %v-GDP on the %s basis; increase c", cv, maxB, mu, basis)
		}
		lo, hi := -1, maxB // ok(hi), !ok(lo) (lo = −1 is a sentinel)
		// Integer bisection: at most ⌈log₂(maxB+1)⌉ ≤ 64 steps.
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if ok(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return bandit.Params{"b": float64(hi), "c": cv}, nil
	}
	b := 0
	if bGiven {
		if bv < 0 || bv != math.Trunc(bv) {
			return nil, fmt.Errorf("mts-gaussian: parameter b = %v must be an integer ≥ 0", bv)
		}
		b = satInt(bv)
		if b > s.Horizon/s.K {
			return nil, fmt.Errorf("mts-gaussian: parameter b = %d needs bK ≤ T (K = %d, T = %d)", b, s.K, s.Horizon)
		}
	}
	c, err := mtsCForTarget(s.K, s.Horizon, b, mu, basis)
	if err != nil {
		return nil, fmt.Errorf("mts-gaussian: %w", err)
	}
	if c == 0 {
		c = 1 // every round is a pre-pull: no round reads data, any c meets the target
	}
	return bandit.Params{"b": float64(b), "c": c}, nil
}

// MTSGrid returns the (b, c) pairs of M-TS-Gaussian that meet the target for
// the setting, one per b of docs/reproductions.md E1's grid (MTSGridB), keeping only c ≥
// minC (the regret analysis of [OU] Thm 5 needs c ≥ 1) and bK < T (so that
// some Thompson rounds remain). On the paper basis c = T/(μ²(b+1)) (c(b+1) =
// T/η², [OU] §5.1); on the certified basis the tight value equals μ. The
// simulator uses it to expand mts-gaussian into a family when b is not given.
// It returns an error when the target is malformed or no pair survives.
func MTSGrid(s bandit.Setting, t bandit.Target, minC float64) ([]bandit.Params, error) {
	mu, basis, err := targetMu(t)
	if err != nil {
		return nil, fmt.Errorf("mts-gaussian grid: %w", err)
	}
	if s.K < 1 || s.Horizon < 1 {
		return nil, fmt.Errorf("mts-gaussian grid: needs K ≥ 1 and horizon T ≥ 1 (K = %d, T = %d)", s.K, s.Horizon)
	}
	var out []bandit.Params
	for _, b := range MTSGridB {
		if b*s.K >= s.Horizon {
			continue
		}
		c, err := mtsCForTarget(s.K, s.Horizon, b, mu, basis)
		if err != nil {
			return nil, fmt.Errorf("mts-gaussian grid: %w", err)
		}
		// c is within ulps of the exact solution; a relative slack of 1e-12
		// keeps grid points whose exact c equals minC (e.g. η = 5, b = 3999).
		if c < minC*(1-1e-12) {
			continue
		}
		out = append(out, bandit.Params{"b": float64(b), "c": c})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mts-gaussian grid: no b in %v gives c ≥ %v with bK < T at %v-GDP (%s basis, K = %d, T = %d); lower minC or loosen the budget",
			MTSGridB, minC, mu, basis, s.K, s.Horizon)
	}
	return out, nil
}

// HuE1C is the M-TS variance multiplier of [HU] App E.1 (docs/reproduction-decisions.md A8) that
// gives M-TS-Gaussian with b pre-pulls the same paper GDP value as
// DP-TS-UCB(α) at horizon T:
//
//	c = T^{(1+α)/2} · (ln T)^{−1.5(1−α)} / (2·c0·(b+1)),
//
// i.e. [OU] Lemma 4's sqrt(T/(c(b+1))) set equal to [HU] Thm 4.4's
// sqrt(2c0·T^{(1−α)/2}·(ln T)^{1.5(1−α)}). [HU] §5.3's main text prints the
// square root of this expression, which does not equate the two (A8). With
// c0 = sqrt(2πe) and T = 1e6 it gives c = 1.1780 (α = 0, b = 1) and 60.462
// (α = 1, b = 2000), the values [HU] App E.1 reports.
func HuE1C(T int, alpha float64, b int, c0 float64) float64 {
	t := float64(T)
	lt := math.Log(t)
	return math.Pow(t, (1+alpha)/2) * math.Pow(lt, -1.5*(1-alpha)) / (2 * c0 * float64(b+1))
}

// ---------------------------------------------------------------------------
// DP-TS-UCB ([HU] Alg 1)

// calibrateDPTSUCB implements Descriptor.Calibrate for dp-ts-ucb: the
// smallest α ∈ [0, 1] whose value (paper: Thm 4.4; certified: A7) is ≤ the
// target, found by bisection (both values decrease in α for T > e³). p holds
// only the parameters the user gave; c0 keeps the user's value or its default. α given by the user leaves nothing to
// calibrate and is an error.
func calibrateDPTSUCB(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
	mu, basis, err := targetMu(t)
	if err != nil {
		return nil, fmt.Errorf("dp-ts-ucb: %w", err)
	}
	if a, ok := given(p, "alpha"); ok {
		return nil, fmt.Errorf("dp-ts-ucb: alpha = %v is given, so nothing is left to calibrate to the budget; drop alpha", a)
	}
	c0 := DefaultC0
	if v, ok := given(p, "c0"); ok {
		c0 = v
	}
	if err := checkDPTSUCB(DPTSUCBOptions{K: s.K, Horizon: s.Horizon, Alpha: 0, C0: c0}); err != nil {
		return nil, err
	}
	value := func(alpha float64) float64 {
		paper, cert := dptsucbValues(s.Horizon, alpha, c0)
		if basis == bandit.BasisCertified {
			return roundUp(cert) // as reported
		}
		return paper
	}
	if value(0) <= mu {
		return bandit.Params{"alpha": 0}, nil
	}
	if v1 := value(1); v1 > mu {
		return nil, fmt.Errorf("dp-ts-ucb: target %v-GDP is out of reach at T = %d, c0 = %v (%s basis): alpha in [0, 1] reaches [%.6g, %.6g]; lower c0 or loosen the budget",
			mu, s.Horizon, c0, basis, v1, value(0))
	}
	lo, hi := 0.0, 1.0 // value(lo) > μ ≥ value(hi)
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if value(mid) <= mu {
			hi = mid
		} else {
			lo = mid
		}
	}
	return bandit.Params{"alpha": hi}, nil
}

// ---------------------------------------------------------------------------
// Helpers shared by the policy files.

// roundUp returns x enlarged by 2⁻⁵⁰ relative (about 4 ulps): a GDP parameter
// computed with a handful of correctly rounded float64 operations is never
// reported below its exact value (docs/privacy-model.md rule 1, docs/accountant.md pitfall 2).
func roundUp(x float64) float64 { return x + x*0x1p-50 }

// gdpReport builds a Report whose certified and paper values are GDP μ's.
// paper < 0 means the source states no value.
func gdpReport(mechanism string, certified, paper float64, paperValid bool, derivation string) privacy.Report {
	r := privacy.Report{
		Mechanism:    mechanism,
		Neighbouring: privacy.EventLevel,
		Certified:    privacy.Guarantee{Notion: privacy.NotionGDP, Value: roundUp(certified)},
		PaperValid:   paperValid,
		Derivation:   derivation,
	}
	if paper >= 0 {
		r.Paper = &privacy.Guarantee{Notion: privacy.NotionGDP, Value: paper}
	}
	return r
}

// checkReward panics unless 0 ≤ x ≤ 1: the Policy contract makes an
// out-of-range reward the caller's error, and every privacy statement of this
// package assumes it (docs/privacy-model.md rule 6). The check does not allocate unless it
// fails.
func checkReward(policy string, arm, k int, x float64) {
	if !(x >= 0 && x <= 1) {
		panic(fmt.Sprintf("mab: %s.Update: reward %v outside [0, 1]", policy, x))
	}
	if arm < 0 || arm >= k {
		panic(fmt.Sprintf("mab: %s.Update: arm %d outside [0, %d)", policy, arm, k))
	}
}

// satInt converts an integer-valued parameter to int, saturating far beyond
// any valid value so that a huge input fails range checks with its sign kept.
func satInt(v float64) int {
	const lim = 1 << 53
	switch {
	case v >= lim:
		return lim
	case v <= -lim:
		return -lim
	}
	return int(v)
}

// checkK returns an error unless k ≥ 1.
func checkK(policy string, k int) error {
	if k < 1 {
		return fmt.Errorf("%s: number of arms K = %d must be ≥ 1", policy, k)
	}
	return nil
}

// snapshot is the JSON form of a policy's learning state: the policy name,
// the options it was built with (checked on restore) and the state. The
// generator is not part of it: the caller persists and restores the RNG
// separately (a PCG's MarshalBinary in simulation; the service reseeds its
// ChaCha8 from crypto/rand). The state holds raw statistics (reward sums and
// counts): it is for persistence only and must never be released (docs/privacy-model.md
// rule 2).
type snapshot[O comparable, S any] struct {
	Policy  string `json:"policy"`
	Options O      `json:"options"`
	State   S      `json:"state"`
}

func marshalSnapshot[O comparable, S any](name string, opts O, st S) ([]byte, error) {
	return json.Marshal(snapshot[O, S]{Policy: name, Options: opts, State: st})
}

// unmarshalSnapshot decodes data, rejecting unknown fields, another policy's
// snapshot, or options different from the receiver's.
func unmarshalSnapshot[O comparable, S any](data []byte, name string, opts O) (S, error) {
	var sn snapshot[O, S]
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sn); err != nil {
		return sn.State, fmt.Errorf("%s: decoding state: %w", name, err)
	}
	if sn.Policy != name {
		return sn.State, fmt.Errorf("%s: state belongs to policy %q", name, sn.Policy)
	}
	if sn.Options != opts {
		return sn.State, fmt.Errorf("%s: state was saved with options %+v, the policy has %+v", name, sn.Options, opts)
	}
	return sn.State, nil
}

// errState is wrapped by every error about an inconsistent restored state.
var errState = errors.New("inconsistent policy state")

// checkStateLen returns an error unless every slice length equals k.
func checkStateLen(name string, k int, lens ...int) error {
	for _, l := range lens {
		if l != k {
			return fmt.Errorf("%s: %w: per-arm slice of length %d for K = %d", name, errState, l, k)
		}
	}
	return nil
}

// servingArgmax is why the Gaussian Thompson samplers may be served: the
// posterior draws are only compared, never released or kept as releases.
const servingArgmax = "only the argmax of Gaussian draws is released; fast draws on a CSPRNG are acceptable (docs/privacy-model.md rule 4)"
