package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/dpbandit/dpbandit/privacy"
)

// privacyCmd is `dpbandit privacy`: the accountant on the command line.
type privacyCmd struct {
	Convert   privacyConvertCmd   `cmd:"" help:"Convert a GDP or zCDP guarantee to (ε, δ)-DP: ε for a given δ, or δ for a given ε."`
	Calibrate privacyCalibrateCmd `cmd:"" help:"Gaussian noise for a target (ε, δ): the GDP μ or zCDP ρ it needs, and σ."`
	SGM       privacySGMCmd       `cmd:"" name:"sgm" help:"(ε, δ) of T steps of the Poisson-subsampled Gaussian (DP-SGD), by Rényi DP."`
	Compose   privacyComposeCmd   `cmd:"" help:"Compose guarantees: GDP √(Σμ²), zCDP Σρ, or pure DP Σε."`
	RNM       privacyRNMCmd       `cmd:"" name:"rnm" help:"Report-Noisy-Max: ε of Laplace noise, or μ (GDP) of heterogeneous Gaussian noise, on K scores."`
	Policy    privacyPolicyCmd    `cmd:"" help:"A policy's privacy statement for K arms and horizon T, without running it."`
}

func (privacyCmd) Help() string {
	return `The privacy accountant (package privacy). Notions:

GDP (μ-Gaussian DP, Dong–Roth–Su): the mechanism is as hard to tell apart
as N(0,1) from N(μ,1). A Gaussian mechanism with L2 sensitivity Δ and noise
σ is exactly (Δ/σ)-GDP; GDP composes as √(Σμ²) and converts to (ε, δ)
exactly.

zCDP (ρ-zero-concentrated DP, Bun–Steinke): Rényi divergence ≤ ρα at every
order α. A Gaussian mechanism is Δ²/(2σ²)-zCDP; zCDP composes as Σρ; the
conversion to (ε, δ) is the tighter of CKS20 and BS16.

Pure DP (ε-DP): the Laplace mechanism with scale b is Δ/b-DP; composes as Σε.

Every value printed is rounded in the safe direction: a mechanism's ε, μ
and ρ (convert, compose, sgm, rnm) up; the μ or ρ a target allows
(calibrate) down, and its σ up.

Examples:
  dpbandit privacy convert --gdp 1 --delta 1e-5        # ε = 4.3772
  dpbandit privacy calibrate --epsilon 1 --delta 1e-5  # μ = 0.26805, σ = 3.7306
  dpbandit privacy sgm --q 0.01 --sigma 1.1 --steps 1000 --delta 1e-5
  dpbandit privacy compose --gdp 1,1,1,1               # μ = 2`
}

type privacyConvertCmd struct {
	GDP     *float64 `name:"gdp" placeholder:"MU" help:"GDP parameter μ ≥ 0 (exact conversion)."`
	ZCDP    *float64 `name:"zcdp" placeholder:"RHO" help:"zCDP parameter ρ ≥ 0 (tighter of CKS20 and BS16)."`
	Delta   *float64 `name:"delta" placeholder:"D" help:"Target δ in (0, 1): print the smallest ε."`
	Epsilon *float64 `name:"epsilon" placeholder:"E" help:"Target ε ≥ 0: print the smallest δ."`
	JSON    bool     `name:"json" help:"Print a JSON object instead of a table."`
}

func (privacyConvertCmd) Help() string {
	return `Give exactly one of --gdp and --zcdp, and exactly one of --delta and --epsilon.
Prints a table, one name and value a line; --json prints the same as a JSON
object.

  $ dpbandit privacy convert --gdp 1 --delta 1e-5
  epsilon  4.377178095681233
  method   gdp-exact

  $ dpbandit privacy convert --gdp 1 --epsilon 1
  delta   0.12693673750664475
  method  gdp-exact

  $ dpbandit privacy convert --zcdp 0.5 --delta 1e-5 --json
  {
    "epsilon": 4.728386984943324,
    "method": "cks20"
  }

For a purely Gaussian mechanism use --gdp with μ = √(2ρ): it is exact and
tighter than any zCDP conversion.`
}

func (c *privacyConvertCmd) Run(g *Globals) error {
	if (c.GDP == nil) == (c.ZCDP == nil) {
		return badInput("give exactly one of --gdp (μ ≥ 0) and --zcdp (ρ ≥ 0)")
	}
	if (c.Delta == nil) == (c.Epsilon == nil) {
		return badInput("give exactly one of --delta (0 < δ < 1) and --epsilon (ε ≥ 0)")
	}
	if c.GDP != nil {
		if err := flagAtLeast("gdp", *c.GDP, 0); err != nil {
			return err
		}
	} else if err := flagAtLeast("zcdp", *c.ZCDP, 0); err != nil {
		return err
	}
	out := &result{}
	if c.Delta != nil {
		if err := flagDelta("delta", *c.Delta); err != nil {
			return err
		}
		var eps float64
		var method string
		var err error
		if c.GDP != nil {
			eps, err = privacy.GDPEpsilon(*c.GDP, *c.Delta)
			method = privacy.MethodGDP
		} else {
			eps, method, err = privacy.ZCDPEpsilon(*c.ZCDP, *c.Delta)
		}
		if err != nil {
			return err
		}
		out.add("epsilon", eps).add("method", method)
	} else {
		if err := flagAtLeast("epsilon", *c.Epsilon, 0); err != nil {
			return err
		}
		var delta float64
		var method string
		var err error
		if c.GDP != nil {
			delta, err = privacy.GDPDelta(*c.GDP, *c.Epsilon)
			method = privacy.MethodGDP
		} else {
			delta, method, err = privacy.ZCDPDelta(*c.ZCDP, *c.Epsilon)
		}
		if err != nil {
			return err
		}
		out.add("delta", delta).add("method", method)
	}
	return out.write(g.Stdout, c.JSON)
}

type privacyCalibrateCmd struct {
	Epsilon     float64 `name:"epsilon" required:"" placeholder:"E" help:"Target ε > 0."`
	Delta       float64 `name:"delta" required:"" placeholder:"D" help:"Target δ in (0, 1)."`
	Notion      string  `name:"notion" enum:"gdp,zcdp" default:"gdp" help:"gdp: exact analytic Gaussian (least noise); zcdp: ρ for zCDP accounting (${enum})."`
	Sensitivity float64 `name:"sensitivity" default:"1" placeholder:"DELTA2" help:"L2 sensitivity Δ > 0 of the query; σ is the noise standard deviation for it."`
	JSON        bool    `name:"json" help:"Print a JSON object instead of a table."`
}

func (privacyCalibrateCmd) Help() string {
	return `The Gaussian mechanism N(0, σ²) on a query of L2 sensitivity Δ.

--notion gdp (default): the largest μ with μ-GDP ⇒ (ε, δ)-DP, and σ = Δ/μ. The
conversion is exact (Balle–Wang's analytic Gaussian), so this σ is optimal.
--notion zcdp: the largest ρ with ρ-zCDP ⇒ (ε, δ)-DP (CKS20), and σ = Δ/√(2ρ),
for when the mechanism is composed with others in zCDP.

  dpbandit privacy calibrate --epsilon 1 --delta 1e-5                → {"gdp": 0.26805, "sigma": 3.7306}
  dpbandit privacy calibrate --epsilon 1 --delta 1e-5 --notion zcdp  → {"rho": 0.030557, "sigma": 4.0451}`
}

func (c *privacyCalibrateCmd) Run(g *Globals) error {
	if err := flagPositive("epsilon", c.Epsilon); err != nil {
		return err
	}
	if err := flagDelta("delta", c.Delta); err != nil {
		return err
	}
	if err := flagPositive("sensitivity", c.Sensitivity); err != nil {
		return err
	}
	out := &result{}
	switch c.Notion {
	case "zcdp":
		sigma, rho, method, err := privacy.GaussianSigmaZCDP(c.Epsilon, c.Delta, c.Sensitivity)
		if err != nil {
			return err
		}
		out.add("rho", rho).add("sigma", sigma).add("method", method)
	default:
		sigma, mu, err := privacy.GaussianSigmaGDP(c.Epsilon, c.Delta, c.Sensitivity)
		if err != nil {
			return err
		}
		out.add("gdp", mu).add("sigma", sigma).add("method", privacy.MethodGDP)
	}
	out.add("sensitivity", c.Sensitivity)
	return out.write(g.Stdout, c.JSON)
}

type privacySGMCmd struct {
	Q          float64 `name:"q" required:"" placeholder:"Q" help:"Poisson sampling rate q in (0, 1]."`
	Sigma      float64 `name:"sigma" required:"" placeholder:"S" help:"Noise multiplier σ > 0 (noise std ÷ L2 sensitivity)."`
	Steps      int     `name:"steps" required:"" placeholder:"N" help:"Number of steps T ≥ 1."`
	Delta      float64 `name:"delta" required:"" placeholder:"D" help:"Target δ in (0, 1)."`
	Grid       string  `name:"grid" enum:"default,fractional" default:"default" help:"Rényi orders: default = 2..64 ∪ {128,256,512,1024}; fractional adds 1.1..10.9 (dp_accounting's grid) (${enum})."`
	Conversion string  `name:"conversion" enum:"best,classic,improved" default:"best" help:"RDP→(ε,δ): Mironov's classic, Balle et al.'s improved, or the better (${enum})."`
	JSON       bool    `name:"json" help:"Print a JSON object instead of a table."`
}

func (privacySGMCmd) Help() string {
	return `Each step samples every record with probability q and adds N(0, σ²Δ²) to a
sum with L2 sensitivity Δ (add/remove neighbours). The RDP curve of one step
is exact (Mironov–Talwar–Zhang 2019), T steps add, and the result is
converted at the best order of the grid. "at_edge" warns that the best order
is the first or last of the grid, so another grid may do better.

  dpbandit privacy sgm --q 0.01 --sigma 1.1 --steps 1000 --delta 1e-5   → ε = 1.7253 at α = 9`
}

func (c *privacySGMCmd) Run(g *Globals) error {
	if !(c.Q > 0 && c.Q <= 1) {
		return badInput("--q %v is outside its valid range (0, 1]", c.Q)
	}
	if err := flagPositive("sigma", c.Sigma); err != nil {
		return err
	}
	if c.Steps < 1 {
		return badInput("--steps %d is outside its valid range [1, ∞)", c.Steps)
	}
	if err := flagDelta("delta", c.Delta); err != nil {
		return err
	}
	orders := privacy.DefaultOrders()
	if c.Grid == "fractional" {
		orders = privacy.FractionalOrders()
	}
	curve, err := privacy.SubsampledGaussianCurve(c.Q, c.Sigma, orders)
	if err != nil {
		return err
	}
	curve = curve.Scale(float64(c.Steps))
	var conv privacy.RDPConversion
	switch c.Conversion {
	case "classic":
		conv, err = curve.EpsilonClassic(c.Delta)
	case "improved":
		conv, err = curve.EpsilonImproved(c.Delta)
	default:
		conv, err = curve.Epsilon(c.Delta)
	}
	if err != nil {
		return err
	}
	out := &result{}
	out.add("epsilon", conv.Epsilon).add("order", conv.Order).add("method", conv.Method).add("at_edge", conv.AtEdge)
	if conv.Warning != "" {
		out.add("warning", conv.Warning)
	}
	return out.write(g.Stdout, c.JSON)
}

type privacyComposeCmd struct {
	GDP   []float64 `name:"gdp" sep:"," placeholder:"MU,..." help:"GDP parameters μᵢ ≥ 0: prints √(Σμᵢ²)."`
	ZCDP  []float64 `name:"zcdp" sep:"," placeholder:"RHO,..." help:"zCDP parameters ρᵢ ≥ 0: prints Σρᵢ."`
	Pure  []float64 `name:"pure" sep:"," placeholder:"EPS,..." help:"pure-DP parameters εᵢ ≥ 0: prints Σεᵢ."`
	Delta *float64  `name:"delta" placeholder:"D" help:"Also print the composed ε at this δ in (0, 1)."`
	JSON  bool      `name:"json" help:"Print a JSON object instead of a table."`
}

func (privacyComposeCmd) Help() string {
	return `Give exactly one of --gdp, --zcdp and --pure, with a comma-separated list.
These are the compositions for parameters fixed in advance; for adaptively
chosen parameters use a privacy filter with a budget fixed up front.

  dpbandit privacy compose --gdp 0.5,0.5,0.5,0.5          → {"gdp": 1}
  dpbandit privacy compose --zcdp 0.1,0.2 --delta 1e-5    → {"zcdp": 0.3, "epsilon": ...}`
}

func (c *privacyComposeCmd) Run(g *Globals) error {
	set := 0
	for _, l := range [][]float64{c.GDP, c.ZCDP, c.Pure} {
		if len(l) > 0 {
			set++
		}
	}
	if set != 1 {
		return badInput("give exactly one of --gdp, --zcdp and --pure, each a comma-separated list of values ≥ 0")
	}
	var (
		notion privacy.Notion
		flag   string
		list   []float64
	)
	switch {
	case len(c.GDP) > 0:
		notion, flag, list = privacy.NotionGDP, "gdp", c.GDP
	case len(c.ZCDP) > 0:
		notion, flag, list = privacy.NotionZCDP, "zcdp", c.ZCDP
	default:
		notion, flag, list = privacy.NotionPure, "pure", c.Pure
	}
	for _, v := range list {
		if err := flagAtLeast(flag, v, 0); err != nil {
			return err
		}
	}
	var v float64
	var err error
	switch notion {
	case privacy.NotionGDP:
		v, err = privacy.GDPCompose(list...)
	case privacy.NotionZCDP:
		v, err = privacy.ZCDPCompose(list...)
	default:
		v, err = privacy.PureCompose(list...)
	}
	if err != nil {
		return err
	}
	out := &result{}
	out.add(flag, v)
	if c.Delta != nil {
		if err := flagDelta("delta", *c.Delta); err != nil {
			return err
		}
		eps, method, err := privacy.Guarantee{Notion: notion, Value: v}.Epsilon(*c.Delta)
		if err != nil {
			return err
		}
		out.add("epsilon", eps).add("method", method).add("delta", *c.Delta)
	}
	return out.write(g.Stdout, c.JSON)
}

type privacyRNMCmd struct {
	Laplace     *float64  `name:"laplace" placeholder:"B" help:"Laplace noise scale b > 0 on every score: prints ε."`
	Sigma       []float64 `name:"sigma" sep:"," placeholder:"S1,..." help:"Gaussian noise σᵢ > 0, one per score: prints μ (GDP)."`
	Sensitivity []float64 `name:"sensitivity" sep:"," default:"1" placeholder:"S1,..." help:"Score sensitivity s > 0: one value, or one per score with --sigma."`
	AllScores   bool      `name:"all-scores" help:"A neighbour may move every score (default: one score moves, the bandit case)."`
	Delta       *float64  `name:"delta" placeholder:"D" help:"With --sigma, also print ε at this δ in (0, 1)."`
	JSON        bool      `name:"json" help:"Print a JSON object instead of a table."`
}

func (privacyRNMCmd) Help() string {
	return `Report-Noisy-Max releases only argmax_i (fᵢ + Zᵢ) of K scores (Ou et al., AISTATS 2024, App C; docs/accountant.md §1.5).
Give exactly one of --laplace and --sigma.

By default a neighbour moves one score by at most its sensitivity: the bandit
case, where one reward enters one arm's statistic. --all-scores lets it move
every score. Laplace RNM is s/b-DP (one score) or 2s/b-DP (all scores);
Gaussian RNM is max_i sᵢ/σᵢ-GDP (one score) or ‖(sᵢ/σᵢ)‖₂-GDP (all).

  dpbandit privacy rnm --laplace 2                       → {"epsilon": 0.5}
  dpbandit privacy rnm --laplace 2 --all-scores          → {"epsilon": 1}
  # one Thompson-sampling round, arms with n = 1 and n = 2 pulls: 1/√2-GDP
  dpbandit privacy rnm --sigma 0.70711,0.57735 --sensitivity 0.5,0.33333 --delta 1e-6`
}

func (c *privacyRNMCmd) Run(g *Globals) error {
	if (c.Laplace == nil) == (len(c.Sigma) == 0) {
		return badInput("give exactly one of --laplace (scale b > 0) and --sigma (σᵢ > 0, one per score)")
	}
	for _, s := range c.Sensitivity {
		if err := flagPositive("sensitivity", s); err != nil {
			return err
		}
	}
	n := privacy.OneScore
	if c.AllScores {
		n = privacy.AllScores
	}
	out := &result{}
	if c.Laplace != nil {
		if len(c.Sensitivity) != 1 {
			return badInput("--sensitivity: Laplace RNM takes one sensitivity for every score (got %d values)", len(c.Sensitivity))
		}
		if err := flagPositive("laplace", *c.Laplace); err != nil {
			return err
		}
		eps, err := privacy.LaplaceRNMEpsilon(c.Sensitivity[0], *c.Laplace, n)
		if err != nil {
			return err
		}
		out.add("epsilon", eps).add("neighbours", n.String())
		return out.write(g.Stdout, c.JSON)
	}
	for _, s := range c.Sigma {
		if err := flagPositive("sigma", s); err != nil {
			return err
		}
	}
	sens := c.Sensitivity
	if len(sens) == 1 {
		sens = slices.Repeat(sens, len(c.Sigma))
	}
	if len(sens) != len(c.Sigma) {
		return badInput("--sensitivity: give one value, or one per score (%d σ values, %d sensitivities)", len(c.Sigma), len(sens))
	}
	mu, err := privacy.GaussianRNMMu(sens, c.Sigma, n)
	if err != nil {
		return err
	}
	out.add("gdp", mu).add("neighbours", n.String())
	if c.Delta != nil {
		if err := flagDelta("delta", *c.Delta); err != nil {
			return err
		}
		eps, err := privacy.GDPEpsilon(mu, *c.Delta)
		if err != nil {
			return err
		}
		out.add("epsilon", eps).add("delta", *c.Delta)
	}
	return out.write(g.Stdout, c.JSON)
}

// flagDelta checks 0 < δ < 1.
func flagDelta(name string, v float64) error {
	if !(v > 0 && v < 1) {
		return badInput("--%s %v is outside its valid range (0, 1)", name, v)
	}
	return nil
}

// flagAtLeast checks a finite v ≥ lo.
func flagAtLeast(name string, v, lo float64) error {
	if !(v >= lo) || math.IsInf(v, 0) {
		return badInput("--%s %v is outside its valid range [%v, ∞)", name, v, lo)
	}
	return nil
}

// flagPositive checks a finite v > 0.
func flagPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return badInput("--%s %v is outside its valid range (0, ∞)", name, v)
	}
	return nil
}

// result is an ordered set of key/value pairs, printed as a JSON object or
// as an aligned two-column table.
type result struct {
	keys []string
	vals []any
}

func (r *result) add(k string, v any) *result {
	r.keys = append(r.keys, k)
	r.vals = append(r.vals, v)
	return r
}

func (r *result) write(w io.Writer, asJSON bool) error {
	if asJSON {
		m := make(map[string]any, len(r.keys))
		for i, k := range r.keys {
			m[k] = r.vals[i]
			if f, ok := r.vals[i].(float64); ok && math.IsInf(f, 0) {
				m[k] = strconv.FormatFloat(f, 'g', -1, 64) // JSON has no infinities
			}
		}
		return writeJSON(w, m)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, k := range r.keys {
		v := r.vals[i]
		s := fmt.Sprint(v)
		if f, ok := v.(float64); ok {
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\n", k, s)
	}
	return tw.Flush()
}
