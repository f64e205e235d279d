package repro

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/report"
)

// fmtInt renders a horizon compactly: 100000 → "1e5", 25000 → "25000".
func fmtInt(n int) string {
	if n >= 1000 {
		e := 0
		m := n
		for m%10 == 0 {
			m /= 10
			e++
		}
		if m < 10 && e >= 3 {
			if m == 1 {
				return "1e" + strconv.Itoa(e)
			}
			return strconv.Itoa(m) + "e" + strconv.Itoa(e)
		}
	}
	return strconv.Itoa(n)
}

// num formats x with sig significant digits.
func num(x float64, sig int) string { return report.Num(x, sig) }

// pm formats a mean ± standard error.
func pm(m, se float64) string { return num(m, 4) + " ± " + num(se, 2) }

// relClose reports whether got is within rel (relative) of want.
func relClose(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// digitsClose reports whether got agrees with a printed value want that has
// the given number of decimals: |got − want| ≤ half a unit in the last
// printed place (plus a relative 1e-12 for float noise).
func digitsClose(got, want float64, decimals int) bool {
	h := 0.5 * math.Pow(10, -float64(decimals))
	return math.Abs(got-want) <= h*(1+1e-9)+1e-12*math.Abs(want)
}

// tableCheck compares a list of measured values against printed targets:
// each value must agree to the printed digits (decimals[i]) or within a
// relative 1e-3 (docs/reproductions.md §3.0's tolerance). It returns the measured text (the
// values, and the worst relative error) and whether all agree.
func tableCheck(labels []string, got, want []float64, decimals []int) (string, bool) {
	ok := true
	worst := 0.0
	parts := make([]string, len(got))
	for i := range got {
		good := digitsClose(got[i], want[i], decimals[i]) || relClose(got[i], want[i], 1e-3)
		if !good {
			ok = false
		}
		rel := math.Abs(got[i]-want[i]) / math.Abs(want[i])
		worst = math.Max(worst, rel)
		mark := ""
		if !good {
			mark = " ✗"
		}
		parts[i] = fmt.Sprintf("%s: %s%s", labels[i], strconv.FormatFloat(got[i], 'f', decimals[i]+1, 64), mark)
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" (worst relative error %.2g)", worst), ok
}

func (c *Context) readme(w io.Writer, o *Outcome) error {
	r := c.R
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Name)
	fmt.Fprintf(&b, "%s\n\n", r.Description)
	fmt.Fprintf(&b, "- Paper: %s; %s\n", r.Paper, r.Section)
	fmt.Fprintf(&b, "- experiment (docs/reproductions.md): %s\n", r.Experiments)
	cmd := c.opts.Command
	if cmd == "" {
		cmd = "dpbandit reproduce " + r.Name + " --out DIR"
		if c.Quick {
			cmd += " --quick"
		}
	}
	fmt.Fprintf(&b, "- Command: `%s`\n", cmd)
	kind := "full size"
	switch {
	case r.ClosedForm():
		kind = "closed form"
	case c.Quick:
		kind = "quick size"
	}
	if !r.ClosedForm() && (c.opts.Runs > 0 || c.opts.Horizon > 0) {
		kind += ", overridden"
	}
	fmt.Fprintf(&b, "- Size: %s (%s; full: %s; quick: %s)\n", c.Size, kind, r.Full, r.Quick)
	if !r.ClosedForm() {
		fmt.Fprintf(&b, "- Seed: %d; environment: `%s`; metric: %s\n", r.Seed, r.Env, r.Metric)
	}
	fmt.Fprintf(&b, "- Runtime: %.1f s\n", o.Elapsed.Seconds())
	t := o.Totals
	fmt.Fprintf(&b, "- Checks: %d — %d passed, %d failed, %d failed as expected, %d passed although expected to fail\n\n",
		t.Checks, t.PassedAsExpected, t.Failed, t.ExpectedFailures, t.UnexpectedPasses)
	if len(r.Setup) > 0 {
		b.WriteString("## Setup\n\n")
		for _, s := range r.Setup {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Checks\n\n")
	if err := checksTable(o.Checks).Markdown(&b); err != nil {
		return err
	}
	b.WriteString("\n")
	writeReasons(&b, o.Checks)
	if len(r.Figures) > 0 {
		b.WriteString("## Figures\n\n")
		for _, f := range r.Figures {
			fmt.Fprintf(&b, "- `%s.svg`, `%s.png`: %s\n\n  ![%s](%s.png)\n\n", f.File, f.File, f.Caption, f.File, f.File)
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	if len(c.keys) > 0 {
		b.WriteString("## Sweeps\n\nRaw results (sim's summary.json, curves.csv, runs.csv, manifest.json with the seeds) are in `sweeps/KEY/`.\n\n")
		tb := report.Table{Header: []string{"sweep", "env", "T", "runs", "policies", "seconds"},
			Align: []report.Align{report.Left, report.Left, report.Right, report.Right, report.Right, report.Right}}
		for _, k := range c.keys {
			s := c.res[k]
			tb.AddRow(k, s.agg.Plan.Spec.Env, fmtInt(s.agg.Plan.Spec.Horizon), strconv.Itoa(s.agg.Plan.Spec.Runs),
				strconv.Itoa(len(s.agg.Plan.Entries)), fmt.Sprintf("%.1f", s.elapsed.Seconds()))
		}
		if err := tb.Markdown(&b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Verdict renders a check's outcome for tables.
func (c Check) Verdict() string {
	switch {
	case c.ExpectedToFail && c.Pass:
		return "passed (expected to fail)"
	case c.ExpectedToFail:
		return "fails, as expected"
	case c.Pass:
		return "pass"
	default:
		return "**FAIL**"
	}
}

func checksTable(cs []Check) report.Table {
	tb := report.Table{Header: []string{"check", "target", "measured", "tolerance", "result"}}
	for _, c := range cs {
		tb.AddRow(c.ID+" "+c.Name, c.Target, c.Measured, c.Tolerance, c.Verdict())
	}
	return tb
}

// writeReasons lists why the expected-to-fail checks are expected to fail.
func writeReasons(b *strings.Builder, cs []Check) {
	n := 0
	for _, c := range cs {
		if !c.ExpectedToFail {
			continue
		}
		if n == 0 {
			b.WriteString("Expected to fail, and why:\n\n")
		}
		n++
		fmt.Fprintf(b, "- **%s** (%s): %s\n", c.ID, c.Verdict(), c.Reason)
	}
	if n > 0 {
		b.WriteString("\n")
	}
}

// ChecksMarkdown writes the checks of an outcome as a markdown table.
func ChecksMarkdown(w io.Writer, cs []Check) error { return checksTable(cs).Markdown(w) }
