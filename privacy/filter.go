package privacy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
)

// Privacy filters: fully adaptive composition with a budget fixed up front
// (docs/accountant.md §2.6; docs/privacy-model.md rule 3).
//
// At step n the caller picks a mechanism and its parameter xₙ from the
// released history only (never from raw data). The filter runs the step only
// if the cost of all parameters so far, including xₙ, stays within the
// budget; otherwise the step is refused and the caller must fall back to a
// data-independent or post-processing behaviour. With that rule the whole
// interaction satisfies the budget's guarantee, with probability 1 over the
// adaptively chosen parameters:
//
//   - GDP (Smith & Thakurta 2022, arXiv 2210.17520): Σμᵢ² ≤ μ² ⇒ μ-GDP, and
//     the exact GDP conversion then applies.
//   - zCDP (Feldman & Zrnic 2021, the Rényi filter, applied at every order):
//     Σρᵢ ≤ ρ ⇒ ρ-zCDP.
//   - pure DP (Rogers, Roth, Ullman & Vadhan 2016): Σεᵢ ≤ ε ⇒ ε-DP.
//
// Exactness. The spent cost (Σμᵢ², Σρᵢ or Σεᵢ) is kept exactly (every
// float64 and its square is a dyadic rational; see exact.go), so a step is
// accepted if and only if the exact sum for the float64 parameters given stays
// ≤ the budget: no rounding can accept a step that exceeds it, and no slack
// is needed, so none refuses a step that fits. One consequence: ten steps of ε = 0.1 do not fit in ε = 1, because
// float64(0.1) is 0.1000000000000000055… and ten of them exceed 1; the tenth is
// refused. Use PerStep(n) to get the largest parameter of which n steps fit.
//
// A Filter is not safe for concurrent use; the caller serialises Spend. Its
// state serialises to JSON (MarshalJSON) so a service can persist it and
// restore it after a restart (docs/privacy-model.md rule 5).

// ErrBudgetExceeded is wrapped by every *BudgetExceededError.
var ErrBudgetExceeded = errors.New("privacy budget exceeded")

// BudgetExceededError reports a refused step. The filter's state is unchanged.
type BudgetExceededError struct {
	Notion    Notion  // the filter's notion
	Requested float64 // the parameter of the refused step (μ, ρ or ε)
	Remaining float64 // the largest parameter a single step could still have
	Budget    float64 // the filter's budget (μ, ρ or ε)
}

func (e *BudgetExceededError) Error() string {
	return fmt.Sprintf("%v: %s step of %s = %v refused, only %v of the budget %v remains",
		ErrBudgetExceeded, e.Notion, paramName(e.Notion), e.Requested, e.Remaining, e.Budget)
}

// Unwrap returns ErrBudgetExceeded.
func (e *BudgetExceededError) Unwrap() error { return ErrBudgetExceeded }

// Filter is a privacy filter for one notion with a fixed budget. Construct it
// with NewGDPFilter, NewZCDPFilter or NewPureFilter.
type Filter struct {
	notion Notion
	budget float64
	spent  *big.Int // exact Σ cost(xᵢ)·2^fixedBits: μᵢ² (GDP), ρᵢ (zCDP), εᵢ (pure)
	bcost  *big.Int // the budget's cost, same scale
	steps  int
	// spent and bcost are never modified in place (Spend replaces spent), so
	// a copy of a Filter value is an independent snapshot.
}

// NewGDPFilter returns a filter that accepts GDP steps μᵢ while Σμᵢ² ≤ μ².
func NewGDPFilter(mu float64) (*Filter, error) { return newFilter(NotionGDP, mu) }

// NewZCDPFilter returns a filter that accepts zCDP steps ρᵢ while Σρᵢ ≤ ρ.
func NewZCDPFilter(rho float64) (*Filter, error) { return newFilter(NotionZCDP, rho) }

// NewPureFilter returns a filter that accepts pure-DP steps εᵢ while Σεᵢ ≤ ε.
func NewPureFilter(eps float64) (*Filter, error) { return newFilter(NotionPure, eps) }

// NewFilter returns the filter of notion n (gdp, zcdp or pure) with the
// given budget in its parameter (μ, ρ or ε); an error for other notions.
func NewFilter(n Notion, budget float64) (*Filter, error) { return newFilter(n, budget) }

func newFilter(n Notion, budget float64) (*Filter, error) {
	if err := checkBudget(n, budget); err != nil {
		return nil, err
	}
	f := &Filter{notion: n, budget: budget, spent: new(big.Int)}
	f.bcost = f.cost(budget)
	return f, nil
}

func checkBudget(n Notion, budget float64) error {
	switch n {
	case NotionGDP, NotionZCDP, NotionPure:
	default:
		return fmt.Errorf("%w: filters exist for gdp, zcdp and pure, not %q", ErrInvalid, n)
	}
	if !(budget >= 0) || math.IsInf(budget, 1) {
		return fmt.Errorf("%w: %s budget %s = %v must be a finite number ≥ 0", ErrInvalid, n, paramName(n), budget)
	}
	return nil
}

// ParamName is the symbol of a notion's additive parameter: μ (gdp),
// ρ (zcdp), ε (pure and others).
func ParamName(n Notion) string { return paramName(n) }

func paramName(n Notion) string {
	switch n {
	case NotionGDP:
		return "μ"
	case NotionZCDP:
		return "ρ"
	}
	return "ε"
}

// cost returns the additive cost of a step with parameter x (x finite ≥ 0),
// scaled by 2^fixedBits.
func (f *Filter) cost(x float64) *big.Int {
	if f.notion == NotionGDP {
		return fixedSquare(x)
	}
	return fixedOf(x)
}

// Notion returns the filter's notion.
func (f *Filter) Notion() Notion { return f.notion }

// Budget returns the budget (μ, ρ or ε) fixed at construction.
func (f *Filter) Budget() float64 { return f.budget }

// Steps returns the number of accepted steps.
func (f *Filter) Steps() int { return f.steps }

// Spend asks to run one step with parameter x (μ, ρ or ε in the filter's
// notion). It returns nil and records the step if the exact spent cost plus
// the step's cost stays within the budget. Otherwise it returns a
// *BudgetExceededError (wrapping ErrBudgetExceeded) and changes nothing; the
// caller must not run the step. x = +Inf (no privacy) is always refused; a
// negative or NaN x is an ErrInvalid error.
func (f *Filter) Spend(x float64) error {
	total, err := f.fits(x)
	if err != nil {
		return err
	}
	if total == nil {
		return &BudgetExceededError{Notion: f.notion, Requested: x, Remaining: f.Remaining(), Budget: f.budget}
	}
	f.spent = total
	f.steps++
	return nil
}

// CanSpend reports whether Spend(x) would accept x, without recording it.
func (f *Filter) CanSpend(x float64) bool {
	total, err := f.fits(x)
	return total != nil && err == nil
}

// fits returns spent + cost(x) if it is within the budget, else nil.
func (f *Filter) fits(x float64) (*big.Int, error) {
	if !(x >= 0) {
		return nil, fmt.Errorf("%w: %s step %s = %v must be ≥ 0", ErrInvalid, f.notion, paramName(f.notion), x)
	}
	if math.IsInf(x, 1) {
		return nil, nil
	}
	t := fixedInto(new(big.Int), x, f.notion == NotionGDP)
	t.Add(t, f.spent)
	if t.Cmp(f.bcost) > 0 {
		return nil, nil
	}
	return t, nil
}

// Spent returns what the accepted steps have spent, in the filter's
// parameter, rounded up: √(Σμᵢ²) for GDP, Σρᵢ for zCDP, Σεᵢ for pure DP.
func (f *Filter) Spent() float64 {
	if f.notion == NotionGDP {
		return fixedSqrtUp(f.spent)
	}
	return fixedUp(f.spent)
}

// Remaining returns the largest parameter x for which Spend(x) would succeed
// now (rounded down): √(μ² − Σμᵢ²), ρ − Σρᵢ or ε − Σεᵢ.
func (f *Filter) Remaining() float64 { return f.PerStep(1) }

// PerStep returns the largest parameter x such that n further steps of x all
// fit in the remaining budget (exactly, for the float64 x returned): the way
// to split a budget evenly without the last step being refused through
// rounding. n must be ≥ 1.
func (f *Filter) PerStep(n int) float64 {
	if n < 1 {
		panic(fmt.Sprintf("privacy: Filter.PerStep(%d) needs n ≥ 1", n))
	}
	r := new(big.Int).Sub(f.bcost, f.spent)
	if r.Sign() <= 0 {
		return 0
	}
	// ⌊r/n⌋ in fixed point: the float64 below it fits n times (x·n ≤ r).
	r.Quo(r, big.NewInt(int64(n)))
	var x float64
	if f.notion == NotionGDP {
		x = fixedSqrtDown(r)
	} else {
		x = fixedDown(r)
	}
	return x
}

// Exhausted reports whether no step with a positive parameter can be
// accepted any more.
func (f *Filter) Exhausted() bool { return f.Remaining() == 0 }

// Guarantee returns what the accepted steps have spent, as a Guarantee in the
// filter's notion (Value = Spent()). It is a certified guarantee of the steps
// so far when their parameters were fixed in advance; when they were chosen
// adaptively, a running total is an odometer reading, and the certified
// guarantee of the interaction is the budget (BudgetGuarantee; docs/accountant.md
// §2.6, docs/privacy-model.md rule 3).
func (f *Filter) Guarantee() Guarantee { return Guarantee{Notion: f.notion, Value: f.Spent()} }

// BudgetGuarantee returns the guarantee the filter certifies for the whole
// interaction, however the parameters were chosen: its budget.
func (f *Filter) BudgetGuarantee() Guarantee { return Guarantee{Notion: f.notion, Value: f.budget} }

// filterJSON is the persisted form of a Filter. SpentExact is the exact spent
// cost (Σμᵢ², Σρᵢ or Σεᵢ) as a rational "p/q"; Spent and Remaining are for
// reading only and are recomputed on load.
type filterJSON struct {
	Notion     Notion  `json:"notion"`
	Budget     float64 `json:"budget"`
	Spent      float64 `json:"spent"`
	Remaining  float64 `json:"remaining"`
	SpentExact string  `json:"spent_exact"`
	Steps      int     `json:"steps"`
}

// MarshalJSON writes the filter's state, including the exact spent cost.
func (f *Filter) MarshalJSON() ([]byte, error) {
	return json.Marshal(filterJSON{
		Notion: f.notion, Budget: f.budget, Spent: f.Spent(), Remaining: f.Remaining(),
		SpentExact: fixedRatString(f.spent), Steps: f.steps,
	})
}

// UnmarshalJSON restores a filter written by MarshalJSON. It validates the
// notion and budget, and that the spent cost is a non-negative rational not
// above the budget.
func (f *Filter) UnmarshalJSON(b []byte) error {
	var j filterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if err := checkBudget(j.Notion, j.Budget); err != nil {
		return fmt.Errorf("privacy filter state: %w", err)
	}
	spent, err := fixedParseRat(j.SpentExact)
	if err != nil || spent.Sign() < 0 {
		return fmt.Errorf("%w: privacy filter state: spent_exact %q must be a rational ≥ 0 written by MarshalJSON",
			ErrInvalid, j.SpentExact)
	}
	if j.Steps < 0 {
		return fmt.Errorf("%w: privacy filter state: steps = %d must be ≥ 0", ErrInvalid, j.Steps)
	}
	g := Filter{notion: j.Notion, budget: j.Budget, spent: spent, steps: j.Steps}
	g.bcost = g.cost(g.budget)
	if spent.Cmp(g.bcost) > 0 {
		return fmt.Errorf("%w: privacy filter state: spent %v exceeds the budget %v", ErrInvalid, g.Spent(), j.Budget)
	}
	*f = g
	return nil
}
