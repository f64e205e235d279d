// Package privacy is dpbandit's accountant: Gaussian DP, zCDP, Rényi DP
// (including the Poisson-subsampled Gaussian), pure DP, the conversions
// between them, noise calibration, composition, privacy filters, and the
// Report that every private component returns.
//
// Documentation: docs/accountant.md (formulas, derivations, rounding
// directions, oracles) and docs/privacy-model.md (the rules).
//
// Map of the package (formulas and sources in docs/accountant.md §2):
//
//   - GDP (gdp.go): GDPDelta, LogGDPDelta, GDPEpsilon, GDPMu, GDPCompose,
//     GDPToZCDP. The conversion is exact and evaluated in log space.
//   - zCDP (zcdp.go): BS16 and CKS20 in both directions (ZCDPEpsilon,
//     ZCDPDelta, ZCDPRho pick the tighter), ZCDPCompose, ZCDPGroup.
//   - RDP (rdp.go, sgm.go, rdpcurve.go): GaussianRDP, LaplaceRDP, PureRDP,
//     SubsampledGaussianRDP (exact integer and fractional orders) and their
//     curves on DefaultOrders or FractionalOrders; RDPCurve composes and
//     converts (classic and improved), reporting the order and a grid-edge
//     warning.
//   - Pure DP (pure.go): LaplaceEpsilon, LaplaceScale, PureCompose.
//   - Report-Noisy-Max (rnm.go, [OU] App C; docs/accountant.md §1.5): LaplaceRNMEpsilon and
//     LaplaceRNMScale (s/b when one score moves, 2s/b when all may),
//     GaussianRNMMu (heterogeneous Gaussian: max_i s_i/σ_i or the norm).
//     The samplers are noise.LaplaceNoisyMax and noise.GaussianNoisyMax.
//   - Calibration (calibrate.go): GaussianSigmaGDP (analytic Gaussian),
//     GaussianSigmaZCDP, SubsampledGaussianSigma.
//   - Filters (filter.go): NewGDPFilter, NewZCDPFilter, NewPureFilter, with
//     exact budget arithmetic and a typed *BudgetExceededError.
//   - Report (report.go): what every private component states.
//
// Every formula is tested against the mpmath oracles of docs/accountant.md and
// docs/reproductions.md §3.0, committed in testdata/ with the script that makes them.
// Rounding is always in the safe direction (docs/accountant.md pitfall 2): reported
// ε and σ are rounded up, μ and ρ down; root finders return a verified end of
// their bracket; sums of parameters are formed exactly (math/big) and rounded
// once; series carry a bound on their rounding error that is added. The
// package imports nothing from the rest of the project.
package privacy

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalid is wrapped by every error about an out-of-range argument.
var ErrInvalid = errors.New("invalid privacy parameter")

// Notion names a privacy definition.
type Notion string

// The privacy notions a Guarantee can be stated in.
const (
	NotionNone Notion = "none" // no guarantee (non-private policies)
	NotionGDP  Notion = "gdp"  // Value is μ
	NotionZCDP Notion = "zcdp" // Value is ρ
	NotionRDP  Notion = "rdp"  // Curve holds ε(α); Value is unused
	NotionPure Notion = "pure" // Value is ε (δ = 0)
)

// EventLevel is the neighbouring relation of every source paper (docs/privacy-model.md):
// two reward streams differ in the complete entry of one round.
const EventLevel = "event-level: the reward entry of one round replaced (docs/privacy-model.md)"

// Guarantee is one privacy statement in one notion.
type Guarantee struct {
	Notion Notion    `json:"notion"`
	Value  float64   `json:"value"`
	Curve  *RDPCurve `json:"curve,omitempty"`
}

// Epsilon converts the guarantee to ε at the given δ, using the tightest
// valid conversion for its notion, and names the conversion. NotionNone gives
// +Inf.
func (g Guarantee) Epsilon(delta float64) (eps float64, method string, err error) {
	if err := checkDelta(delta); err != nil {
		return 0, "", err
	}
	switch g.Notion {
	case NotionNone:
		return math.Inf(1), "", nil
	case NotionGDP:
		e, err := GDPEpsilon(g.Value, delta)
		return e, MethodGDP, err
	case NotionZCDP:
		return ZCDPEpsilon(g.Value, delta)
	case NotionRDP:
		if g.Curve == nil {
			return 0, "", fmt.Errorf("%w: RDP guarantee without a curve", ErrInvalid)
		}
		c, err := g.Curve.Epsilon(delta)
		return c.Epsilon, c.Method, err
	case NotionPure:
		if err := checkEps(g.Value); err != nil {
			return 0, "", err
		}
		return g.Value, MethodPure, nil
	}
	return 0, "", fmt.Errorf("%w: unknown privacy notion %q", ErrInvalid, g.Notion)
}

// Report is what every private component states about itself: the notion and
// value the project certifies, the value the source paper states (when there
// is one), the neighbouring relation, and the derivation. Certified is never
// smaller than the truth (docs/privacy-model.md rule 1); Paper is shown beside it and is
// marked invalid where docs/findings.md says the paper's value is wrong.
type Report struct {
	Mechanism    string     `json:"mechanism"`
	Neighbouring string     `json:"neighbouring"`
	Certified    Guarantee  `json:"certified"`
	Paper        *Guarantee `json:"paper,omitempty"`
	// PaperValid is false when docs/findings.md lists the paper's value as wrong.
	PaperValid bool `json:"paper_valid"`
	// Derivation cites the paper and the docs/ page for the certified value
	// and explains any difference from the paper's.
	Derivation string `json:"derivation"`
}

// Private reports whether the report carries a guarantee.
func (r Report) Private() bool { return r.Certified.Notion != NotionNone }

// Statement is a Report evaluated at one δ: the object printed by
// `dpbandit privacy policy` and stored as the `privacy` field of summaries.
// Epsilon and PaperEpsilon are null when there is no guarantee.
type Statement struct {
	Mechanism    string     `json:"mechanism"`
	Certified    Guarantee  `json:"certified"`
	Paper        *Guarantee `json:"paper,omitempty"`
	PaperValid   bool       `json:"paper_valid"`
	Epsilon      *float64   `json:"epsilon"`
	Delta        float64    `json:"delta"`
	Method       string     `json:"method,omitempty"`
	PaperEpsilon *float64   `json:"paper_epsilon,omitempty"`
	Neighbouring string     `json:"neighbouring"`
	Derivation   string     `json:"derivation,omitempty"`
	// Params are the parameters the statement holds for (set by the caller
	// that built the mechanism, e.g. a policy's calibrated noise scale).
	Params map[string]float64 `json:"params,omitempty"`
}

// At evaluates the report at δ. A pure-DP guarantee is stated with δ as
// given (it holds for every δ ≥ 0).
func (r Report) At(delta float64) (Statement, error) {
	s := Statement{
		Mechanism: r.Mechanism, Certified: r.Certified, Paper: r.Paper, PaperValid: r.PaperValid,
		Delta: delta, Neighbouring: r.Neighbouring, Derivation: r.Derivation,
	}
	eps, method, err := r.Certified.Epsilon(delta)
	if err != nil {
		return Statement{}, fmt.Errorf("certified guarantee of %s: %w", r.Mechanism, err)
	}
	if !math.IsInf(eps, 1) {
		s.Epsilon, s.Method = &eps, method
	}
	if r.Paper != nil {
		pe, _, err := r.Paper.Epsilon(delta)
		if err != nil {
			return Statement{}, fmt.Errorf("paper guarantee of %s: %w", r.Mechanism, err)
		}
		if !math.IsInf(pe, 1) {
			s.PaperEpsilon = &pe
		}
	}
	return s, nil
}

// NotPrivate is the report of a policy with no privacy guarantee.
func NotPrivate(mechanism, why string) Report {
	return Report{Mechanism: mechanism, Neighbouring: EventLevel,
		Certified: Guarantee{Notion: NotionNone}, Derivation: why}
}
