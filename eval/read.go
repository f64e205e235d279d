package eval

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// The readers take one row per round with these columns (any order; the
// CSV's header names them, a JSONL line's keys do):
//
//	action      the logged action: an index 0..A-1, or a name. The first
//	            row decides: if its action is a non-negative integer every
//	            action must be one; otherwise every action is a name, and
//	            names are numbered 0, 1, ... in order of first appearance
//	            (Log.ActionNames).
//	reward      a finite number
//	pscore      the logging policy's probability of the logged action (at
//	            the logged position), in (0, 1]
//	position    optional: the slot index 0..P-1 (0-based)
//	context_<j> optional: feature j, j = 0..D-1, all present
//	timestamp   optional: a number (seconds), or RFC 3339
//	pi_e_<a>    optional: the target's probability of action a, a = 0..A-1;
//	            or pi_e_<a>_<p> per action and position p = 0..P-1
//	qhat_<a>    optional: a reward model's prediction for action a; or
//	            qhat_<a>_<p> per action and position
//
// Other columns are ignored and listed in Log.Ignored. With pi_e or qhat
// columns, A (and P, with per-position columns) is fixed by them and every
// logged action (position) must be in range.

// ParseError locates a problem in an input file.
type ParseError struct {
	File   string // as given ("" for a reader without a name)
	Line   int    // 1-based line
	Column int    // 1-based field number (CSV) or byte column (JSONL); 0: the whole line
	Name   string // the column's name, when known
	Err    error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	fmt.Fprintf(&b, "line %d", e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ", column %d", e.Column)
	}
	if e.Name != "" {
		fmt.Fprintf(&b, " (%s)", e.Name)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// ReadFile reads a log from path; format is "csv", "jsonl", or "" to choose
// by the extension (.jsonl, .ndjson, .json: JSONL; otherwise CSV).
func ReadFile(path, format string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	if format == "" {
		format = "csv"
		for _, ext := range []string{".jsonl", ".ndjson", ".json"} {
			if strings.HasSuffix(strings.ToLower(path), ext) {
				format = "jsonl"
			}
		}
	}
	switch format {
	case "csv":
		return readCSV(f, path, size)
	case "jsonl":
		return readJSONL(f, path, size)
	}
	return nil, fmt.Errorf("unknown log format %q (want csv or jsonl)", format)
}

// colKind is what a column holds.
type colKind uint8

const (
	colIgnored colKind = iota
	colAction
	colReward
	colPScore
	colPosition
	colContext
	colTimestamp
	colPiE
	colQHat
)

// column is one recognised input column; idx is the feature index
// (context) or action index (pi_e, qhat), pos the position (-1: none).
type column struct {
	kind colKind
	idx  int
	pos  int
	name string
}

// schema maps the input's columns to the log's.
type schema struct {
	cols     []column
	hasPos   bool
	hasTime  bool
	d        int
	piA, piP int // 0: no pi_e columns; piP 1 without position suffixes
	qA, qP   int
	ignored  []string
	required [3]bool
}

// parseColumnName classifies a column header.
func parseColumnName(name string) (column, error) {
	c := column{name: name, pos: -1}
	switch name {
	case "action":
		c.kind = colAction
		return c, nil
	case "reward":
		c.kind = colReward
		return c, nil
	case "pscore":
		c.kind = colPScore
		return c, nil
	case "position":
		c.kind = colPosition
		return c, nil
	case "timestamp":
		c.kind = colTimestamp
		return c, nil
	}
	var rest string
	switch {
	case strings.HasPrefix(name, "context_"):
		j, err := strconv.Atoi(name[len("context_"):])
		if err != nil || j < 0 {
			return c, fmt.Errorf("column %q: expected context_<j> with j a non-negative integer", name)
		}
		c.kind, c.idx = colContext, j
		return c, nil
	case strings.HasPrefix(name, "pi_e_"):
		c.kind, rest = colPiE, name[len("pi_e_"):]
	case strings.HasPrefix(name, "qhat_"):
		c.kind, rest = colQHat, name[len("qhat_"):]
	default:
		c.kind = colIgnored
		return c, nil
	}
	a, p, found := strings.Cut(rest, "_")
	ai, err := strconv.Atoi(a)
	if err != nil || ai < 0 {
		return c, fmt.Errorf("column %q: expected an action index after the prefix", name)
	}
	c.idx = ai
	if found {
		pi, err := strconv.Atoi(p)
		if err != nil || pi < 0 {
			return c, fmt.Errorf("column %q: expected <action>_<position> with non-negative integers", name)
		}
		c.pos = pi
	}
	return c, nil
}

// newSchema checks a header: required columns present, no duplicates,
// complete context, pi_e and qhat blocks.
func newSchema(names []string) (*schema, int, error) {
	s := &schema{cols: make([]column, len(names))}
	seen := make(map[string]int, len(names))
	type grid struct {
		a, p     int
		suffixed int
		plain    int
		cells    map[[2]int]bool
	}
	pi := grid{cells: map[[2]int]bool{}}
	qh := grid{cells: map[[2]int]bool{}}
	ctx := map[int]bool{}
	for j, name := range names {
		if k, dup := seen[name]; dup {
			return nil, j + 1, fmt.Errorf("column %q repeats column %d", name, k+1)
		}
		seen[name] = j
		c, err := parseColumnName(name)
		if err != nil {
			return nil, j + 1, err
		}
		s.cols[j] = c
		switch c.kind {
		case colIgnored:
			s.ignored = append(s.ignored, name)
		case colAction:
			s.required[0] = true
		case colReward:
			s.required[1] = true
		case colPScore:
			s.required[2] = true
		case colPosition:
			s.hasPos = true
		case colTimestamp:
			s.hasTime = true
		case colContext:
			ctx[c.idx] = true
			s.d = max(s.d, c.idx+1)
		case colPiE, colQHat:
			g := &pi
			if c.kind == colQHat {
				g = &qh
			}
			g.a = max(g.a, c.idx+1)
			if c.pos >= 0 {
				g.suffixed++
				g.p = max(g.p, c.pos+1)
			} else {
				g.plain++
			}
			g.cells[[2]int{c.idx, max(c.pos, 0)}] = true
		}
	}
	for k, name := range []string{"action", "reward", "pscore"} {
		if !s.required[k] {
			return nil, 0, fmt.Errorf("missing column %q (the header has: %s)", name, strings.Join(names, ","))
		}
	}
	for j := range s.d {
		if !ctx[j] {
			return nil, 0, fmt.Errorf("missing column context_%d (context columns must be context_0..context_%d)", j, s.d-1)
		}
	}
	for _, g := range []struct {
		prefix string
		g      *grid
		a, p   *int
	}{{"pi_e", &pi, &s.piA, &s.piP}, {"qhat", &qh, &s.qA, &s.qP}} {
		if g.g.a == 0 {
			continue
		}
		if g.g.suffixed > 0 && g.g.plain > 0 {
			return nil, 0, fmt.Errorf("%s columns mix %s_<a> and %s_<a>_<pos>: use one form", g.prefix, g.prefix, g.prefix)
		}
		p := max(g.g.p, 1)
		for a := range g.g.a {
			for q := range p {
				if !g.g.cells[[2]int{a, q}] {
					if g.g.suffixed > 0 {
						return nil, 0, fmt.Errorf("missing column %s_%d_%d (%s columns must cover actions 0..%d and positions 0..%d)", g.prefix, a, q, g.prefix, g.g.a-1, p-1)
					}
					return nil, 0, fmt.Errorf("missing column %s_%d (%s columns must cover actions 0..%d)", g.prefix, a, g.prefix, g.g.a-1)
				}
			}
		}
		*g.a, *g.p = g.g.a, p
	}
	return s, 0, nil
}

// builder accumulates rows into a Log.
type builder struct {
	s     *schema
	log   *Log
	names map[string]int32 // action names, in name mode
	mode  int8             // 0: undecided, 1: indices, 2: names
	maxA  int32
	maxP  int32
	ctx   []float64 // the current row's context, reused
	pi    []float64 // the current row's pi_e block
	qh    []float64
	// set marks the fields seen in the current row (JSONL).
}

func newBuilder(s *schema) *builder {
	b := &builder{s: s, log: &Log{D: s.d, Ignored: s.ignored}, maxA: -1}
	b.ctx = make([]float64, s.d)
	b.pi = make([]float64, s.piA*s.piP)
	b.qh = make([]float64, s.qA*s.qP)
	return b
}

// reserve grows the columns for about n rows.
func (b *builder) reserve(n int) {
	if n <= 0 {
		return
	}
	n = min(n, 1<<28)
	l, s := b.log, b.s
	if s.piA > 0 && l.PiE == nil {
		l.PiE = &ActionDist{A: s.piA, P: s.piP}
	}
	if s.qA > 0 && l.QHat == nil {
		l.QHat = &ActionDist{A: s.qA, P: s.qP}
	}
	// The columns are grown side by side: on a large log, zeroing and
	// first-touching hundreds of megabytes is most of this step.
	var wg sync.WaitGroup
	grow := func(f func()) { wg.Go(f) }
	grow(func() {
		l.Action = slices.Grow(l.Action, n)
		l.Reward = slices.Grow(l.Reward, n)
		l.PScore = slices.Grow(l.PScore, n)
		if s.hasPos {
			l.Position = slices.Grow(l.Position, n)
		}
		if s.hasTime {
			l.Timestamp = slices.Grow(l.Timestamp, n)
		}
	})
	grow(func() { l.Context = slices.Grow(l.Context, n*s.d) })
	if s.piA > 0 {
		grow(func() { l.PiE.Values = slices.Grow(l.PiE.Values, n*s.piA*s.piP) })
	}
	if s.qA > 0 {
		grow(func() { l.QHat.Values = slices.Grow(l.QHat.Values, n*s.qA*s.qP) })
	}
	wg.Wait()
}

// fieldError is an error in one field, located by the caller.
type fieldError struct {
	col int
	err error
}

// row holds one parsed row before it is appended.
type row struct {
	action   int32
	position int32
	reward   float64
	pscore   float64
	time     float64
}

var (
	errEmpty = errors.New("empty value")
)

// field parses the value v of column j into r or the builder's scratch.
// quotedStr marks a JSON string value (numbers must not be strings except
// the action and the timestamp).
func (b *builder) field(j int, v []byte, r *row) error {
	c := &b.s.cols[j]
	switch c.kind {
	case colIgnored:
		return nil
	case colAction:
		return b.action(v, r)
	case colPosition:
		p, ok := parseIndex(v)
		if !ok {
			return fmt.Errorf("expected a position index (a non-negative integer), got %q", v)
		}
		r.position = p
		return nil
	case colTimestamp:
		f, err := parseFloat(v)
		if err != nil {
			t, terr := time.Parse(time.RFC3339Nano, string(v))
			if terr != nil {
				return fmt.Errorf("expected a timestamp (seconds or RFC 3339), got %q", v)
			}
			f = float64(t.UnixNano()) / 1e9
		} else if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("expected a finite timestamp, got %q", v)
		}
		r.time = f
		return nil
	}
	f, err := parseFloat(v)
	if err != nil {
		return fmt.Errorf("expected a number, got %q", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("expected a finite number, got %q", v)
	}
	switch c.kind {
	case colReward:
		r.reward = f
	case colPScore:
		if !(f > 0 && f <= 1) {
			return fmt.Errorf("pscore must be in (0, 1] (the logging policy's probability of the logged action), got %q", v)
		}
		r.pscore = f
	case colContext:
		b.ctx[c.idx] = f
	case colPiE:
		if !(f >= 0 && f <= 1) {
			return fmt.Errorf("a target probability must be in [0, 1], got %q", v)
		}
		b.pi[c.idx*b.s.piP+max(c.pos, 0)] = f
	case colQHat:
		b.qh[c.idx*b.s.qP+max(c.pos, 0)] = f
	}
	return nil
}

func (b *builder) action(v []byte, r *row) error {
	if len(v) == 0 {
		return errEmpty
	}
	if b.mode == 0 {
		if _, ok := parseIndex(v); ok {
			b.mode = 1
		} else {
			b.mode = 2
			b.names = map[string]int32{}
		}
	}
	if b.mode == 1 {
		a, ok := parseIndex(v)
		if !ok {
			return fmt.Errorf("expected an action index (a non-negative integer, as in the first row), got %q", v)
		}
		r.action = a
		return nil
	}
	a, ok := b.names[string(v)]
	if !ok {
		a = int32(len(b.names))
		name := string(v)
		b.names[name] = a
		b.log.ActionNames = append(b.log.ActionNames, name)
	}
	r.action = a
	return nil
}

// push appends a parsed row; actionCol and posCol locate errors.
func (b *builder) push(r *row) *fieldError {
	s, l := b.s, b.log
	if s.piA > 0 && int(r.action) >= s.piA || s.qA > 0 && int(r.action) >= s.qA {
		return &fieldError{col: colIndex(s, colAction), err: fmt.Errorf("action %d is out of range: the pi_e/qhat columns cover actions 0..%d", r.action, max(s.piA, s.qA)-1)}
	}
	if s.hasPos && (s.piP > 1 && int(r.position) >= s.piP || s.qP > 1 && int(r.position) >= s.qP) {
		return &fieldError{col: colIndex(s, colPosition), err: fmt.Errorf("position %d is out of range: the per-position pi_e/qhat columns cover positions 0..%d", r.position, max(s.piP, s.qP)-1)}
	}
	b.maxA = max(b.maxA, r.action)
	b.maxP = max(b.maxP, r.position)
	l.Action = append(l.Action, r.action)
	l.Reward = append(l.Reward, r.reward)
	l.PScore = append(l.PScore, r.pscore)
	if s.hasPos {
		l.Position = append(l.Position, r.position)
	}
	if s.hasTime {
		l.Timestamp = append(l.Timestamp, r.time)
	}
	l.Context = append(l.Context, b.ctx...)
	if s.piA > 0 {
		if l.PiE == nil {
			l.PiE = &ActionDist{A: s.piA, P: s.piP}
		}
		l.PiE.Values = append(l.PiE.Values, b.pi...)
	}
	if s.qA > 0 {
		if l.QHat == nil {
			l.QHat = &ActionDist{A: s.qA, P: s.qP}
		}
		l.QHat.Values = append(l.QHat.Values, b.qh...)
	}
	l.N++
	return nil
}

func colIndex(s *schema, k colKind) int {
	for j, c := range s.cols {
		if c.kind == k {
			return j + 1
		}
	}
	return 0
}

// appendFrom appends w's rows to b.
func (b *builder) appendFrom(w *builder) {
	l, o := b.log, w.log
	l.Action = append(l.Action, o.Action...)
	l.Reward = append(l.Reward, o.Reward...)
	l.PScore = append(l.PScore, o.PScore...)
	if b.s.hasPos {
		l.Position = append(l.Position, o.Position...)
	}
	if b.s.hasTime {
		l.Timestamp = append(l.Timestamp, o.Timestamp...)
	}
	l.Context = append(l.Context, o.Context...)
	if o.PiE != nil {
		if l.PiE == nil {
			l.PiE = &ActionDist{A: b.s.piA, P: b.s.piP}
		}
		l.PiE.Values = append(l.PiE.Values, o.PiE.Values...)
	}
	if o.QHat != nil {
		if l.QHat == nil {
			l.QHat = &ActionDist{A: b.s.qA, P: b.s.qP}
		}
		l.QHat.Values = append(l.QHat.Values, o.QHat.Values...)
	}
	l.N += o.N
	b.maxA = max(b.maxA, w.maxA)
	b.maxP = max(b.maxP, w.maxP)
}

// finish sets the log's dimensions.
func (b *builder) finish() (*Log, error) {
	l, s := b.log, b.s
	if l.N == 0 {
		return nil, errors.New("no rows")
	}
	l.A = max(int(b.maxA)+1, s.piA, s.qA, len(l.ActionNames))
	l.P = max(int(b.maxP)+1, s.piP, s.qP)
	if l.PiE != nil {
		l.PiE.N = l.N
		if l.PiE.A != l.A {
			return nil, fmt.Errorf("pi_e columns cover %d actions but the log has %d", l.PiE.A, l.A)
		}
	}
	if l.QHat != nil {
		l.QHat.N = l.N
		if l.QHat.A != l.A {
			return nil, fmt.Errorf("qhat columns cover %d actions but the log has %d", l.QHat.A, l.A)
		}
	}
	return l, nil
}

// parseIndex parses a non-negative decimal integer below 2^31.
func parseIndex(v []byte) (int32, bool) {
	if len(v) == 0 || len(v) > 10 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

// pow10 holds the exactly representable powers of ten.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a decimal number. Plain decimals with at most 15
// significant digits and a small exponent take Clinger's exact fast path
// (an integer mantissa below 2^53 times or over an exact power of ten is
// correctly rounded, the same result as strconv.ParseFloat); everything
// else goes to strconv.ParseFloat.
func parseFloat(v []byte) (float64, error) {
	i, n := 0, len(v)
	neg := false
	if i < n && (v[i] == '-' || v[i] == '+') {
		neg = v[i] == '-'
		i++
	}
	var mant uint64
	digits, exp := 0, 0
	start := i
	for ; i < n && v[i] >= '0' && v[i] <= '9'; i++ {
		if mant == 0 && v[i] == '0' {
			continue
		}
		mant = mant*10 + uint64(v[i]-'0')
		digits++
	}
	intDigits := i - start
	fracDigits := 0
	if i < n && v[i] == '.' {
		i++
		fs := i
		for ; i < n && v[i] >= '0' && v[i] <= '9'; i++ {
			if mant == 0 && v[i] == '0' {
				exp--
				continue
			}
			mant = mant*10 + uint64(v[i]-'0')
			digits++
			exp--
		}
		fracDigits = i - fs
	}
	ok := intDigits+fracDigits > 0 && digits <= 15
	if ok && i < n && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < n && (v[i] == '-' || v[i] == '+') {
			eneg = v[i] == '-'
			i++
		}
		es, e := i, 0
		for ; i < n && v[i] >= '0' && v[i] <= '9' && i-es < 4; i++ {
			e = e*10 + int(v[i]-'0')
		}
		if i == es {
			ok = false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if ok && i == n && exp >= -22 && exp <= 22 {
		f := float64(mant)
		if exp >= 0 {
			f *= pow10[exp]
		} else {
			f /= pow10[-exp]
		}
		if neg {
			f = -f
		}
		return f, nil
	}
	return strconv.ParseFloat(unsafe.String(unsafe.SliceData(v), len(v)), 64)
}

// sizeHint estimates the rows of a file of size bytes from the length of a
// first data line.
func sizeHint(size int64, lineLen int) int {
	if size <= 0 || lineLen <= 0 {
		return 0
	}
	return int(size/int64(lineLen+1)) + int(size/int64(lineLen+1))/16 + 16
}

var _ io.Reader // the readers take io.Reader

// readLine returns the next line of br with its newline (io.EOF after the
// last), reading a line longer than br's buffer into *long (reused).
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		*long = append(*long, line...)
	}
	return *long, err
}
