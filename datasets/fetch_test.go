package datasets

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

type entry struct {
	name, body string
	typ        byte // tar type; 0: regular file
	link       string
}

func makeZip(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func makeTarGz(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.typ != 0 {
			h.Typeflag, h.Size, h.Linkname = e.typ, 0, e.link
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// server serves the given paths and counts the requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func serve(t testing.TB, files map[string][]byte, extra map[string]http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if h, ok := extra[r.URL.Path]; ok {
			h(w, r)
			return
		}
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

const (
	bodyA, bodyB, bodyC, bodyD = "alpha,1\nbeta,2\n", "the b file\n", "gamma\n", "plain bytes\n"
)

// testFiles are the files a test server serves: a zip, a tar.gz and a
// plain file.
func testFiles(t testing.TB) map[string][]byte {
	zipB := makeZip(t, []entry{{name: "data/a.csv", body: bodyA}, {name: "data/b.txt", body: bodyB}, {name: "unused.txt", body: "x"}})
	tgz := makeTarGz(t, []entry{{name: "pkg/", typ: tar.TypeDir}, {name: "pkg/c.txt", body: bodyC}})
	return map[string][]byte{"/set.zip": zipB, "/set.tar.gz": tgz, "/d.txt": []byte(bodyD)}
}

// testSet is a test-only registry entry whose downloads are files (from
// testFiles) served at srv.
func testSet(srv string, files map[string][]byte) Dataset {
	zipB, tgz := files["/set.zip"], files["/set.tar.gz"]
	return Dataset{
		Name: "testset", Title: "test set", License: "test terms", Citation: "nobody",
		Files: []File{
			{Path: "a.csv", Size: int64(len(bodyA)), SHA256: sum([]byte(bodyA))},
			{Path: "sub/b.txt", Size: int64(len(bodyB)), SHA256: sum([]byte(bodyB))},
			{Path: "c.txt", Size: int64(len(bodyC)), SHA256: sum([]byte(bodyC))},
			{Path: "d.txt", Size: int64(len(bodyD)), SHA256: sum([]byte(bodyD))},
			{Path: "notes.txt", Optional: true, SHA256: sum([]byte("n"))},
		},
		Downloads: []Download{
			{URL: srv + "/set.zip", Size: int64(len(zipB)), SHA256: sum(zipB), Packaging: Zip,
				Members: map[string]string{"data/a.csv": "a.csv", "data/b.txt": "sub/b.txt"}},
			{URL: srv + "/set.tar.gz", SHA256: sum(tgz), Packaging: TarGz, Members: map[string]string{"pkg/c.txt": "c.txt"}},
			{URL: srv + "/d.txt", Size: int64(len(bodyD)), SHA256: sum([]byte(bodyD)), Packaging: Plain, To: "d.txt"},
		},
	}
}

// entries lists dir's entries (names), failing the test on error.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range es {
		n = append(n, e.Name())
	}
	return n
}

func assertEmpty(t *testing.T, root string) {
	t.Helper()
	if n := entries(t, root); len(n) != 0 {
		t.Errorf("%s holds %v after a failed fetch, want nothing", root, n)
	}
}

func TestFetchEndToEnd(t *testing.T) {
	files := testFiles(t)
	srv := serve(t, files, nil)
	ds := testSet(srv.URL, files)
	root := filepath.Join(t.TempDir(), "cache", "dpbandit") // created by Fetch
	var progress bytes.Buffer
	res, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client(), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(len(files["/set.zip"]) + len(files["/set.tar.gz"]) + len(files["/d.txt"]))
	if res.AlreadyPresent || res.Bytes != want || res.Dir != filepath.Join(root, "testset") {
		t.Errorf("result %+v, want %d bytes into %s", res, want, filepath.Join(root, "testset"))
	}
	for path, body := range map[string]string{"a.csv": bodyA, "sub/b.txt": bodyB, "c.txt": bodyC, "d.txt": bodyD} {
		b, err := os.ReadFile(filepath.Join(res.Dir, path))
		if err != nil || string(b) != body {
			t.Errorf("%s = %q, %v; want %q", path, b, err, body)
		}
	}
	// Only the registered members are extracted; nothing else is left.
	if n := entries(t, res.Dir); strings.Join(n, ",") != "a.csv,c.txt,d.txt,sub" {
		t.Errorf("data set directory holds %v", n)
	}
	if n := entries(t, root); len(n) != 1 || n[0] != "testset" {
		t.Errorf("data directory holds %v, want only testset (no staging left)", n)
	}
	// A staging directory a killed fetch left behind is removed by the next
	// fetch once stale, kept while it may belong to a running one.
	stale, fresh := filepath.Join(root, ".testset.fetch-111"), filepath.Join(root, ".testset.fetch-222")
	for _, p := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-StaleAfter - time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(res.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client()}); err != nil {
		t.Fatal(err)
	}
	if n := entries(t, root); strings.Join(n, ",") != ".testset.fetch-222,testset" {
		t.Errorf("after a fetch with a stale and a fresh staging directory: %v", n)
	}
	os.RemoveAll(fresh)
	if c := Verify(ds, res.Dir); c.Status != Complete {
		t.Errorf("fetched copy verifies as %s: %v", c.Status, c.Err())
	}
	if p := progress.String(); !strings.Contains(p, "testset: set.zip: ") || !strings.Contains(p, "(100%)") {
		t.Errorf("progress output %q", p)
	}
	// A second fetch finds the verified copy and downloads nothing.
	hits := srv.hits.Load()
	res, err = Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client()})
	if err != nil || !res.AlreadyPresent || res.Bytes != 0 || srv.hits.Load() != hits {
		t.Errorf("second fetch: %+v, %v, %d new requests", res, err, srv.hits.Load()-hits)
	}
	// A corrupted copy is neither trusted nor overwritten.
	if err := os.WriteFile(filepath.Join(res.Dir, "c.txt"), []byte("gammA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client()})
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "c.txt") {
		t.Errorf("fetch over a corrupt copy: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, "c.txt")); string(b) != "gammA\n" {
		t.Errorf("fetch touched the existing copy")
	}
}

func TestFetchChecksumMismatch(t *testing.T) {
	files := testFiles(t)
	srv := serve(t, files, nil)
	ds := testSet(srv.URL, files)

	// The tar.gz's recorded SHA-256 is wrong.
	bad := ds
	bad.Downloads = append([]Download(nil), ds.Downloads...)
	bad.Downloads[1].SHA256 = strings.Repeat("0", 64)
	root := t.TempDir()
	_, err := Fetch(context.Background(), bad, root, FetchOptions{Client: srv.Client()})
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("error %v does not wrap ErrMismatch", err)
	}
	for _, w := range []string{"/set.tar.gz", "SHA-256 is " + sum(files["/set.tar.gz"]), "want " + strings.Repeat("0", 64), "nothing was installed"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	assertEmpty(t, root)

	// The archive matches but an extracted file does not.
	bad = ds
	bad.Files = append([]File(nil), ds.Files...)
	bad.Files[0].SHA256 = strings.Repeat("f", 64)
	_, err = Fetch(context.Background(), bad, root, FetchOptions{Client: srv.Client()})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "a.csv") {
		t.Errorf("member mismatch: %v", err)
	}
	assertEmpty(t, root)

	// The server sends a different length than recorded.
	bad = ds
	bad.Downloads = append([]Download(nil), ds.Downloads...)
	bad.Downloads[2].Size++
	_, err = Fetch(context.Background(), bad, root, FetchOptions{Client: srv.Client()})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "serves 12 bytes, the registry records 13") {
		t.Errorf("length mismatch: %v", err)
	}
	assertEmpty(t, root)

	// An HTTP error status.
	bad.Downloads[2].URL = srv.URL + "/nope"
	_, err = Fetch(context.Background(), bad, root, FetchOptions{Client: srv.Client()})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
	assertEmpty(t, root)
}

// A server that dies mid-body, with and without a Content-Length, leaves
// nothing behind.
func TestFetchInterrupted(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10000)
	for _, declared := range []bool{true, false} {
		srv := serve(t, nil, map[string]http.HandlerFunc{"/big.bin": func(w http.ResponseWriter, r *http.Request) {
			if declared {
				w.Header().Set("Content-Length", "100000")
			}
			w.Write(body[:40000])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // drop the connection
		}})
		ds := Dataset{Name: "big", Files: []File{{Path: "big.bin", SHA256: sum(body)}},
			Downloads: []Download{{URL: srv.URL + "/big.bin", SHA256: sum(body), Packaging: Plain, To: "big.bin"}}}
		if declared {
			ds.Downloads[0].Size = int64(len(body))
		}
		root := t.TempDir()
		_, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client()})
		if err == nil || !strings.Contains(err.Error(), "interrupted after") || !strings.Contains(err.Error(), "nothing was installed") {
			t.Errorf("declared=%v: error %v", declared, err)
		}
		assertEmpty(t, root)
	}
}

// A server that stops sending is abandoned after Stall; a cancelled context
// stops the download; both leave nothing behind.
func TestFetchStallAndCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := serve(t, nil, map[string]http.HandlerFunc{"/slow": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write(make([]byte, 100))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}})
	ds := Dataset{Name: "slow", Files: []File{{Path: "x", SHA256: strings.Repeat("a", 64)}},
		Downloads: []Download{{URL: srv.URL + "/slow", Size: 1000, SHA256: strings.Repeat("a", 64), Packaging: Plain, To: "x"}}}
	root := t.TempDir()
	start := time.Now()
	_, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client(), Stall: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no data received for 100ms") {
		t.Errorf("stall: %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("stall detected after %v", el)
	}
	assertEmpty(t, root)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = Fetch(ctx, ds, root, FetchOptions{Client: srv.Client()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v does not wrap context.Canceled", err)
	}
	assertEmpty(t, root)
}

func TestFetchRefusesUnsafeArchives(t *testing.T) {
	cases := []struct {
		name string
		pkg  Packaging
		arch func(t testing.TB) []byte
		want error
		msg  string
	}{
		{"zip dot-dot", Zip, func(t testing.TB) []byte {
			return makeZip(t, []entry{{name: "ok.txt", body: "fine"}, {name: "../evil.txt", body: "pwned"}})
		}, ErrUnsafeArchive, `"../evil.txt"`},
		{"zip nested dot-dot", Zip, func(t testing.TB) []byte {
			return makeZip(t, []entry{{name: "a/../../evil.txt", body: "pwned"}})
		}, ErrUnsafeArchive, "evil.txt"},
		{"zip absolute", Zip, func(t testing.TB) []byte { return makeZip(t, []entry{{name: "/tmp/evil.txt", body: "pwned"}}) }, ErrUnsafeArchive, "/tmp/evil.txt"},
		{"zip backslash", Zip, func(t testing.TB) []byte { return makeZip(t, []entry{{name: `..\evil.txt`, body: "pwned"}}) }, ErrUnsafeArchive, "evil.txt"},
		{"tar dot-dot", TarGz, func(t testing.TB) []byte {
			return makeTarGz(t, []entry{{name: "ok.txt", body: "fine"}, {name: "../../evil.txt", body: "pwned"}})
		}, ErrUnsafeArchive, `"../../evil.txt"`},
		{"tar symlink", TarGz, func(t testing.TB) []byte {
			return makeTarGz(t, []entry{{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}})
		}, ErrUnsafeArchive, "links are refused"},
		{"tar hard link", TarGz, func(t testing.TB) []byte {
			return makeTarGz(t, []entry{{name: "link", typ: tar.TypeLink, link: "../x"}})
		}, ErrUnsafeArchive, "links are refused"},
		{"zip too large", Zip, func(t testing.TB) []byte {
			return makeZip(t, []entry{{name: "big.txt", body: strings.Repeat("z", 5000)}})
		}, ErrTooLarge, "more than the limit of 1000"},
		{"tar too large", TarGz, func(t testing.TB) []byte {
			return makeTarGz(t, []entry{{name: "big.txt", body: strings.Repeat("z", 5000)}})
		}, ErrTooLarge, "more than the 1000 left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arch := c.arch(t)
			srv := serve(t, map[string][]byte{"/a": arch}, nil)
			ds := Dataset{Name: "unsafe", Files: []File{{Path: "ok.txt", SHA256: sum([]byte("fine"))}},
				Downloads: []Download{{URL: srv.URL + "/a", SHA256: sum(arch), Packaging: c.pkg}}} // Members nil: extract all
			parent := t.TempDir()
			root := filepath.Join(parent, "data")
			_, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client(), MaxBytes: 1000})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want %v mentioning %s", err, c.want, c.msg)
			}
			assertEmpty(t, root)
			if n := entries(t, parent); len(n) != 1 {
				t.Errorf("files written beside the data directory: %v", n)
			}
		})
	}
}

// Licensed data sets print instructions and never touch the network.
func TestFetchLicensedDownloadsNothing(t *testing.T) {
	noNet := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("request to %s", r.URL)
		return nil, errors.New("no network in tests")
	})}
	for _, name := range []string{"movielens-100k", "movielens-1m", "yahoo-r6"} {
		d, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		_, err = Fetch(context.Background(), d, root, FetchOptions{Client: noNet})
		if !errors.Is(err, ErrLicensed) {
			t.Errorf("%s: %v does not wrap ErrLicensed", name, err)
		}
		assertEmpty(t, root)
		ins := Instructions(d, root)
		for _, f := range d.Files {
			if p := filepath.Join(root, name, filepath.FromSlash(f.Path)); !strings.Contains(ins, p) {
				t.Errorf("%s: instructions lack the path %s:\n%s", name, p, ins)
			}
		}
		for _, w := range []string{"not downloaded automatically", "dpbandit data verify " + name, "https://"} {
			if !strings.Contains(ins, w) {
				t.Errorf("%s: instructions lack %q:\n%s", name, w, ins)
			}
		}
	}
	d, _ := Lookup("movielens-1m")
	if ins := Instructions(d, "/x"); !strings.Contains(ins, "PARTIAL") || !strings.Contains(ins, "or, partially, ratings_PARTIAL_users1-2999.dat.gz") {
		t.Errorf("movielens-1m instructions do not say the local copy is partial:\n%s", ins)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestFetchRejectsBadInput(t *testing.T) {
	for _, name := range []string{"", "..", "a/b", `a\b`} {
		if _, err := Fetch(context.Background(), Dataset{Name: name}, t.TempDir(), FetchOptions{}); err == nil || !strings.Contains(err.Error(), "invalid data-set name") {
			t.Errorf("name %q: %v", name, err)
		}
	}
	// A registry path that escapes is refused like an archive entry.
	srv := serve(t, map[string][]byte{"/f": []byte("x")}, nil)
	ds := Dataset{Name: "esc", Files: []File{{Path: "f", SHA256: sum([]byte("x"))}},
		Downloads: []Download{{URL: srv.URL + "/f", SHA256: sum([]byte("x")), Packaging: Plain, To: "../f"}}}
	root := t.TempDir()
	if _, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client()}); !errors.Is(err, ErrUnsafeArchive) {
		t.Errorf("To=../f: %v", err)
	}
	assertEmpty(t, root)
	// A missing member is an error.
	arch := makeZip(t, []entry{{name: "other", body: "x"}})
	srv = serve(t, map[string][]byte{"/z": arch}, nil)
	ds.Downloads = []Download{{URL: srv.URL + "/z", SHA256: sum(arch), Packaging: Zip, Members: map[string]string{"f": "f"}}}
	if _, err := Fetch(context.Background(), ds, root, FetchOptions{Client: srv.Client()}); err == nil || !strings.Contains(err.Error(), "the archive lacks f") {
		t.Errorf("missing member: %v", err)
	}
	assertEmpty(t, root)
}

// Progress goes only to a terminal (a character device, by the file's
// mode): not to a pipe, a regular file or a buffer.
func TestProgressWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ProgressWriter(w) != nil || ProgressWriter(f) != nil || ProgressWriter(&bytes.Buffer{}) != nil || ProgressWriter((*os.File)(nil)) != nil {
		t.Error("progress to a pipe, a file, a buffer or a nil file")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if ProgressWriter(tty) == nil {
			t.Error("no progress on /dev/tty")
		}
	}
	var b bytes.Buffer
	p := &progress{w: &b, label: "x: f.zip", total: 2000}
	p.Write(make([]byte, 1000))
	p.finish()
	if got := b.String(); !strings.HasSuffix(got, "\rx: f.zip: 1.0 kB / 2.0 kB (50%)   \n") {
		t.Errorf("progress line %q", got)
	}
}
