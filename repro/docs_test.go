package repro

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedChecks checks, without running anything, that the committed
// full-size checks.json files (docs/repro/NAME/) declare the checks the code
// declares, and that REPRODUCTIONS.md's generated tables are what the
// generator makes of them. The measured values are compared with a fresh
// full-size run by scripts/check-repro (CI); after changing a target or a
// reproduction, regenerate with `scripts/check-repro --update`.
func TestCommittedChecks(t *testing.T) {
	docs := filepath.Join("..", DocsDir)
	outs, err := LoadCommitted(docs)
	if err != nil {
		t.Fatalf("%v (regenerate with scripts/check-repro --update)", err)
	}
	for i, r := range All() {
		o := outs[i]
		if o.Quick || !sizeEqual(o.Size, r.Full) || o.Seed != r.Seed || o.Paper != r.Paper || o.Experiments != r.Experiments {
			t.Errorf("%s: committed run is not the full size of the declared reproduction (quick %v, size %s, seed %d)", r.Name, o.Quick, o.Size, o.Seed)
		}
		if len(o.Checks) != len(r.Targets) {
			t.Errorf("%s: %d committed checks, %d declared (regenerate with scripts/check-repro --update)", r.Name, len(o.Checks), len(r.Targets))
			continue
		}
		for j, tg := range r.Targets {
			c := o.Checks[j]
			if c.ID != tg.ID || c.Name != tg.Name || c.Target != tg.Target || c.Tolerance != tg.Tolerance ||
				c.ExpectedToFail != tg.ExpectedToFail || c.Reason != tg.Reason || c.Source != tg.Source {
				t.Errorf("%s: committed check %d (%s) differs from the declared target %s (regenerate with scripts/check-repro --update)", r.Name, j, c.ID, tg.ID)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join("..", "REPRODUCTIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := GenerateMarkdown(md, docs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, md) {
		t.Error("REPRODUCTIONS.md's generated tables differ from the committed checks.json files (regenerate with scripts/check-repro --update)")
	}
}

func TestGenerateMarkdownRegions(t *testing.T) {
	docs := filepath.Join("..", DocsDir)
	md, err := os.ReadFile(filepath.Join("..", "REPRODUCTIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Emptying a region and regenerating gives the file back.
	s := string(md)
	i := strings.Index(s, "<!-- generated: summary -->\n")
	j := strings.Index(s[i:], regionEnd)
	if i < 0 || j < 0 {
		t.Fatal("no summary region")
	}
	emptied := s[:i] + "<!-- generated: summary -->\n" + s[i+j:]
	got, err := GenerateMarkdown([]byte(emptied), docs)
	if err != nil || !bytes.Equal(got, md) {
		t.Errorf("regenerating an emptied region: err %v, equal %v", err, bytes.Equal(got, md))
	}
	for name, bad := range map[string]string{
		"unknown key": s + "\n<!-- generated: nope -->\n" + regionEnd + "\n",
		"twice":       s + "\n<!-- generated: summary -->\n" + regionEnd + "\n",
		"unclosed":    s + "\n<!-- generated: summary -->\n",
		"missing":     strings.Replace(s, "<!-- generated: summary -->", "<!-- summary -->", 1),
	} {
		if _, err := GenerateMarkdown([]byte(bad), docs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
