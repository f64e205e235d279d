package datasets

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Defaults of FetchOptions.
const (
	// DefaultMaxBytes caps a download whose size is not recorded, every
	// file extracted from an archive, and an archive's total: 4 GiB.
	DefaultMaxBytes = 4 << 30
	// DefaultStall aborts a download when no byte arrives for this long.
	DefaultStall = 60 * time.Second
)

// FetchOptions configure Fetch. The zero value is usable.
type FetchOptions struct {
	// Client makes the requests; nil uses a client whose transport waits at
	// most a minute for response headers (http.DefaultTransport otherwise).
	Client *http.Client
	// Progress, when non-nil, receives a progress line per download
	// (carriage-return updated): pass ProgressWriter(os.Stderr).
	Progress io.Writer
	// MaxBytes caps a download of unrecorded size, every extracted file and
	// an archive's extracted total; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Stall aborts a download that receives no byte for this long (the
	// headers included); 0 means DefaultStall.
	Stall time.Duration
}

// FetchResult says what Fetch did.
type FetchResult struct {
	Dir            string // the data set's directory, ROOT/NAME
	AlreadyPresent bool   // a verified copy was already there: nothing was downloaded
	Bytes          int64  // bytes downloaded
}

// Errors wrapped by Fetch.
var (
	// ErrLicensed: the data set may not be downloaded automatically; see
	// Instructions.
	ErrLicensed = errors.New("datasets: licensed data set, not downloaded automatically")
	// ErrUnsafeArchive: an archive entry would escape the directory, or is
	// a link or a special file.
	ErrUnsafeArchive = errors.New("datasets: unsafe archive")
	// ErrTooLarge: a download or an extracted file exceeds its recorded
	// size or FetchOptions.MaxBytes.
	ErrTooLarge = errors.New("datasets: too large")
	// ErrExists: the data set's directory exists and is not a verified copy.
	ErrExists = errors.New("datasets: directory exists")
)

var errStalled = errors.New("no data received")

// defaultClient waits at most a minute for response headers; the body is
// guarded by FetchOptions.Stall and the caller's context.
var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	return &http.Client{Transport: t}
}()

// Fetch downloads d into root/d.Name:
//
//   - each download streams into a temporary file inside a staging
//     directory root/.NAME.fetch-*, its SHA-256 computed as it arrives and
//     compared with the recorded one, its length with the recorded size;
//   - archives are unpacked into the staging directory (only the members
//     the registry names; an entry that would escape the directory, a link
//     or a special file refuses the whole archive; a file larger than
//     MaxBytes is refused);
//   - the staging directory must then Verify as Complete, and is renamed to
//     root/d.Name in one step.
//
// On any error, cancellation included, the staging directory is removed:
// no half-written data set is left behind (one left by a killed process is
// removed by the next fetch of the data set once older than StaleAfter). A copy already at root/d.Name
// that verifies is kept (AlreadyPresent); one that does not is an error
// wrapping ErrExists, and is not touched. A data set that may not be
// downloaded gives an error wrapping ErrLicensed (see Instructions).
func Fetch(ctx context.Context, d Dataset, root string, o FetchOptions) (FetchResult, error) {
	if err := checkName(d.Name); err != nil {
		return FetchResult{}, err
	}
	if root == "" {
		return FetchResult{}, errors.New("datasets: fetch needs a data directory (FetchRoot gives the default)")
	}
	dest := filepath.Join(root, d.Name)
	res := FetchResult{Dir: dest}
	if !d.Fetchable() {
		return res, fmt.Errorf("%w: %s (%s)", ErrLicensed, d.Name, d.License)
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Stall <= 0 {
		o.Stall = DefaultStall
	}
	if o.Client == nil {
		o.Client = defaultClient
	}
	if st, err := os.Stat(dest); err == nil {
		if !st.IsDir() {
			return res, fmt.Errorf("%w: %s is not a directory; move it aside and fetch again", ErrExists, dest)
		}
		c := Verify(d, dest)
		switch c.Status {
		case Complete, Partial:
			res.AlreadyPresent = true
			return res, nil
		case Absent:
			// An empty directory is replaced; one holding other files is not.
			if err := os.Remove(dest); err != nil {
				return res, fmt.Errorf("%w: %s holds none of %s's files but is not empty; move it aside and fetch again", ErrExists, dest, d.Name)
			}
		default:
			return res, fmt.Errorf("%w: %s is %s (%v); move it aside or delete it, then fetch again", ErrExists, dest, c.Status, c.Err())
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("datasets: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return res, fmt.Errorf("datasets: creating the data directory: %w", err)
	}
	removeStale(root, d.Name)
	staging, err := os.MkdirTemp(root, "."+d.Name+".fetch-")
	if err != nil {
		return res, fmt.Errorf("datasets: creating a staging directory in %s: %w", root, err)
	}
	installed := false
	defer func() {
		if !installed {
			os.RemoveAll(staging)
		}
	}()
	for _, dl := range d.Downloads {
		n, err := fetchOne(ctx, d.Name, dl, staging, &o)
		res.Bytes += n
		if err != nil {
			return res, fmt.Errorf("fetching %s: %w; nothing was installed", d.Name, err)
		}
	}
	if c := Verify(d, staging); c.Status != Complete {
		err := c.Err()
		if err == nil {
			err = fmt.Errorf("the downloads gave a copy that is %s", c.Status)
		}
		return res, fmt.Errorf("fetching %s: %w; nothing was installed", d.Name, err)
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		return res, fmt.Errorf("datasets: %w", err)
	}
	if err := os.Rename(staging, dest); err != nil {
		return res, fmt.Errorf("datasets: installing %s: %w; nothing was installed", dest, err)
	}
	installed = true
	return res, nil
}

// StaleAfter is the age after which Fetch removes a staging directory that
// an earlier fetch of the same data set left behind (a process killed
// before it could clean up).
const StaleAfter = 24 * time.Hour

// removeStale removes root/.NAME.fetch-* directories older than StaleAfter.
func removeStale(root, name string) {
	old, _ := filepath.Glob(filepath.Join(root, "."+name+".fetch-*"))
	for _, p := range old {
		if st, err := os.Lstat(p); err == nil && st.IsDir() && time.Since(st.ModTime()) > StaleAfter {
			os.RemoveAll(p)
		}
	}
}

// checkName refuses a data-set name that is not a single path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
		return fmt.Errorf("datasets: invalid data-set name %q: it must be one directory name", name)
	}
	return nil
}

// stallReader cancels the request when no byte arrives for d.
type stallReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.t.Reset(s.d)
	}
	return n, err
}

// fetchOne downloads dl into staging, checks it and unpacks it; it returns
// the bytes received.
func fetchOne(ctx context.Context, name string, dl Download, staging string, o *FetchOptions) (int64, error) {
	if len(dl.SHA256) != 64 {
		return 0, fmt.Errorf("%s: no valid SHA-256 recorded for the download (%q)", dl.URL, dl.SHA256)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(o.Stall, func() { cancel(errStalled) })
	defer timer.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dl.URL, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dl.URL, err)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("downloading %s: %w", dl.URL, causeOf(ctx, err, o.Stall))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("downloading %s: the server answered %s", dl.URL, resp.Status)
	}
	limit := dl.Size
	if limit <= 0 {
		limit = o.MaxBytes
	}
	if resp.ContentLength >= 0 && dl.Size > 0 && resp.ContentLength != dl.Size {
		return 0, fmt.Errorf("%w: %s serves %d bytes, the registry records %d", ErrMismatch, dl.URL, resp.ContentLength, dl.Size)
	}
	if resp.ContentLength > limit {
		return 0, fmt.Errorf("%w: %s serves %d bytes, more than the limit of %d", ErrTooLarge, dl.URL, resp.ContentLength, limit)
	}
	tmp, err := os.CreateTemp(staging, ".download-*")
	if err != nil {
		return 0, fmt.Errorf("datasets: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	w := io.MultiWriter(tmp, h)
	var p *progress
	if o.Progress != nil {
		p = &progress{w: o.Progress, label: name + ": " + path.Base(dl.URL), total: dl.Size}
		if p.total <= 0 {
			p.total = resp.ContentLength
		}
		w = io.MultiWriter(w, p)
	}
	n, err := io.Copy(w, io.LimitReader(&stallReader{r: resp.Body, t: timer, d: o.Stall}, limit+1))
	if p != nil {
		p.finish()
	}
	if err != nil {
		return n, fmt.Errorf("downloading %s: interrupted after %d bytes: %w", dl.URL, n, causeOf(ctx, err, o.Stall))
	}
	if n > limit {
		return n, fmt.Errorf("%w: %s sent more than %d bytes", ErrTooLarge, dl.URL, limit)
	}
	if dl.Size > 0 && n != dl.Size {
		return n, fmt.Errorf("downloading %s: got %d bytes, want %d (the download was cut short)", dl.URL, n, dl.Size)
	}
	if err := tmp.Sync(); err != nil {
		return n, fmt.Errorf("datasets: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(dl.SHA256) {
		return n, fmt.Errorf("%w: %s: the download's SHA-256 is %s, want %s (the source changed, or the download was corrupted or tampered with)",
			ErrMismatch, dl.URL, got, dl.SHA256)
	}
	switch dl.Packaging {
	case Plain, "":
		dst, err := stagePath(staging, dl.To)
		if err != nil {
			return n, err
		}
		if err := tmp.Close(); err != nil {
			return n, fmt.Errorf("datasets: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return n, fmt.Errorf("datasets: %w", err)
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			return n, fmt.Errorf("datasets: %w", err)
		}
		return n, os.Rename(tmp.Name(), dst)
	case Zip:
		return n, extractZip(tmp, n, dl, staging, o.MaxBytes)
	case TarGz:
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return n, fmt.Errorf("datasets: %w", err)
		}
		return n, extractTarGz(tmp, dl, staging, o.MaxBytes)
	default:
		return n, fmt.Errorf("%s: unknown packaging %q (want plain, zip or tar.gz)", dl.URL, dl.Packaging)
	}
}

// causeOf replaces a context error by its cause: a stall or the caller's
// cancellation.
func causeOf(ctx context.Context, err error, stall time.Duration) error {
	c := context.Cause(ctx)
	if errors.Is(c, errStalled) {
		return fmt.Errorf("%w for %v", errStalled, stall)
	}
	if c != nil {
		return c
	}
	return err
}

// memberPath validates an archive member name (or a registry path): it must
// be relative, slash-separated and stay inside the directory.
func memberPath(name string) error {
	if name == "" || strings.Contains(name, `\`) || path.IsAbs(name) || !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("%w: entry %q would be written outside the data set's directory", ErrUnsafeArchive, name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return fmt.Errorf("%w: entry %q contains \"..\"", ErrUnsafeArchive, name)
		}
	}
	return nil
}

// stagePath is staging/rel after validating rel.
func stagePath(staging, rel string) (string, error) {
	if err := memberPath(rel); err != nil {
		return "", err
	}
	return filepath.Join(staging, filepath.FromSlash(rel)), nil
}

// target is where member goes, and whether it is extracted at all.
func target(dl Download, member string) (string, bool) {
	if dl.Members == nil {
		return member, true
	}
	to, ok := dl.Members[member]
	return to, ok
}

// writeMember copies r into the new file dst, at most max bytes.
func writeMember(dst string, r io.Reader, max int64, name string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, fmt.Errorf("datasets: %w", err)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%w: entry %q: %v (a duplicate entry?)", ErrUnsafeArchive, name, err)
	}
	n, err := io.Copy(f, io.LimitReader(r, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("extracting %q: %w", name, err)
	}
	if n > max {
		return n, fmt.Errorf("%w: entry %q holds more than %d bytes", ErrTooLarge, name, max)
	}
	return n, nil
}

// missingMembers names the members of dl.Members not in seen.
func missingMembers(dl Download, seen map[string]bool) error {
	var miss []string
	for m := range dl.Members {
		if !seen[m] {
			miss = append(miss, m)
		}
	}
	if len(miss) == 0 {
		return nil
	}
	sort.Strings(miss)
	return fmt.Errorf("%s: the archive lacks %s", dl.URL, strings.Join(miss, ", "))
}

func extractZip(f *os.File, size int64, dl Download, staging string, max int64) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return fmt.Errorf("%s: not a zip archive: %w", dl.URL, err)
	}
	// Refuse the whole archive before writing anything if any entry is
	// unsafe or absurdly large.
	for _, e := range zr.File {
		if err := memberPath(strings.TrimSuffix(e.Name, "/")); err != nil {
			return fmt.Errorf("%s: %w", dl.URL, err)
		}
		if m := e.Mode(); m&(fs.ModeSymlink|fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeCharDevice) != 0 {
			return fmt.Errorf("%s: %w: entry %q is a %v, not a regular file", dl.URL, ErrUnsafeArchive, e.Name, m.Type())
		}
		if e.UncompressedSize64 > uint64(max) {
			return fmt.Errorf("%s: %w: entry %q declares %d bytes, more than the limit of %d", dl.URL, ErrTooLarge, e.Name, e.UncompressedSize64, max)
		}
	}
	seen := map[string]bool{}
	var total int64
	for _, e := range zr.File {
		if e.FileInfo().IsDir() {
			continue
		}
		to, ok := target(dl, e.Name)
		if !ok {
			continue
		}
		dst, err := stagePath(staging, to)
		if err != nil {
			return err
		}
		rc, err := e.Open()
		if err != nil {
			return fmt.Errorf("%s: entry %q: %w", dl.URL, e.Name, err)
		}
		n, err := writeMember(dst, rc, max-total, e.Name)
		rc.Close()
		total += n
		if err != nil {
			return fmt.Errorf("%s: %w", dl.URL, err)
		}
		seen[e.Name] = true
	}
	return missingMembers(dl, seen)
}

func extractTarGz(f io.Reader, dl Download, staging string, max int64) error {
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: not a gzip stream: %w", dl.URL, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	seen := map[string]bool{}
	var total int64
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: reading the tar archive: %w", dl.URL, err)
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeDir:
			if err := memberPath(name); err != nil {
				return fmt.Errorf("%s: %w", dl.URL, err)
			}
			continue
		case tar.TypeReg:
		default:
			return fmt.Errorf("%s: %w: entry %q has type %q, not a regular file or directory (links are refused)",
				dl.URL, ErrUnsafeArchive, hdr.Name, string(hdr.Typeflag))
		}
		if err := memberPath(name); err != nil {
			return fmt.Errorf("%s: %w", dl.URL, err)
		}
		if hdr.Size > max-total {
			return fmt.Errorf("%s: %w: entry %q declares %d bytes, more than the %d left of the limit", dl.URL, ErrTooLarge, hdr.Name, hdr.Size, max-total)
		}
		to, ok := target(dl, hdr.Name)
		if !ok {
			continue
		}
		dst, err := stagePath(staging, to)
		if err != nil {
			return err
		}
		n, err := writeMember(dst, tr, max-total, hdr.Name)
		total += n
		if err != nil {
			return fmt.Errorf("%s: %w", dl.URL, err)
		}
		seen[hdr.Name] = true
	}
	return missingMembers(dl, seen)
}

// Instructions tells how to obtain d by hand and the exact paths to place
// its files at under root (the directory FetchRoot gives).
func Instructions(d Dataset, root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", d.Name, d.Title)
	if d.Fetchable() {
		fmt.Fprintf(&b, "It is downloaded by: dpbandit data fetch %s\n", d.Name)
	} else {
		fmt.Fprintf(&b, "It is not downloaded automatically. Terms: %s.\n", d.License)
	}
	if d.Obtain != "" {
		fmt.Fprintf(&b, "\nHow to get it: %s\n", d.Obtain)
	}
	dir := filepath.Join(root, d.Name)
	fmt.Fprintf(&b, "\nPlace its files at:\n")
	for _, f := range d.Files {
		line := "  " + filepath.Join(dir, filepath.FromSlash(f.Path))
		var notes []string
		if f.Optional {
			notes = append(notes, "optional")
		}
		if f.StandIn != "" {
			notes = append(notes, "or, partially, "+f.StandIn)
		}
		if len(notes) > 0 {
			line += "   (" + strings.Join(notes, "; ") + ")"
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "\nThen check them: dpbandit data verify %s\n", d.Name)
	if root != "" {
		fmt.Fprintf(&b, "(Another data directory works too: set $%s, or use --dir.)\n", EnvVar)
	}
	fmt.Fprintf(&b, "Cite: %s.\n", d.Citation)
	if d.Note != "" {
		fmt.Fprintf(&b, "Note: %s\n", d.Note)
	}
	return b.String()
}

// ProgressWriter returns w when it is a terminal (an *os.File whose mode is
// a character device), else nil: progress lines are for people, not logs.
func ProgressWriter(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return w
}

// progress prints "label: done / total (p%)", at most every 200 ms.
type progress struct {
	w           io.Writer
	label       string
	total, done int64
	last        time.Time
}

func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		p.print()
	}
	return len(b), nil
}

func (p *progress) print() {
	if p.total > 0 {
		fmt.Fprintf(p.w, "\r%s: %s / %s (%.0f%%)   ", p.label, FormatBytes(p.done), FormatBytes(p.total), 100*float64(p.done)/float64(p.total))
	} else {
		fmt.Fprintf(p.w, "\r%s: %s   ", p.label, FormatBytes(p.done))
	}
}

func (p *progress) finish() {
	p.print()
	fmt.Fprintln(p.w)
}
