package linear

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/privacy"
)

// LinUCB is the linear upper-confidence-bound policy of Li, Chu, Langford &
// Schapire, "A Contextual-Bandit Approach to Personalized News Article
// Recommendation", WWW 2010 (Algorithm 1 for the disjoint model), with the
// shared model of [ADA] (Riyazat & Ukwatta, AdaPrivate-TS) §2.1, Eqs. 2.3–2.4.
// docs/linear.md §1.10 (Li et al., WWW 2010; Agrawal & Goyal, ICML 2013).
//
// # Algorithm
//
// Shared model (the default): A = λI + Σ xxᵀ and b = Σ r·x over the played
// feature vectors, θ̂ = A⁻¹b, and each round the candidate
//
//	argmax_a  x_aᵀθ̂ + α·sqrt(x_aᵀA⁻¹x_a)
//
// is played (ties to the lowest index). Disjoint model (Options.Disjoint, as
// Li et al. and [MT] use on Yahoo!): K arms with one model (A_a, b_a) each;
// candidate a of every round is arm a, so Select needs exactly K candidates,
// and Update trains the arm that the last Select returned (UpdateArm names
// the arm explicitly, for delayed rewards).
//
// A is kept as a Cholesky factor (internal/chol, O(d²) rank-one updates);
// θ̂ is recomputed (d² multiply-adds) at the first Select after an Update,
// and each candidate's width costs one triangular solve (d²/2).
//
// # Privacy
//
// None: LinUCB reads the raw rewards every round (privacy.NotPrivate).
//
// Complexity: Select O(d² + K·d²/2), Update O(d²); neither allocates. Not
// safe for concurrent use. Candidates and x are read, never retained.
type LinUCB struct {
	opts   LinUCBOptions
	models []ridgeModel
	last   int // index returned by the last Select (−1 before the first)
	rounds int
}

// LinUCBOptions configures LinUCB.
type LinUCBOptions struct {
	Dim      int     `json:"dim"`      // feature dimension d ≥ 1
	K        int     `json:"k"`        // number of arms; read only when Disjoint (≥ 1)
	Lambda   float64 `json:"lambda"`   // ridge λ > 0 (default 1 in the descriptor)
	Alpha    float64 `json:"alpha"`    // width multiplier α ≥ 0 (default 1)
	Disjoint bool    `json:"disjoint"` // one model per arm (Li et al. 2010)
}

// ridgeModel is one linear model: A = λI + Σ xxᵀ in Cholesky form, b = Σ r·x
// and the cached estimate θ̂ = A⁻¹b.
type ridgeModel struct {
	f     *chol.Factor
	b     []float64
	mean  []float64
	fresh bool // mean = A⁻¹b for the current A and b
}

func newRidge(d int, lambda float64) ridgeModel {
	return ridgeModel{f: chol.New(d, lambda), b: make([]float64, d), mean: make([]float64, d)}
}

// add sets A ← A + xxᵀ and b ← b + r·x.
func (m *ridgeModel) add(x []float64, r float64) {
	m.f.Update(x)
	axpyVec(r, x, m.b)
	m.fresh = false
}

// theta returns θ̂ = A⁻¹b (owned by the model), solving only when stale.
func (m *ridgeModel) theta() []float64 {
	if !m.fresh {
		m.f.SolveTo(m.mean, m.b)
		m.fresh = true
	}
	return m.mean
}

// ModelState is the JSON form of one ridge model: the chol.Factor encoding
// (A and its factor, bit for bit) and b.
type ModelState struct {
	A []byte    `json:"a"`
	B []float64 `json:"b"`
}

func (m *ridgeModel) state() ModelState {
	a, _ := m.f.MarshalBinary()
	return ModelState{A: a, B: append([]float64(nil), m.b...)}
}

// restore validates st for dimension d and returns the model it encodes.
func (st ModelState) restore(name string, d int) (ridgeModel, error) {
	var f chol.Factor
	if err := f.UnmarshalBinary(st.A); err != nil {
		return ridgeModel{}, fmt.Errorf("%s: %w: %w", name, errState, err)
	}
	if f.Dim() != d || len(st.B) != d {
		return ridgeModel{}, fmt.Errorf("%s: %w: model of dimension %d (b of length %d), want d = %d", name, errState, f.Dim(), len(st.B), d)
	}
	if !allFinite(st.B) {
		return ridgeModel{}, fmt.Errorf("%s: %w: b has a non-finite entry", name, errState)
	}
	return ridgeModel{f: &f, b: append([]float64(nil), st.B...), mean: make([]float64, d)}, nil
}

// LinearState is the learning state of LinUCB and LinTS (their JSON form):
// one model (shared) or K models (disjoint), the Select count, and the index
// the last Select returned (which a disjoint Update trains).
type LinearState struct {
	Rounds int          `json:"rounds"`
	Last   int          `json:"last"`
	Models []ModelState `json:"models"`
}

func linearState(rounds, last int, models []ridgeModel) LinearState {
	st := LinearState{Rounds: rounds, Last: last, Models: make([]ModelState, len(models))}
	for i := range models {
		st.Models[i] = models[i].state()
	}
	return st
}

func restoreModels(name string, d, n int, st LinearState) ([]ridgeModel, error) {
	if len(st.Models) != n {
		return nil, fmt.Errorf("%s: %w: %d models, want %d", name, errState, len(st.Models), n)
	}
	if st.Rounds < 0 || st.Last < -1 {
		return nil, fmt.Errorf("%s: %w: rounds %d, last %d", name, errState, st.Rounds, st.Last)
	}
	out := make([]ridgeModel, n)
	for i, ms := range st.Models {
		m, err := ms.restore(name, d)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func checkLinear(name string, dim, k int, lambda float64, disjoint bool) error {
	if err := checkDim(name, dim); err != nil {
		return err
	}
	if disjoint && k < 1 {
		return fmt.Errorf("%s: the disjoint model needs the number of arms K = %d to be ≥ 1", name, k)
	}
	return checkPositive(name, "lambda", lambda)
}

func newModels(dim, k int, lambda float64, disjoint bool) []ridgeModel {
	n := 1
	if disjoint {
		n = k
	}
	ms := make([]ridgeModel, n)
	for i := range ms {
		ms[i] = newRidge(dim, lambda)
	}
	return ms
}

// NewLinUCB returns LinUCB for the options. It returns an error naming the
// parameter when d < 1, λ ∉ (0, ∞), α ∉ [0, ∞), or K < 1 with Disjoint.
// LinUCB is deterministic and needs no generator.
func NewLinUCB(opts LinUCBOptions) (*LinUCB, error) {
	if err := checkLinear("linucb", opts.Dim, opts.K, opts.Lambda, opts.Disjoint); err != nil {
		return nil, err
	}
	if err := checkNonNegative("linucb", "alpha", opts.Alpha); err != nil {
		return nil, err
	}
	return &LinUCB{opts: opts, models: newModels(opts.Dim, opts.K, opts.Lambda, opts.Disjoint), last: -1}, nil
}

// Select returns argmax_a x_aᵀθ̂ + α·sqrt(x_aᵀA⁻¹x_a) over the candidates
// (each of length d; with Disjoint exactly K of them, candidate a scored by
// arm a's model). It panics on a wrong number or length of candidates.
func (p *LinUCB) Select(candidates [][]float64) int {
	p.rounds++
	p.last = p.pick(candidates)
	return p.last
}

// pick returns the candidate with the largest index (the first on ties).
func (p *LinUCB) pick(candidates [][]float64) int {
	mustCandidates("linucb", len(candidates))
	if p.opts.Disjoint && len(candidates) != p.opts.K {
		panic(fmt.Sprintf("linear: linucb (disjoint): %d candidates, want K = %d", len(candidates), p.opts.K))
	}
	d := p.opts.Dim
	best, bv := 0, math.Inf(-1)
	for i, x := range candidates {
		mustDim("linucb", x, d)
		m := &p.models[0]
		if p.opts.Disjoint {
			m = &p.models[i]
		}
		v := dotVec(x, m.theta()) + p.opts.Alpha*math.Sqrt(m.f.QuadInv(x))
		if v > bv {
			best, bv = i, v
		}
	}
	return best
}

// SelectProbs puts probability 1 on the candidate Select(candidates) returns
// now: the rule is deterministic (bandit.Propensities). It returns 0 (exact).
func (p *LinUCB) SelectProbs(candidates [][]float64, out []float64, _ int, _ *rand.Rand) int {
	return bandit.PointMass(out[:len(candidates)], p.pick(candidates))
}

// Update adds the played vector x (length d) with reward r ∈ [0, 1]: to the
// shared model, or with Disjoint to the model of the arm the last Select
// returned. It panics on a reward outside [0, 1], a wrong length, or a
// disjoint Update before any Select.
func (p *LinUCB) Update(x []float64, r float64) { p.UpdateArm(p.last, x, r) }

// UpdateArm is Update for an explicit arm, for a disjoint model whose rewards
// arrive out of order; the arm is ignored by the shared model.
func (p *LinUCB) UpdateArm(arm int, x []float64, r float64) {
	mustUnitReward("linucb", r)
	mustDim("linucb", x, p.opts.Dim)
	p.models[armIndex("linucb", p.opts.Disjoint, arm, len(p.models))].add(x, r)
}

// armIndex returns the model an update trains: 0 for a shared model, arm
// for a disjoint one (panicking when arm is out of range).
func armIndex(policy string, disjoint bool, arm, n int) int {
	if !disjoint {
		return 0
	}
	if arm < 0 || arm >= n {
		panic(fmt.Sprintf("linear: %s (disjoint): update of arm %d outside [0, %d) (Update must follow Select)", policy, arm, n))
	}
	return arm
}

// Privacy reports that LinUCB is not private.
func (p *LinUCB) Privacy() privacy.Report { return linucbReport() }

func linucbReport() privacy.Report {
	return privacy.NotPrivate("linucb", "LinUCB reads the raw reward statistics A, b every round; no privacy guarantee (Li et al., WWW 2010; Agrawal & Goyal, ICML 2013; docs/linear.md §1.10).")
}

// State returns a copy of the learning state.
func (p *LinUCB) State() LinearState { return linearState(p.rounds, p.last, p.models) }

// MarshalJSON encodes the options and learning state.
func (p *LinUCB) MarshalJSON() ([]byte, error) {
	return marshalState("linucb", p.opts, p.State())
}

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewLinUCB with the same options.
func (p *LinUCB) UnmarshalJSON(data []byte) error {
	st, err := unmarshalState[LinearState](data, "linucb", p.opts)
	if err != nil {
		return err
	}
	ms, err := restoreModels("linucb", p.opts.Dim, len(p.models), st)
	if err != nil {
		return err
	}
	p.models, p.rounds, p.last = ms, st.Rounds, st.Last
	return nil
}

var (
	_ bandit.Contextual = (*LinUCB)(nil)
	_ bandit.Private    = (*LinUCB)(nil)
	_ json.Marshaler    = (*LinUCB)(nil)
	_ json.Unmarshaler  = (*LinUCB)(nil)
)

// Shared descriptor parameters of the non-private linear policies.
var (
	paramLambda   = bandit.Param{Name: "lambda", Default: 1, Min: math.SmallestNonzeroFloat64, Max: math.Inf(1), Doc: "ridge regulariser λ > 0: A starts at λI"}
	paramDisjoint = bandit.Param{Name: "disjoint", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1: one model per arm (candidate index = arm, K fixed; Li et al. 2010); 0: one shared model"}
)

func linucbOptions(s bandit.Setting, p bandit.Params) LinUCBOptions {
	return LinUCBOptions{Dim: s.Dim, K: s.K, Lambda: p["lambda"], Alpha: p["alpha"], Disjoint: p["disjoint"] == 1}
}

func init() {
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: "not private"},
		Name:    "linucb",
		Summary: "LinUCB: argmax xᵀθ̂ + α·sqrt(xᵀA⁻¹x), shared ridge model (or disjoint per arm); not private",
		Source:  "Li, Chu, Langford & Schapire, WWW 2010, Algorithm 1; [ADA] §2.1 shared model (docs/linear.md §1.10)",
		Params: []bandit.Param{
			paramLambda,
			{Name: "alpha", Default: 1, Min: 0, Max: math.Inf(1), Doc: "width multiplier α ≥ 0 ([ADA] grid {0.1, 0.5, 1, 2})"},
			paramDisjoint,
		},
		NewContextual: func(s bandit.Setting, p bandit.Params, _ bandit.Rand) (bandit.Contextual, error) {
			return NewLinUCB(linucbOptions(s, p))
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			o := linucbOptions(s, p)
			if err := checkLinear("linucb", o.Dim, o.K, o.Lambda, o.Disjoint); err != nil {
				return privacy.Report{}, err
			}
			return linucbReport(), nil
		},
	})
}
