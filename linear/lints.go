package linear

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// LinTS is linear Thompson sampling, Agrawal & Goyal, "Thompson Sampling for
// Contextual Bandits with Linear Payoffs", ICML 2013, Algorithm 1, with the
// shared ridge model and the posterior N(θ̂, v²A⁻¹) of [ADA] (Riyazat &
// Ukwatta, AdaPrivate-TS) Eq. 2.9. docs/linear.md §1.10 (Li et al., WWW 2010; Agrawal & Goyal, ICML 2013).
//
// # Algorithm
//
// Shared model (the default): A = λI + Σ xxᵀ, b = Σ r·x. Each round draws
//
//	θ̃ = A⁻¹b + v·L⁻ᵀz,   LLᵀ = A,  z ~ N(0, I_d),
//
// so θ̃ ~ N(A⁻¹b, v²A⁻¹), and plays argmax_a x_aᵀθ̃ (ties to the lowest
// index). The draw is chol.Factor.SamplePosterior: one forward and one back
// substitution on the Cholesky factor that Update keeps current with O(d²)
// rank-one updates, and d standard normal draws taken from the generator in
// coordinate order.
//
// Disjoint model (Options.Disjoint; Li et al. 2010's per-article models):
// K arms with one model (A_a, b_a) each, candidate a is arm a, and the
// sampled parameters θ̃_a ~ N(θ̂_a, v²A_a⁻¹) are independent across arms. As
// candidate a's score x_aᵀθ̃_a depends on θ̃_a only, it is drawn directly as
// the scalar x_aᵀθ̂_a + v·sqrt(x_aᵀA_a⁻¹x_a)·z_a with z_a ~ N(0, 1) (one
// draw per candidate, in index order): the same distribution of the chosen
// arm as K full d-dimensional draws, at K·d²/2 instead of K·d² cost. Update
// trains the arm the last Select returned (UpdateArm names it explicitly).
//
// # Privacy
//
// None: LinTS reads the raw statistics every round (privacy.NotPrivate).
// Serving: θ̃ is only compared, never released, so fast Gaussian draws on a
// strong generator are acceptable (docs/privacy-model.md rule 4).
//
// Complexity (shared): Select O(d² + K·d) with d normal draws, Update O(d²);
// neither allocates. Not safe for concurrent use. Candidates and x are read,
// never retained.
type LinTS struct {
	opts   LinTSOptions
	r      *rand.Rand
	models []ridgeModel
	theta  []float64 // θ̃ (shared)
	z      []float64 // standard normal draws (shared)
	last   int
	rounds int
}

// LinTSOptions configures LinTS.
type LinTSOptions struct {
	Dim      int     `json:"dim"`      // feature dimension d ≥ 1
	K        int     `json:"k"`        // number of arms; read only when Disjoint (≥ 1)
	Lambda   float64 `json:"lambda"`   // ridge λ > 0 (default 1 in the descriptor)
	V        float64 `json:"v"`        // posterior scale v ≥ 0 (default 1)
	Disjoint bool    `json:"disjoint"` // one model per arm (Li et al. 2010)
}

// NewLinTS returns LinTS for the options, drawing from r. It returns an
// error naming the parameter when d < 1, λ ∉ (0, ∞), v ∉ [0, ∞), K < 1 with
// Disjoint, or r is nil.
func NewLinTS(opts LinTSOptions, r *rand.Rand) (*LinTS, error) {
	if err := checkLinear("lints", opts.Dim, opts.K, opts.Lambda, opts.Disjoint); err != nil {
		return nil, err
	}
	if err := checkNonNegative("lints", "v", opts.V); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("lints: random generator r must not be nil")
	}
	return &LinTS{opts: opts, r: r, models: newModels(opts.Dim, opts.K, opts.Lambda, opts.Disjoint),
		theta: make([]float64, opts.Dim), z: make([]float64, opts.Dim), last: -1}, nil
}

// Select draws θ̃ ~ N(A⁻¹b, v²A⁻¹) and returns argmax_a x_aᵀθ̃ over the
// candidates (each of length d; with Disjoint exactly K of them). It panics
// on a wrong number or length of candidates.
func (p *LinTS) Select(candidates [][]float64) int {
	mustCandidates("lints", len(candidates))
	p.rounds++
	p.last = p.pick(p.r, candidates)
	return p.last
}

// pick draws one posterior sample on r and returns the best candidate.
func (p *LinTS) pick(r *rand.Rand, candidates [][]float64) int {
	d := p.opts.Dim
	best, bv := 0, math.Inf(-1)
	if p.opts.Disjoint {
		if len(candidates) != p.opts.K {
			panic(fmt.Sprintf("linear: lints (disjoint): %d candidates, want K = %d", len(candidates), p.opts.K))
		}
		for i, x := range candidates {
			mustDim("lints", x, d)
			m := &p.models[i]
			v := dotVec(x, m.theta()) + p.opts.V*math.Sqrt(m.f.QuadInv(x))*r.NormFloat64()
			if v > bv {
				best, bv = i, v
			}
		}
		return best
	}
	z := p.z
	for i := range z {
		z[i] = r.NormFloat64()
	}
	m := &p.models[0]
	m.f.SamplePosterior(p.theta, m.b, p.opts.V, z)
	for i, x := range candidates {
		mustDim("lints", x, d)
		if v := dotVec(x, p.theta); v > bv {
			best, bv = i, v
		}
	}
	return best
}

// SelectProbs estimates the probability that Select(candidates) returns
// each candidate from draws posterior draws on r (bandit.Propensities).
// LinTS is not private.
func (p *LinTS) SelectProbs(candidates [][]float64, out []float64, draws int, r *rand.Rand) int {
	mustCandidates("lints", len(candidates))
	return bandit.EstimateProbs(out[:len(candidates)], draws, func() int { return p.pick(r, candidates) })
}

// Update adds the played vector x (length d) with reward r ∈ [0, 1]: to the
// shared model, or with Disjoint to the model of the arm the last Select
// returned. It panics on a reward outside [0, 1], a wrong length, or a
// disjoint Update before any Select.
func (p *LinTS) Update(x []float64, r float64) { p.UpdateArm(p.last, x, r) }

// UpdateArm is Update for an explicit arm (disjoint model); the shared model
// ignores arm.
func (p *LinTS) UpdateArm(arm int, x []float64, r float64) {
	mustUnitReward("lints", r)
	mustDim("lints", x, p.opts.Dim)
	p.models[armIndex("lints", p.opts.Disjoint, arm, len(p.models))].add(x, r)
}

// Privacy reports that LinTS is not private.
func (p *LinTS) Privacy() privacy.Report { return lintsReport() }

func lintsReport() privacy.Report {
	return privacy.NotPrivate("lints", "Linear TS reads the raw reward statistics A, b every round; no privacy guarantee (Li et al., WWW 2010; Agrawal & Goyal, ICML 2013; docs/linear.md §1.10).")
}

// State returns a copy of the learning state.
func (p *LinTS) State() LinearState { return linearState(p.rounds, p.last, p.models) }

// MarshalJSON encodes the options and learning state (not the generator).
func (p *LinTS) MarshalJSON() ([]byte, error) {
	return marshalState("lints", p.opts, p.State())
}

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewLinTS with the same options; the generator is left as it is.
func (p *LinTS) UnmarshalJSON(data []byte) error {
	st, err := unmarshalState[LinearState](data, "lints", p.opts)
	if err != nil {
		return err
	}
	ms, err := restoreModels("lints", p.opts.Dim, len(p.models), st)
	if err != nil {
		return err
	}
	p.models, p.rounds, p.last = ms, st.Rounds, st.Last
	return nil
}

var (
	_ bandit.Contextual = (*LinTS)(nil)
	_ bandit.Private    = (*LinTS)(nil)
	_ json.Marshaler    = (*LinTS)(nil)
	_ json.Unmarshaler  = (*LinTS)(nil)
)

func lintsOptions(s bandit.Setting, p bandit.Params) LinTSOptions {
	return LinTSOptions{Dim: s.Dim, K: s.K, Lambda: p["lambda"], V: p["v"], Disjoint: p["disjoint"] == 1}
}

func init() {
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: "not private"},
		Name:    "lints",
		Summary: "Linear Thompson sampling: θ̃ ~ N(A⁻¹b, v²A⁻¹), shared ridge model (or disjoint per arm); not private",
		Source:  "Agrawal & Goyal, ICML 2013, Algorithm 1; [ADA] Eq. 2.9 (docs/linear.md §1.10)",
		Params: []bandit.Param{
			paramLambda,
			{Name: "v", Default: 1, Min: 0, Max: math.Inf(1), Doc: "posterior scale v ≥ 0: θ̃ ~ N(θ̂, v²A⁻¹) ([ADA] grid {0.5, 1, 1.5, 2})"},
			paramDisjoint,
		},
		NewContextual: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			return NewLinTS(lintsOptions(s, p), r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			o := lintsOptions(s, p)
			if err := checkLinear("lints", o.Dim, o.K, o.Lambda, o.Disjoint); err != nil {
				return privacy.Report{}, err
			}
			return lintsReport(), nil
		},
	})
}
