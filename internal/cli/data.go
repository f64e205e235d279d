package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dpbandit/dpbandit/datasets"
)

// dataRegistry and dataClient are the data sets `dpbandit data` knows and
// the HTTP client it fetches with; tests replace them (a test-only entry
// served by httptest, a client that fails on any request).
var (
	dataRegistry = datasets.All
	dataClient   *http.Client // nil: the datasets package's default
)

type dataCmd struct {
	List   dataListCmd   `cmd:"" help:"List the data sets: name, present or not and where, size, licence. No network."`
	Fetch  dataFetchCmd  `cmd:"" help:"Download a data set into the cache (or $DPBANDIT_DATA, --dir), checking every SHA-256; for licensed data, say where to get it."`
	Verify dataVerifyCmd `cmd:"" help:"Check local copies against the recorded checksums; exit 1 naming any file that does not match."`
}

func (dataCmd) Help() string {
	return `The public data sets dpbandit's dataset environments and reproductions read
(--env mushroom, shuttle, obd; the MovieLens and Jester bandits; E11's replay).
None is in the repository. Each lives in a directory NAME under a data
directory, searched in this order:

  1. $DPBANDIT_DATA, when set;
  2. the user cache directory, os.UserCacheDir()/dpbandit
     (~/.cache/dpbandit on Linux, ~/Library/Caches/dpbandit on macOS);
  3. shared/data beside the working directory or one of its ancestors.

A data set missing from one directory is looked for in the next.

  $ dpbandit data list                  # what exists, what is here, where
  $ dpbandit data fetch uci-mushroom    # download, check SHA-256, unpack
  $ dpbandit data verify                # check every local copy

Licensed data (MovieLens: GroupLens's terms forbid redistribution; Yahoo! R6:
Webscope's agreement) is never downloaded: 'dpbandit data fetch NAME' prints
where to obtain it and the exact paths to put its files at.`
}

type dataListCmd struct {
	Dir  string `help:"Look only in this data directory instead of the search order." placeholder:"DIR"`
	JSON bool   `help:"Print the list as JSON: every field of the registry (files with their checksums, downloads) and the local status."`
}

func (dataListCmd) Help() string {
	return `Lists every data set the project knows: its name, whether a copy is here
(STATUS) and in which data directory (WHERE, with the source: $DPBANDIT_DATA,
cache, shared), its size, how to get it (GET: 'fetch' downloads it, 'by hand'
for licensed data) and its licence. --json adds what each one is, its
citation, canonical location, files and SHA-256 checksums.

STATUS comes from the files' presence and sizes only (no checksums are
computed; 'dpbandit data verify' does that):
  present     every required file is there with its recorded size
  partial     a stand-in replaces a required file (movielens-1m: the ratings of
              users 1..2999 only; results on it are not MovieLens-1M results)
  incomplete  a required file is missing
  corrupt     a file has the wrong size
  absent      no copy in any data directory

Runs without network.`
}

type dataListEntry struct {
	Name       string              `json:"name"`
	Title      string              `json:"title"`
	About      string              `json:"about"`
	Records    string              `json:"records"`
	Size       string              `json:"size"`
	SizeBytes  int64               `json:"size_bytes"`
	SizeKnown  bool                `json:"size_known"`
	Terms      string              `json:"terms"`
	License    string              `json:"license"`
	Citation   string              `json:"citation"`
	Homepage   string              `json:"homepage"`
	Provenance string              `json:"provenance"`
	Get        string              `json:"get"` // "fetch" or "by hand"
	Obtain     string              `json:"obtain,omitempty"`
	Note       string              `json:"note,omitempty"`
	Status     string              `json:"status"`
	Root       *datasets.Root      `json:"root"` // null when absent
	Files      []datasets.File     `json:"files"`
	Downloads  []datasets.Download `json:"downloads"`
}

// listStatus renders Inspect's status for a listing.
func listStatus(s datasets.Status) string {
	if s == datasets.Complete {
		return "present"
	}
	return string(s)
}

// locate finds d in dir (when given) or in the search order.
func locate(d datasets.Dataset, dir string) (datasets.Root, bool) {
	if dir != "" {
		st, err := os.Stat(filepath.Join(dir, d.Name))
		return datasets.Root{Dir: dir, Source: datasets.FromFlag}, err == nil && st.IsDir()
	}
	r, err := datasets.Locate(d)
	return r, err == nil
}

func (c *dataListCmd) Run(g *Globals) error {
	var all []dataListEntry
	for _, d := range dataRegistry() {
		n, known := d.TotalSize()
		e := dataListEntry{Name: d.Name, Title: d.Title, About: d.About, Records: d.Records, Size: d.SizeText(),
			SizeBytes: n, SizeKnown: known, Terms: d.Terms, License: d.License, Citation: d.Citation,
			Homepage: d.Homepage, Provenance: d.Provenance, Get: "fetch", Obtain: d.Obtain, Note: d.Note,
			Status: string(datasets.Absent), Files: d.Files, Downloads: d.Downloads}
		if !d.Fetchable() {
			e.Get = "by hand"
		}
		if e.Downloads == nil {
			e.Downloads = []datasets.Download{}
		}
		if r, ok := locate(d, c.Dir); ok {
			e.Root = &r
			e.Status = listStatus(datasets.Inspect(d, filepath.Join(r.Dir, d.Name)).Status)
		}
		all = append(all, e)
	}
	if c.JSON {
		return writeJSON(g.Stdout, map[string]any{"search_order": searchOrder(c.Dir), "datasets": all})
	}
	var b strings.Builder
	b.WriteString("Data directories, in search order:\n")
	for _, line := range searchOrder(c.Dir) {
		b.WriteString("  " + line + "\n")
	}
	b.WriteByte('\n')
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tWHERE\tSIZE\tGET\tLICENCE")
	for _, e := range all {
		where := "-"
		if e.Root != nil {
			where = fmt.Sprintf("%s (%s)", e.Root.Dir, e.Root.Source)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Status, where, e.Size, e.Get, e.Terms)
	}
	tw.Flush()
	b.WriteString("\nGet one: dpbandit data fetch NAME. Check copies: dpbandit data verify. " +
		"What each one is, its citation and files: dpbandit data list --json.\n")
	for _, e := range all {
		if e.Status == "partial" && e.Note != "" {
			fmt.Fprintf(&b, "%s: %s\n", e.Name, e.Note)
		}
	}
	_, err := fmt.Fprint(g.Stdout, b.String())
	return err
}

// searchOrder describes the data directories searched, one line each.
func searchOrder(dir string) []string {
	if dir != "" {
		return []string{"--dir: " + dir}
	}
	var out []string
	if d := os.Getenv(datasets.EnvVar); d != "" {
		out = append(out, "1. $"+datasets.EnvVar+": "+d)
	} else {
		out = append(out, "1. $"+datasets.EnvVar+": (unset)")
	}
	if c, err := datasets.CacheDir(); err != nil {
		out = append(out, "2. cache: ("+err.Error()+")")
	} else if st, err := os.Stat(c); err != nil || !st.IsDir() {
		out = append(out, "2. cache: "+c+" (does not exist yet; dpbandit data fetch creates it)")
	} else {
		out = append(out, "2. cache: "+c)
	}
	shared := "(none found)"
	for _, r := range datasets.Roots() {
		if r.Source == datasets.FromShared {
			shared = r.Dir
		}
	}
	return append(out, "3. shared: "+shared)
}

type dataFetchCmd struct {
	Name    string        `arg:"" help:"The data set ('dpbandit data list' shows the names)."`
	Dir     string        `help:"Data directory to write into (default: $DPBANDIT_DATA when set, else the user cache directory)." placeholder:"DIR"`
	Timeout time.Duration `help:"Give up after this long in all (0: no limit). A download that receives nothing for 60s is abandoned either way." default:"0s"`
}

func (dataFetchCmd) Help() string {
	return `Downloads a data set from its pinned public location into DIR/NAME, where DIR
is --dir, else $DPBANDIT_DATA, else the user cache directory (where every
loader looks). Each download streams into a temporary file inside DIR while
its SHA-256 is computed; a checksum or length that differs from the registry's
is refused with both values printed. Archives (zip, tar.gz) are unpacked
there too, refusing entries that would escape the directory, links, and
absurd sizes. Only when every file matches its checksum is the data set
renamed into place in one step: a mismatch, an interrupted download or
Ctrl-C leaves nothing half-written behind. A copy already in place that
verifies is kept and nothing is downloaded. Progress is shown when stderr is
a terminal.

Licensed data (movielens-100k, movielens-1m, yahoo-r6) is not downloaded:
the command prints where to obtain it and the exact paths to place its files
at, then exits 1 unless a verified copy is already there.

  $ dpbandit data fetch jester
  $ dpbandit data fetch open-bandit-dataset-sample --dir /data/dpbandit
  $ DPBANDIT_DATA=/data/dpbandit dpbandit simulate --env obd:campaign=men ...`
}

func (c *dataFetchCmd) Run(g *Globals) error {
	d, err := datasets.LookupIn(dataRegistry(), c.Name)
	if err != nil {
		return badInput("%v", err)
	}
	if c.Timeout < 0 {
		return badInput("--timeout %v is negative: give a duration ≥ 0 (0: no limit)", c.Timeout)
	}
	root, err := datasets.FetchRoot(c.Dir)
	if err != nil {
		return err
	}
	if !d.Fetchable() {
		fmt.Fprint(g.Stdout, datasets.Instructions(d, root.Dir))
		dir := filepath.Join(root.Dir, d.Name)
		if chk := datasets.Verify(d, dir); chk.Status == datasets.Complete || chk.Status == datasets.Partial {
			fmt.Fprintf(g.Stdout, "\nA copy is already at %s and verifies (%s).\n", dir, chk.Status)
			return nil
		}
		return fmt.Errorf("%s is licensed and was not downloaded: obtain it as above and place it at %s", d.Name, dir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	res, err := datasets.Fetch(ctx, d, root.Dir, datasets.FetchOptions{Client: dataClient, Progress: datasets.ProgressWriter(g.Stderr)})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w (--timeout %v)", err, c.Timeout)
		}
		return err
	}
	if res.AlreadyPresent {
		fmt.Fprintf(g.Stdout, "%s is already at %s and verifies; nothing was downloaded.\n", d.Name, res.Dir)
	} else {
		fmt.Fprintf(g.Stdout, "%s: downloaded %s into %s; every SHA-256 matches.\n", d.Name, datasets.FormatBytes(res.Bytes), res.Dir)
	}
	fmt.Fprintf(g.Stdout, "Licence: %s.\nCite: %s.\n", d.License, d.Citation)
	if c.Dir != "" && !inSearchOrder(root.Dir) {
		fmt.Fprintf(g.Stdout, "%s is not in the search order: set %s=%s for dpbandit to read it.\n", root.Dir, datasets.EnvVar, root.Dir)
	}
	return nil
}

func inSearchOrder(dir string) bool {
	a, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for _, r := range datasets.Roots() {
		if b, err := filepath.Abs(r.Dir); err == nil && a == b {
			return true
		}
	}
	return false
}

type dataVerifyCmd struct {
	Name string `arg:"" optional:"" help:"The data set to check (default: every one present)."`
	Dir  string `help:"Check the copies in this data directory instead of the search order." placeholder:"DIR"`
	JSON bool   `help:"Print the results as JSON: every file with its status and both checksums."`
}

func (dataVerifyCmd) Help() string {
	return `Reads every file of each local copy and compares its size and SHA-256 (a git
blob id for MovieLens 1M's ratings.dat) with the registry's. Prints one line
per data set: ok, partial (a labelled stand-in replaces a file), absent, or
FAIL with each file that is missing or differs, its checksum and the expected
one. Exits 1 when any copy fails, or when the named data set is absent.`
}

func (c *dataVerifyCmd) Run(g *Globals) error {
	sets := dataRegistry()
	if c.Name != "" {
		d, err := datasets.LookupIn(sets, c.Name)
		if err != nil {
			return badInput("%v", err)
		}
		sets = []datasets.Dataset{d}
	}
	type result struct {
		datasets.Check
		Root *datasets.Root `json:"root"`
		Note string         `json:"note,omitempty"`
	}
	var results []result
	var failed []string
	var b strings.Builder
	var notes []string
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, d := range sets {
		r, ok := locate(d, c.Dir)
		if !ok {
			results = append(results, result{Check: datasets.Check{Name: d.Name, Status: datasets.Absent}})
			fmt.Fprintf(tw, "absent\t%s\t-\tin no data directory\n", d.Name)
			if c.Name != "" {
				failed = append(failed, d.Name+" (absent)")
			}
			continue
		}
		chk := datasets.Verify(d, filepath.Join(r.Dir, d.Name))
		res := result{Check: chk, Root: &r}
		checked, unchecked := 0, 0
		for _, f := range chk.Files {
			switch f.Status {
			case datasets.FileOK:
				checked++
			case datasets.FileUnchecked:
				unchecked++
			}
		}
		counts := fmt.Sprintf("%d %s", checked, plural(checked, "file matches its checksum", "files match their checksums"))
		if unchecked > 0 {
			counts += fmt.Sprintf(", %d present without a recorded checksum", unchecked)
		}
		switch chk.Status {
		case datasets.Complete:
			fmt.Fprintf(tw, "ok\t%s\t%s\t%s\n", d.Name, chk.Dir, counts)
		case datasets.Partial:
			res.Note = d.Note
			fmt.Fprintf(tw, "partial\t%s\t%s\t%s\n", d.Name, chk.Dir, counts)
			notes = append(notes, d.Name+": "+d.Note)
		case datasets.Absent:
			fmt.Fprintf(tw, "absent\t%s\t%s\tholds none of its files\n", d.Name, chk.Dir)
			if c.Name != "" {
				failed = append(failed, d.Name+" (absent)")
			}
		default:
			fmt.Fprintf(tw, "FAIL\t%s\t%s\t%s: %v\n", d.Name, chk.Dir, chk.Status, chk.Err())
			failed = append(failed, d.Name)
		}
		results = append(results, res)
	}
	tw.Flush()
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	if c.JSON {
		if err := writeJSON(g.Stdout, map[string]any{"results": results, "ok": len(failed) == 0}); err != nil {
			return err
		}
	} else if _, err := fmt.Fprint(g.Stdout, b.String()); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("verification failed: %s (re-fetch with dpbandit data fetch NAME after moving the copy aside)", strings.Join(failed, ", "))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
