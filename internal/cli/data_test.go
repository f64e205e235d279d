package cli

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/datasets"
)

func sha(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// noNetwork makes dataClient fail the test on any request.
func noNetwork(t *testing.T) {
	t.Helper()
	old := dataClient
	dataClient = &http.Client{Transport: failTransport{t}}
	t.Cleanup(func() { dataClient = old })
}

type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("network request to %s", r.URL)
	return nil, errors.New("no network in tests")
}

func runData(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(append([]string{"data"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// isolate points the cache at an empty temporary directory and unsets
// $DPBANDIT_DATA, so the user's own data cannot leak into a test.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "xdg"))
	t.Setenv(datasets.EnvVar, "")
}

func TestDataListNoNetwork(t *testing.T) {
	noNetwork(t)
	isolate(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "uci-mushroom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "uci-mushroom", "agaricus-lepiota.data"), []byte("truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runData(t, "list", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, n := range datasets.Names() {
		if !strings.Contains(out, "\n"+n+" ") {
			t.Errorf("list lacks %s:\n%s", n, out)
		}
	}
	for _, w := range []string{"NAME", "STATUS", "WHERE", "SIZE", "GET", "LICENCE", "--dir: " + dir} {
		if !strings.Contains(out, w) {
			t.Errorf("list lacks %q:\n%s", w, out)
		}
	}
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "uci-mushroom":
			if f[1] != "corrupt" || !strings.Contains(l, dir+" (flag)") || !strings.Contains(l, "CC BY 4.0") {
				t.Errorf("mushroom line: %q", l)
			}
		case "movielens-100k", "yahoo-r6":
			if f[1] != "absent" || !strings.Contains(l, "by hand") {
				t.Errorf("licensed line: %q", l)
			}
		case "jester":
			if f[1] != "absent" || !strings.Contains(l, " fetch ") || !strings.Contains(l, "11.8 MB") {
				t.Errorf("jester line: %q", l)
			}
		}
	}

	code, out, errs = runData(t, "list", "--dir", dir, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var got struct {
		Datasets []struct {
			Name, Status, License, Citation, Homepage, Get string
			Root                                           *datasets.Root
			Files                                          []struct{ Path, SHA256 string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(got.Datasets) != len(datasets.Names()) {
		t.Fatalf("--json lists %d data sets, want %d", len(got.Datasets), len(datasets.Names()))
	}
	for _, d := range got.Datasets {
		if d.License == "" || d.Citation == "" || !strings.Contains(d.Homepage, "https://") || len(d.Files) == 0 {
			t.Errorf("--json %s lacks a field: %+v", d.Name, d)
		}
		if d.Name == "uci-mushroom" && (d.Status != "corrupt" || d.Root == nil || d.Root.Dir != dir ||
			d.Files[0].SHA256 != "799d068978c62941cd323c16e82ec28d588f1c264c42f90ce56cc73358b3efdb") {
			t.Errorf("--json mushroom: %+v", d)
		}
	}
}

func makeTestArchives(t *testing.T) (zipB, tgz []byte) {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create("ratings/r.csv")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("1,2,5\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	gw := gzip.NewWriter(&tb)
	tw := tar.NewWriter(gw)
	body := []byte("item one\n")
	if err := tw.WriteHeader(&tar.Header{Name: "items.txt", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	gw.Close()
	return zb.Bytes(), tb.Bytes()
}

// `dpbandit data fetch` end to end against a local server, with a
// test-only registry entry; then verify, a corrupted copy, and a checksum
// mismatch that leaves nothing behind.
func TestDataFetchEndToEnd(t *testing.T) {
	isolate(t)
	zipB, tgz := makeTestArchives(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/t.zip":
			w.Write(zipB)
		case "/t.tar.gz":
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	entry := datasets.Dataset{
		Name: "testset", Title: "a test set", Terms: "test", License: "test licence", Citation: "Nobody (2026)",
		Homepage: srv.URL, Provenance: "generated",
		Files: []datasets.File{
			{Path: "r.csv", Size: 6, SHA256: sha([]byte("1,2,5\n"))},
			{Path: "items.txt", Size: 9, SHA256: sha([]byte("item one\n"))},
		},
		Downloads: []datasets.Download{
			{URL: srv.URL + "/t.zip", Size: int64(len(zipB)), SHA256: sha(zipB), Packaging: datasets.Zip, Members: map[string]string{"ratings/r.csv": "r.csv"}},
			{URL: srv.URL + "/t.tar.gz", Size: int64(len(tgz)), SHA256: sha(tgz), Packaging: datasets.TarGz},
		},
	}
	bad := entry
	bad.Name = "badset"
	bad.Downloads = append([]datasets.Download(nil), entry.Downloads...)
	bad.Downloads[1].SHA256 = strings.Repeat("1", 64)
	oldReg, oldClient := dataRegistry, dataClient
	dataRegistry = func() []datasets.Dataset { return append(datasets.All(), entry, bad) }
	dataClient = srv.Client()
	defer func() { dataRegistry, dataClient = oldReg, oldClient }()

	dir := t.TempDir()
	code, out, errs := runData(t, "fetch", "testset", "--dir", dir)
	if code != 0 {
		t.Fatalf("fetch: exit %d: %s", code, errs)
	}
	want := filepath.Join(dir, "testset")
	for _, w := range []string{"testset: downloaded", want, "every SHA-256 matches", "Cite: Nobody (2026)", "set " + datasets.EnvVar + "=" + dir} {
		if !strings.Contains(out, w) {
			t.Errorf("fetch output lacks %q:\n%s", w, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(want, "r.csv")); err != nil || string(b) != "1,2,5\n" {
		t.Errorf("r.csv = %q, %v", b, err)
	}
	if errs != "" {
		t.Errorf("progress printed to a non-terminal: %q", errs)
	}
	code, out, _ = runData(t, "fetch", "testset", "--dir", dir)
	if code != 0 || !strings.Contains(out, "already at") {
		t.Errorf("second fetch: exit %d:\n%s", code, out)
	}
	code, out, errs = runData(t, "verify", "testset", "--dir", dir)
	if code != 0 || !strings.HasPrefix(out, "ok ") || !strings.Contains(out, "2 files match their checksums") {
		t.Errorf("verify: exit %d:\n%s%s", code, out, errs)
	}
	// Corrupt one byte: verify exits 1 and names the file.
	if err := os.WriteFile(filepath.Join(want, "items.txt"), []byte("item 0ne\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runData(t, "verify", "testset", "--dir", dir)
	if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, filepath.Join(want, "items.txt")+": sha256 ") ||
		!strings.Contains(errs, "verification failed: testset") {
		t.Errorf("verify of a corrupt copy: exit %d:\n%s%s", code, out, errs)
	}
	// A mismatching download: exit 1, a clear message, nothing left.
	code, _, errs = runData(t, "fetch", "badset", "--dir", dir)
	if code != 1 || !strings.Contains(errs, "t.tar.gz: the download's SHA-256 is "+sha(tgz)+", want "+strings.Repeat("1", 64)) ||
		!strings.Contains(errs, "nothing was installed") {
		t.Errorf("mismatch: exit %d: %s", code, errs)
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 1 || es[0].Name() != "testset" {
		t.Errorf("after the refused fetch the data directory holds %v", es)
	}
	// Without --dir, fetch writes into $DPBANDIT_DATA.
	env := t.TempDir()
	t.Setenv(datasets.EnvVar, env)
	if code, _, errs := runData(t, "fetch", "testset"); code != 0 {
		t.Errorf("fetch into $%s: exit %d: %s", datasets.EnvVar, code, errs)
	} else if _, err := os.Stat(filepath.Join(env, "testset", "items.txt")); err != nil {
		t.Errorf("fetch into $%s: %v", datasets.EnvVar, err)
	}
}

func TestDataFetchLicensedPrintsInstructions(t *testing.T) {
	noNetwork(t)
	isolate(t)
	dir := t.TempDir()
	code, out, errs := runData(t, "fetch", "movielens-100k", "--dir", dir)
	if code != 1 || !strings.Contains(errs, "licensed and was not downloaded") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	for _, w := range []string{filepath.Join(dir, "movielens-100k", "u.data"), filepath.Join(dir, "movielens-100k", "u.item"),
		"https://grouplens.org/datasets/movielens/100k/", "no redistribution", "dpbandit data verify movielens-100k", "Harper and Joseph A. Konstan"} {
		if !strings.Contains(out, w) {
			t.Errorf("instructions lack %q:\n%s", w, out)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("a licensed fetch wrote %v", es)
	}
	// Without --dir the instructions name the cache directory.
	cache, _ := datasets.CacheDir()
	if _, out, _ := runData(t, "fetch", "yahoo-r6"); !strings.Contains(out, filepath.Join(cache, "yahoo-r6", "ydata-fp-td-clicks-v1_0.20090501.gz")) {
		t.Errorf("yahoo-r6 instructions do not name the cache path %s:\n%s", cache, out)
	}
}

func TestDataBadInput(t *testing.T) {
	noNetwork(t)
	isolate(t)
	code, _, errs := runData(t, "fetch", "movielens")
	if code != 2 || !strings.Contains(errs, `unknown data set "movielens"`) || !strings.Contains(errs, "movielens-100k, movielens-1m") {
		t.Errorf("unknown name: exit %d: %s", code, errs)
	}
	if code, _, errs := runData(t, "verify", "nope"); code != 2 || !strings.Contains(errs, "the known data sets are") {
		t.Errorf("verify unknown: exit %d: %s", code, errs)
	}
	if code, _, errs := runData(t, "fetch", "jester", "--timeout=-1s"); code != 2 || !strings.Contains(errs, "negative") {
		t.Errorf("negative timeout: exit %d: %s", code, errs)
	}
	// A named data set that is absent fails verification.
	if code, out, _ := runData(t, "verify", "yahoo-r6", "--dir", t.TempDir()); code != 1 || !strings.Contains(out, "absent") {
		t.Errorf("verify absent: exit %d: %s", code, out)
	}
}

// The project's own copies verify (skipped when absent).
func TestDataVerifyRealCopies(t *testing.T) {
	noNetwork(t)
	isolate(t)
	var shared string
	for _, r := range datasets.Roots() {
		if r.Source == datasets.FromShared {
			shared = r.Dir
		}
	}
	if shared == "" {
		t.Skip("no shared/data directory beside the working directory or its ancestors")
	}
	code, out, errs := runData(t, "verify")
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(shared, "uci-mushroom")); err == nil && !strings.Contains(out, "ok       uci-mushroom") {
		t.Errorf("mushroom not verified:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(shared, "movielens-1m", "ratings_PARTIAL_users1-2999.dat.gz")); err == nil {
		if !strings.Contains(out, "partial  movielens-1m") || !strings.Contains(out, "ML-1M users 1-2999") {
			t.Errorf("movielens-1m not reported as partial:\n%s", out)
		}
	}
}

func TestDataHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"$DPBANDIT_DATA", "os.UserCacheDir()/dpbandit", "shared/data", "dpbandit data fetch uci-mushroom", "never downloaded"}},
		{[]string{"fetch", "--help"}, []string{"SHA-256", "renamed into place in one step", "leaves nothing half-written", "movielens-100k, movielens-1m, yahoo-r6"}},
		{[]string{"list", "--help"}, []string{"Runs without network", "partial"}},
		{[]string{"verify", "--help"}, []string{"Exits 1", "git"}},
	} {
		code, out, errs := runData(t, c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
		}
		help := strings.Join(strings.Fields(out), " ")
		for _, w := range c.want {
			if !strings.Contains(help, w) {
				t.Errorf("%v lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}
