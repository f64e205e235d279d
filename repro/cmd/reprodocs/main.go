// Command reprodocs publishes a full-size run of the reproductions into the
// repository and regenerates REPRODUCTIONS.md's tables from it (see
// repro.Publish and repro.GenerateMarkdown). scripts/check-repro runs it;
// it is not meant to be run by hand.
//
//	reprodocs -from RUN -docs DIR -md-in FILE -md-out FILE [-figures]
//
// copies RUN/NAME/{checks.json,results.md} (and with -figures the PNG
// figures) into DIR/NAME and writes FILE with its generated regions filled
// from DIR. With -docs docs/repro -md-in REPRODUCTIONS.md -md-out
// REPRODUCTIONS.md -figures it updates the repository; with a temporary
// DIR and -md-out the result can be compared with what is committed.
// Without -from it only refills the regions from DIR (after editing the
// generator or the prose: `go run ./repro/cmd/reprodocs`).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dpbandit/dpbandit/repro"
)

func main() {
	from := flag.String("from", "", "output directory of `dpbandit reproduce all --out` at full size (empty: only refill REPRODUCTIONS.md from -docs)")
	docs := flag.String("docs", repro.DocsDir, "directory of the committed outputs")
	mdIn := flag.String("md-in", "REPRODUCTIONS.md", "REPRODUCTIONS.md to fill")
	mdOut := flag.String("md-out", "", "where to write the filled REPRODUCTIONS.md (default: -md-in)")
	figures := flag.Bool("figures", false, "also copy the PNG figures")
	flag.Parse()
	if err := run(*from, *docs, *mdIn, *mdOut, *figures); err != nil {
		fmt.Fprintln(os.Stderr, "reprodocs:", err)
		os.Exit(1)
	}
}

func run(from, docs, mdIn, mdOut string, figures bool) error {
	if flag.NArg() > 0 {
		return fmt.Errorf("usage: reprodocs [-from RUN] [-docs DIR] [-md-in FILE] [-md-out FILE] [-figures]")
	}
	if mdOut == "" {
		mdOut = mdIn
	}
	if from != "" {
		if err := repro.Publish(from, docs, figures); err != nil {
			return err
		}
	}
	md, err := os.ReadFile(mdIn)
	if err != nil {
		return err
	}
	out, err := repro.GenerateMarkdown(md, docs)
	if err != nil {
		return fmt.Errorf("%s: %w", mdIn, err)
	}
	return os.WriteFile(mdOut, out, 0o644)
}
