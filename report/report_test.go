package report_test

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/report"
)

func ExampleTable_Text() {
	tb := report.Table{Header: []string{"policy", "regret", "ε"}, Align: []report.Align{report.Left, report.Right, report.Right}}
	tb.AddRow("ts-gaussian", report.Num(198.4921, 4), "2.606e+04")
	tb.AddRow("mts-gaussian:b=10,c=5", report.Num(704.7, 4), report.Num(1110.32, 4))
	tb.Text(os.Stdout)
	// Output:
	// policy                 regret          ε
	// ts-gaussian             198.5  2.606e+04
	// mts-gaussian:b=10,c=5   704.7       1110
}

func ExampleTable_Markdown() {
	tb := report.Table{Header: []string{"α", "η (paper)", "η (tight)"}, Align: []report.Align{report.Left, report.Right, report.Right}}
	tb.AddRow("0", "651.49", "460.67")
	tb.AddRow("1", "2.875", "2.031")
	tb.AddRow("a|b", "", "")
	tb.Markdown(os.Stdout)
	// Output:
	// | α    | η (paper) | η (tight) |
	// | ---- | --------: | --------: |
	// | 0    |    651.49 |    460.67 |
	// | 1    |     2.875 |     2.031 |
	// | a\|b |           |           |
}

func TestNum(t *testing.T) {
	for x, want := range map[float64]string{1.0 / 3: "0.333333", 2: "2", math.Inf(1): "∞", math.Inf(-1): "-∞", 1e6: "1e+06"} {
		if got := report.Num(x, 6); got != want {
			t.Errorf("Num(%v) = %q, want %q", x, got, want)
		}
	}
}

func band(n int, scale float64) report.Series {
	s := report.Series{Label: "s", X: make([]float64, n), Y: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	for i := range n {
		x := float64(i + 1)
		s.X[i], s.Y[i] = x, scale*math.Log(x)
		s.Lo[i], s.Hi[i] = s.Y[i]-1, s.Y[i]+1
	}
	return s
}

func TestFigure(t *testing.T) {
	var panels []report.Panel
	for i, logs := range [][2]bool{{false, false}, {true, false}, {true, true}} {
		p := report.Panel{Title: "panel", XLabel: "t", YLabel: "regret", LogX: logs[0], LogY: logs[1]}
		for j := range 15 { // more series than palette colours
			s := band(50, float64(j+1))
			s.Label = strings.Repeat("x", j+1)
			p.Series = append(p.Series, s)
		}
		p.Series = append(p.Series, report.Series{Label: "bound", X: []float64{1, 50}, Y: []float64{0, 100}, Dashed: true})
		panels = append(panels, p)
		_ = i
	}
	for _, f := range []report.Figure{
		{Panels: panels[:1]},
		{Panels: panels, Cols: 2},
		{Panels: panels, NoEmbedFonts: true},
	} {
		var svg, pngb bytes.Buffer
		if err := f.WriteSVG(&svg); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg.Bytes(), []byte("<svg")) {
			t.Error("no <svg> element")
		}
		if embedded := bytes.Contains(svg.Bytes(), []byte("@font-face")); embedded == f.NoEmbedFonts {
			t.Errorf("NoEmbedFonts=%v but embedded=%v", f.NoEmbedFonts, embedded)
		}
		if err := f.WritePNG(&pngb, 72); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&pngb)
		if err != nil {
			t.Fatal(err)
		}
		rows := (len(f.Panels) + max(f.Cols, 1) - 1) / max(f.Cols, 1)
		if f.Cols == 0 {
			rows = 1
		}
		if h := img.Bounds().Dy(); math.Abs(float64(h)-float64(rows)*3.6*72) > 2 {
			t.Errorf("PNG height %d, want %d rows of 3.6in at 72 dpi", h, rows)
		}
	}
	dir := t.TempDir()
	if err := (report.Figure{Panels: panels[:1]}).Save(filepath.Join(dir, "fig")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fig.svg", "fig.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestFigureErrors(t *testing.T) {
	if err := (report.Figure{}).WriteSVG(&bytes.Buffer{}); !errors.Is(err, report.ErrEmpty) {
		t.Errorf("empty figure: %v", err)
	}
	bad := report.Panel{Series: []report.Series{{X: []float64{1, 2}, Y: []float64{1}}}}
	if err := (report.Figure{Panels: []report.Panel{bad}}).WriteSVG(&bytes.Buffer{}); err == nil {
		t.Error("mismatched lengths accepted")
	}
}

// A Points series draws a marker and an error bar per finite point: a bar
// reaching y = 10 stretches the y axis to a tick at 10, which the markers
// alone (at 0.5 and 0.6) do not; a non-finite point or bar is skipped, not
// an error.
func TestFigurePoints(t *testing.T) {
	svgOf := func(s report.Series) string {
		t.Helper()
		var svg bytes.Buffer
		f := report.Figure{Panels: []report.Panel{{Title: "estimates", Series: []report.Series{s}}}, NoEmbedFonts: true}
		if err := f.WriteSVG(&svg); err != nil {
			t.Fatal(err)
		}
		return svg.String()
	}
	nan := math.NaN()
	bare := report.Series{Label: "a", Points: true, X: []float64{0, 1, 2}, Y: []float64{0.5, 0.6, nan}}
	withBars := bare
	withBars.Lo, withBars.Hi = []float64{0.4, 0.5, nan}, []float64{0.6, 10, nan}
	if b, w := svgOf(bare), svgOf(withBars); strings.Contains(b, ">10<") || !strings.Contains(w, ">10<") {
		t.Errorf("the error bar to 10 is not drawn: tick 10 without bars %v, with bars %v",
			strings.Contains(b, ">10<"), strings.Contains(w, ">10<"))
	}
}
