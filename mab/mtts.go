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
// Bandits", UAI 2015, Algorithm 2, with the fixes of docs/reproduction-decisions.md A20
// (docs/tree-based.md §1.8, experiment E10).
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
// (m_a is the number of the arm's rewards in the leaf, which is n_B when
// every decision's reward arrives before the next decision, as in
// simulation; in the service rewards may arrive late and out of order, and
// the round-robin advances with the rewards, so an arm's leaf can hold more
// or fewer than n_B of them. Each reward still enters one leaf only.)
//
// Phase C, Thompson sampling (lines 13–17). In each round r_a =
// clip(tree_a sum, 0, m_a), θ_a ~ Beta(r_a + 1, m_a − r_a + 1), pull the
// argmax (ties to the lowest index), insert the reward into tree_a and
// m_a += 1.
//
// Fixes and choices ([MT] Alg 2; docs/reproduction-decisions.md A20; docs/tree-based.md §1.8): the argmax of line 7 is over μ̂;
// m and Γ/Δ̂² get ceilings; the noisy sums are clipped into [0, m_a]; m_a
// counts only the pulls whose rewards are in the tree (the paper's n_a also
// counts phase-A pulls, biasing the Beta posterior toward failures); the
// budget guard ends phase A when the next batch would overrun T. Rewards in
// [0, 1] are binarised (r̃ ~ Bernoulli(r), the Beta–Bernoulli coin toss of
// docs/baselines.md §1.2 (Agrawal & Goyal 2012)) before they enter a tree, in phases B and C alike, so the
// posterior is a true Beta–Bernoulli one; for Bernoulli rewards this is the
// identity. Phase A uses the raw rewards, as the paper does.
//
// Feasibility ([MT] Alg 2; docs/tree-based.md §1.8): with k = 5, T = 1e5, ε = 1 the first batch
// alone needs 55,262 rounds and Γ ≈ 2.9·10⁵ > T, and the paper's own
// experiments skipped phase A and used a smaller, unreported random-pull
// count. skipGap (with the gap Δ̂ supplied as a public parameter) and
// randomPulls expose exactly that; with the defaults the policy is the
// paper's algorithm, which at such sizes never leaves phase B.
//
// Pulls after a tree is full (beyond the horizon) are not inserted: their
// rewards are never read. With K = 1 there is no gap to estimate and phase
// A is skipped.
//
// # Privacy ([MT] Alg 2; docs/tree-based.md §1.8; docs/reproduction-decisions.md A19)
//
// Paper (Thm 7): ε = ε/2 (phase A) + ε/2 (phases B–C). Certified: ε/(2k).
//
// Without phase A (skipGap, or K = 1) the trees get the whole budget:
// ε0 = ε/k, paper ε (k trees at ε/k, the paper's basic composition),
// certified ε/k. The paper's split reserves ε/2 for the gap estimates; when
// no gap is estimated that half would be left unspent, and a policy run
// "at ε" would in truth be ε/2-DP even by the paper's own accounting, so an
// equal-budget comparison (docs/reproductions.md E10 against mt-ucb at the same ε)
// would hand it twice the noise for nothing. Only phases B–C read data then,
// so the second case below is the whole argument, with this ε0.
//
// The argument:
//   - The neighbouring relation changes one round τ* (docs/privacy-model.md); the arm
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
// The guarantee covers the whole transcript at any length (a reward after
// its arm's tree is full is not read), so a privacy filter charges the
// certified ε/(2k) (ε/k without phase A) once, before the first Select, and
// 0 for every later step (bandit.Metered; whether the charge happened is
// part of the saved state).
//
// # Serving (grid = 1)
//
// With Grid set every kept noisy value, the phase-A batch means and every
// tree node, is released by the snapped discrete Laplace on a power-of-two
// grid (noise.GridLaplace, directly and through counting.SecureNoise:
// Mironov, "On significance of the least significant bits for differential
// privacy", CCS 2012; Canonne, Kamath & Steinke, "The discrete Gaussian for
// differential privacy", NeurIPS 2020), whose scale is enlarged to pay for
// the snapping, so each release is at least as private as the continuous
// Laplace it replaces and the certified ε is unchanged. A batch mean is
// released at its true sensitivity 1/m and ε/(2k) (the grid's snapping is
// paid relative to the sensitivity). The draws read the policy's generator;
// released values are kept in the state and never redrawn after a restore.
// With Grid unset (simulation) the releases are continuous Laplace draws,
// the same draws as before the grid existed.
//
// Complexity: phases A and B are O(1) per round except at batch ends (O(K));
// phase C costs K prefix sums, K Beta draws and an argmax. No allocation
// per step in simulation (a grid release allocates a few big.Int words),
// except at phase-A batch ends (one release mechanism per arm); the trees
// are allocated once, when phase B starts. Not safe for concurrent use.
type MTTS struct {
	opts  MTTSOptions
	r     *rand.Rand
	nz    counting.Noise // release noise on r (pureNoise)
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
	// Grid releases the batch means and tree nodes with the secure snapped
	// discrete Laplace (serving); false uses continuous Laplace draws
	// (simulation).
	Grid bool
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
	M       []int            `json:"m"`       // m_a: pulls whose rewards are in the tree (phase B: so far)
	Guarded bool             `json:"guarded"` // phase A ended by the budget guard
	Trees   []counting.State `json:"trees,omitempty"`
	Meter   pureMeter        `json:"meter"` // whether the filter charged the certified ε
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
	p := &MTTS{opts: opts, r: r, nz: pureNoise(opts.Grid, r), th: make([]float64, k), st: mttsState{
		Delta: 1, Pulls: make([]int, k), Sums: make([]float64, k), MuHat: make([]float64, k), M: make([]int, k),
	}}
	if opts.Grid {
		if err := p.checkGrid(); err != nil {
			return nil, err
		}
	}
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

// checkGrid checks that the grid mechanisms exist for the options (the
// grid step must stay well below the sensitivity: counting.SecureNoise
// refuses a scale above 2³⁶ times it), so that a release can never fail
// later: the trees (capacity ≤ T at ε0) and, when phase A runs, the batch
// means (ε/(2k), any m).
func (p *MTTS) checkGrid() error {
	k := p.opts.K
	eps0 := mttsEps0(p.opts.Epsilon, k, p.opts.SkipGap)
	if _, err := counting.NewLaplace(counting.LaplaceOptions{Capacity: p.opts.Horizon, Epsilon: eps0}, p.nz); err != nil {
		return fmt.Errorf("mt-ts: grid tree noise at ε0 = %v, T = %d: %w", eps0, p.opts.Horizon, err)
	}
	if k > 1 && !p.opts.SkipGap {
		e := p.opts.Epsilon / float64(2*k)
		if _, err := p.nz.Laplace(pureLapScale(1, e), 1); err != nil {
			return fmt.Errorf("mt-ts: grid noise of the phase-A means at ε/(2k) = %v: %w", e, err)
		}
	}
	return nil
}

// mttsBatchM is m = ⌈192·k·ln T/(ε·Δ̂²)⌉, the cycles of a phase-A batch at
// gap estimate d.
func mttsBatchM(o MTTSOptions, d float64) float64 {
	k, T := float64(o.K), float64(o.Horizon)
	return math.Ceil(192 * k * math.Log(T) / (o.Epsilon * d * d))
}

// startBatch starts the next phase-A batch, or ends phase A when the batch
// would overrun the horizon.
func (p *MTTS) startBatch() error {
	st := &p.st
	k, T := float64(p.opts.K), float64(p.opts.Horizon)
	m := mttsBatchM(p.opts, st.Delta)
	if float64(st.Tau)+k*m > T { // budget guard (Mishra & Thakurta, UAI 2015, Alg 2; docs/tree-based.md §1.8; not in the paper)
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
	// Laplace mechanism on a batch mean: sensitivity 1/m, budget ε/(2k),
	// scale 2k/(εm). The simulation keeps the float expression
	// (2k/m)/ε of earlier versions, so seeded runs reproduce bit for bit;
	// the grid mechanism is given the true sensitivity 1/m and ε/(2k),
	// because it pays for its snapping relative to the sensitivity.
	sens, eps := float64(2*k)/m, p.opts.Epsilon
	if p.opts.Grid {
		sens, eps = 1/m, p.opts.Epsilon/float64(2*k)
	}
	for a := range st.MuHat {
		st.MuHat[a] = pureRelease(p.nz, st.Sums[a]/m, sens, eps)
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
	trees, err := mtNewTrees("mt-ts", p.opts.K, capacity, mttsEps0(p.opts.Epsilon, p.opts.K, p.opts.SkipGap), p.nz)
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
	st.Meter.selected()
	if st.Phase != MTTSThompson {
		return st.Pos
	}
	return p.sample(p.r, p.th)
}

// sample draws every arm's phase-C Beta sample on r, in index order, and
// returns the argmax (ties to the lowest index, as pureArgmax); th, if not
// nil, receives the samples. It reads the trees' released prefix sums and
// the public counts m_a only, and changes nothing.
func (p *MTTS) sample(r *rand.Rand, th []float64) int {
	st := &p.st
	best, bv := 0, 0.0
	for a, tr := range p.trees {
		m := float64(st.M[a])
		s := min(max(tr.Sum(), 0), m) // clip into [0, m_a] (A20)
		v := noise.Beta(r, s+1, m-s+1)
		if th != nil {
			th[a] = v
		}
		if a == 0 || v > bv {
			best, bv = a, v
		}
	}
	return best
}

// SelectProbs states the distribution of the next Select
// (bandit.Propensities): in phases A and B the point mass on the
// round-robin's next arm (exact, 0 returned); in phase C the frequencies of
// draws independent repetitions of Select's rule (the Beta samples and
// their argmax) on r, and it returns draws. It changes neither the state
// nor the policy's generator.
//
// Privacy: the round-robin position is public; phase C reads the trees'
// prefix sums of released nodes and the public counts m_a, never the
// phase-A/B reward sums nor a tree's exact node sums, so the probabilities
// are post-processing of released state (docs/privacy-model.md rule 2).
func (p *MTTS) SelectProbs(_ [][]float64, out []float64, draws int, r *rand.Rand) int {
	out = out[:p.opts.K]
	if st := &p.st; st.Phase != MTTSThompson {
		return bandit.PointMass(out, st.Pos)
	}
	return bandit.EstimateProbs(out, draws, func() int { return p.sample(r, nil) })
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
		st.M[arm]++
		if p.advance(st.NB) {
			for a, tr := range p.trees {
				// One leaf per arm holding its m_a binarised rewards, n_B
				// of them when the rewards follow the round-robin (Alg 2
				// line 12); a neighbour moves it by ≤ 1. An arm without
				// any (only when rewards come out of order) gets a leaf of
				// 0, so that every tree holds one phase-B leaf.
				if err := tr.AddBatch(st.Sums[a], max(st.M[a], 1)); err != nil {
					panic("mab: mt-ts: phase-B leaf: " + err.Error()) // sums lie in [0, m_a]: unreachable
				}
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

// NextCost is the privacy filter's charge for the next Select: the
// certified ε/(2k) (ε/k without phase A) before the first Select, 0
// afterwards (the releases are that private for the whole transcript, at
// any length; see the type's doc).
func (p *MTTS) NextCost() privacy.Guarantee {
	return p.st.Meter.next(mttsEps0(p.opts.Epsilon, p.opts.K, p.opts.SkipGap))
}

// Privacy reports the certified ε/(2k) (ε/k without phase A) beside the
// paper's ε (docs/reproduction-decisions.md A19).
func (p *MTTS) Privacy() privacy.Report {
	return mttsReport(p.opts.Epsilon, p.opts.K, p.opts.SkipGap, p.opts.Grid)
}

func mttsReport(eps float64, k int, skipGap, grid bool) privacy.Report {
	eps0 := mttsEps0(eps, k, skipGap)
	if skipGap || k == 1 {
		return pureReport("mt-ts", eps, eps0, fmt.Sprintf(
			"ε/k-DP (event-level) for the whole transcript, at any horizon, ε/k = %g. "+
				"Mishra & Thakurta 2015 Alg 2 with docs/reproduction-decisions.md A20 fixes, phase A skipped (public Δ̂); docs/reproduction-decisions.md §1.8, A19. "+
				"Paper: ε = %g (no gap estimates, so phases B–C get the whole budget: k trees at ε0 = ε/k, basic "+
				"composition). Certified: ε/k = %g. A changed reward enters one leaf of one tree (the noise-shift "+
				"argument of mt-ucb); nothing else reads it (a reward after its arm's tree is full is not read), and "+
				"schedule, clipping and Beta draws are post-processing. %s",
			eps0, eps, eps0, pureNoiseWords(grid, "tree node")))
	}
	return pureReport("mt-ts", eps, eps0, fmt.Sprintf(
		"ε/(2k)-DP (event-level) for the whole transcript, at any horizon, ε/(2k) = %g. "+
			"Mishra & Thakurta 2015 Alg 2 with docs/reproduction-decisions.md A20 fixes; docs/reproduction-decisions.md §1.8, A19. Paper (Thm 7): ε = %g "+
			"(ε/2 phase A + ε/2 phases B–C). Certified: ε/(2k) = %g. A changed round lies in one phase: in phase A "+
			"its reward enters one batch mean (sensitivity 1/m, Lap(2k/(εm)): ε/(2k)); in phases B–C it enters one "+
			"leaf of one tree (ε0 = ε/(2k), the noise-shift argument of mt-ucb); nothing else reads it (a reward "+
			"after its arm's tree is full is not read), and schedule, clipping and Beta draws are post-processing. %s",
		eps0, eps, eps0, pureNoiseWords(grid, "phase-A batch mean and tree node")))
}

// MarshalJSON encodes the options and the learning state, including the
// trees' kept node values (not the generator). Batch sums and the trees'
// exact node sums are raw data (docs/privacy-model.md rule 2).
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
// anything; the policy keeps its generator. A state that does not fit is
// refused with an error naming what is wrong, and the policy is unchanged:
// options other than those the policy was built with (when it was built by
// NewMTTS), per-arm arrays of the wrong length, non-finite values, a phase
// schedule (Δ̂, τ, m, n_B, the phase starts) other than the one the options
// and the number of completed batches determine, counts that do not add
// up, or a tree whose kind, capacity, ε0, noise (grid or continuous) or
// nodes differ from what the options imply.
func (p *MTTS) UnmarshalJSON(b []byte) error {
	r := pureGen(p.r)
	j, q, err := pureDecode[mttsState]("mt-ts", b, r, NewMTTS)
	if err != nil {
		return err
	}
	if p.r != nil && j.Options != p.opts {
		return fmt.Errorf("mt-ts: decoding state: the stored options %+v differ from this policy's %+v; a state restores only into a policy built with the same options", j.Options, p.opts)
	}
	st := j.State
	if err := st.check(j.Options); err != nil {
		return fmt.Errorf("mt-ts: decoding state: %w", err)
	}
	q.trees = nil
	if st.Phase != MTTSGapEstimation {
		k := j.Options.K
		q.trees = make([]*counting.Counter, k)
		capacity := max(j.Options.Horizon-st.Tau, 1)
		if err := mtRestoreTrees(q.trees, st.Trees, mttsEps0(j.Options.Epsilon, k, j.Options.SkipGap), capacity, q.nz); err != nil {
			return fmt.Errorf("mt-ts: decoding state: %w", err)
		}
		for a, tr := range q.trees {
			want := 0 // phase B: no leaf yet
			if st.Phase == MTTSThompson {
				want = 1 // the phase-B leaf, then one leaf per tree pull (each counted in m_a)
			}
			if c := tr.Count(); c < want || (st.Phase == MTTSRandomPulls && c != 0) || c-want > st.M[a] {
				return fmt.Errorf("mt-ts: decoding state: arm %d's tree holds %d leaves in phase %d with m_a = %d", a, c, st.Phase, st.M[a])
			}
		}
	}
	st.Trees = nil
	q.st = st
	*p = *q
	return nil
}

// check checks a stored state against the options: lengths, finiteness,
// and the public phase schedule, which the options and the number of
// completed phase-A batches determine (recomputed here with the same float
// operations as the run). The trees are checked by the caller.
func (st *mttsState) check(o MTTSOptions) error {
	k := o.K
	if len(st.Pulls) != k || len(st.Sums) != k || len(st.MuHat) != k || len(st.M) != k {
		return fmt.Errorf("per-arm arrays have %d pulls, %d sums, %d means and %d counts, want K = %d of each",
			len(st.Pulls), len(st.Sums), len(st.MuHat), len(st.M), k)
	}
	if err := mtFinite("sum", st.Sums); err != nil {
		return err
	}
	if err := mtFinite("released mean", st.MuHat); err != nil {
		return err
	}
	if err := pureCounts(st.Steps, st.Pulls); err != nil {
		return err
	}
	if st.Phase < MTTSGapEstimation || st.Phase > MTTSThompson {
		return fmt.Errorf("phase %d is not 1, 2 or 3", st.Phase)
	}
	if st.Pos < 0 || st.Pos >= k {
		return fmt.Errorf("round-robin position %d outside [0, K = %d)", st.Pos, k)
	}
	phaseA := k > 1 && !o.SkipGap
	// Phase A halves Δ̂ = 2⁻ⁿ once per batch; after 1074 halvings Δ̂ is 0,
	// the batch size infinite and the budget guard ends the phase, so no
	// run completes more batches than that (a very large ε with close arms
	// does run past 64).
	if (st.Phase == MTTSGapEstimation && !phaseA) || st.Batches < 0 || st.Batches > 1075 || (!phaseA && st.Batches != 0) {
		return fmt.Errorf("phase %d after %d gap batches does not fit the options (phase A runs: %v)", st.Phase, st.Batches, phaseA)
	}
	// The schedule the options imply after st.Batches batches.
	d, tau := 1.0, 0
	if o.SkipGap {
		d = o.Gap
	}
	for range st.Batches {
		tau += k * int(mttsBatchM(o, d))
		d /= 2
	}
	if st.Delta != d || st.Tau != tau || tau > o.Horizon {
		return fmt.Errorf("Δ̂ = %v and τ = %d after %d batches, want %v and %d", st.Delta, st.Tau, st.Batches, d, tau)
	}
	for a := range k {
		hi := float64(st.Pulls[a])
		if st.Phase == MTTSRandomPulls {
			hi = float64(st.M[a])
		}
		if st.Phase == MTTSThompson {
			hi = 0
		}
		if !(st.Sums[a] >= 0 && st.Sums[a] <= hi) {
			return fmt.Errorf("arm %d: running sum %v outside [0, %v]", a, st.Sums[a], hi)
		}
		if st.M[a] < 0 || st.M[a] > st.Pulls[a] || (st.Phase == MTTSGapEstimation && st.M[a] != 0) {
			return fmt.Errorf("arm %d: m_a = %d does not fit its %d pulls in phase %d", a, st.M[a], st.Pulls[a], st.Phase)
		}
	}
	inPhase := st.Steps - st.Tau // steps since phase B began (phase A: since the running batch began, below)
	switch st.Phase {
	case MTTSGapEstimation:
		m := mttsBatchM(o, d)
		if st.Guarded || st.NB != 0 || st.BStart != 0 || st.CStart != 0 || len(st.Trees) != 0 ||
			st.BatchM != int(m) || float64(tau)+float64(k)*m > float64(o.Horizon) ||
			st.Cycles < 0 || st.Cycles >= st.BatchM || inPhase != st.Cycles*k+st.Pos {
			return fmt.Errorf("phase A state (batch m = %d, cycle %d, position %d, %d steps) does not fit the schedule (m = %v, τ = %d)",
				st.BatchM, st.Cycles, st.Pos, st.Steps, m, tau)
		}
		return nil
	}
	nb := o.RandomPulls
	if nb <= 0 {
		nb = int(min(max(math.Ceil(mttsGammaTS(o.Horizon, o.Epsilon)/(d*d)), 1), 1<<50))
	}
	if st.NB != nb || st.BStart != tau || len(st.Trees) != k {
		return fmt.Errorf("phase %d with n_B = %d, begun at round %d, %d trees; want n_B = %d, begun at τ = %d, K trees",
			st.Phase, st.NB, st.BStart, len(st.Trees), nb, tau)
	}
	if st.Phase == MTTSRandomPulls {
		sum := 0
		for _, m := range st.M {
			sum += m
		}
		if st.CStart != 0 || st.Cycles < 0 || st.Cycles >= st.NB || inPhase != st.Cycles*k+st.Pos || sum != inPhase {
			return fmt.Errorf("phase B state (cycle %d, position %d, %d steps, Σm_a = %d) does not fit n_B = %d from round %d",
				st.Cycles, st.Pos, st.Steps, sum, st.NB, st.BStart)
		}
		return nil
	}
	if st.CStart != st.BStart+k*st.NB || st.Steps < st.CStart {
		return fmt.Errorf("phase C began at round %d, want τ + K·n_B = %d (steps %d)", st.CStart, st.BStart+k*st.NB, st.Steps)
	}
	return nil
}

func init() {
	register(bandit.Descriptor{
		Name:    "mt-ts",
		Summary: "Mishra–Thakurta private TS: gap estimation, random pulls, Beta TS on per-arm Laplace trees",
		Source:  "Mishra & Thakurta, UAI 2015, Alg 2 with docs/reproduction-decisions.md A20 fixes (docs/tree-based.md §1.8)",
		Private: true,
		Params: []bandit.Param{
			{Name: "epsilon", Default: 1, Min: pureMinEpsilon, Max: math.Inf(1), Doc: "the paper's ε (certified ε/(2k); ε/k with skipGap, whose trees get phase A's half too)"},
			{Name: "skipGap", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1: skip phase A and use gap as Δ̂"},
			{Name: "gap", Default: 1, Min: 1e-6, Max: 1, Doc: "Δ̂ used with skipGap (public)"},
			{Name: "randomPulls", Default: 0, Min: 0, Max: math.Inf(1), Integer: true, Doc: "phase-B pulls per arm; 0 selects ⌈Γ/Δ̂²⌉ (fewer pulls lower typical regret, but the tree noise, drawn once, can then bury the best arm for good in a few runs: check the median and max)"},
			gridParam,
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewMTTS(MTTSOptions{K: s.K, Horizon: s.Horizon, Epsilon: p["epsilon"], SkipGap: p["skipGap"] == 1,
				Gap: p["gap"], RandomPulls: int(min(p["randomPulls"], 1<<50)), Grid: p["grid"] == 1}, r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			if err := pureCheckK("mt-ts", s.K); err != nil {
				return privacy.Report{}, err
			}
			if err := pureCheckEpsilon("mt-ts", p["epsilon"]); err != nil {
				return privacy.Report{}, err
			}
			return mttsReport(p["epsilon"], s.K, p["skipGap"] == 1, p["grid"] == 1), nil
		},
		Calibrate: func(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
			if err := pureCheckK("mt-ts", s.K); err != nil {
				return nil, err
			}
			return pureCalibrate("mt-ts", t, mttsShare(s.K, p["skipGap"] == 1))
		},
		Serving: pureServing,
	})
}
