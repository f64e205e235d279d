package main

import (
	"strings"
	"testing"
)

// TestApplyAtGoTokenColumn: the column counts bytes, as go/token does, so
// on a line holding "σ" (two bytes) and a tab the operator after them is
// found at its byte column, and only that operator changes. The `+` before
// σ·z and the `*` inside it are different mutants.
func TestApplyAtGoTokenColumn(t *testing.T) {
	src := "package p\n\nfunc f(v, z float64) float64 {\n\tσ := 2.0\n\treturn v + σ*z - -v\n}\n"
	line := "\treturn v + σ*z - -v"
	plus := strings.Index(line, "+") + 1 // 11
	star := strings.Index(line, "*") + 1 // 15: σ is two bytes
	for _, c := range []struct {
		m    mutant
		want string
	}{
		{mutant{"ARITHMETIC_BASE", "p.go", 5, plus, ""}, "\treturn v - σ*z - -v"},
		{mutant{"ARITHMETIC_BASE", "p.go", 5, star, ""}, "\treturn v + σ/z - -v"},
		{mutant{"INVERT_NEGATIVES", "p.go", 5, star + 5, ""}, "\treturn v + σ*z - +v"},
	} {
		out, _, _, err := apply([]byte(src), c.m)
		if err != nil {
			t.Fatalf("%v: %v", c.m, err)
		}
		if got := strings.Split(string(out), "\n")[4]; got != c.want {
			t.Errorf("%v: line %q, want %q", c.m, got, c.want)
		}
	}
	if star != 15 {
		t.Fatalf("test setup: * at byte column %d, want 15", star)
	}
}

// TestApplyRefusesAMismatch: a position inside a token, a token the type
// does not mutate, and a line past the end are all refused, naming why.
func TestApplyRefusesAMismatch(t *testing.T) {
	src := []byte("package p\n\nvar a = 1 + 2 < 3\n")
	for _, c := range []struct {
		m    mutant
		want string
	}{
		{mutant{"ARITHMETIC_BASE", "p.go", 3, 12, ""}, "no token starts"},
		{mutant{"CONDITIONALS_BOUNDARY", "p.go", 3, 11, ""}, `token there is "+"`},
		{mutant{"ARITHMETIC_BASE", "p.go", 9, 1, ""}, "no token starts"},
	} {
		if _, _, _, err := apply(src, c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.m, err, c.want)
		}
	}
	out, from, to, err := apply(src, mutant{"CONDITIONALS_NEGATION", "p.go", 3, 15, ""})
	if err != nil || from.String() != "<" || to.String() != ">=" || !strings.Contains(string(out), "1 + 2 >= 3") {
		t.Errorf("negation of <: %q %v→%v %v", out, from, to, err)
	}
}

// TestParseLine reads gremlins' log form and the bare form, and refuses the rest.
func TestParseLine(t *testing.T) {
	for _, s := range []string{"LIVED", "FOO linear/a.go:1:2", "ARITHMETIC_BASE linear/a.go:1", "ARITHMETIC_BASE linear/a.go:0:2"} {
		if _, err := parseLine(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	for _, s := range []string{"ARITHMETIC_BASE at linear/a.go:12:7", "ARITHMETIC_BASE linear/a.go:12:7"} {
		m, err := parseLine(s)
		if err != nil || m != (mutant{"ARITHMETIC_BASE", "linear/a.go", 12, 7, ""}) {
			t.Errorf("%q: %+v %v", s, m, err)
		}
	}
	m, err := parseLine("ARITHMETIC_BASE at linear/a.go:12:7 ^TestX$")
	if err != nil || m.run != "^TestX$" || m.col != 7 {
		t.Errorf("with a run pattern: %+v %v", m, err)
	}
	if _, err := parseLine("ARITHMETIC_BASE linear/a.go:12:7 (x"); err == nil {
		t.Errorf("a bad run pattern accepted")
	}
}
