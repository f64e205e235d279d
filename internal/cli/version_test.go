package cli

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/dpbandit/dpbandit", Version: "v0.0.0-20260301120000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"},
			{Key: "GOARCH", Value: "arm64"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-03-01T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	want := "dpbandit v0.0.0-20260301120000-0123456789ab+dirty\n" +
		"revision 0123456789abcdef0123456789abcdef01234567 (2026-03-01T12:00:00Z, modified)\n" +
		"go1.26.0 linux/arm64\n"
	if got := versionText(bi); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A clean tree at a tagged release.
	bi.Main.Version = "v1.2.3"
	bi.Settings[5].Value = "false"
	if got := versionText(bi); !strings.HasPrefix(got, "dpbandit v1.2.3\nrevision 0123456789abcdef0123456789abcdef01234567 (2026-03-01T12:00:00Z)\n") {
		t.Errorf("clean tree:\n%s", got)
	}

	// go run, go test or -buildvcs=false: no VCS settings, version "(devel)".
	bare := &debug.BuildInfo{Main: debug.Module{Path: "github.com/dpbandit/dpbandit", Version: "(devel)"}}
	got := versionText(bare)
	if !strings.HasPrefix(got, "dpbandit (devel)\nrevision unknown (") || !strings.HasSuffix(got, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
		t.Errorf("no VCS information:\n%s", got)
	}
	if got := versionText(nil); !strings.HasPrefix(got, "dpbandit (devel)\n") {
		t.Errorf("no build information:\n%s", got)
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "dpbandit ") || !strings.HasPrefix(lines[1], "revision ") ||
		!strings.Contains(lines[2], runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("dpbandit version printed:\n%s", out.String())
	}
}
