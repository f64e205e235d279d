package mab

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// Phases of [MTTS].
const (
	MTTSGapEstimation = 1 // phase A: gap estimation with Laplace batch means
	MTTSRandomPulls   = 2 // phase B: round-robin pulls, one tree leaf per arm
	MTTSThompson      = 3 // phase C: Beta Thompson sampling on the trees
)

// MTTS is the differentially private Thompson sampling of Mishra &
// Thakurta, "(Nearly) Optimal Differentially Private Stochastic Multi-Arm
// Bandits", UAI 2015, Algorithm 2, with the fixes of SPEC.md A20 (SPEC.md
// §1.8, experiment E10).
//
// # Algorithm
//
// Phase A, gap estimation (Alg 2 lines 1–8). Start with Δ̂ = 1, τ = 0 and
// repeat: m = ⌈192·k·ln T/(ε·Δ̂²)⌉; if τ + k·m > T stop (budget guard, not in
// the paper); pull every arm m times (round-robin, fresh samples); release
// μ̂_a = batch mean + Lap(2k/(ε·m)); Δ̂ ← Δ̂/2, τ ← τ + k·m; let a(1), a(2) be
// the top two arms by μ̂ (line 7 says true means: A20); until
// |μ̂_{a(1)} − μ̂_{a(2)}| > Δ̂.
//
// Phase B, random pulls (lines 9–12). Build one Laplace tree per arm
// (package counting) with T − τ leaves at ε0 = ε/(2k); Γ = 192·ln³T/ε. Pull
// every arm n_B = ⌈Γ/Δ̂²⌉ times (round-robin; randomPulls overrides n_B)
// and insert each arm's sum as a single leaf (counting.AddBatch); m_a = n_B.
//
// Phase C, Thompson sampling (lines 13–17). In each round r_a =
// clip(tree_a sum, 0, m_a), θ_a ~ Beta(r_a + 1, m_a − r_a + 1), pull the
// argmax (ties to the lowest index), insert the reward into tree_a and
// m_a += 1.
//
// Fixes and choices (SPEC.md A20, §1.8): the argmax of line 7 is over μ̂;
// m and Γ/Δ̂² get ceilings; the noisy sums are clipped into [0, m_a]; m_a
// counts only the pulls whose rewards are in the tree (the paper's n_a also
// counts phase-A pulls, biasing the Beta posterior toward failures); the
// budget guard ends phase A when the next batch would overrun T. Rewards in
// [0, 1] are binarised (r̃ ~ Bernoulli(r), the Beta–Bernoulli coin toss of
// SPEC.md §1.2) before they enter a tree, in phases B and C alike, so the
// posterior is a true Beta–Bernoulli one; for Bernoulli rewards this is the
// identity. Phase A uses the raw rewards, as the paper does.
//
// Feasibility (SPEC.md §1.8): with k = 5, T = 1e5, ε = 1 the first batch
// alone needs 55,262 rounds and Γ ≈ 2.9·10⁵ > T, and the paper's own
// experiments skipped phase A and used a smaller, unreported random-pull
// count. skipGap (with the gap Δ̂ supplied as a public parameter) and
// randomPulls expose exactly that; with the defaults the policy is the
// paper's algorithm, which at such sizes never leaves phase B.
//
// Pulls after a tree is full (beyond the horizon) are not inserted. With
// K = 1 there is no gap to estimate and phase A is skipped.
//
// # Privacy (SPEC.md §1.8, A19)
//
// Paper (Thm 7): ε = ε/2 (phase A) + ε/2 (phases B–C). Certified: ε/(2k).
//
// Without phase A (skipGap, or K = 1) the trees get the whole budget:
// ε0 = ε/k, paper ε (k trees at ε/k, the paper's basic composition),
// certified ε/k. The paper's split reserves ε/2 for the gap estimates; when
// no gap is estimated that half would be left unspent, and a policy run
// "at ε" would in truth be ε/2-DP even by the paper's own accounting, so an
// equal-budget comparison (SPEC.md §3 E10 against mt-ucb at the same ε)
// would hand it twice the noise for nothing. Only phases B–C read data then,
// so the second case below is the whole argument, with this ε0.
//
// The argument:
//   - The neighbouring relation changes one round τ* (SPEC.md §0); the arm
//     pulled then, its phase and its batch or leaf are fixed by the releases
//     before τ*, so they are the same in both worlds.
//   - If τ* is in phase A, the changed reward enters exactly one batch mean
//     of one arm, of sensitivity 1/m, released with Lap(2k/(εm)): that
//     release is ε/(2k)-DP, and every other release (other arms, other
//     batches, the trees) reads other rewards. The paper's ε/2 for phase A
//     multiplies this by k through "parallel composition" over the arms,
//     which here costs nothing extra.
//   - If τ* is in phase B or C, the changed reward enters exactly one leaf of
//     one tree (a phase-B batch leaf moves by ≤ 1 too), so shifting the ≤ L
//     node noises containing that leaf (b = L/ε0) maps one world's noise to
//     the other's with the same transcript at density ratio ≤ e^{ε0},
//     ε0 = ε/(2k) (ε/k without phase A); the other trees never see it (see
//     [MTUCB]).
//   - A round is in one phase only, so the two cases do not compose: the
//     transcript is ε0-DP. The binarising coin keeps the leaf's change
//     ≤ 1 for every coin value. The stopping rule, τ, the trees' capacity,
//     the Beta draws and the argmax are post-processing.
//
// Complexity: phases A and B are O(1) per round except at batch ends (O(K));
// phase C costs K prefix sums, K Beta draws and an argmax. No allocation
// per step; the trees are allocated once, when phase B starts. Not safe for
// concurrent use.
type MTTS struct {
	opts  MTTSOptions
	r     *rand.Rand
	trees []*counting.Counter
	th    []float64
	st    mttsState
}

// MTTSOptions configures Mishra–Thakurta private TS.
type MTTSOptions struct {
	K       int     // number of arms, ≥ 1
	Horizon int     // T ≥ 2 (the batch sizes, Γ and the trees depend on it)
	Epsilon float64 // the paper's ε, in [1e-6, ∞) (theory: ε < 1)
	// SkipGap skips phase A and uses Gap as Δ̂ (public, chosen without data).
	SkipGap bool
	// Gap is Δ̂ in (0, 1] when SkipGap is set (default 1); unused otherwise.
	Gap float64
	// RandomPulls, when > 0, replaces ⌈Γ/Δ̂²⌉ as the number of phase-B pulls
	// per arm.
	RandomPulls int
}

type mttsState struct {
	Phase   int              `json:"phase"`
	Delta   float64          `json:"delta_hat"` // Δ̂
	Tau     int              `json:"tau"`       // rounds of phase A (τ)
	Steps   int              `json:"steps"`
	Pulls   []int            `json:"pulls"`
	Batches int              `json:"batches"` // phase-A batches completed
	BatchM  int              `json:"batch_m"` // m of the running phase-A batch
	Pos     int              `json:"pos"`     // next arm of the round-robin (phases A, B)
	Cycles  int              `json:"cycles"`  // completed round-robin cycles (phases A, B)
	Sums    []float64        `json:"sums"`    // running batch / phase-B sums (not released)
	MuHat   []float64        `json:"mu_hat"`  // released μ̂ of the last phase-A batch
	NB      int              `json:"n_b"`     // phase-B pulls per arm
	BStart  int              `json:"b_start"` // round at which phase B began
	CStart  int              `json:"c_start"` // round at which phase C began (0: not yet)
	M       []int            `json:"m"`       // m_a: pulls whose rewards are in the tree
	Guarded bool             `json:"guarded"` // phase A ended by the budget guard
	Trees   []counting.State `json:"trees,omitempty"`
}

// NewMTTS returns the private TS, drawing all its randomness from r. It
// returns an error naming the first parameter outside its valid range.
func NewMTTS(opts MTTSOptions, r *rand.Rand) (*MTTS, error) {
	const name = "mt-ts"
	if err := pureCheckK(name, opts.K); err != nil {
		return nil, err
	}
	if opts.Horizon < 2 {
		return nil, fmt.Errorf("%s: horizon T = %d is outside its valid range [2, ∞)", name, opts.Horizon)
	}
	if err := pureCheckEpsilon(name, opts.Epsilon); err != nil {
		return nil, err
	}
	if opts.SkipGap && !(opts.Gap > 0 && opts.Gap <= 1) {
		return nil, fmt.Errorf("%s: parameter gap = %v is outside its valid range (0, 1] (the Δ̂ used with skipGap)", name, opts.Gap)
	}
	if opts.RandomPulls < 0 {
		return nil, fmt.Errorf("%s: parameter randomPulls = %d is outside its valid range [0, ∞) (0 selects ⌈Γ/Δ̂²⌉)", name, opts.RandomPulls)
	}
	if r == nil {
		return nil, errors.New(name + ": needs a non-nil *rand.Rand")
	}
	k := opts.K
	p := &MTTS{opts: opts, r: r, th: make([]float64, k), st: mttsState{
		Delta: 1, Pulls: make([]int, k), Sums: make([]float64, k), MuHat: make([]float64, k), M: make([]int, k),
	}}
	switch {
	case opts.SkipGap:
		p.st.Delta = opts.Gap
		if err := p.enterB(); err != nil {
			return nil, err
		}
	case k == 1:
		if err := p.enterB(); err != nil {
			return nil, err
		}
	default:
		p.st.Phase = MTTSGapEstimation
		if err := p.startBatch(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// mttsShare is the divisor of ε that gives the trees' budget ε0, which is
// also the certified ε: 2k when phase A runs (half the budget is the gap
// estimates'), k when it does not (skipGap, or K = 1).
func mttsShare(k int, skipGap bool) float64 {
	if skipGap || k == 1 {
		return float64(k)
	}
	return float64(2 * k)
}

// mttsEps0 is the trees' budget ε/mttsShare, which is also the certified ε.
func mttsEps0(eps float64, k int, skipGap bool) float64 { return eps / mttsShare(k, skipGap) }

// startBatch starts the next phase-A batch, or ends phase A when the batch
// would overrun the horizon.
func (p *MTTS) startBatch() error {
	st := &p.st
	k, T := float64(p.opts.K), float64(p.opts.Horizon)
	m := math.Ceil(192 * k * math.Log(T) / (p.opts.Epsilon * st.Delta * st.Delta))
	if float64(st.Tau)+k*m > T { // budget guard (SPEC.md §1.8; not in the paper)
		st.Guarded = true
		return p.enterB()
	}
	st.BatchM, st.Pos, st.Cycles = int(m), 0, 0
	clear(st.Sums)
	return nil
}

// endBatch releases the batch means and applies the stopping rule.
func (p *MTTS) endBatch() error {
	st := &p.st
	k, m := p.opts.K, float64(st.BatchM)
	// Laplace mechanism on a batch mean: sensitivity 1/m, budget ε/(2k).
	scale := pureLapScale(float64(2*k)/m, p.opts.Epsilon)
	for a := range st.MuHat {
		st.MuHat[a] = st.Sums[a]/m + noise.Laplace(p.r, scale)
	}
	st.Delta /= 2
	st.Tau += k * st.BatchM
	st.Batches++
	a1 := pureArgmax(st.MuHat)
	a2 := -1
	for a, v := range st.MuHat {
		if a != a1 && (a2 < 0 || v > st.MuHat[a2]) {
			a2 = a
		}
	}
	if math.Abs(st.MuHat[a1]-st.MuHat[a2]) > st.Delta {
		return p.enterB()
	}
	return p.startBatch()
}

// mttsGammaTS is Γ = 192·ln³T/ε of Alg 2 line 11.
func mttsGammaTS(T int, eps float64) float64 {
	l := math.Log(float64(T))
	return 192 * l * l * l / eps
}

// enterB builds the trees and starts phase B.
func (p *MTTS) enterB() error {
	st := &p.st
	st.Phase = MTTSRandomPulls
	st.BStart = st.Steps
	st.Pos, st.Cycles = 0, 0
	clear(st.Sums)
	if p.opts.RandomPulls > 0 {
		st.NB = p.opts.RandomPulls
	} else {
		nb := math.Ceil(mttsGammaTS(p.opts.Horizon, p.opts.Epsilon) / (st.Delta * st.Delta))
		st.NB = int(min(max(nb, 1), 1<<50))
	}
	capacity := max(p.opts.Horizon-st.Tau, 1)
	trees, err := mtNewTrees("mt-ts", p.opts.K, capacity, mttsEps0(p.opts.Epsilon, p.opts.K, p.opts.SkipGap), p.r)
	if err != nil {
		return err
	}
	p.trees = trees
	return nil
}

// binarise returns 1 with probability x, else 0 (x in [0, 1]).
func (p *MTTS) binarise(x float64) float64 {
	if p.r.Float64() < x {
		return 1
	}
	return 0
}

// Select returns the next arm of the current phase.
func (p *MTTS) Select() int {
	st := &p.st
	if st.Phase != MTTSThompson {
		return st.Pos
	}
	for a, tr := range p.trees {
		m := float64(st.M[a])
		s := min(max(tr.Sum(), 0), m) // clip into [0, m_a] (A20)
		p.th[a] = noise.Beta(p.r, s+1, m-s+1)
	}
	return pureArgmax(p.th)
}

// Update records the reward of the arm just played. It panics on a reward
// outside [0, 1] (the caller's contract).
func (p *MTTS) Update(arm int, reward float64) {
	pureCheckReward(reward)
	st := &p.st
	st.Steps++
	st.Pulls[arm]++
	switch st.Phase {
	case MTTSGapEstimation:
		st.Sums[arm] += reward
		if p.advance(st.BatchM) {
			if err := p.endBatch(); err != nil {
				panic("mab: mt-ts: " + err.Error()) // options were validated: unreachable
			}
		}
	case MTTSRandomPulls:
		st.Sums[arm] += p.binarise(reward)
		if p.advance(st.NB) {
			for a, tr := range p.trees {
				// One leaf per arm holding its n_B binarised rewards
				// (Alg 2 line 12); a neighbour moves it by ≤ 1.
				if err := tr.AddBatch(st.Sums[a], st.NB); err != nil {
					panic("mab: mt-ts: phase-B leaf: " + err.Error()) // sums lie in [0, n_B]: unreachable
				}
				st.M[a] = st.NB
			}
			clear(st.Sums)
			st.Phase = MTTSThompson
			st.CStart = st.Steps
		}
	default:
		if mtInsert(p.trees[arm], p.binarise(reward)) {
			st.M[arm]++
		}
	}
}

// advance moves the round-robin on by one pull and reports whether the
// current block of n cycles is complete.
func (p *MTTS) advance(n int) bool {
	st := &p.st
	st.Pos++
	if st.Pos < p.opts.K {
		return false
	}
	st.Pos = 0
	st.Cycles++
	return st.Cycles >= n
}

// Phase returns the current phase (MTTSGapEstimation, MTTSRandomPulls or
// MTTSThompson).
func (p *MTTS) Phase() int { return p.st.Phase }

// Schedule returns the public facts of the phase schedule so far: τ (the
// rounds of phase A), the gap estimate Δ̂, the phase-B pulls per arm n_B,
// the rounds at which phases B and C began (C: 0 until it has), and whether
// phase A was ended by the budget guard.
func (p *MTTS) Schedule() (tau int, gap float64, nB, bStart, cStart int, guarded bool) {
	st := &p.st
	return st.Tau, st.Delta, st.NB, st.BStart, st.CStart, st.Guarded
}

// Privacy reports the certified ε/(2k) (ε/k without phase A) beside the
// paper's ε (SPEC.md A19).
func (p *MTTS) Privacy() privacy.Report { return mttsReport(p.opts.Epsilon, p.opts.K, p.opts.SkipGap) }

func mttsReport(eps float64, k int, skipGap bool) privacy.Report {
	eps0 := mttsEps0(eps, k, skipGap)
	if skipGap || k == 1 {
		return pureReport("mt-ts", eps, eps0, fmt.Sprintf(
			"Mishra & Thakurta 2015 Alg 2 with SPEC.md A20 fixes, phase A skipped (public Δ̂); SPEC.md §1.8, A19. "+
				"Paper: ε = %g (no gap estimates, so phases B–C get the whole budget: k trees at ε0 = ε/k, basic "+
				"composition). Certified: ε/k = %g. A changed reward enters one leaf of one tree (the noise-shift "+
				"argument of mt-ucb); nothing else reads it, and schedule, clipping and Beta draws are post-processing.",
			eps, eps0))
	}
	return pureReport("mt-ts", eps, eps0, fmt.Sprintf(
		"Mishra & Thakurta 2015 Alg 2 with SPEC.md A20 fixes; SPEC.md §1.8, A19. Paper (Thm 7): ε = %g "+
			"(ε/2 phase A + ε/2 phases B–C). Certified: ε/(2k) = %g. A changed round lies in one phase: in phase A "+
			"its reward enters one batch mean (sensitivity 1/m, Lap(2k/(εm)): ε/(2k)); in phases B–C it enters one "+
			"leaf of one tree (ε0 = ε/(2k), the noise-shift argument of mt-ucb); nothing else reads it, and "+
			"schedule, clipping and Beta draws are post-processing.", eps, eps0))
}

// MarshalJSON encodes the options and the learning state, including the
// trees' kept node values (not the generator). Batch sums and the trees'
// exact node sums are raw data (DESIGN.md rule 2).
func (p *MTTS) MarshalJSON() ([]byte, error) {
	j := pureJSON[MTTSOptions, mttsState]{Options: p.opts, State: p.st}
	j.State.Trees = nil
	if p.trees != nil {
		j.State.Trees = make([]counting.State, len(p.trees))
		for a, tr := range p.trees {
			j.State.Trees[a] = tr.State()
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON restores a state written by MarshalJSON without redrawing
// anything; the policy keeps its generator.
func (p *MTTS) UnmarshalJSON(b []byte) error {
	r := pureGen(p.r)
	j, q, err := pureDecode[mttsState]("mt-ts", b, r, NewMTTS)
	if err != nil {
		return err
	}
	k := j.Options.K
	st := j.State
	if len(st.Pulls) != k || len(st.Sums) != k || len(st.MuHat) != k || len(st.M) != k ||
		st.Phase < MTTSGapEstimation || st.Phase > MTTSThompson || st.Pos < 0 || st.Pos >= k ||
		!(st.Delta > 0 && st.Delta <= 1) || st.Tau < 0 || st.Tau > j.Options.Horizon {
		return errors.New("mt-ts: decoding state: inconsistent with the options")
	}
	q.trees = nil
	if st.Phase != MTTSGapEstimation {
		if len(st.Trees) != k {
			return errors.New("mt-ts: decoding state: phases B–C need one tree per arm")
		}
		q.trees = make([]*counting.Counter, k)
		capacity := max(j.Options.Horizon-st.Tau, 1)
		if err := mtRestoreTrees(q.trees, st.Trees, mttsEps0(j.Options.Epsilon, k, j.Options.SkipGap), capacity, r); err != nil {
			return fmt.Errorf("mt-ts: decoding state: %w", err)
		}
	}
	st.Trees = nil
	q.st = st
	*p = *q
	return nil
}

func init() {
	register(bandit.Descriptor{
		Name:    "mt-ts",
		Summary: "Mishra–Thakurta private TS: gap estimation, random pulls, Beta TS on per-arm Laplace trees",
		Source:  "Mishra & Thakurta, UAI 2015, Alg 2 with SPEC.md A20 fixes (SPEC.md §1.8)",
		Private: true,
		Params: []bandit.Param{
			{Name: "epsilon", Default: 1, Min: pureMinEpsilon, Max: math.Inf(1), Doc: "the paper's ε (certified ε/(2k); ε/k with skipGap, whose trees get phase A's half too)"},
			{Name: "skipGap", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1: skip phase A and use gap as Δ̂"},
			{Name: "gap", Default: 1, Min: 1e-6, Max: 1, Doc: "Δ̂ used with skipGap (public)"},
			{Name: "randomPulls", Default: 0, Min: 0, Max: math.Inf(1), Integer: true, Doc: "phase-B pulls per arm; 0 selects ⌈Γ/Δ̂²⌉ (fewer pulls lower typical regret, but the tree noise, drawn once, can then bury the best arm for good in a few runs: check the median and max)"},
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewMTTS(MTTSOptions{K: s.K, Horizon: s.Horizon, Epsilon: p["epsilon"], SkipGap: p["skipGap"] == 1,
				Gap: p["gap"], RandomPulls: int(min(p["randomPulls"], 1<<50))}, r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			if err := pureCheckK("mt-ts", s.K); err != nil {
				return privacy.Report{}, err
			}
			if err := pureCheckEpsilon("mt-ts", p["epsilon"]); err != nil {
				return privacy.Report{}, err
			}
			return mttsReport(p["epsilon"], s.K, p["skipGap"] == 1), nil
		},
		Calibrate: func(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
			if err := pureCheckK("mt-ts", s.K); err != nil {
				return nil, err
			}
			return pureCalibrate("mt-ts", t, mttsShare(s.K, p["skipGap"] == 1))
		},
	})
}
