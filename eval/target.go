package eval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ReadProbs reads a context-free target policy: a CSV with a header
// `item_id,pos0,pos1,...` and one row per action giving its probability at
// each position (one probability column: the same at every position).
// item_id is the action's index, or its name when the log's actions are
// names (names lists them; nil for indices). Every action 0..a-1 must have
// a row, and each position's column must sum to 1.
func ReadProbs(r io.Reader, name string, a int, names []string) (*ActionDist, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	perr := func(col int, err error) error {
		return &ParseError{File: name, Line: line, Column: col, Err: err}
	}
	var d *ActionDist
	var have []bool
	byName := map[string]int{}
	for k, s := range names {
		byName[s] = k
	}
	for sc.Scan() {
		line++
		t := bytes.TrimSpace(sc.Bytes())
		if len(t) == 0 {
			continue
		}
		f := strings.Split(string(t), ",")
		if d == nil {
			if len(f) < 2 || strings.TrimSpace(f[0]) != "item_id" {
				return nil, perr(1, errors.New("expected a header item_id,pos0,pos1,..."))
			}
			d = &ActionDist{N: 1, A: a, P: len(f) - 1, Shared: true, Values: make([]float64, a*(len(f)-1))}
			have = make([]bool, a)
			continue
		}
		if len(f) != d.P+1 {
			return nil, perr(0, fmt.Errorf("%d fields, the header has %d", len(f), d.P+1))
		}
		id := strings.TrimSpace(f[0])
		k := -1
		if names != nil {
			if v, ok := byName[id]; ok {
				k = v
			}
		} else if v, err := strconv.Atoi(id); err == nil && v >= 0 && v < a {
			k = v
		}
		if k < 0 {
			return nil, perr(1, fmt.Errorf("item_id %q is not an action of the log (it has %d)", id, a))
		}
		if have[k] {
			return nil, perr(1, fmt.Errorf("item_id %q repeats", id))
		}
		have[k] = true
		for p := range d.P {
			v, err := strconv.ParseFloat(strings.TrimSpace(f[p+1]), 64)
			if err != nil || !(v >= 0 && v <= 1) || math.IsNaN(v) {
				return nil, perr(p+2, fmt.Errorf("expected a probability in [0, 1], got %q", f[p+1]))
			}
			d.Values[k*d.P+p] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if d == nil {
		return nil, &ParseError{File: name, Line: 1, Err: errors.New("empty file: expected a header item_id,pos0,pos1,...")}
	}
	for k, ok := range have {
		if !ok {
			return nil, fmt.Errorf("%s: no row for action %d", name, k)
		}
	}
	for p := range d.P {
		var s float64
		for k := range a {
			s += d.Values[k*d.P+p]
		}
		if math.Abs(s-1) > 1e-6 {
			return nil, fmt.Errorf("%s: the probabilities of position %d sum to %v, not 1", name, p, s)
		}
	}
	return d, nil
}

// ReadProbsFile is ReadProbs on a file.
func ReadProbsFile(path string, a int, names []string) (*ActionDist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadProbs(f, path, a, names)
}
