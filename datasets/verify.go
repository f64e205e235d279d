package datasets

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileStatus is the outcome of checking one file.
type FileStatus string

// The outcomes of checking a file.
const (
	FileOK        FileStatus = "ok"        // present and its checksum (and size) match
	FileUnchecked FileStatus = "unchecked" // present; no checksum recorded, or a quick check of the size only
	FileMissing   FileStatus = "missing"
	FileMismatch  FileStatus = "mismatch" // size or checksum differs
	FileError     FileStatus = "error"    // present but unreadable, or not a regular file
)

// FileCheck is the result of checking one file.
type FileCheck struct {
	Path     string     `json:"path"`
	Status   FileStatus `json:"status"`
	Optional bool       `json:"optional,omitempty"`
	Want     string     `json:"want,omitempty"` // e.g. "sha256 …", "git blob …", "373750 bytes"
	Got      string     `json:"got,omitempty"`
	Detail   string     `json:"detail,omitempty"`
}

// Status is the state of a local copy of a data set.
type Status string

// The states of a local copy.
const (
	Absent     Status = "absent"     // no file of it is present
	Complete   Status = "complete"   // every required file is present and verifies
	Partial    Status = "partial"    // complete except that a stand-in replaces a required file
	Incomplete Status = "incomplete" // a required file is missing
	Corrupt    Status = "corrupt"    // a file does not match its checksum or size
)

// Check is the result of checking a local copy of a data set.
type Check struct {
	Name   string      `json:"name"`
	Dir    string      `json:"dir"` // the data set's directory
	Status Status      `json:"status"`
	Files  []FileCheck `json:"files"`
}

// ErrMismatch is wrapped by Check.Err for a corrupt or incomplete copy and
// by Fetch when a download does not match its checksum.
var ErrMismatch = errors.New("datasets: checksum mismatch")

// Err is nil for a Complete, Partial or Absent copy, and otherwise names
// every file that is missing or does not match, wrapping ErrMismatch.
func (c Check) Err() error {
	if c.Status != Corrupt && c.Status != Incomplete {
		return nil
	}
	var p []string
	for _, f := range c.Files {
		switch f.Status {
		case FileMismatch:
			p = append(p, fmt.Sprintf("%s: %s, want %s", filepath.Join(c.Dir, filepath.FromSlash(f.Path)), f.Got, f.Want))
		case FileError:
			p = append(p, fmt.Sprintf("%s: %s", filepath.Join(c.Dir, filepath.FromSlash(f.Path)), f.Detail))
		case FileMissing:
			if !f.Optional && f.Detail != "stand-in present" {
				what := filepath.Join(c.Dir, filepath.FromSlash(f.Path))
				if f.Detail != "" {
					what += " (" + f.Detail + ")"
				}
				p = append(p, what+": missing")
			}
		}
	}
	return fmt.Errorf("%w: %s is %s: %s", ErrMismatch, c.Name, c.Status, strings.Join(p, "; "))
}

// Verify checks the copy of d in dir (the data set's own directory,
// ROOT/NAME) against the recorded sizes and checksums, reading every file.
func Verify(d Dataset, dir string) Check { return check(d, dir, true) }

// Inspect is Verify without reading the files: presence and sizes only
// (files whose size is right are FileUnchecked). It is what `dpbandit data
// list` shows.
func Inspect(d Dataset, dir string) Check { return check(d, dir, false) }

func check(d Dataset, dir string, hashes bool) Check {
	c := Check{Name: d.Name, Dir: dir}
	byPath := map[string]int{}
	for _, f := range d.Files {
		fc := checkFile(f, dir, hashes)
		byPath[f.Path] = len(c.Files)
		c.Files = append(c.Files, fc)
	}
	present, bad, missing, standIn := false, false, false, false
	for i, f := range d.Files {
		fc := &c.Files[i]
		switch fc.Status {
		case FileOK, FileUnchecked:
			present = true
		case FileMismatch, FileError:
			present, bad = true, true
		case FileMissing:
			if f.Optional {
				continue
			}
			if j, ok := byPath[f.StandIn]; ok && f.StandIn != "" &&
				(c.Files[j].Status == FileOK || c.Files[j].Status == FileUnchecked) {
				fc.Detail = "stand-in present"
				standIn = true
				continue
			}
			missing = true
		}
	}
	switch {
	case !present:
		c.Status = Absent
	case bad:
		c.Status = Corrupt
	case missing:
		c.Status = Incomplete
	case standIn:
		c.Status = Partial
	default:
		c.Status = Complete
	}
	return c
}

func checkFile(f File, dir string, hashes bool) FileCheck {
	fc := FileCheck{Path: f.Path, Optional: f.Optional}
	parts := f.Parts
	if len(parts) == 0 {
		parts = []string{f.Path}
	}
	// Presence and size first: cheap, and a wrong size needs no hash.
	var size int64
	for _, p := range parts {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fc.Status = FileMissing
			if len(f.Parts) > 0 {
				fc.Detail = p + " is missing"
			}
			return fc
		case err != nil:
			fc.Status, fc.Detail = FileError, err.Error()
			return fc
		case !st.Mode().IsRegular():
			fc.Status, fc.Detail = FileError, p+" is not a regular file"
			return fc
		}
		size += st.Size()
	}
	if f.Size > 0 && size != f.Size {
		fc.Status = FileMismatch
		fc.Want, fc.Got = fmt.Sprintf("%d bytes", f.Size), fmt.Sprintf("%d bytes", size)
		return fc
	}
	if !hashes || (f.SHA256 == "" && f.GitBlob == "") {
		fc.Status = FileUnchecked
		if f.SHA256 == "" && f.GitBlob == "" {
			fc.Detail = "no checksum recorded"
		}
		return fc
	}
	var h hash.Hash
	if f.SHA256 != "" {
		h = sha256.New()
		fc.Want = "sha256 " + f.SHA256
	} else {
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", size)
		fc.Want = "git blob " + f.GitBlob
	}
	for _, p := range parts {
		if err := hashFile(h, filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			fc.Status, fc.Detail = FileError, err.Error()
			return fc
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	want := f.SHA256
	kind := "sha256 "
	if want == "" {
		want, kind = f.GitBlob, "git blob "
	}
	fc.Got = kind + got
	if got != strings.ToLower(want) {
		fc.Status = FileMismatch
		return fc
	}
	fc.Status = FileOK
	return fc
}

func hashFile(h hash.Hash, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}
