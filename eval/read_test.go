package eval

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

const small = `action,reward,pscore,position,context_0,context_1,timestamp,pi_e_0,pi_e_1,pi_e_2,qhat_0,qhat_1,qhat_2,note
0,1,0.5,0,0.1,0.2,10,0.2,0.3,0.5,0.4,0.5,0.6,x
2,0,0.25,1,0.3,0.4,11,0.1,0.1,0.8,0.3,0.2,0.1,"y, quoted"
1,1,0.25,1,-1e-3,5,2024-01-02T03:04:05Z,1,0,0,1,1,1,z
`

// The reader fills every column and ignores unknown ones.
func TestReadCSVColumns(t *testing.T) {
	l, err := ReadCSV(strings.NewReader(small), "small.csv")
	if err != nil {
		t.Fatal(err)
	}
	if l.N != 3 || l.A != 3 || l.P != 2 || l.D != 2 {
		t.Fatalf("N, A, P, D = %d, %d, %d, %d", l.N, l.A, l.P, l.D)
	}
	if l.Action[1] != 2 || l.Position[2] != 1 || l.Reward[0] != 1 || l.PScore[1] != 0.25 || l.Context[4] != -1e-3 {
		t.Errorf("columns: %+v", l)
	}
	if l.Timestamp[2] != 1704164645 {
		t.Errorf("RFC 3339 timestamp read as %v", l.Timestamp[2])
	}
	if l.PiE.At(1, 2, 1) != 0.8 || l.QHat.At(0, 1, 0) != 0.5 || l.PiE.P != 1 {
		t.Errorf("pi_e / qhat: %v %v", l.PiE, l.QHat)
	}
	if len(l.Ignored) != 1 || l.Ignored[0] != "note" {
		t.Errorf("ignored %v", l.Ignored)
	}
}

// Named actions are numbered in order of first appearance; per-position
// pi_e columns are read into the position axis.
func TestReadCSVNamesAndPositions(t *testing.T) {
	in := "action,reward,pscore,position,pi_e_0_0,pi_e_0_1,pi_e_1_0,pi_e_1_1\n" +
		"banana,1,0.5,1,0.3,0.6,0.7,0.4\n" +
		"apple,0,0.5,0,0.3,0.6,0.7,0.4\n" +
		"banana,0,0.5,0,0.3,0.6,0.7,0.4\n"
	l, err := ReadCSV(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(l.ActionNames, ",") != "banana,apple" || l.Action[1] != 1 || l.Action[2] != 0 {
		t.Errorf("names %v actions %v", l.ActionNames, l.Action)
	}
	if l.P != 2 || l.PiE.P != 2 || l.PiE.At(0, 0, 1) != 0.6 || l.PiE.At(0, 1, 0) != 0.7 {
		t.Errorf("positions: P=%d pi_e %v", l.P, l.PiE.Values[:4])
	}
}

// The JSONL reader gives the same log as the CSV reader.
func TestReadJSONLMatchesCSV(t *testing.T) {
	var buf bytes.Buffer
	synth{N: 200, A: 4, D: 2, P: 3, Seed: 3, PiE: true, QHat: true}.write(&buf)
	c, err := ReadCSV(bytes.NewReader(buf.Bytes()), "")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	head := strings.Split(lines[0], ",")
	var j strings.Builder
	for _, ln := range lines[1:] {
		f := strings.Split(ln, ",")
		j.WriteString("{")
		for k := len(f) - 1; k >= 0; k-- { // keys in another order
			if k != len(f)-1 {
				j.WriteString(", ")
			}
			if head[k] == "action" {
				j.WriteString(`"action": "` + f[k] + `"`)
			} else {
				j.WriteString(strconv.Quote(head[k]) + ":" + f[k])
			}
		}
		j.WriteString("}\n\n")
	}
	l, err := ReadJSONL(strings.NewReader(j.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	if l.N != c.N || l.A != c.A || l.P != c.P || l.D != c.D {
		t.Fatalf("shape %d %d %d %d vs %d %d %d %d", l.N, l.A, l.P, l.D, c.N, c.A, c.P, c.D)
	}
	for i := range l.N {
		if l.Action[i] != c.Action[i] || l.Reward[i] != c.Reward[i] || l.PScore[i] != c.PScore[i] || l.Position[i] != c.Position[i] {
			t.Fatalf("row %d differs", i)
		}
	}
	for k := range l.PiE.Values {
		if l.PiE.Values[k] != c.PiE.Values[k] || l.QHat.Values[k] != c.QHat.Values[k] {
			t.Fatalf("pi_e/qhat %d differs", k)
		}
	}
	for k := range l.Context {
		if l.Context[k] != c.Context[k] {
			t.Fatalf("context %d differs", k)
		}
	}
}

// Bad input is an error naming the file, line, column and what was
// expected; a pscore of 0 in particular never reaches a division.
func TestReadErrors(t *testing.T) {
	h := "action,reward,pscore,context_0\n"
	cases := []struct{ name, in, want string }{
		{"pscore zero", h + "0,1,0.5,1\n1,0,0,1\n", "f.csv:line 3, column 3 (pscore): pscore must be in (0, 1]"},
		{"pscore above one", h + "0,1,1.5,1\n", "line 2, column 3 (pscore): pscore must be in (0, 1]"},
		{"pscore negative", h + "0,1,-0.5,1\n", "line 2, column 3 (pscore)"},
		{"missing column", "action,reward,context_0\n0,1,1\n", `missing column "pscore"`},
		{"ragged row", h + "0,1,0.5,1\n0,1,0.5\n", "line 3: 3 fields, the header has 4"},
		{"long row", h + "0,1,0.5,1,9\n", "line 2: 5 fields, the header has 4"},
		{"NaN", h + "0,1,0.5,1\n0,NaN,0.5,1\n", "line 3, column 2 (reward): expected a finite number"},
		{"Inf context", h + "0,1,0.5,+Inf\n", "line 2, column 4 (context_0): expected a finite number"},
		{"not a number", h + "0,1,abc,1\n", `line 2, column 3 (pscore): expected a number, got "abc"`},
		{"action not index", h + "0,1,0.5,1\nx,1,0.5,1\n", "line 3, column 1 (action): expected an action index"},
		{"context gap", "action,reward,pscore,context_1\n", "missing column context_0"},
		{"duplicate", "action,reward,pscore,reward\n", `column "reward" repeats column 2`},
		{"pi_e gap", "action,reward,pscore,pi_e_0,pi_e_2\n", "missing column pi_e_1"},
		{"action beyond pi_e", "action,reward,pscore,pi_e_0,pi_e_1\n2,1,0.5,0.5,0.5\n", "line 2, column 1 (action): action 2 is out of range"},
		{"pi_e out of range", "action,reward,pscore,pi_e_0\n0,1,0.5,1.5\n", "line 2, column 4 (pi_e_0): a target probability must be in [0, 1]"},
		{"empty", "", "empty file"},
		{"no rows", h, "no rows"},
		{"bad quote", h + "\"0,1,0.5,1\n", "unterminated quoted field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.in), "f.csv")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%T is not a *ParseError", err)
			}
		})
	}
	jcases := []struct{ name, in, want string }{
		{"pscore zero", `{"action":0,"reward":1,"pscore":0}`, "line 1, column 33 (pscore): pscore must be in (0, 1]"},
		{"missing key", "{\"action\":0,\"reward\":1,\"pscore\":1}\n{\"action\":0,\"reward\":1}", `line 2 (pscore): missing key "pscore"`},
		{"extra key", "{\"action\":0,\"reward\":1,\"pscore\":1}\n{\"action\":0,\"reward\":1,\"pscore\":1,\"x\":2}", `line 2, column 39 (x): key "x" is not in the first line's keys`},
		{"null", `{"action":0,"reward":null,"pscore":1}`, "line 1, column 22: expected a number or a string value"},
		{"not object", `[1,2]`, "line 1, column 1: expected \"{\""},
	}
	for _, c := range jcases {
		t.Run("jsonl "+c.name, func(t *testing.T) {
			_, err := ReadJSONL(strings.NewReader(c.in), "f.jsonl")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// An error in a later block of the parallel reader is the first error in
// file order, with its true line number.
func TestReadCSVParallelErrorLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("action,reward,pscore\n")
	const bad = 300_000
	for i := 1; i <= 400_000; i++ {
		if i == bad || i == bad+5 {
			b.WriteString("1,0,0\n")
			continue
		}
		b.WriteString("1,0,0.125\n")
	}
	_, err := ReadCSV(strings.NewReader(b.String()), "")
	want := "line " + strconv.Itoa(bad+1) + ", column 3 (pscore)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	l, err := ReadCSV(strings.NewReader(strings.ReplaceAll(b.String(), "1,0,0\n", "2,1,0.5\n")), "")
	if err != nil || l.N != 400_000 || l.Action[bad-1] != 2 || l.Reward[bad-1] != 1 || l.Action[bad] != 1 {
		t.Fatalf("parallel read: %v, N=%v", err, l)
	}
}

// parseFloat's fast path gives strconv.ParseFloat's (correctly rounded)
// result.
func TestParseFloatMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ins := []string{"0", "-0", "1", "0.5", "1e-3", "-2.5E+4", "123456789012345", "1234567890123456789", ".5", "5.", "1e400", "0.1", "9007199254740993", "00012.3400", "1e22", "1e23", "4.9e-324",
		// eight-digit blocks (eightDigits): leading zeros, blocks that end
		// exactly at 15 significant digits or pass it, a block then a tail
		"0.00000000123", "0000000000000001.5", "12345678.87654321", "1234567812345678", "123456781234567",
		"0.123456789012345", "0.1234567890123456", "99999999.99999999", "00000000", "0.00000000", "-00000000.000000001",
		"12345678e-3", "0.12345678e5", "1234567a", "12345678a", "0.1234567x9"}
	for range 5000 { // random digit strings, many with leading zeros
		b := make([]byte, 0, 40)
		for range r.IntN(20) {
			b = append(b, byte('0'+r.IntN(10)*r.IntN(2)))
		}
		if r.IntN(3) > 0 {
			b = append(b, '.')
			for range r.IntN(20) {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
		ins = append(ins, string(b))
	}
	for range 20000 {
		v := r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15))
		ins = append(ins, strconv.FormatFloat(v, 'g', 1+r.IntN(17), 64), strconv.FormatFloat(v, 'f', r.IntN(12), 64))
	}
	for _, s := range ins {
		got, gerr := parseFloat([]byte(s))
		want, werr := strconv.ParseFloat(s, 64)
		if (gerr == nil) != (werr == nil) || (gerr == nil && math.Float64bits(got) != math.Float64bits(want)) {
			t.Errorf("%q: %v %v, strconv %v %v", s, got, gerr, want, werr)
		}
	}
	for _, s := range []string{"", "-", "e5", "1e", "1.2.3", "0x10", "1,5"} {
		if _, err := parseFloat([]byte(s)); err == nil {
			if _, werr := strconv.ParseFloat(s, 64); werr != nil {
				t.Errorf("%q accepted", s)
			}
		}
	}
}

// The readers never panic, whatever the input.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte("action,reward,pscore\n0,1,0.5\n"))
	f.Add([]byte("action,reward,pscore,pi_e_0_0\n\"a\"\"b\",1,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if l, err := ReadCSV(bytes.NewReader(data), "fuzz"); err == nil {
			if l.N != len(l.Action) || l.N != len(l.PScore) {
				t.Fatalf("inconsistent log")
			}
			for _, p := range l.PScore {
				if !(p > 0 && p <= 1) {
					t.Fatalf("pscore %v accepted", p)
				}
			}
		}
		ReadJSONL(bytes.NewReader(data), "fuzz")
	})
}
