// Package report renders results: line plots with shaded confidence bands
// (SVG and PNG through gonum/plot, one or several panels per figure) and
// small tables (markdown and aligned text). It is used by the simulator and
// the reproductions and knows nothing about bandits.
//
// Figures are values: build a Figure, then write it with WriteSVG, WritePNG
// or Save. Rendering allocates freely; it is a cold path.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line of a panel, with an optional band (Lo, Hi), e.g. a 95%
// confidence band around a mean. X, Y (and Lo, Hi when set) have equal
// lengths. Points with a non-finite coordinate, or a non-positive one on a
// log axis, are skipped.
type Series struct {
	Label  string
	X, Y   []float64
	Lo, Hi []float64 // optional; both or neither
	// Dashed draws the line dashed (for references such as a bound).
	Dashed bool
	// Color overrides the palette colour (nil: the i-th palette colour).
	Color color.Color
	// Points draws each (X, Y) as a marker, with Lo–Hi as a vertical error
	// bar, instead of a line and a band: for values at categorical x
	// positions (e.g. one estimate per estimator).
	Points bool
}

// Panel is one plot: axes, labels, and its series.
type Panel struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Series                []Series
	// NoLegend hides the legend (by default a panel with labelled series
	// shows one, top left).
	NoLegend bool
	// LegendRight puts the legend in the top right corner instead.
	LegendRight bool
}

// Figure is one or more panels on a grid, row-major.
type Figure struct {
	Panels []Panel
	// Cols is the number of panels per row (default: all in one row).
	Cols int
	// PanelWidth and PanelHeight are the size of each panel (defaults
	// 5in × 3.6in).
	PanelWidth, PanelHeight vg.Length
	// NoEmbedFonts writes SVGs that only name their fonts (Liberation)
	// instead of embedding them. Embedded fonts make the SVG portable.
	NoEmbedFonts bool
}

// Palette is the colour cycle of series without an explicit colour: the
// Okabe–Ito colour-blind-safe set (without yellow) followed by five darker
// tones. Series beyond its length repeat colours with dashes.
var Palette = []color.Color{
	rgb(0x00, 0x72, 0xB2), // blue
	rgb(0xD5, 0x5E, 0x00), // vermillion
	rgb(0x00, 0x9E, 0x73), // bluish green
	rgb(0xCC, 0x79, 0xA7), // reddish purple
	rgb(0xE6, 0x9F, 0x00), // orange
	rgb(0x56, 0xB4, 0xE9), // sky blue
	rgb(0x00, 0x00, 0x00), // black
	rgb(0x88, 0x22, 0x55), // wine
	rgb(0x44, 0x77, 0x33), // olive green
	rgb(0x33, 0x22, 0x88), // indigo
	rgb(0x99, 0x99, 0x33), // khaki
	rgb(0x66, 0x66, 0x66), // grey
}

func rgb(r, g, b uint8) color.Color { return color.NRGBA{R: r, G: g, B: b, A: 0xff} }

// bandAlpha is the opacity of a band relative to its line.
const bandAlpha = 0.22

// ErrEmpty is returned when a figure has no panels.
var ErrEmpty = errors.New("report: figure has no panels")

func (f Figure) grid() (rows, cols int, w, h vg.Length) {
	cols = f.Cols
	if cols <= 0 || cols > len(f.Panels) {
		cols = len(f.Panels)
	}
	rows = (len(f.Panels) + cols - 1) / cols
	w, h = f.PanelWidth, f.PanelHeight
	if w <= 0 {
		w = 5 * vg.Inch
	}
	if h <= 0 {
		h = 3.6 * vg.Inch
	}
	return rows, cols, vg.Length(cols) * w, vg.Length(rows) * h
}

// draw renders the figure on c.
func (f Figure) draw(c vg.CanvasSizer) error {
	if len(f.Panels) == 0 {
		return ErrEmpty
	}
	rows, cols, _, _ := f.grid()
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := p.plot()
		if err != nil {
			return fmt.Errorf("report: panel %d (%q): %w", i+1, p.Title, err)
		}
		plots[i/cols][i%cols] = pl
	}
	dc := draw.New(c)
	if rows == 1 && cols == 1 {
		plots[0][0].Draw(dc)
		return nil
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	return nil
}

// WriteSVG writes the figure as SVG (fonts embedded unless NoEmbedFonts).
func (f Figure) WriteSVG(w io.Writer) error {
	if len(f.Panels) == 0 {
		return ErrEmpty
	}
	_, _, W, H := f.grid()
	c := vgsvg.NewWith(vgsvg.UseWH(W, H), vgsvg.EmbedFonts(!f.NoEmbedFonts))
	if err := f.draw(c); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// WritePNG writes the figure as PNG at dpi dots per inch (≤ 0: 150).
func (f Figure) WritePNG(w io.Writer, dpi int) error {
	if dpi <= 0 {
		dpi = 150
	}
	if len(f.Panels) == 0 {
		return ErrEmpty
	}
	_, _, W, H := f.grid()
	c := vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(dpi))
	if err := f.draw(c); err != nil {
		return err
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// Save writes base+".svg" and base+".png" (150 dpi).
func (f Figure) Save(base string) error {
	var svg, png bytes.Buffer
	if err := f.WriteSVG(&svg); err != nil {
		return err
	}
	if err := f.WritePNG(&png, 0); err != nil {
		return err
	}
	if err := os.WriteFile(base+".svg", svg.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(base+".png", png.Bytes(), 0o644)
}

// plot builds the gonum plot of a panel.
func (p Panel) plot() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Add(plotter.NewGrid())
	pl.X.Tick.Marker, pl.Y.Tick.Marker = shortTicks{plot.DefaultTicks{}}, shortTicks{plot.DefaultTicks{}}
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	pl.Legend.Top = true
	pl.Legend.Left = !p.LegendRight
	pl.Legend.Padding = vg.Millimeter
	pl.Legend.TextStyle.Font.Size = vg.Points(8)

	ok := func(x, y float64) bool {
		return !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0) &&
			(!p.LogX || x > 0) && (!p.LogY || y > 0)
	}
	// Bands first, so that every line is drawn on top of every band.
	for i, s := range p.Series {
		if len(s.Y) != len(s.X) || (s.Lo == nil) != (s.Hi == nil) ||
			(s.Lo != nil && (len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X))) {
			return nil, fmt.Errorf("series %q: X, Y, Lo, Hi lengths differ", s.Label)
		}
		if s.Lo == nil || s.Points {
			continue
		}
		var upper, lower plotter.XYs
		for j := range s.X {
			if ok(s.X[j], s.Lo[j]) && ok(s.X[j], s.Hi[j]) {
				upper = append(upper, plotter.XY{X: s.X[j], Y: s.Hi[j]})
				lower = append(lower, plotter.XY{X: s.X[j], Y: s.Lo[j]})
			}
		}
		if len(upper) < 2 {
			continue
		}
		ring := make(plotter.XYs, 0, 2*len(upper))
		ring = append(ring, upper...)
		for j := len(lower) - 1; j >= 0; j-- {
			ring = append(ring, lower[j])
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		poly.Color = fade(seriesColor(s, i), bandAlpha)
		poly.LineStyle.Width = 0
		pl.Add(poly)
	}
	for i, s := range p.Series {
		var pts plotter.XYs
		for j := range s.X {
			if ok(s.X[j], s.Y[j]) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		if s.Points {
			if err := addPoints(pl, s, seriesColor(s, i), ok, p.NoLegend); err != nil {
				return nil, err
			}
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = seriesColor(s, i)
		line.Width = vg.Points(1.3)
		if s.Dashed || (s.Color == nil && i >= len(Palette)) {
			line.Dashes = dashes[(i/len(Palette))%len(dashes)]
			if s.Dashed && len(line.Dashes) == 0 {
				line.Dashes = dashes[1]
			}
		}
		pl.Add(line)
		if s.Label != "" && !p.NoLegend {
			pl.Legend.Add(s.Label, line)
		}
	}
	return pl, nil
}

// addPoints draws a Points series: a marker per point and, with Lo/Hi, a
// vertical error bar.
func addPoints(pl *plot.Plot, s Series, c color.Color, ok func(x, y float64) bool, noLegend bool) error {
	var pts plotter.XYs
	var bars plotterErrPoints
	for j := range s.X {
		if !ok(s.X[j], s.Y[j]) {
			continue
		}
		pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
		if s.Lo != nil && ok(s.X[j], s.Lo[j]) && ok(s.X[j], s.Hi[j]) {
			bars.XYs = append(bars.XYs, plotter.XY{X: s.X[j], Y: s.Y[j]})
			bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{s.Y[j] - s.Lo[j], s.Hi[j] - s.Y[j]})
		}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = c
	sc.GlyphStyle.Radius = vg.Points(3)
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	pl.Add(sc)
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return err
		}
		eb.LineStyle.Color = c
		eb.LineStyle.Width = vg.Points(1.3)
		pl.Add(eb)
	}
	if s.Label != "" && !noLegend {
		pl.Legend.Add(s.Label, sc)
	}
	return nil
}

// plotterErrPoints is points with vertical errors (plotter.YErrorer).
type plotterErrPoints struct {
	plotter.XYs
	plotter.YErrors
}

// shortTicks relabels major ticks in the shortest form (250, not 250.00).
type shortTicks struct{ plot.Ticker }

func (s shortTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := s.Ticker.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

var dashes = [][]vg.Length{
	nil,
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

func seriesColor(s Series, i int) color.Color {
	if s.Color != nil {
		return s.Color
	}
	return Palette[i%len(Palette)]
}

// fade returns c with its opacity multiplied by a (non-premultiplied).
func fade(c color.Color, a float64) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = uint8(math.Round(float64(n.A) * a))
	return n
}
