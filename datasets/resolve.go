package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvVar is the environment variable that names the data directory.
const EnvVar = "DPBANDIT_DATA"

// Source says where a data directory came from.
type Source string

// The three places a data directory comes from, in the order they are
// searched.
const (
	FromEnv    Source = "env"    // $DPBANDIT_DATA
	FromCache  Source = "cache"  // os.UserCacheDir()/dpbandit
	FromShared Source = "shared" // an ancestor's shared/data
	FromFlag   Source = "flag"   // a directory the user named (--dir)
)

// Describe says in words where a directory of this source comes from.
func (s Source) Describe() string {
	switch s {
	case FromEnv:
		return "$" + EnvVar
	case FromCache:
		return "the user cache directory"
	case FromShared:
		return "shared/data beside the working directory or an ancestor"
	case FromFlag:
		return "--dir"
	}
	return string(s)
}

// Root is a data directory and where it came from.
type Root struct {
	Dir    string `json:"dir"`
	Source Source `json:"source"`
}

// String renders "DIR (from SOURCE)".
func (r Root) String() string { return r.Dir + " (from " + r.Source.Describe() + ")" }

// ErrNoDataDir is wrapped by the error of Resolve when no data directory
// exists, and of Locate when no data directory holds the data set.
var ErrNoDataDir = errors.New("datasets: no data directory")

// CacheDir is the user cache directory for data sets,
// os.UserCacheDir()/dpbandit; it need not exist.
func CacheDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("datasets: user cache directory: %w", err)
	}
	return filepath.Join(c, "dpbandit"), nil
}

// Roots returns the candidate data directories in search order:
// $DPBANDIT_DATA when set and non-empty (whether or not it exists: it is an
// explicit choice), the cache directory when it exists, and the first
// shared/data directory beside the working directory or one of its
// ancestors.
func Roots() []Root {
	var out []Root
	if d := os.Getenv(EnvVar); d != "" {
		out = append(out, Root{Dir: d, Source: FromEnv})
	}
	if c, err := CacheDir(); err == nil && isDir(c) {
		out = append(out, Root{Dir: c, Source: FromCache})
	}
	if s, ok := sharedData(); ok {
		out = append(out, Root{Dir: s, Source: FromShared})
	}
	return out
}

// sharedData walks from the working directory up to the file-system root
// and returns the first ANCESTOR/shared/data that is a directory.
func sharedData() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; {
		cand := filepath.Join(dir, "shared", "data")
		if isDir(cand) {
			return cand, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// searched describes the search order for error messages.
func searched() string {
	c, err := CacheDir()
	if err != nil {
		c = "os.UserCacheDir()/dpbandit (" + err.Error() + ")"
	}
	return fmt.Sprintf("$%s (unset), the cache directory %s, and shared/data beside the working directory or its ancestors", EnvVar, c)
}

// Resolve returns the first data directory of Roots and which source it
// came from. The error wraps ErrNoDataDir and names the places searched.
func Resolve() (Root, error) {
	r := Roots()
	if len(r) == 0 {
		return Root{}, fmt.Errorf("%w: searched %s; set $%s or run `dpbandit data fetch NAME` (`dpbandit data list` shows the names)",
			ErrNoDataDir, searched(), EnvVar)
	}
	return r[0], nil
}

// Locate returns the first root of Roots that holds a copy of d: a
// directory named d.Name holding at least one of d's files (any directory
// of that name when d lists no files). Data sets fetched into the cache and
// data sets in a shared/data directory are thus found side by side, and an
// empty leftover directory does not hide a copy further on. The error wraps
// ErrNoDataDir and says how to get the data set.
func Locate(d Dataset) (Root, error) {
	var tried []string
	for _, r := range Roots() {
		dir := filepath.Join(r.Dir, d.Name)
		if isDir(dir) && (len(d.Files) == 0 || Inspect(d, dir).Status != Absent) {
			return r, nil
		}
		tried = append(tried, r.String())
	}
	how := "run `dpbandit data fetch " + d.Name + "`"
	if !d.Fetchable() {
		how = "see `dpbandit data fetch " + d.Name + "` for where to obtain it"
	}
	where := searched()
	if len(tried) > 0 {
		where = strings.Join(tried, "; ")
	}
	return Root{}, fmt.Errorf("%w holds %s/: searched %s; %s", ErrNoDataDir, d.Name, where, how)
}

// LocateFile returns the first root of Roots, from the root whose directory
// is start onwards, that holds the file rel (slash-separated, relative to a
// data directory), and the file's path. ok is false when start is not one of
// the Roots (an explicit directory: no fallback) or no root from it on holds
// the file. Loaders that were given the resolved data directory use it to
// find a data set in a later root when the first one lacks it.
func LocateFile(start, rel string) (r Root, path string, ok bool) {
	roots := Roots()
	i := 0
	for ; i < len(roots); i++ {
		if sameDir(roots[i].Dir, start) {
			break
		}
	}
	for ; i < len(roots); i++ {
		p := filepath.Join(roots[i].Dir, filepath.FromSlash(rel))
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return roots[i], p, true
		}
	}
	return Root{}, "", false
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// FetchRoot is the directory Fetch writes into: dir when non-empty, else
// $DPBANDIT_DATA when set, else the cache directory. It is never a
// shared/data directory found by the ancestor walk.
func FetchRoot(dir string) (Root, error) {
	if dir != "" {
		return Root{Dir: dir, Source: FromFlag}, nil
	}
	if d := os.Getenv(EnvVar); d != "" {
		return Root{Dir: d, Source: FromEnv}, nil
	}
	c, err := CacheDir()
	if err != nil {
		return Root{}, fmt.Errorf("%w; set $%s or pass --dir", err, EnvVar)
	}
	return Root{Dir: c, Source: FromCache}, nil
}
