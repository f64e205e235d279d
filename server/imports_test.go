package server

import (
	gobuild "go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServerDoesNotImportSim keeps the decision service's build free of the
// simulator: package server may import the policy contracts (bandit), the
// policies and the accountant, but not package sim (sweeps, outputs, plots).
// It walks the module's packages reachable from server's non-test imports
// with go/build, mapping import paths to directories under the module root.
func TestServerDoesNotImportSim(t *testing.T) {
	const module = "github.com/dpbandit/dpbandit"
	forbidden := []string{module + "/sim"}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	via := map[string]string{module + "/server": ""} // package → the package that imports it
	queue := []string{module + "/server"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(path, module)))
		pkg, err := gobuild.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if _, seen := via[imp]; seen {
				continue
			}
			via[imp] = path
			if slices.Contains(forbidden, imp) {
				chain := []string{imp}
				for p := path; p != ""; p = via[p] {
					chain = append(chain, p)
				}
				slices.Reverse(chain)
				t.Errorf("package server depends on %s: %s", imp, strings.Join(chain, " → "))
				continue
			}
			queue = append(queue, imp)
		}
	}
	if len(via) < 5 {
		t.Fatalf("walked only %d packages from server; the walk is broken", len(via))
	}
}
