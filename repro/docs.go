package repro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The committed outputs of the full-size reproductions and REPRODUCTIONS.md.
//
// Each reproduction's full-size checks.json (and results.md, where it writes
// one) is committed in DocsDir/NAME/, next to its figures (PNG). The tables
// of REPRODUCTIONS.md are generated from those files: the regions between
// "<!-- generated: KEY -->" and "<!-- end -->" lines, KEY being "summary",
// a reproduction's name (its header, checks, reasons and figures) or
// "NAME results" (its results.md). Everything outside the regions is prose
// and is kept. scripts/check-repro reruns the reproductions at full size and
// fails when a committed file or REPRODUCTIONS.md differs from what the run
// gives; `scripts/check-repro --update` rewrites them (cmd/reprodocs).

// DocsDir is where the committed outputs live, relative to the repository
// root.
const DocsDir = "docs/repro"

// ResultsFile is the extra results table some reproductions write.
const ResultsFile = "results.md"

// committedText are the text outputs that are committed (when written).
var committedText = []string{ChecksFile, ResultsFile}

// figureMaxBytes is the size above which a committed PNG is halved in
// resolution.
const figureMaxBytes = 200 << 10

// Publish copies the committed outputs of a full-size run of every
// reproduction, from/NAME as `dpbandit reproduce all --out from` writes
// them, into to/NAME: checks.json, results.md where written, and with
// figures the PNG figures (halved in resolution above 200 KB). Files of
// those kinds (.json, .md, .png, .svg) in to/NAME that the run does not
// produce are removed. It refuses a run that is not at full size.
func Publish(from, to string, figures bool) error {
	for _, r := range All() {
		src, dst := filepath.Join(from, r.Name), filepath.Join(to, r.Name)
		b, err := os.ReadFile(filepath.Join(src, ChecksFile))
		if err != nil {
			return fmt.Errorf("%s: %w (run `dpbandit reproduce all --out %s` first)", r.Name, err, from)
		}
		var o Outcome
		if err := json.Unmarshal(b, &o); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(src, ChecksFile), err)
		}
		if o.Reproduction != r.Name || o.Quick || !sizeEqual(o.Size, r.Full) {
			return fmt.Errorf("%s: %s is not a full-size run of %s (quick %v, size %s; full: %s)",
				r.Name, filepath.Join(src, ChecksFile), r.Name, o.Quick, o.Size, r.Full)
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, f := range committedText {
			b, err := os.ReadFile(filepath.Join(src, f))
			if errors.Is(err, os.ErrNotExist) && f != ChecksFile {
				continue
			}
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
				return err
			}
			keep[f] = true
		}
		for _, f := range o.Figures {
			if filepath.Ext(f) != ".png" {
				continue
			}
			keep[f] = true
			if figures {
				if err := copyFigure(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
					return fmt.Errorf("%s: %w", r.Name, err)
				}
			}
		}
		ents, err := os.ReadDir(dst)
		if err != nil {
			return err
		}
		for _, e := range ents {
			switch filepath.Ext(e.Name()) {
			case ".json", ".md", ".png", ".svg":
				if !e.IsDir() && !keep[e.Name()] && (figures || filepath.Ext(e.Name()) != ".png") {
					if err := os.Remove(filepath.Join(dst, e.Name())); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func sizeEqual(a, b Size) bool { return a.Runs == b.Runs && slices.Equal(a.Horizons, b.Horizons) }

// copyFigure copies a PNG, halving its resolution (2×2 box average) when it
// is larger than figureMaxBytes.
func copyFigure(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if len(b) > figureMaxBytes {
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, halve(img)); err != nil {
			return err
		}
		b = buf.Bytes()
	}
	return os.WriteFile(dst, b, 0o644)
}

// halve returns img at half its width and height, each pixel the average
// of a 2×2 block.
func halve(img image.Image) image.Image {
	r := img.Bounds()
	w, h := r.Dx()/2, r.Dy()/2
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			var s [4]uint32
			for _, d := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				c := color.NRGBAModel.Convert(img.At(r.Min.X+2*x+d[0], r.Min.Y+2*y+d[1])).(color.NRGBA)
				s[0] += uint32(c.R)
				s[1] += uint32(c.G)
				s[2] += uint32(c.B)
				s[3] += uint32(c.A)
			}
			out.SetNRGBA(x, y, color.NRGBA{R: uint8((s[0] + 2) / 4), G: uint8((s[1] + 2) / 4), B: uint8((s[2] + 2) / 4), A: uint8((s[3] + 2) / 4)})
		}
	}
	return out
}

// LoadCommitted reads the committed checks.json of every reproduction from
// docs (DocsDir), in the order of All.
func LoadCommitted(docs string) ([]*Outcome, error) {
	var out []*Outcome
	for _, r := range All() {
		p := filepath.Join(docs, r.Name, ChecksFile)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		o := &Outcome{}
		if err := json.Unmarshal(b, o); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if o.Reproduction != r.Name {
			return nil, fmt.Errorf("%s: reproduction %q, want %q", p, o.Reproduction, r.Name)
		}
		out = append(out, o)
	}
	return out, nil
}

var regionStart = regexp.MustCompile(`^<!-- generated: (.+?) -->$`)

const regionEnd = "<!-- end -->"

// GenerateMarkdown returns md (REPRODUCTIONS.md) with every generated region
// replaced by the tables generated from the committed outputs in docs. md
// must have exactly one region per reproduction, one "summary" region, and
// one "NAME results" region per committed results.md. The links it writes
// point into DocsDir, whatever docs is.
func GenerateMarkdown(md []byte, docs string) ([]byte, error) {
	outs, err := LoadCommitted(docs)
	if err != nil {
		return nil, err
	}
	gen := map[string]string{"summary": genSummary(outs)}
	for _, o := range outs {
		gen[o.Reproduction] = genReproduction(o)
		b, err := os.ReadFile(filepath.Join(docs, o.Reproduction, ResultsFile))
		switch {
		case err == nil:
			gen[o.Reproduction+" results"] = genResults(string(b))
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
	}
	lines := strings.SplitAfter(string(md), "\n")
	var b strings.Builder
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		b.WriteString(lines[i])
		m := regionStart.FindStringSubmatch(strings.TrimRight(lines[i], "\r\n"))
		if m == nil {
			continue
		}
		key := m[1]
		text, ok := gen[key]
		if !ok {
			return nil, fmt.Errorf("line %d: no generator for region %q", i+1, key)
		}
		if seen[key] {
			return nil, fmt.Errorf("line %d: region %q appears twice", i+1, key)
		}
		seen[key] = true
		j := i + 1
		for j < len(lines) && strings.TrimRight(lines[j], "\r\n") != regionEnd {
			if regionStart.MatchString(strings.TrimRight(lines[j], "\r\n")) {
				return nil, fmt.Errorf("line %d: region %q is not closed by %q", i+1, key, regionEnd)
			}
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: region %q is not closed by %q", i+1, key, regionEnd)
		}
		b.WriteString("\n" + strings.TrimRight(text, "\n") + "\n\n")
		i = j - 1 // the end line is written next
	}
	var missing []string
	for k := range gen {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("REPRODUCTIONS.md has no region for: %s", strings.Join(missing, ", "))
	}
	return []byte(b.String()), nil
}

// mdCell escapes a table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// mdTable renders a compact markdown table.
func mdTable(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		cs := make([]string, len(r))
		for i, c := range r {
			cs[i] = mdCell(c)
		}
		b.WriteString("| " + strings.Join(cs, " | ") + " |\n")
	}
}

func sizeText(o *Outcome) string {
	if o.Size.Runs == 0 {
		return "closed form"
	}
	return o.Size.String()
}

func genSummary(outs []*Outcome) string {
	var b strings.Builder
	var rows [][]string
	var all Totals
	var failed, unexpected []string
	for _, o := range outs {
		t := o.Totals
		e, _, _ := strings.Cut(o.Experiments, " (")
		rows = append(rows, []string{fmt.Sprintf("[%s](#%s)", o.Reproduction, o.Reproduction), e, sizeText(o),
			fmt.Sprint(t.Checks), fmt.Sprint(t.PassedAsExpected), fmt.Sprint(t.Failed), fmt.Sprint(t.ExpectedFailures), fmt.Sprint(t.UnexpectedPasses)})
		all.Checks += t.Checks
		all.PassedAsExpected += t.PassedAsExpected
		all.Failed += t.Failed
		all.ExpectedFailures += t.ExpectedFailures
		all.UnexpectedPasses += t.UnexpectedPasses
		for _, c := range o.Checks {
			switch {
			case !c.Pass && !c.ExpectedToFail:
				failed = append(failed, "**"+c.ID+"**")
			case c.Pass && c.ExpectedToFail:
				unexpected = append(unexpected, c.ID)
			}
		}
	}
	rows = append(rows, []string{"all", "", "", fmt.Sprint(all.Checks), fmt.Sprint(all.PassedAsExpected), fmt.Sprint(all.Failed),
		fmt.Sprint(all.ExpectedFailures), fmt.Sprint(all.UnexpectedPasses)})
	mdTable(&b, []string{"reproduction", "experiment", "full size", "checks", "pass", "fail", "fail as expected", "pass although expected to fail"}, rows)
	b.WriteString("\nChecks not expected to fail that fail at full size: ")
	if len(failed) == 0 {
		b.WriteString("none.\n")
	} else {
		b.WriteString(strings.Join(failed, ", ") + ".\n")
	}
	if len(unexpected) > 0 {
		b.WriteString("\nChecks expected to fail that pass at full size: " + strings.Join(unexpected, ", ") + ".\n")
	}
	return b.String()
}

func genReproduction(o *Outcome) string {
	var b strings.Builder
	dir := DocsDir + "/" + o.Reproduction
	fmt.Fprintf(&b, "- Paper: %s; %s\n", o.Paper, o.Section)
	fmt.Fprintf(&b, "- Experiment (docs/reproductions.md): %s\n", o.Experiments)
	fmt.Fprintf(&b, "- Command: `dpbandit reproduce %s --out DIR` (or `dpbandit reproduce all --out DIR`)\n", o.Reproduction)
	if o.Size.Runs == 0 {
		b.WriteString("- Size: closed form\n")
	} else {
		fmt.Fprintf(&b, "- Size: %s (full size), seed %d; environment `%s`; metric: %s\n", o.Size, o.Seed, o.Env, o.Metric)
	}
	t := o.Totals
	fmt.Fprintf(&b, "- Checks: %d — %d pass, %d fail, %d fail as expected, %d pass although expected to fail ([`%s/%s`](%s/%s))\n\n",
		t.Checks, t.PassedAsExpected, t.Failed, t.ExpectedFailures, t.UnexpectedPasses, dir, ChecksFile, dir, ChecksFile)
	var rows [][]string
	for _, c := range o.Checks {
		rows = append(rows, []string{c.ID, c.Target, c.Measured, c.Tolerance, c.Verdict()})
	}
	mdTable(&b, []string{"check", "target", "measured", "tolerance", "result"}, rows)
	first := true
	for _, c := range o.Checks {
		if !c.ExpectedToFail {
			continue
		}
		if first {
			b.WriteString("\nExpected to fail, and why:\n\n")
			first = false
		}
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", c.ID, c.Verdict(), c.Reason)
	}
	var figs []string
	for _, f := range o.Figures {
		if filepath.Ext(f) == ".png" {
			figs = append(figs, f)
		}
	}
	if len(figs) > 0 {
		fmt.Fprintf(&b, "\nFigures (`%s/`):\n", dir)
		for _, f := range figs {
			fmt.Fprintf(&b, "\n![%s %s](%s/%s)\n", o.Reproduction, f, dir, f)
		}
	}
	return b.String()
}

// genResults is a results.md without its title (its sections are "###"
// headings, which sit under the reproduction's "##" section).
func genResults(md string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(md, "\n"), "\n") {
		if strings.HasPrefix(l, "# ") && len(out) == 0 {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimLeft(strings.Join(out, "\n"), "\n")
}
