// Command mutantat replays gremlins mutants one at a time, exactly as
// gremlins made them, and runs a package's tests against each.
//
// gremlins (scripts/mutation) names a mutant by its type and the position of
// the operator token it changed, e.g. "ARITHMETIC_BASE at ucbabnoise.go:262:15";
// the column is go/token's, a byte offset plus one (a tab is one column, σ
// is two). Settling a survivor by hand means planting that same mutant again
// after a new test is written; planting it from a reading of the line is
// error-prone (the `+` before σ·Z is not the `*` inside it). mutantat finds
// the token at the exact position with go/scanner, checks that the type can
// mutate it, swaps it for what gremlins swaps it for, runs the tests in a
// copy of the tree and puts the file back.
//
//	go run ./scripts/mutantat [-run REGEXP] [-skip REGEXP] [-timeout D] [-j N] [-n] < LIST
//
// LIST holds one mutant per line, "TYPE DIR/FILE.go:LINE:COL [RUN]" (a path
// from the repository root; "at" between the two is allowed, so gremlins' own
// log lines can be pasted; RUN, optional, is that mutant's go test -run
// pattern in place of -run's; blank lines and lines starting with # are
// skipped). -j runs that many mutants at once, each in its own copy of the
// tree; the results are printed in the list's order. -n only checks that
// each mutant can be planted in the current code (a file edited since the
// gremlins run may have moved its tokens).
// For each it prints KILLED, LIVED, TIMED OUT or NOT VIABLE (the mutant
// does not compile), the change made and the line. It exits 1 when a line
// cannot be read or names no mutable token there.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// mutations is gremlins v0.6.0's table (internal/engine/mappings.go): for
// each mutant type, the token it changes and what it changes it into.
// INVERT_NEGATIVES turns the unary minus into a plus, which is the same
// text change as ARITHMETIC_BASE on a binary minus.
var mutations = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE": {token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL,
		token.SUB: token.ADD},
	"CONDITIONALS_BOUNDARY": {token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ},
	"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR,
		token.LSS: token.GEQ, token.NEQ: token.EQL},
	"INCREMENT_DECREMENT": {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_ASSIGNMENTS": {token.ADD_ASSIGN: token.SUB_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN,
		token.QUO_ASSIGN: token.MUL_ASSIGN, token.REM_ASSIGN: token.REM_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN},
	"INVERT_BITWISE": {token.AND: token.OR, token.OR: token.AND, token.XOR: token.AND, token.AND_NOT: token.AND,
		token.SHL: token.SHR, token.SHR: token.SHL},
	"INVERT_LOGICAL":   {token.LAND: token.LOR, token.LOR: token.LAND},
	"INVERT_LOOPCTRL":  {token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK},
	"INVERT_NEGATIVES": {token.SUB: token.ADD},
}

// mutant is one line of the list.
type mutant struct {
	typ       string
	path      string // from the repository root
	line, col int
	run       string // go test -run pattern of this mutant, or ""
}

func (m mutant) String() string { return fmt.Sprintf("%s %s:%d:%d", m.typ, m.path, m.line, m.col) }

// parseLine reads "TYPE PATH:LINE:COL [RUN]" (an "at" between the first two
// allowed).
func parseLine(s string) (mutant, error) {
	f := strings.Fields(s)
	if len(f) >= 3 && f[1] == "at" {
		f = append(f[:1], f[2:]...)
	}
	run := ""
	if len(f) == 3 {
		if _, err := regexp.Compile(f[2]); err != nil {
			return mutant{}, fmt.Errorf("%q: bad run pattern: %v", s, err)
		}
		run, f = f[2], f[:2]
	}
	if len(f) != 2 {
		return mutant{}, fmt.Errorf("%q: want \"TYPE PATH:LINE:COL [RUN]\"", s)
	}
	if _, ok := mutations[f[0]]; !ok {
		return mutant{}, fmt.Errorf("%q: unknown mutant type %q", s, f[0])
	}
	parts := strings.Split(f[1], ":")
	if len(parts) != 3 {
		return mutant{}, fmt.Errorf("%q: position %q is not PATH:LINE:COL", s, f[1])
	}
	line, err1 := strconv.Atoi(parts[1])
	col, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || line < 1 || col < 1 {
		return mutant{}, fmt.Errorf("%q: line and column must be positive integers", s)
	}
	return mutant{typ: f[0], path: parts[0], line: line, col: col, run: run}, nil
}

// apply returns src with the mutant planted, and the old and new operator.
// The token must start exactly at (line, col) in go/token's counting.
func apply(src []byte, m mutant) (out []byte, from, to token.Token, err error) {
	fset := token.NewFileSet()
	file := fset.AddFile(m.path, -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	for {
		pos, tok, _ := sc.Scan()
		if tok == token.EOF {
			return nil, 0, 0, fmt.Errorf("%s: no token starts at line %d, column %d", m, m.line, m.col)
		}
		p := fset.Position(pos)
		if p.Line < m.line || p.Line == m.line && p.Column < m.col {
			continue
		}
		if p.Line != m.line || p.Column != m.col {
			return nil, 0, 0, fmt.Errorf("%s: no token starts at line %d, column %d", m, m.line, m.col)
		}
		to, ok := mutations[m.typ][tok]
		if !ok {
			return nil, 0, 0, fmt.Errorf("%s: the token there is %q, which %s does not mutate", m, tok, m.typ)
		}
		off := file.Offset(pos)
		var b bytes.Buffer
		b.Write(src[:off])
		b.WriteString(to.String())
		b.Write(src[off+len(tok.String()):])
		return b.Bytes(), tok, to, nil
	}
}

// lineOf returns line n of src, trimmed.
func lineOf(src []byte, n int) string {
	lines := bytes.Split(src, []byte("\n"))
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSpace(string(lines[n-1]))
}

func main() {
	run := flag.String("run", "", "go test -run pattern (default: every test of the package)")
	skip := flag.String("skip", "", "go test -skip pattern")
	timeout := flag.Duration("timeout", 5*time.Minute, "a mutant whose tests run longer is TIMED OUT")
	jobs := flag.Int("j", 1, "mutants run at once (each in its own copy of the tree)")
	dry := flag.Bool("n", false, "dry run: only check that each mutant can be planted (prints PLANTABLE), run no tests")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/mutantat [-run RE] [-skip RE] [-timeout D] < LIST\n"+
			"LIST: one \"TYPE DIR/FILE.go:LINE:COL\" per line (gremlins' log lines with the path completed)")
		flag.PrintDefaults()
	}
	flag.Parse()
	for _, re := range []string{*run, *skip} {
		if _, err := regexp.Compile(re); err != nil {
			fmt.Fprintf(os.Stderr, "mutantat: bad pattern: %v\n", err)
			os.Exit(2)
		}
	}
	list, err := readList(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutantat:", err)
		os.Exit(1)
	}
	if *dry {
		bad := false
		for _, m := range list {
			src, err := os.ReadFile(m.path)
			if err == nil {
				var from, to token.Token
				if _, from, to, err = apply(src, m); err == nil {
					fmt.Printf("%-10s %s  (%s → %s)  %s\n", "PLANTABLE", m, from, to, lineOf(src, m.line))
					continue
				}
			}
			fmt.Fprintln(os.Stderr, "mutantat:", err)
			bad = true
		}
		if bad {
			os.Exit(1)
		}
		return
	}
	if *jobs < 1 {
		fmt.Fprintf(os.Stderr, "mutantat: -j %d: want at least 1\n", *jobs)
		os.Exit(2)
	}
	type result struct {
		line string
		err  error
	}
	results := make([]chan result, len(list))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	next := make(chan int)
	go func() {
		for i := range list {
			next <- i
		}
		close(next)
	}()
	var trees []string
	removeTrees := func() {
		for _, t := range trees {
			os.RemoveAll(t)
		}
	}
	for range min(*jobs, len(list)) {
		tree, err := copyTree()
		if err != nil {
			removeTrees()
			fmt.Fprintln(os.Stderr, "mutantat:", err)
			os.Exit(1)
		}
		trees = append(trees, tree)
		go func() {
			for i := range next {
				m, pattern := list[i], *run
				if m.run != "" {
					pattern = m.run
				}
				verdict, detail, err := try(tree, m, pattern, *skip, *timeout)
				results[i] <- result{fmt.Sprintf("%-10s %s  %s", verdict, m, detail), err}
			}
		}()
	}
	bad := false
	for _, c := range results {
		r := <-c
		if r.err != nil {
			fmt.Fprintln(os.Stderr, "mutantat:", r.err)
			bad = true
			continue
		}
		fmt.Println(r.line)
	}
	removeTrees()
	if bad {
		os.Exit(1)
	}
}

func readList(r io.Reader) ([]mutant, error) {
	var list []mutant
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		m, err := parseLine(s)
		if err != nil {
			return nil, err
		}
		list = append(list, m)
	}
	return list, sc.Err()
}

// copyTree copies the tracked and untracked-unignored files to a temporary
// folder, so that edits made meanwhile do not leak into a run.
func copyTree() (string, error) {
	out, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("listing the tree (run from the repository root): %w", err)
	}
	dir, err := os.MkdirTemp("", "mutantat-")
	if err != nil {
		return "", err
	}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted but still listed
		}
		if err != nil {
			return "", err
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// try plants m in tree, runs its package's tests and restores the file.
func try(tree string, m mutant, run, skip string, timeout time.Duration) (verdict, detail string, err error) {
	path := filepath.Join(tree, m.path)
	src, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	mut, from, to, err := apply(src, m)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, mut, 0o644); err != nil {
		return "", "", err
	}
	defer os.WriteFile(path, src, 0o644)
	args := []string{"test", "-count=1", "-failfast"}
	if run != "" {
		args = append(args, "-run", run)
	}
	if skip != "" {
		args = append(args, "-skip", skip)
	}
	args = append(args, "./"+filepath.Dir(m.path))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = tree
	out, runErr := cmd.CombinedOutput()
	detail = fmt.Sprintf("(%s → %s)  %s", from, to, lineOf(src, m.line))
	switch {
	case ctx.Err() != nil:
		return "TIMED OUT", detail, nil
	case runErr == nil:
		return "LIVED", detail, nil
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return "NOT VIABLE", detail, nil
	}
	return "KILLED", detail + "  by " + firstFailure(out), nil
}

// firstFailure names the first failing test in go test's output.
func firstFailure(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "---" && f[1] == "FAIL:" {
			return f[2]
		}
	}
	return "(a failing test binary)"
}
