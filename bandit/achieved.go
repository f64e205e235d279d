package bandit

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpbandit/dpbandit/privacy"
)

// Achievement says how a policy's privacy report compares with a budget
// [Target].
type Achievement struct {
	Basis  string  // BasisPaper or BasisCertified: the value compared
	Notion string  // "epsilon" (at the target's δ) or "gdp"
	Value  float64 // the policy's value
	Target float64 // the budget's value in the same notion
	Meets  bool    // Value ≤ Target (relative tolerance 1e-9)
}

// String renders the comparison, e.g. "certified ε = 0.98 ≤ 1".
func (a Achievement) String() string {
	sym := "ε"
	if a.Notion == "gdp" {
		sym = "μ"
	}
	rel := "≤"
	if !a.Meets {
		rel = ">"
	}
	return fmt.Sprintf("%s %s = %s %s %s", a.Basis, sym, num6(a.Value), rel, num6(a.Target))
}

// num6 renders x with 6 significant digits, and ±∞ as symbols (as
// report.Num(x, 6) does; package bandit does not import report).
func num6(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// Achieved compares a policy's report with a budget on the budget's basis:
// the paper's value when the basis is BasisPaper and the paper's value is
// present and valid, else the certified value. An (ε, δ) budget compares ε
// at δ; a μ-GDP budget compares μ when the guarantee is GDP, else ε at the
// budget's δ (or delta, when the budget has none) against μ-GDP's ε.
func Achieved(rep privacy.Report, t Target, delta float64) (Achievement, error) {
	g, basis := rep.Certified, BasisCertified
	if t.Basis == BasisPaper && rep.Paper != nil && rep.PaperValid {
		g, basis = *rep.Paper, BasisPaper
	}
	a := Achievement{Basis: basis}
	d := t.Delta
	if d == 0 {
		d = delta
	}
	if t.Mu > 0 && g.Notion == privacy.NotionGDP {
		a.Notion, a.Value, a.Target = "gdp", g.Value, t.Mu
	} else {
		eps, _, err := g.Epsilon(d)
		if err != nil {
			return a, err
		}
		target := t.Epsilon
		if t.Mu > 0 {
			if target, err = privacy.GDPEpsilon(t.Mu, d); err != nil {
				return a, err
			}
		}
		a.Notion, a.Value, a.Target = "epsilon", eps, target
	}
	a.Meets = a.Value <= a.Target*(1+1e-9) && !math.IsNaN(a.Value)
	return a, nil
}
