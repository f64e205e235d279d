package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

type versionCmd struct{}

func (versionCmd) Help() string {
	return `Prints the module version, the VCS revision the binary was built from (with
its commit time, and "modified" when the working tree had uncommitted
changes), and the Go version and platform.

The revision is recorded by go build and go install in a git checkout
(-buildvcs, on by default); go run records none.`
}

func (versionCmd) Run(g *Globals) error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	_, err := fmt.Fprint(g.Stdout, versionText(bi))
	return err
}

// versionText renders the build information of bi (nil: none available):
//
//	dpbandit v0.0.0-20260301120000-0123456789ab+dirty
//	revision 0123456789abcdef0123456789abcdef01234567 (2026-03-01T12:00:00Z, modified)
//	go1.26.0 linux/amd64
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	version, goVersion := "(devel)", runtime.Version()
	settings := map[string]string{}
	if bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	fmt.Fprintln(&b, "dpbandit", version)
	if rev := settings["vcs.revision"]; rev != "" {
		var notes []string
		if t := settings["vcs.time"]; t != "" {
			notes = append(notes, t)
		}
		if settings["vcs.modified"] == "true" {
			notes = append(notes, "modified")
		}
		fmt.Fprint(&b, "revision ", rev)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		fmt.Fprintln(&b)
	} else {
		fmt.Fprintln(&b, "revision unknown (no VCS information: built by go run or go test, outside a git checkout, or with -buildvcs=false)")
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if v := settings["GOOS"]; v != "" {
		goos = v
	}
	if v := settings["GOARCH"]; v != "" {
		goarch = v
	}
	fmt.Fprintf(&b, "%s %s/%s\n", goVersion, goos, goarch)
	return b.String()
}
