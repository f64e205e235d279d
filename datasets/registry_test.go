package datasets

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

var (
	hex64  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hex40  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	pinned = regexp.MustCompile(`^https://raw\.githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/`)
)

// The registry's invariants: every data set the project knows, each with
// the descriptive fields filled, every file checked by a well-formed
// checksum (only Yahoo! R6's have none), licensed data not fetchable, and
// every required file of a fetchable data set produced by a pinned,
// checksummed download.
func TestRegistry(t *testing.T) {
	want := "jester,movielens-100k,movielens-1m,open-bandit-dataset-sample,uci-mushroom,uci-statlog-shuttle,yahoo-r6"
	if got := strings.Join(Names(), ","); got != want {
		t.Fatalf("Names() = %s, want %s", got, want)
	}
	licensed := map[string]bool{"movielens-100k": true, "movielens-1m": true, "yahoo-r6": true}
	for _, d := range All() {
		if err := checkName(d.Name); err != nil {
			t.Error(err)
		}
		for field, v := range map[string]string{"Title": d.Title, "About": d.About, "Records": d.Records, "Terms": d.Terms,
			"License": d.License, "Citation": d.Citation, "Homepage": d.Homepage, "Provenance": d.Provenance} {
			if v == "" {
				t.Errorf("%s: %s is empty", d.Name, field)
			}
		}
		if !strings.Contains(d.Homepage, "https://") {
			t.Errorf("%s: homepage %q is not a URL", d.Name, d.Homepage)
		}
		if d.Fetchable() == licensed[d.Name] {
			t.Errorf("%s: Fetchable() = %v", d.Name, d.Fetchable())
		}
		if !d.Fetchable() && (d.Obtain == "" || !strings.Contains(d.Obtain, "https://")) {
			t.Errorf("%s: licensed, but Obtain does not say where to get it: %q", d.Name, d.Obtain)
		}
		seen := map[string]bool{}
		for _, f := range d.Files {
			if seen[f.Path] {
				t.Errorf("%s: %s listed twice", d.Name, f.Path)
			}
			seen[f.Path] = true
			if err := memberPath(f.Path); err != nil && len(f.Parts) == 0 {
				t.Errorf("%s: %v", d.Name, err)
			}
			switch {
			case f.SHA256 != "":
				if !hex64.MatchString(f.SHA256) {
					t.Errorf("%s/%s: SHA-256 %q", d.Name, f.Path, f.SHA256)
				}
			case f.GitBlob != "":
				if !hex40.MatchString(f.GitBlob) {
					t.Errorf("%s/%s: git blob %q", d.Name, f.Path, f.GitBlob)
				}
			case d.Name != "yahoo-r6":
				t.Errorf("%s/%s: no checksum", d.Name, f.Path)
			}
			if f.StandIn != "" && !seen[f.StandIn] {
				found := false
				for _, g := range d.Files {
					found = found || (g.Path == f.StandIn && g.Optional)
				}
				if !found {
					t.Errorf("%s/%s: stand-in %s is not an optional file of the data set", d.Name, f.Path, f.StandIn)
				}
			}
		}
		if !d.Fetchable() {
			continue
		}
		produced := map[string]string{} // path -> SHA-256 of a plain download
		for _, dl := range d.Downloads {
			if !pinned.MatchString(dl.URL) {
				t.Errorf("%s: download %s is not pinned to a commit", d.Name, dl.URL)
			}
			if !hex64.MatchString(dl.SHA256) || dl.Size <= 0 {
				t.Errorf("%s: download %s: SHA-256 %q, size %d", d.Name, dl.URL, dl.SHA256, dl.Size)
			}
			switch dl.Packaging {
			case Plain:
				produced[dl.To] = dl.SHA256
			case Zip, TarGz:
				for _, to := range dl.Members {
					produced[to] = ""
				}
			default:
				t.Errorf("%s: packaging %q", d.Name, dl.Packaging)
			}
		}
		for _, f := range d.Files {
			s, ok := produced[f.Path]
			if !f.Optional && !ok {
				t.Errorf("%s: required file %s is produced by no download", d.Name, f.Path)
			}
			if ok && s != "" && s != f.SHA256 {
				t.Errorf("%s: %s: the plain download's SHA-256 %s differs from the file's %s", d.Name, f.Path, s, f.SHA256)
			}
		}
	}
	if _, err := Lookup("movielens"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "movielens-100k, movielens-1m") {
		t.Errorf("Lookup(movielens): %v", err)
	}
}

// The project's copy of MovieLens 1M is partial, and the registry says so.
func TestMovieLens1MIsLabelledPartial(t *testing.T) {
	d, err := Lookup("movielens-1m")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Note, "PARTIAL") || !strings.Contains(d.Note, "487,650 of 1,000,209") || d.Files[0].StandIn == "" {
		t.Errorf("movielens-1m does not say its copy is partial: %q", d.Note)
	}
	if n, known := d.TotalSize(); known || n != 171308+134368+5577 {
		t.Errorf("TotalSize = %d, %v: want the three recorded sizes, not the stand-in's, and unknown", n, known)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 14137869: "14.1 MB", 4 << 30: "4.29 GB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
