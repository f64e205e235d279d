package ctxenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpbandit/dpbandit/datasets"
)

// DataEnv is the environment variable that overrides the data directory
// (the same as [datasets.EnvVar]).
const DataEnv = datasets.EnvVar

// Paths of the dataset files relative to the data directory.
const (
	MushroomFile = "uci-mushroom/agaricus-lepiota.data"
	ShuttleFile  = "uci-statlog-shuttle/shuttle.trn.csv"
	OBDDir       = "open-bandit-dataset-sample/random" // holds {campaign}/{campaign}.csv and {campaign}/item_context.csv
)

// DataDir returns the data directory, the first of (see [datasets.Resolve]):
// $DPBANDIT_DATA if set and non-empty; the user cache directory
// os.UserCacheDir()/dpbandit if it exists (where `dpbandit data fetch`
// puts data sets); the first existing directory ANCESTOR/shared/data, where
// ANCESTOR runs from the working directory up to the file-system root (a
// shared/data directory beside the repository's checkout). The error wraps
// [ErrNoData] when none exists. A loader given this directory that misses a
// file there looks for it in the later directories of the same order (so a
// data set fetched into the cache and one in shared/data are both found);
// [DataRoot] says which directory DataDir chose and [DataFile] which one
// holds a given file.
func DataDir() (string, error) {
	r, err := DataRoot()
	return r.Dir, err
}

// DataRoot is [DataDir] with the source it came from: $DPBANDIT_DATA, the
// cache directory, or an ancestor's shared/data.
func DataRoot() (datasets.Root, error) {
	r, err := datasets.Resolve()
	if err != nil {
		return datasets.Root{}, fmt.Errorf("%w: %v", ErrNoData, err)
	}
	return r, nil
}

// DataFile returns the path of rel (slash-separated, relative to a data
// directory, e.g. [MushroomFile]) in the first data directory of the search
// order that holds it, and that directory with its source. The error wraps
// [ErrNoData] and names the directories searched.
func DataFile(rel string) (string, datasets.Root, error) {
	roots := datasets.Roots()
	if len(roots) == 0 {
		_, err := DataRoot()
		return "", datasets.Root{}, err
	}
	if r, p, ok := datasets.LocateFile(roots[0].Dir, rel); ok {
		return p, r, nil
	}
	var tried []string
	for _, r := range roots {
		tried = append(tried, r.String())
	}
	return "", datasets.Root{}, fmt.Errorf("%w: %s is in none of %s; set %s or run `dpbandit data fetch NAME` (`dpbandit data list` shows the data sets)",
		ErrNoData, rel, strings.Join(tried, ", "), DataEnv)
}

// resolveDir returns dir, or DataDir() if dir is empty.
func resolveDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DataDir()
}

// readFile reads dir/rel; a missing file gives an error wrapping ErrNoData
// and the fs error. When dir is one of the data directories of [DataDir]'s
// search order and lacks rel, the later ones are tried (a directory the
// caller named explicitly has no fallback).
func readFile(dir, rel string) ([]byte, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, alt, ok := datasets.LocateFile(dir, rel); ok && alt != path {
			path = alt
			b, err = os.ReadFile(alt)
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (%w); set %s, pass the data directory, or run `dpbandit data fetch NAME` (`dpbandit data list` shows the data sets)",
			ErrNoData, path, err, DataEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("ctxenv: reading %s: %w", path, err)
	}
	return b, nil
}

// lines calls f for every non-blank line of b (without the line ending),
// with its 1-based line number, and stops at the first error. The line is a
// sub-slice of b, valid as long as b is.
func lines(b []byte, f func(n int, line []byte) error) error {
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := f(n, line); err != nil {
			return err
		}
	}
	return nil
}
