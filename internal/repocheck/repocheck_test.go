package repocheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Names are assembled so that this file does not contain them.
var (
	notesNames = []string{"SPEC" + ".md", "DESIGN" + ".md", "PRIVACY" + ".md",
		"paper-code" + ".md", "go-ecosystem" + ".md", "bandit-anchors" + ".md"}
	sharedDir  = "../" + "shared/"
	sharedData = "../" + "shared/data"
)

// docsPath matches a docs/….md path that is not part of a longer path or a
// URL (the character before it is not a path or word character).
var docsPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./:-])((?:\.\./)*docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)\b`)

// mdLink matches a relative Markdown link to a .md file, with an optional
// #anchor: [text](path.md#x).
var mdLink = regexp.MustCompile(`\]\(([A-Za-z0-9_./-]+\.md)(?:#[^)]*)?\)`)

// placeholder is a path segment that stands for a name (NAME, KEY, …).
var placeholder = regexp.MustCompile(`^[A-Z][A-Z_]*$`)

// checkedExt are the file kinds whose citations are checked.
var checkedExt = map[string]bool{
	".go": true, ".md": true, ".yaml": true, ".yml": true, ".json": true,
	".py": true, ".sh": true, ".sql": true, ".txt": true,
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// checked reports whether the file at rel (slash-separated, relative to the
// module root) is one whose citations are checked.
func checked(rel string) bool {
	if checkedExt[filepath.Ext(rel)] {
		return true
	}
	// Scripts without an extension.
	dir, base := filepath.Split(rel)
	return filepath.Ext(base) == "" && (dir == "scripts/" || dir == ".ci/")
}

// problems returns "line: message" entries for one file's content. root is
// the module root and rel the file's slash path relative to it.
func problems(root, rel string, content []byte) []string {
	var out []string
	exists := func(p string) bool {
		for _, seg := range strings.Split(p, "/") {
			if placeholder.MatchString(seg) {
				return true // a pattern such as docs/repro/NAME/README.md
			}
		}
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, name := range notesNames {
			if strings.Contains(line, name) {
				out = append(out, fmt.Sprintf("%d: cites %s, which is not in the repository (cite the paper and the docs/ page)", n, name))
			}
		}
		if strings.Contains(strings.ReplaceAll(line, sharedData, ""), sharedDir) {
			out = append(out, fmt.Sprintf("%d: cites a file under %s, which is outside the repository", n, sharedDir))
		}
		if strings.Contains(line, "docs/") {
			for _, m := range docsPath.FindAllStringSubmatch(line, -1) {
				p := m[1]
				for strings.HasPrefix(p, "../") {
					p = p[len("../"):]
				}
				if !exists(p) {
					out = append(out, fmt.Sprintf("%d: cites %s, which does not exist", n, m[1]))
				}
			}
		}
		if strings.HasSuffix(rel, ".md") && strings.Contains(line, "](") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(rel), m[1])))
				if strings.HasPrefix(target, "../") || !exists(target) {
					out = append(out, fmt.Sprintf("%d: links to %s, which is not in the repository", n, m[1]))
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		out = append(out, fmt.Sprintf("0: reading: %v", err))
	}
	return out
}

// TestNoCitationOutsideRepo fails when any checked file of the repository
// cites a document that is not in it (see the package comment).
func TestNoCitationOutsideRepo(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || d.Name() == "node_modules" || strings.HasPrefix(rel, "privacy/testdata/fuzz")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !checked(rel) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, p := range problems(root, rel, b) {
			found = append(found, rel+":"+p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipDir) {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d files checked under %s: the walk did not see the repository", files, root)
	}
	const show = 400
	for i, f := range found {
		if i == show {
			t.Errorf("… and %d more", len(found)-show)
			break
		}
		t.Error(f)
	}
	if len(found) > 0 {
		t.Logf("%d citations of files that are not in the repository, in %d files checked", len(found), files)
	}
}

// TestProblemsDetects checks the detector on fixed inputs: each kind of bad
// citation is found with its line number, and good citations are not.
func TestProblemsDetects(t *testing.T) {
	root := moduleRoot(t)
	bad := strings.Join([]string{
		"// see " + notesNames[0] + " A16",          // 1
		"x := \"" + notesNames[2] + " §2.1\"",       // 2
		"# " + notesNames[1] + " rule 4",            // 3
		"read " + sharedDir + "notes/x.txt",         // 4
		"see " + "docs/" + "no-such-page.md §3",     // 5
		"(" + "docs/" + "accountant.md §2.1)",       // 6: exists
		"data in " + sharedData + "/movielens-100k", // 7: the data directory is exempt
		"https://example.org/docs" + "/x.md",        // 8: a URL, not a repo path
		"docs/" + "repro/NAME/README.md",            // 9: a placeholder
	}, "\n")
	got := problems(root, "x/y.go", []byte(bad))
	want := []string{"1:", "2:", "3:", "4:", "5:"}
	if len(got) != len(want) {
		t.Fatalf("problems = %q, want %d entries on lines 1–5", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("problem %d = %q, want line %s", i, got[i], w)
		}
	}
	md := "[ok](accountant.md) [bad](nope.md) [out](../../outside.md#a)\n"
	got = problems(root, "docs/"+"page.md", []byte(md))
	if len(got) != 2 || !strings.Contains(got[0], "nope.md") || !strings.Contains(got[1], "outside.md") {
		t.Errorf("markdown links: %q, want nope.md and ../../outside.md flagged", got)
	}
}
