// Package repocheck holds repository-wide checks that run with the default
// `go test ./...`. It has no non-test code.
//
// TestNoCitationOutsideRepo walks the module (from the directory holding
// go.mod, skipping .git) and fails, naming file:line, when a source,
// documentation, contract or script file cites a document that is not in the
// repository: the background notes and research notes the project was
// started from (their file names are assembled in the test, so that this
// package does not cite them either), a path into the sibling shared/ directory other than its data
// directory, or a relative docs/….md path (or a Markdown link to a .md file)
// that does not exist. Code and reports cite the papers themselves and the
// pages under docs/ instead (README.md, "Documentation").
//
// The data directory ../shared/data is exempt: it is a place the dataset
// loaders search (package ctxenv), not a cited document.
package repocheck
