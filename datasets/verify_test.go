package datasets

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The status logic, group checksums and git blob ids, against independent
// oracles: `git hash-object` of "hello\n" is ce013625…, of the empty file
// e69de29b…; sha256("ab") is fb8e20fc….
func TestVerifyStatuses(t *testing.T) {
	d := Dataset{Name: "v", Files: []File{
		{Path: "hello.txt", Size: 6, GitBlob: "ce013625030ba8dba906f756967f9e9ca394464a"},
		{Path: "empty", GitBlob: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
		{Path: "parts", Parts: []string{"p/1", "p/2"}, Size: 2, SHA256: "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603"},
		{Path: "big.dat", StandIn: "small.dat"},
		{Path: "small.dat", Optional: true, SHA256: sum([]byte("s"))},
		{Path: "opt.txt", Optional: true, SHA256: sum([]byte("o"))},
		{Path: "nosum.txt"},
	}}
	dir := t.TempDir()
	if c := Verify(d, filepath.Join(dir, "nowhere")); c.Status != Absent || c.Err() != nil {
		t.Errorf("missing directory: %s, %v", c.Status, c.Err())
	}
	write(t, dir, "hello.txt", "hello\n")
	write(t, dir, "empty", "")
	write(t, dir, "p/1", "a")
	if c := Verify(d, dir); c.Status != Incomplete || !strings.Contains(c.Err().Error(), "big.dat: missing") ||
		!strings.Contains(c.Err().Error(), "parts (p/2 is missing): missing") || strings.Contains(c.Err().Error(), "opt.txt") {
		t.Errorf("incomplete: %s, %v", c.Status, c.Err())
	}
	write(t, dir, "p/2", "b")
	write(t, dir, "small.dat", "s")
	write(t, dir, "nosum.txt", "anything")
	c := Verify(d, dir)
	if c.Status != Partial || c.Err() != nil {
		t.Fatalf("stand-in only: %s, %v", c.Status, c.Err())
	}
	for _, f := range c.Files {
		want := map[string]FileStatus{"hello.txt": FileOK, "empty": FileOK, "parts": FileOK, "big.dat": FileMissing,
			"small.dat": FileOK, "opt.txt": FileMissing, "nosum.txt": FileUnchecked}[f.Path]
		if f.Status != want {
			t.Errorf("%s: %s (%s), want %s", f.Path, f.Status, f.Got, want)
		}
	}
	write(t, dir, "big.dat", "the full file")
	if c := Verify(d, dir); c.Status != Complete {
		t.Errorf("with the full file: %s, %v", c.Status, c.Err())
	}
	// One changed byte in a part: corrupt, and the error names the group
	// and both checksums.
	write(t, dir, "p/2", "c")
	c = Verify(d, dir)
	err := c.Err()
	if c.Status != Corrupt || !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), filepath.Join(dir, "parts")+": sha256 "+sum([]byte("ac"))+", want sha256 fb8e20fc") {
		t.Errorf("corrupt part: %s, %v", c.Status, err)
	}
	// A wrong size is caught without hashing, by Inspect too.
	write(t, dir, "hello.txt", "hello!\n")
	if c := Inspect(d, dir); c.Status != Corrupt || !strings.Contains(c.Err().Error(), "7 bytes, want 6 bytes") {
		t.Errorf("wrong size: %s, %v", c.Status, c.Err())
	}
	// A wrong git blob.
	write(t, dir, "hello.txt", "hellO\n")
	if c := Verify(d, dir); c.Status != Corrupt || !strings.Contains(c.Err().Error(), "want git blob ce013625") {
		t.Errorf("wrong blob: %s, %v", c.Status, c.Err())
	}
	// Inspect does not read contents: with every size right (hellO, and
	// the changed part), it reports the copy as complete, files unchecked.
	if c := Inspect(d, dir); c.Status != Complete || c.Files[0].Status != FileUnchecked || c.Files[2].Status != FileUnchecked {
		t.Errorf("inspect: %s, %+v", c.Status, c.Files)
	}
	// A directory where a file should be.
	if err := os.Remove(filepath.Join(dir, "nosum.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "nosum.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c := Verify(d, dir); c.Status != Corrupt || !strings.Contains(c.Err().Error(), "not a regular file") {
		t.Errorf("directory as file: %s, %v", c.Status, c.Err())
	}
}

// sharedRoot is the shared/data directory of the search order, or skips.
func sharedRoot(t *testing.T) string {
	t.Helper()
	if d := os.Getenv(EnvVar); d != "" {
		return d
	}
	for _, r := range Roots() {
		if r.Source == FromShared {
			return r.Dir
		}
	}
	t.Skip("no shared/data directory beside the working directory or its ancestors, and $" + EnvVar + " unset")
	return ""
}

// The project's own copies verify against the registry: every checksum
// recorded matches, and movielens-1m is the labelled partial copy.
func TestVerifyRealCopies(t *testing.T) {
	root := sharedRoot(t)
	found := 0
	for _, d := range All() {
		dir := filepath.Join(root, d.Name)
		if _, err := os.Stat(dir); err != nil {
			t.Logf("%s: absent from %s", d.Name, root)
			continue
		}
		found++
		c := Verify(d, dir)
		want := Complete
		if d.Name == "movielens-1m" && c.Files[0].Status == FileMissing {
			want = Partial
		}
		if c.Status != want {
			t.Errorf("%s in %s: %s, want %s: %v", d.Name, dir, c.Status, want, c.Err())
		}
		for _, f := range c.Files {
			if f.Status == FileUnchecked {
				t.Errorf("%s: %s is present but has no checksum recorded", d.Name, f.Path)
			}
		}
	}
	if found == 0 {
		t.Skipf("no data set in %s", root)
	}
}

// A corrupted copy of a real data set fails verification, naming the file.
func TestVerifyCorruptedRealCopy(t *testing.T) {
	root := sharedRoot(t)
	d, err := Lookup("uci-mushroom")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, d.Name)
	if _, err := os.Stat(src); err != nil {
		t.Skipf("%s absent", src)
	}
	dst := filepath.Join(t.TempDir(), d.Name)
	for _, f := range d.Files {
		copyFile(t, filepath.Join(src, f.Path), filepath.Join(dst, f.Path))
	}
	if c := Verify(d, dst); c.Status != Complete {
		t.Fatalf("copy: %s, %v", c.Status, c.Err())
	}
	p := filepath.Join(dst, "agaricus-lepiota.data")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1 // same size, one bit flipped
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Verify(d, dst)
	if err := c.Err(); c.Status != Corrupt || !strings.Contains(err.Error(), p+": sha256 ") ||
		!strings.Contains(err.Error(), "want sha256 799d068978c62941cd323c16e82ec28d588f1c264c42f90ce56cc73358b3efdb") {
		t.Errorf("flipped bit: %s, %v", c.Status, err)
	}
	if c.Files[1].Status != FileOK {
		t.Errorf("the untouched .names file: %s", c.Files[1].Status)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
