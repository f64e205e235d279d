package mab

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/privacy"
)

// MTUCB is the differentially private UCB of Mishra & Thakurta, "(Nearly)
// Optimal Differentially Private Stochastic Multi-Arm Bandits", UAI 2015,
// Algorithm 1 ([MT] Alg 1; docs/tree-based.md §1.7, experiment E10).
//
// # Algorithm
//
// One binary-tree counter per arm (package counting, Laplace nodes,
// capacity T, ε0 = ε/k) holds that arm's rewards, one leaf per pull; the
// algorithm reads rewards only through the trees' prefix sums. Pull each arm
// once. Then in round t let r_a = clip(tree_a sum, 0, n_a) (the noisy sum,
// clipped into its feasible range; post-processing) and pull
//
//	argmax_a  r_a/n_a + w_a(t) + Γ/n_a
//
// (ties to the lowest index), inserting the reward into tree_a. The width
// is w = sqrt(2 ln t/n_a) (Alg 1, line 10; width = 0), or, as in the paper's
// §5 experiments, the Chapelle–Li width sqrt(r_a·ln t)/n_a + ln t/n_a
// (width = 1). The confidence relaxation is
//
//	Γ = k·ln²T·ln(k·T·ln T/γ)/ε   (Alg 1, line 7)
//
// with failure probability γ (default 1/T; the paper gives none) and ln for
// the unspecified log base ([MT] Alg 1; docs/tree-based.md §1.7). The experiments used a tuned Γ
// whose value is not reported: the gamma parameter overrides Γ ("tuned Γ";
// Γ does not read data, so tuning it by hand costs no privacy, [MT] §5).
//
// Departures from the pseudo-code, all post-processing: the noisy sums are
// clipped into [0, n_a] (docs/tree-based.md §1.7; the paper does not clip); the tree has
// L = ⌊log₂T⌋+1 levels with Lap(L/ε0) node noise (package counting,
// docs/accountant.md pitfall 9), which for T not a power of two is one level fewer
// than the ⌈log₂T⌉+1 of the textbook sizing (docs/accountant.md §2.5) and so a little less noise for the same ε0.
// A pull after the tree is full (beyond the horizon T) is not inserted: its
// reward is never read.
//
// # Privacy ([MT] Alg 1; docs/tree-based.md §1.7; docs/reproduction-decisions.md A19)
//
// Paper (Thm 3): ε, by basic composition of k trees at ε0 = ε/k.
// Certified: ε0 = ε/k, by docs/reproduction-decisions.md A19. The argument, written out:
//   - Neighbouring reward streams differ in round τ only (docs/privacy-model.md), so the
//     observed reward X_τ(a_τ) moves by at most 1. Every decision up to τ is
//     a function of tree outputs released before τ, so a_τ and n_{a_τ} (hence
//     the leaf position p = n_{a_τ}+1 in tree a_τ) are the same in both worlds.
//   - Fix the node noise of all trees. The transcript is a deterministic
//     function of the released node values (the argmax is deterministic).
//     Map the noise Z to Z' by shifting only the ≤ L nodes of tree a_τ that
//     contain leaf p, by the change of that leaf. Then every released node
//     value is identical in the two worlds (nodes containing p are completed
//     only after p is inserted, so the history up to τ is unchanged), hence
//     so is the transcript; the map is a bijection with density ratio at
//     most exp(L·1/b) = exp(ε0) since b = L/ε0.
//   - No other tree ever sees the changed reward, so no factor k: the whole
//     transcript is ε0 = ε/k-DP. Basic composition over the k trees would
//     charge every tree for a change that only one of them sees.
//
// The report certifies ε/k and shows the paper's ε beside it (valid, k
// times larger).
//
// The guarantee covers the whole transcript at any length: the trees hold
// T leaves each, and a pull after its arm's tree is full is not inserted, so
// its reward is never read and nothing is released beyond what the trees
// were calibrated for. A privacy filter therefore charges the certified ε/k
// once, before the first Select, and 0 for every later step, beyond the
// horizon included (bandit.Metered; whether the charge happened is part of
// the saved state).
//
// # Serving (grid = 1)
//
// With Grid set every tree node is released by the snapped discrete
// Laplace on a power-of-two grid (noise.GridLaplace through
// counting.SecureNoise: Mironov, "On significance of the least significant
// bits for differential privacy", CCS 2012; Canonne, Kamath & Steinke,
// "The discrete Gaussian for differential privacy", NeurIPS 2020), whose
// scale is enlarged to pay for the snapping, so every node is at least as
// private as Lap(L/ε0) and the certified ε/k is unchanged. The draws read the
// policy's generator; released nodes are kept in the state and never
// redrawn after a restore. With Grid unset (simulation) the nodes are
// continuous Laplace draws, the same draws as before the grid existed.
//
// Complexity: Select is K prefix sums (≤ L additions each) and an argmax;
// Update one tree insertion (one Laplace draw, O(1) amortised). No
// allocation after construction in simulation (a grid release allocates a
// few big.Int words). Not safe for concurrent use.
type MTUCB struct {
	opts  MTUCBOptions
	gamma float64 // effective Γ
	r     *rand.Rand
	trees []*counting.Counter
	n     []int // pulls in each tree (= its Count)
	pulls []int // all pulls (public)
	steps int
	idx   []float64
	meter pureMeter // whether the filter charged the certified ε
}

// MTUCBOptions configures Mishra–Thakurta private UCB.
type MTUCBOptions struct {
	K       int     // number of arms, ≥ 1
	Horizon int     // T ≥ 2: the trees' capacity, and the T in Γ
	Epsilon float64 // the paper's ε, in [1e-6, ∞); each tree gets ε/K
	// Gamma overrides the confidence relaxation Γ ≥ 0; 0 selects the
	// paper's formula (not a valid override: use a tiny positive value to
	// switch the relaxation off).
	Gamma float64
	// Fail is the failure probability γ in (0, 1) of the formula for Γ;
	// 0 selects 1/T.
	Fail float64
	// Width selects the exploration width: 0 the paper's sqrt(2 ln t/n),
	// 1 the Chapelle–Li width of the paper's experiments.
	Width int
	// Grid releases the tree nodes with the secure snapped discrete
	// Laplace (serving); false uses continuous Laplace draws (simulation).
	Grid bool
}

// NewMTUCB returns the private UCB, drawing the trees' node noise from r.
// It returns an error naming the first parameter outside its valid range.
func NewMTUCB(opts MTUCBOptions, r *rand.Rand) (*MTUCB, error) {
	const name = "mt-ucb"
	if err := pureCheckK(name, opts.K); err != nil {
		return nil, err
	}
	if opts.Horizon < 2 {
		return nil, fmt.Errorf("%s: horizon T = %d is outside its valid range [2, ∞) (the trees are sized for T)", name, opts.Horizon)
	}
	if err := pureCheckEpsilon(name, opts.Epsilon); err != nil {
		return nil, err
	}
	if err := pureCheckNonNeg(name, "gamma", opts.Gamma); err != nil {
		return nil, err
	}
	if math.IsNaN(opts.Fail) || opts.Fail < 0 || opts.Fail >= 1 {
		return nil, fmt.Errorf("%s: parameter fail = %v is outside its valid range (0, 1) (0 selects 1/T)", name, opts.Fail)
	}
	if opts.Width != 0 && opts.Width != 1 {
		return nil, fmt.Errorf("%s: parameter width = %d is outside its valid range {0 (paper), 1 (Chapelle–Li)}", name, opts.Width)
	}
	if r == nil {
		return nil, errors.New(name + ": needs a non-nil *rand.Rand")
	}
	k := opts.K
	trees, err := mtNewTrees(name, k, opts.Horizon, mtucbEps0(opts.Epsilon, k), pureNoise(opts.Grid, r))
	if err != nil {
		return nil, err
	}
	return &MTUCB{
		opts: opts, gamma: mtucbGamma(opts), r: r, trees: trees,
		n: make([]int, k), pulls: make([]int, k), idx: make([]float64, k),
	}, nil
}

// mtucbEps0 is the per-tree budget ε0 = ε/k, the value the trees are
// calibrated to (so it is also the certified value).
func mtucbEps0(eps float64, k int) float64 { return eps / float64(k) }

// mtucbGamma is Γ: the override, or k·ln²T·ln(k·T·ln T/γ)/ε.
func mtucbGamma(o MTUCBOptions) float64 {
	if o.Gamma > 0 {
		return o.Gamma
	}
	T := float64(o.Horizon)
	fail := o.Fail
	if fail == 0 {
		fail = 1 / T
	}
	k := float64(o.K)
	lnT := math.Log(T)
	return k * lnT * lnT * math.Log(k*T*lnT/fail) / o.Epsilon
}

// Gamma returns the confidence relaxation Γ in use.
func (p *MTUCB) Gamma() float64 { return p.gamma }

// Select returns the next arm: the initial pulls in index order, then the
// largest private UCB index.
func (p *MTUCB) Select() int {
	p.meter.selected()
	if p.steps < len(p.n) {
		return p.steps
	}
	lnt := math.Log(float64(p.steps + 1))
	for a := range p.trees {
		p.idx[a] = p.index(a, lnt)
	}
	return pureArgmax(p.idx)
}

// index is arm a's private UCB index with lnt = ln t: clip(tree sum)/n_a
// + width + Γ/n_a, or +∞ for an arm without a leaf.
func (p *MTUCB) index(a int, lnt float64) float64 {
	n := float64(p.n[a])
	if n == 0 { // only when the initial pulls were not followed: explore it
		return math.Inf(1)
	}
	s := min(max(p.trees[a].Sum(), 0), n) // clip into the feasible range [0, n_a]
	w := math.Sqrt(2 * lnt / n)
	if p.opts.Width == 1 {
		w = math.Sqrt(s*lnt)/n + lnt/n
	}
	return s/n + w + p.gamma/n
}

// SelectProbs puts probability 1 on the arm the next Select returns (the
// initial pulls in index order, then the largest index with Select's
// tie-breaking): the rule is deterministic (bandit.Propensities). It
// returns 0 (exact) and changes nothing (Select's index buffer and its
// filter charge included).
//
// Privacy: the index reads the trees' prefix sums of released nodes, the
// public leaf counts and the round count, never a tree's exact node sums,
// so the probabilities are post-processing of released state (docs/privacy-model.md
// rule 2).
func (p *MTUCB) SelectProbs(_ [][]float64, out []float64, _ int, _ *rand.Rand) int {
	out = out[:p.opts.K]
	if p.steps < len(p.n) {
		return bandit.PointMass(out, p.steps)
	}
	lnt := math.Log(float64(p.steps + 1))
	best, bv := 0, 0.0
	for a := range p.trees {
		if v := p.index(a, lnt); a == 0 || v > bv { // pureArgmax's rule
			best, bv = a, v
		}
	}
	return bandit.PointMass(out, best)
}

// Update inserts the reward (in [0, 1]) of the arm just played into its
// tree. It panics on a reward outside [0, 1] (the caller's contract); a
// reward arriving after the tree is full (beyond the horizon) is not read.
func (p *MTUCB) Update(arm int, reward float64) {
	pureCheckReward(reward)
	p.steps++
	p.pulls[arm]++
	if mtInsert(p.trees[arm], reward) {
		p.n[arm]++
	}
}

// NoisySum returns arm a's private reward sum as released by its tree,
// before clipping. It is a DP output of the tree.
func (p *MTUCB) NoisySum(a int) float64 { return p.trees[a].Sum() }

// Tree returns arm a's counter (read-only use: Variance, Privacy, Scale).
func (p *MTUCB) Tree(a int) *counting.Counter { return p.trees[a] }

// NextCost is the privacy filter's charge for the next Select: the
// certified ε/k before the first Select, 0 afterwards (the trees' releases
// are ε/k-DP for the whole transcript, at any length; see the type's doc).
func (p *MTUCB) NextCost() privacy.Guarantee {
	return p.meter.next(mtucbEps0(p.opts.Epsilon, p.opts.K))
}

// Privacy reports the certified ε/k beside the paper's ε (docs/reproduction-decisions.md A19).
func (p *MTUCB) Privacy() privacy.Report { return mtucbReport(p.opts.Epsilon, p.opts.K, p.opts.Grid) }

func mtucbReport(eps float64, k int, grid bool) privacy.Report {
	return pureReport("mt-ucb", eps, mtucbEps0(eps, k), fmt.Sprintf(
		"ε0-DP (event-level) for the whole transcript, at any horizon, with ε0 = ε/k = %g. "+
			"Mishra & Thakurta 2015 Alg 1; docs/reproduction-decisions.md §1.7, A19. Paper (Thm 3): ε = %g by basic composition of k = %d "+
			"Laplace trees at ε0 = ε/k. Certified: ε0 = %g. Each reward enters exactly one leaf of one tree, and "+
			"which tree and leaf is fixed by the transcript before the changed round; shifting only the ≤ L node "+
			"noises that contain that leaf maps one world's noise to the other's with the same transcript at density "+
			"ratio ≤ e^{ε0} (b = L/ε0), and no other tree sees the change. Clipping and the index are post-processing; "+
			"a reward arriving after its arm's tree is full is not read. %s",
		mtucbEps0(eps, k), eps, k, mtucbEps0(eps, k), pureNoiseWords(grid, "tree node")))
}

type mtucbJSON struct {
	Options MTUCBOptions     `json:"options"`
	Trees   []counting.State `json:"trees"` // exact node sums are raw data (docs/privacy-model.md rule 2)
	N       []int            `json:"n"`
	Pulls   []int            `json:"pulls"`
	Steps   int              `json:"steps"`
	Meter   pureMeter        `json:"meter"` // whether the filter charged the certified ε
}

// MarshalJSON encodes the options and the learning state, including every
// tree's kept node values (not the generator). The trees' exact node sums
// are raw data: persist them only where rewards may be kept.
func (p *MTUCB) MarshalJSON() ([]byte, error) {
	j := mtucbJSON{Options: p.opts, N: p.n, Pulls: p.pulls, Steps: p.steps, Meter: p.meter, Trees: make([]counting.State, len(p.trees))}
	for a, tr := range p.trees {
		j.Trees[a] = tr.State()
	}
	return json.Marshal(j)
}

// UnmarshalJSON restores a state written by MarshalJSON. Nothing is
// redrawn (docs/privacy-model.md rule 5); the policy keeps its generator, which also
// feeds the restored trees' future nodes. A state that does not fit is
// refused with an error naming what is wrong, and the policy is unchanged:
// options other than those the policy was built with (when it was built by
// NewMTUCB), per-arm arrays of the wrong length, pull counts that do not
// add up, a tree whose kind, capacity, ε0, sensitivity or noise (grid or
// continuous) differs from what the options imply, or whose nodes are
// missing, non-finite or inconsistent with its count.
func (p *MTUCB) UnmarshalJSON(b []byte) error {
	var j mtucbJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("mt-ucb: decoding state: %w", err)
	}
	if p.r != nil && j.Options != p.opts {
		return fmt.Errorf("mt-ucb: decoding state: the stored options %+v differ from this policy's %+v; a state restores only into a policy built with the same options", j.Options, p.opts)
	}
	r := pureGen(p.r)
	q, err := NewMTUCB(j.Options, r)
	if err != nil {
		return fmt.Errorf("mt-ucb: decoding state: %w", err)
	}
	k := j.Options.K
	if len(j.Trees) != k || len(j.N) != k || len(j.Pulls) != k {
		return fmt.Errorf("mt-ucb: decoding state: %d trees, %d tree counts and %d pull counts, want K = %d of each",
			len(j.Trees), len(j.N), len(j.Pulls), k)
	}
	if err := pureCounts(j.Steps, j.Pulls); err != nil {
		return fmt.Errorf("mt-ucb: decoding state: %w", err)
	}
	if err := mtRestoreTrees(q.trees, j.Trees, mtucbEps0(j.Options.Epsilon, k), j.Options.Horizon, pureNoise(j.Options.Grid, r)); err != nil {
		return fmt.Errorf("mt-ucb: decoding state: %w", err)
	}
	for a := range k {
		if j.N[a] != q.trees[a].Count() || j.N[a] > j.Pulls[a] {
			return fmt.Errorf("mt-ucb: decoding state: arm %d has n = %d, %d pulls and a tree of %d leaves; want n = leaves ≤ pulls",
				a, j.N[a], j.Pulls[a], q.trees[a].Count())
		}
	}
	copy(q.n, j.N)
	copy(q.pulls, j.Pulls)
	q.steps = j.Steps
	q.meter = j.Meter
	*p = *q
	return nil
}

func init() {
	register(bandit.Descriptor{
		Name:    "mt-ucb",
		Summary: "Mishra–Thakurta private UCB: per-arm Laplace tree counters, index r/n + width + Γ/n",
		Source:  "Mishra & Thakurta, UAI 2015, Alg 1 (docs/tree-based.md §1.7)",
		Private: true,
		Params: []bandit.Param{
			{Name: "epsilon", Default: 1, Min: pureMinEpsilon, Max: math.Inf(1), Doc: "the paper's ε (each of the k trees gets ε/k; certified ε/k)"},
			{Name: "gamma", Default: 0, Min: 0, Max: math.Inf(1), Doc: "confidence relaxation Γ; 0 selects k·ln²T·ln(kT ln T/γ)/ε (a smaller Γ lowers typical regret, but the tree noise, drawn once, can then bury the best arm for good in a few runs: check the median and max)"},
			{Name: "fail", Default: 0, Min: 0, Max: 0.999999, Doc: "failure probability γ in the formula for Γ; 0 selects 1/T"},
			{Name: "width", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "0: sqrt(2 ln t/n) (Alg 1); 1: Chapelle–Li width of [MT] §5"},
			gridParam,
		},
		New: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Policy, error) {
			return NewMTUCB(MTUCBOptions{K: s.K, Horizon: s.Horizon, Epsilon: p["epsilon"], Gamma: p["gamma"],
				Fail: p["fail"], Width: int(p["width"]), Grid: p["grid"] == 1}, r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			if err := pureCheckK("mt-ucb", s.K); err != nil {
				return privacy.Report{}, err
			}
			if err := pureCheckEpsilon("mt-ucb", p["epsilon"]); err != nil {
				return privacy.Report{}, err
			}
			return mtucbReport(p["epsilon"], s.K, p["grid"] == 1), nil
		},
		Calibrate: func(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
			if err := pureCheckK("mt-ucb", s.K); err != nil {
				return nil, err
			}
			return pureCalibrate("mt-ucb", t, float64(s.K))
		},
		Serving: pureServing,
	})
}

// ---------------------------------------------------------------------------
// Tree helpers shared by mtucb.go, mtts.go and dpts.go.

// mtNewTrees returns k Laplace counters of the given capacity at ε0 each,
// with node noise nz (pureNoise: continuous draws in simulation, the secure
// grid mechanism when serving).
func mtNewTrees(name string, k, capacity int, eps0 float64, nz counting.Noise) ([]*counting.Counter, error) {
	trees := make([]*counting.Counter, k)
	for a := range trees {
		c, err := counting.NewLaplace(counting.LaplaceOptions{Capacity: capacity, Epsilon: eps0}, nz)
		if err != nil {
			return nil, fmt.Errorf("%s: building the tree of arm %d: %w", name, a, err)
		}
		trees[a] = c
	}
	return trees, nil
}

// mtInsert adds one reward leaf to a tree and reports whether it was added.
// A full tree (beyond the horizon it was sized for) does not read the
// reward. A reward outside [0, 1] breaks bandit.Policy's contract and
// panics (it would otherwise break the tree's sensitivity).
func mtInsert(c *counting.Counter, x float64) bool {
	if c.Count() >= c.Capacity() {
		return false
	}
	if err := c.Add(x); err != nil {
		panic(fmt.Sprintf("mab: reward %v outside [0, 1] (bandit.Policy contract): %v", x, err))
	}
	return true
}

// mtRestoreTrees replaces trees[a] by the counter restored from states[a]
// with node noise nz, after checking that the state is the tree the options
// imply (mtCheckTree), so a state cannot smuggle in a weaker tree.
// counting.Restore then checks the nodes: one kept value per level, zero on
// the levels the count leaves empty, all finite. Nothing is redrawn.
func mtRestoreTrees(trees []*counting.Counter, states []counting.State, eps0 float64, capacity int, nz counting.Noise) error {
	for a, s := range states {
		if err := mtCheckTree(s, eps0, capacity, nz.Discrete()); err != nil {
			return fmt.Errorf("tree of arm %d: %w", a, err)
		}
		c, err := counting.Restore(s, nz)
		if err != nil {
			return fmt.Errorf("tree of arm %d: %w", a, err)
		}
		trees[a] = c
	}
	return nil
}

// mtCheckTree checks that a stored tree is a plain Laplace tree of the
// given capacity and ε0 over leaves in [0, 1], released with grid noise
// exactly when grid is set.
func mtCheckTree(s counting.State, eps0 float64, capacity int, grid bool) error {
	l := s.Laplace
	if l == nil || s.Gaussian != nil {
		return errors.New("not a Laplace tree")
	}
	if l.Capacity != capacity || l.Epsilon != eps0 || (l.Sensitivity != 0 && l.Sensitivity != 1) || l.Lower != 0 || l.GLS {
		return fmt.Errorf("options %+v do not match the policy's (want capacity %d, ε0 %v, leaves in [0, 1], no GLS)", *l, capacity, eps0)
	}
	if s.Discrete != grid {
		return fmt.Errorf("nodes released with discrete=%v noise, the policy's grid=%v", s.Discrete, grid)
	}
	return nil
}

// mtFinite checks that every value of a stored per-arm array is finite.
func mtFinite(name string, xs []float64) error {
	for a, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s of arm %d is %v, not a finite number", name, a, x)
		}
	}
	return nil
}
