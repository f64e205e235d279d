package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadJSONL reads a log from JSON Lines: one flat object per line whose keys
// are the column names of the CSV form (see ReadFile) and whose values are
// numbers or strings (a string holding a number is read as the number).
// The first line's keys fix the columns; every later line must have the
// same keys, in any order. Blank lines are skipped. name labels errors.
func ReadJSONL(r io.Reader, name string) (*Log, error) { return readJSONL(r, name, 0) }

func readJSONL(r io.Reader, name string, size int64) (*Log, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var (
		lineNo int
		long   []byte
		s      *schema
		b      *builder
		index  map[string]int
		seen   []int // seen[j] == lineNo: column j was set on this line
		keys   []string
		vals   [][]byte
		rw     row
		esc    []byte
	)
	perr := func(col int, key string, err error) error {
		return &ParseError{File: name, Line: lineNo, Column: col, Name: key, Err: err}
	}
	for {
		line, err := readLine(br, &long)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		lineNo++
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if s == nil {
				// First line: collect the keys, build the schema, then parse it
				// again as a data row.
				keys = keys[:0]
				perr2 := scanObject(line, func(k, v []byte, at int, _ bool) error {
					keys = append(keys, string(k))
					return nil
				})
				if perr2 != nil {
					var pe *ParseError
					if errors.As(perr2, &pe) {
						pe.File, pe.Line = name, lineNo
					}
					return nil, perr2
				}
				var col int
				s, col, err = newSchema(keys)
				if err != nil {
					k := ""
					if col > 0 {
						k = keys[col-1]
					}
					return nil, perr(0, k, err)
				}
				b = newBuilder(s)
				b.reserve(sizeHint(size, len(line)))
				index = make(map[string]int, len(keys))
				for j, k := range keys {
					index[k] = j
				}
				seen = make([]int, len(keys))
				vals = make([][]byte, len(keys))
			}
			rw = row{}
			n := 0
			scerr := scanObject(line, func(k, v []byte, at int, quoted bool) error {
				j, ok := index[string(k)]
				if !ok {
					return perr(at, string(k), fmt.Errorf("key %q is not in the first line's keys", k))
				}
				if seen[j] == lineNo {
					return perr(at, string(k), fmt.Errorf("key %q repeats", k))
				}
				seen[j] = lineNo
				n++
				if quoted && bytes.IndexByte(v, '\\') >= 0 {
					var str string
					q := append(append(append(esc[:0], '"'), v...), '"')
					if err := json.Unmarshal(q, &str); err != nil {
						return perr(at, string(k), fmt.Errorf("bad string: %v", err))
					}
					v = []byte(str)
				}
				vals[j] = v
				if ferr := b.field(j, v, &rw); ferr != nil {
					return perr(at, string(k), ferr)
				}
				return nil
			})
			if scerr != nil {
				var pe *ParseError
				if errors.As(scerr, &pe) && pe.File == "" && pe.Line == 0 {
					pe.File, pe.Line = name, lineNo
				}
				return nil, scerr
			}
			if n != len(keys) {
				for j, k := range keys {
					if seen[j] != lineNo {
						return nil, perr(0, k, fmt.Errorf("missing key %q (the first line has %d keys, this one %d)", k, len(keys), n))
					}
				}
			}
			if fe := b.push(&rw); fe != nil {
				return nil, perr(0, keys[fe.col-1], fe.err)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if s == nil {
		return nil, &ParseError{File: name, Line: 1, Err: errors.New("empty file: expected JSON objects, one per line")}
	}
	l, err := b.finish()
	if err != nil {
		return nil, &ParseError{File: name, Line: lineNo, Err: err}
	}
	return l, nil
}

// scanObject walks a flat JSON object, calling fn with each key, the raw
// value (a number, or a string's contents without the quotes), its 1-based
// byte column and whether it was a string. Nested values, booleans and
// null are errors.
func scanObject(line []byte, fn func(k, v []byte, at int, quoted bool) error) error {
	i, n := 0, len(line)
	bad := func(what string) error {
		got := "end of line"
		if i < n {
			got = fmt.Sprintf("%q", line[i])
		}
		return &ParseError{Column: i + 1, Err: fmt.Errorf("expected %s, got %s", what, got)}
	}
	ws := func() {
		for i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n') {
			i++
		}
	}
	str := func() ([]byte, bool) {
		if i >= n || line[i] != '"' {
			return nil, false
		}
		i++
		st := i
		for i < n && line[i] != '"' {
			if line[i] == '\\' {
				i++
			}
			i++
		}
		if i >= n {
			return nil, false
		}
		v := line[st:i]
		i++
		return v, true
	}
	ws()
	if i >= n || line[i] != '{' {
		return bad(`"{" (one JSON object per line)`)
	}
	i++
	ws()
	if i < n && line[i] == '}' {
		i++
	} else {
		for {
			ws()
			k, ok := str()
			if !ok {
				return bad("a quoted key")
			}
			ws()
			if i >= n || line[i] != ':' {
				return bad(`":"`)
			}
			i++
			ws()
			at := i + 1
			var v []byte
			quoted := false
			switch {
			case i < n && line[i] == '"':
				v, ok = str()
				if !ok {
					return bad("a closing quote")
				}
				quoted = true
			case i < n && (line[i] == '-' || line[i] == '+' || line[i] == '.' || (line[i] >= '0' && line[i] <= '9')):
				st := i
				for i < n && line[i] != ',' && line[i] != '}' && line[i] != ' ' && line[i] != '\t' {
					i++
				}
				v = line[st:i]
			default:
				return bad("a number or a string value (no null, booleans, arrays or objects)")
			}
			if err := fn(k, v, at, quoted); err != nil {
				return err
			}
			ws()
			if i < n && line[i] == ',' {
				i++
				continue
			}
			if i < n && line[i] == '}' {
				i++
				break
			}
			return bad(`"," or "}"`)
		}
	}
	ws()
	if i != n {
		return bad("end of line after the object")
	}
	return nil
}
