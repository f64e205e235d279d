package audit

import (
	"fmt"
	"slices"

	"github.com/dpbandit/dpbandit/report"
)

// Figure draws the audit in the trade-off plane (type I error FPR on x,
// type II error FNR on y; Dong, Roth & Su 2022): the certified trade-off
// curve (G_μ for a GDP certificate, the (ε, δ)-DP curve otherwise), the
// curve of the lower bound, the empirical trade-off of the chosen statistic
// on the selection runs, and the evaluation's box from the empirical point
// to the certified-free corner (PBHi, 1 − PALo) that the bound is computed
// from. A corner below the certified curve refutes the certificate.
func Figure(r *Result) report.Figure {
	const n = 201
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i) / (n - 1)
	}
	curve := func(f func(float64) float64) []float64 {
		ys := make([]float64, n)
		for i, x := range xs {
			ys[i] = f(x)
		}
		return ys
	}
	var cert, lower report.Series
	if r.MuCertified != nil && r.MuLower != nil {
		mc, ml := *r.MuCertified, *r.MuLower
		cert = report.Series{Label: fmt.Sprintf("certified G_μ, μ = %s", report.Num(mc, 4)), X: xs,
			Y: curve(func(a float64) float64 { return GaussianTradeOff(mc, a) })}
		lower = report.Series{Label: fmt.Sprintf("lower bound G_μ, μ = %s", report.Num(ml, 4)), X: xs, Dashed: true,
			Y: curve(func(a float64) float64 { return GaussianTradeOff(ml, a) })}
	} else {
		ec, el, d := r.EpsilonCertified, r.EpsilonLower, r.Delta
		cert = report.Series{Label: fmt.Sprintf("certified (ε, δ) = (%s, %g)", report.Num(ec, 4), d), X: xs,
			Y: curve(func(a float64) float64 { return DPTradeOff(ec, d, a) })}
		lower = report.Series{Label: fmt.Sprintf("lower bound ε = %s", report.Num(el, 4)), X: xs, Dashed: true,
			Y: curve(func(a float64) float64 { return DPTradeOff(el, d, a) })}
	}
	pts := slices.Clone(r.SelectionPoints)
	slices.SortFunc(pts, func(a, b Point) int {
		switch {
		case a.FPR < b.FPR:
			return -1
		case a.FPR > b.FPR:
			return 1
		}
		return 0
	})
	sel := report.Series{Label: "empirical, selection runs (chosen statistic)"}
	for _, p := range pts {
		sel.X = append(sel.X, p.FPR)
		sel.Y = append(sel.Y, p.FNR)
	}
	e, c := r.EmpiricalPoint, r.CertifiedPoint
	box := report.Series{Label: fmt.Sprintf("evaluation: empirical → %g%%-certified corner", 100*r.Confidence),
		X: []float64{e.FPR, c.FPR, c.FPR, e.FPR, e.FPR}, Y: []float64{e.FNR, e.FNR, c.FNR, c.FNR, e.FNR}}
	// A small diamond marks the certified corner, which the box around a
	// well-estimated point is too small to show.
	const h = 0.015
	mark := report.Series{Label: "", Color: report.Palette[3],
		X: []float64{c.FPR - h, c.FPR, c.FPR + h, c.FPR, c.FPR - h}, Y: []float64{c.FNR, c.FNR + h, c.FNR, c.FNR - h, c.FNR}}
	box.Color = report.Palette[3]
	diag := report.Series{Label: "", X: []float64{0, 1}, Y: []float64{1, 0}, Dashed: true, Color: report.Palette[11]}
	sym := "ε"
	if r.Param == "mu" {
		sym = "μ"
	}
	title := fmt.Sprintf("%s: %s ≥ %s (certified %s)", r.Mechanism, sym, report.Num(r.LowerBound, 4), report.Num(r.Certified, 4))
	return report.Figure{Panels: []report.Panel{{
		Title: title, XLabel: "type I error (FPR)", YLabel: "type II error (FNR)", LegendRight: true,
		Series: []report.Series{cert, lower, sel, box, mark, diag},
	}}}
}
