package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/client"
	"github.com/dpbandit/dpbandit/eval"
)

// exportCmd is `dpbandit export`: an experiment's decision log, from GET
// /v1/experiments/{id}/log, to a file.
type exportCmd struct {
	URL        string `help:"Base URL of the service (default: ${default})." default:"http://127.0.0.1:8080" placeholder:"URL"`
	Key        string `help:"The admin key (the log holds raw rewards); from the environment when not given." env:"DPBANDIT_KEY" placeholder:"KEY"`
	Experiment string `help:"Experiment id whose log to export." required:"" placeholder:"ID"`
	Out        string `help:"File to write (default: standard output)." default:"-" placeholder:"FILE"`
	Format     string `help:"jsonl: the log's lines as the service gives them; csv: one row per decision with a reward and a released propensity, for off-policy evaluation (default: ${default})." enum:"jsonl,csv" default:"jsonl"`
}

func (exportCmd) Help() string {
	return `Writes an experiment's decision log: every logged decision with its event id, time,
arm, the chosen candidate's features (contextual experiments), the propensity where it
was released, and the reward once known. It is read from GET /v1/experiments/ID/log
with the admin key and streamed to the file as it arrives.

Privacy: the log holds the raw rewards, which are not differentially private. It is
for the data owner, like the dashboard's internal reward curve; do not share it with
the users whose rewards it holds.

Formats:
  jsonl  one JSON object per decision, in seq order, as the service answers.
  csv    the flat CSV of off-policy evaluation (dpbandit evaluate): columns action
         (the arm index), reward, pscore (the released propensity), context_0 …
         context_{d-1} (the chosen candidate's features, contextual experiments),
         timestamp (the decision's time) and event_id. Only decisions with a reward
         and a released, positive propensity can be evaluated: the others are
         skipped and counted on stderr by reason.

Only the chosen candidate of a contextual decision is stored, not the other
candidates. The log shows the decisions logged so far (a few milliseconds behind
the decisions served).

Example:

  DPBANDIT_KEY=$ADMIN dpbandit export --experiment exp_3f2a --format csv --out log.csv`
}

func (c *exportCmd) Run(g *Globals) error {
	if strings.TrimSpace(c.Key) == "" {
		return badInput("--key is required (or set DPBANDIT_KEY): the admin key (the log holds raw rewards, so client keys cannot read it)")
	}
	cl, err := client.New(c.URL, c.Key, client.WithUserAgent("dpbandit-export"))
	if err != nil {
		return badInput("--url: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var out io.Writer = g.Stdout
	name := "standard output"
	var f *os.File
	if c.Out != "-" && c.Out != "" {
		if f, err = os.Create(c.Out); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer f.Close()
		out, name = f, c.Out
	}
	bw := bufio.NewWriterSize(out, 256<<10)

	var w logWriter
	if c.Format == "csv" {
		w = &csvLog{w: csv.NewWriter(bw)}
	} else {
		w = &jsonlLog{w: bw}
	}
	last, err := cl.Log(ctx, c.Experiment, 0, 0, w.line)
	if eerr := w.end(); err == nil {
		err = eerr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	summary := w.summary(name)
	if err != nil {
		fmt.Fprintf(g.Stderr, "dpbandit export: %s before the error; the log continues after seq %d\n", summary, last)
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(g.Stderr, "dpbandit export: %s (through seq %d)\n", summary, last)
	return nil
}

// logWriter writes the log's lines in one format.
type logWriter interface {
	line(l *client.LogLine) error
	end() error // after the last line
	summary(name string) string
}

type jsonlLog struct {
	w *bufio.Writer
	n int64
}

func (j *jsonlLog) line(l *client.LogLine) error {
	j.w.Write(l.Raw)
	j.n++
	return j.w.WriteByte('\n')
}

func (j *jsonlLog) end() error { return nil }

func (j *jsonlLog) summary(name string) string {
	return fmt.Sprintf("wrote %d lines to %s", j.n, name)
}

// csvLog writes the flat CSV of off-policy evaluation. Its header waits for
// the first line, whose features give the number of context columns.
type csvLog struct {
	w                          *csv.Writer
	header                     bool
	dim                        int
	rec                        []string
	written                    int64
	noReward, purged, noPscore int64
	zeroPscore                 int64 // a Monte Carlo estimate of 0
}

func (c *csvLog) writeHeader(dim int) error {
	c.header, c.dim = true, dim
	h := []string{"action", "reward", "pscore"}
	for j := range dim {
		h = append(h, "context_"+strconv.Itoa(j))
	}
	return c.w.Write(append(h, "timestamp", "event_id"))
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func (c *csvLog) line(l *client.LogLine) error {
	if !c.header {
		if err := c.writeHeader(len(l.Features)); err != nil {
			return err
		}
	}
	if len(l.Features) != c.dim {
		return fmt.Errorf("decision %s (seq %d) has %d features, the earlier ones %d", l.EventID, l.Seq, len(l.Features), c.dim)
	}
	// The rows `dpbandit evaluate --format service` would use, by the same
	// rule (a Monte Carlo propensity can be 0 for an arm chosen with a
	// probability below its resolution; weighting needs pscore > 0).
	switch eval.ServiceSkip(&l.LogLine) {
	case "":
	case "reward deleted":
		c.purged++
		return nil
	case "no reward yet":
		c.noReward++
		return nil
	case "propensity estimated as 0":
		c.zeroPscore++
		return nil
	default:
		c.noPscore++
		return nil
	}
	r := append(c.rec[:0], strconv.Itoa(l.ArmIndex), ftoa(*l.Reward), ftoa(*l.Propensity))
	for _, x := range l.Features {
		r = append(r, ftoa(x))
	}
	r = append(r, l.Time, l.EventID)
	c.rec = r
	c.written++
	return c.w.Write(r)
}

func (c *csvLog) end() error {
	if !c.header {
		if err := c.writeHeader(0); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

func (c *csvLog) summary(name string) string {
	zero := ""
	if c.zeroPscore > 0 {
		zero = fmt.Sprintf(", %d whose propensity is a Monte Carlo estimate of 0 (pscore must be > 0)", c.zeroPscore)
	}
	return fmt.Sprintf("wrote %d rows to %s; skipped %d without a reward yet, %d whose reward value was deleted (reward_retention or archive), %d without a released propensity (decided without propensity: true, or by a policy that does not release it)%s",
		c.written, name, c.noReward, c.purged, c.noPscore, zero)
}
