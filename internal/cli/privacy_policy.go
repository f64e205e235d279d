package cli

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/report"
)

// privacyPolicyCmd is `dpbandit privacy policy`: a policy's privacy
// statement for a setting, without running it.
type privacyPolicyCmd struct {
	Policy  string  `help:"Policy spec name[:key=value,...] (see 'dpbandit policies')." required:"" placeholder:"SPEC"`
	Arms    int     `help:"Number of arms K (contextual policies: candidates per round)." required:"" placeholder:"K"`
	Dim     int     `help:"Feature dimension d (contextual policies only)." placeholder:"D"`
	Horizon count   `help:"Horizon T (1e6 style accepted)." required:"" placeholder:"T"`
	Delta   float64 `help:"δ at which ε is stated." default:"1e-6" placeholder:"D"`
	JSON    bool    `help:"Print the statement as JSON (the 'privacy' object of summary.json)."`
}

func (privacyPolicyCmd) Help() string {
	return `Prints what a policy guarantees for K arms and horizon T, without running it: the
certified value (the one dpbandit stands behind), the source paper's value (marked
invalid where docs/findings.md shows it is wrong), ε at the given δ, the neighbouring
relation and the derivation. The JSON form is the 'privacy' object of summary.json.

Example:

  dpbandit privacy policy --policy mts-gaussian:b=9,c=1000 --arms 5 --horizon 1e5 --delta 1e-6 --json`
}

// policyStatement resolves a policy spec and evaluates its report at delta.
func policyStatement(spec string, s bandit.Setting, delta float64) (privacy.Statement, error) {
	k, horizon := s.K, s.Horizon
	sp, err := bandit.ParseSpec(spec)
	if err != nil {
		return privacy.Statement{}, badInput("--policy: %v", err)
	}
	d, err := bandit.Lookup(bandit.AnyKind, sp.Name)
	if err != nil {
		return privacy.Statement{}, badInput("%v", err)
	}
	if k < 1 {
		return privacy.Statement{}, badInput("--arms %d is outside its valid range [1, ∞)", k)
	}
	if horizon < 1 {
		return privacy.Statement{}, badInput("--horizon %d is outside its valid range [1, ∞)", horizon)
	}
	if !(delta > 0 && delta < 1) {
		return privacy.Statement{}, badInput("--delta %v is outside its valid range (0, 1)", delta)
	}
	if d.NewContextual != nil && s.Dim < 1 {
		return privacy.Statement{}, badInput("--dim %d is outside its valid range [1, ∞): %s is a contextual policy and needs the feature dimension", s.Dim, d.Name)
	}
	p, err := d.CompleteFor(s, sp.Params)
	if err != nil {
		return privacy.Statement{}, badInput("%v", err)
	}
	rep := privacy.NotPrivate(d.Name, "the policy states no privacy guarantee")
	if d.Report != nil {
		if rep, err = d.Report(s, p); err != nil {
			return privacy.Statement{}, badInput("%v", err)
		}
	}
	st, err := rep.At(delta)
	if err != nil {
		return privacy.Statement{}, err
	}
	st.Params = p
	return st, nil
}

func (c *privacyPolicyCmd) Run(g *Globals) error {
	st, err := policyStatement(c.Policy, bandit.Setting{K: c.Arms, Horizon: int(c.Horizon), Dim: c.Dim}, c.Delta)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(g.Stdout, st)
	}
	var rows [][2]string
	add := func(k, v string) { rows = append(rows, [2]string{k, v}) }
	add("certified", guarantee(st.Certified))
	if st.Paper != nil {
		valid := "valid"
		if !st.PaperValid {
			valid = "INVALID, shown for reference only"
		}
		add("paper", guarantee(*st.Paper)+" ("+valid+")")
	}
	eps := fmt.Sprintf("ε at δ=%g", st.Delta)
	if st.Epsilon != nil {
		add(eps, report.Num(*st.Epsilon, 6)+" (certified; "+st.Method+")")
	} else {
		add(eps, "none (no guarantee)")
	}
	if st.PaperEpsilon != nil {
		add("paper ε", report.Num(*st.PaperEpsilon, 6))
	}
	add("neighbouring", st.Neighbouring)
	if len(st.Params) > 0 {
		keys := make([]string, 0, len(st.Params))
		for k := range st.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		kv := make([]string, len(keys))
		for i, k := range keys {
			kv[i] = k + "=" + report.Num(st.Params[k], 6)
		}
		add("params", strings.Join(kv, ", "))
	}
	if st.Derivation != "" {
		add("derivation", st.Derivation)
	}
	w := 0
	for _, r := range rows {
		w = max(w, utf8.RuneCountInString(r[0]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (K=%d, T=%d)\n", st.Mechanism, c.Arms, int(c.Horizon))
	for _, r := range rows {
		b.WriteString("  " + r[0] + ":" + strings.Repeat(" ", w-utf8.RuneCountInString(r[0])+1) + r[1] + "\n")
	}
	_, err = fmt.Fprint(g.Stdout, b.String())
	return err
}

func guarantee(g privacy.Guarantee) string {
	switch g.Notion {
	case privacy.NotionNone:
		return "none"
	case privacy.NotionGDP:
		return "μ-GDP, μ = " + report.Num(g.Value, 6)
	case privacy.NotionZCDP:
		return "ρ-zCDP, ρ = " + report.Num(g.Value, 6)
	case privacy.NotionPure:
		return "ε-DP, ε = " + report.Num(g.Value, 6)
	case privacy.NotionRDP:
		return "Rényi DP (curve)"
	}
	return string(g.Notion) + " " + report.Num(g.Value, 6)
}
