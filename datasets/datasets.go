// Package datasets is the registry of the public data sets dpbandit reads:
// what each one is, its size, licence and citation, where it comes from, the
// files it consists of with their SHA-256 checksums, and whether it may be
// downloaded automatically. It also finds the data directory (Resolve,
// Locate), downloads a data set into it (Fetch) and checks a local copy
// against the checksums (Verify). The command-line front end is `dpbandit
// data list | fetch | verify`.
//
// # Where data sets live
//
// A data set NAME lives in the directory ROOT/NAME, where ROOT is, in this
// order (see [Resolve] and [Locate]):
//
//  1. $DPBANDIT_DATA, when set and non-empty;
//  2. the user cache directory, [os.UserCacheDir]/dpbandit
//     ($XDG_CACHE_HOME/dpbandit or ~/.cache/dpbandit on Linux,
//     ~/Library/Caches/dpbandit on macOS, %LocalAppData%\dpbandit on
//     Windows), when it exists;
//  3. the first directory named shared/data beside the working directory or
//     one of its ancestors (one beside the repository's checkout).
//
// [Fetch] writes into $DPBANDIT_DATA when it is set, else into the cache
// directory, never into a shared/data directory.
//
// # Checksums and sources
//
// Every checksum is of the exact bytes the project's own copy holds. Those
// bytes come from pinned public copies (a repository at a fixed commit) and
// not always from the originator's site, whose packaging differs (UCI serves
// a zip, Jester's site an .xls): a download from a pinned commit is the only
// one whose SHA-256 can be fixed in advance. [Dataset.Homepage] names the
// originator; [Download.URL] the pinned copy; [Dataset.Provenance] says which
// is which.
//
// # Licensed data
//
// MovieLens (GroupLens's terms forbid redistribution) and Yahoo! R6
// (Webscope's data-sharing agreement) are never downloaded: [Fetch] returns an
// error wrapping [ErrLicensed] and [Instructions] says where to obtain them
// and the exact paths to place the files at.
package datasets

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Packaging is how a download is packaged.
type Packaging string

// The packagings Fetch unpacks.
const (
	Plain Packaging = "plain"  // the file itself
	Zip   Packaging = "zip"    // a zip archive (archive/zip)
	TarGz Packaging = "tar.gz" // a gzip-compressed tar archive
)

// File is one file of a data set.
type File struct {
	// Path is the file's path relative to the data set's directory,
	// slash-separated. For a group (Parts non-empty) it is only a label.
	Path string `json:"path"`
	// Size in bytes; 0 when not recorded.
	Size int64 `json:"size,omitempty"`
	// SHA256 is the lower-case hex SHA-256 of the file (of Parts
	// concatenated in order, for a group); empty when none is recorded.
	SHA256 string `json:"sha256,omitempty"`
	// GitBlob is the file's git blob id (the SHA-1 of "blob SIZE\x00"
	// followed by the content, as `git hash-object` prints it), checked
	// when SHA256 is empty.
	GitBlob string `json:"git_blob,omitempty"`
	// Parts, when non-empty, makes this entry a group: the checksum is of
	// these files (paths relative to the data set's directory) concatenated
	// in order.
	Parts []string `json:"parts,omitempty"`
	// Optional files may be absent from a complete copy.
	Optional bool `json:"optional,omitempty"`
	// StandIn is the path of a partial stand-in accepted in place of this
	// file: when the file is absent and the stand-in is present (and
	// verifies), the copy is Partial rather than Incomplete.
	StandIn string `json:"stand_in,omitempty"`
	// About says what the file holds.
	About string `json:"about,omitempty"`
}

// Download is one file to download for a data set.
type Download struct {
	// URL is the pinned public location of the bytes.
	URL string `json:"url"`
	// Size in bytes of the download as served; 0 when not recorded.
	Size int64 `json:"size,omitempty"`
	// SHA256 of the download as served (lower-case hex). Required.
	SHA256 string `json:"sha256"`
	// Packaging says how to unpack it.
	Packaging Packaging `json:"packaging"`
	// To is, for Plain, the file's path in the data set's directory.
	To string `json:"to,omitempty"`
	// Members maps, for Zip and TarGz, an archive member's name to its path
	// in the data set's directory; only these members are extracted, and
	// each must be present. Nil extracts every regular file at its own path.
	Members map[string]string `json:"members,omitempty"`
}

// Dataset describes one data set.
type Dataset struct {
	Name       string // the directory name under the data directory, and the CLI name
	Title      string // one line
	About      string // what it is and what in dpbandit reads it
	Records    string // rows, users, items, …
	Terms      string // the licence in a few words, for tables
	License    string // the licence or terms
	Citation   string // how to cite it
	Homepage   string // the originator's canonical public location
	Provenance string // where the checksummed bytes come from
	Files      []File
	// Downloads are fetched by Fetch; nil for a data set that may not be
	// downloaded automatically (see Obtain).
	Downloads []Download
	// Obtain says, for licensed data, where and how to obtain it.
	Obtain string
	// Note is a caveat about the project's copy (e.g. a partial one).
	Note string
}

// Fetchable reports whether Fetch may download d.
func (d Dataset) Fetchable() bool { return len(d.Downloads) > 0 }

// TotalSize is the sum of the recorded file sizes (groups included, stand-ins
// excluded) and whether every file's size is recorded.
func (d Dataset) TotalSize() (n int64, known bool) {
	known = true
	standIn := map[string]bool{}
	for _, f := range d.Files {
		if f.StandIn != "" {
			standIn[f.StandIn] = true
		}
	}
	for _, f := range d.Files {
		if standIn[f.Path] {
			continue
		}
		if f.Size <= 0 {
			known = false
		}
		n += f.Size
	}
	return n, known
}

// SizeText renders TotalSize: "11.8 MB", or "0.3 MB + files of unrecorded
// size", or "unrecorded".
func (d Dataset) SizeText() string {
	n, known := d.TotalSize()
	switch {
	case known:
		return FormatBytes(n)
	case n > 0:
		return FormatBytes(n) + "+"
	default:
		return "unrecorded"
	}
}

// FormatBytes renders n bytes in decimal units (B, kB, MB, GB).
func FormatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
}

// ErrUnknown is wrapped by Lookup's error for a name not in the registry.
var ErrUnknown = errors.New("datasets: unknown data set")

// All returns every data set the project knows, sorted by name. The slice
// is a copy; the Dataset values share their Files and Downloads with the
// registry and must not be modified.
func All() []Dataset {
	out := append([]Dataset(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the registry's names, sorted.
func Names() []string {
	var n []string
	for _, d := range All() {
		n = append(n, d.Name)
	}
	return n
}

// Lookup returns the data set called name; the error wraps ErrUnknown and
// lists the known names.
func Lookup(name string) (Dataset, error) {
	return LookupIn(All(), name)
}

// LookupIn is Lookup in the list all (a registry of the caller's).
func LookupIn(all []Dataset, name string) (Dataset, error) {
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
	}
	var names []string
	for _, d := range all {
		names = append(names, d.Name)
	}
	return Dataset{}, fmt.Errorf("%w %q: the known data sets are %s", ErrUnknown, name, strings.Join(names, ", "))
}
