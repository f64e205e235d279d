package eval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// ReadCSV reads a log from a CSV with a header row (RFC 4180: comma
// separated, fields may be double-quoted; blank lines are skipped). name
// labels errors. See the column list above ReadFile.
func ReadCSV(r io.Reader, name string) (*Log, error) { return readCSV(r, name, 0) }

func readCSV(r io.Reader, name string, size int64) (*Log, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var (
		lineNo  int
		long    []byte // a line longer than the buffer
		fields  [][]byte
		scratch []byte // unquoted fields
		s       *schema
		b       *builder
		rw      row
		width   int
	)
	perr := func(col int, err error) error {
		pe := &ParseError{File: name, Line: lineNo, Column: col, Err: err}
		if s != nil && col >= 1 && col <= len(s.cols) {
			pe.Name = s.cols[col-1].name
		}
		return pe
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
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			var qerr error
			fields, scratch, qerr = splitCSV(line, fields[:0], scratch[:0])
			if qerr != nil {
				return nil, perr(len(fields)+1, qerr)
			}
			if s == nil {
				names := make([]string, len(fields))
				for j, f := range fields {
					names[j] = string(bytes.TrimSpace(f))
				}
				if len(names) > 0 {
					names[0] = string(bytes.TrimPrefix([]byte(names[0]), []byte("\ufeff")))
				}
				var col int
				s, col, err = newSchema(names)
				if err != nil {
					return nil, perr(col, err)
				}
				b = newBuilder(s)
				width = len(names)
			} else {
				if len(fields) != width {
					return nil, perr(0, fmt.Errorf("%d fields, the header has %d", len(fields), width))
				}
				first := b.log.N == 0
				if first {
					b.reserve(sizeHint(size, len(line)))
				}
				rw = row{}
				for j, f := range fields {
					if ferr := b.field(j, f, &rw); ferr != nil {
						return nil, perr(j+1, ferr)
					}
				}
				if fe := b.push(&rw); fe != nil {
					return nil, perr(fe.col, fe.err)
				}
				if first && b.mode == 1 && err == nil && runtime.GOMAXPROCS(0) > 1 {
					// Actions are indices: the rest of the file parses in
					// parallel blocks (names need first-seen order, so they
					// stay sequential).
					if perr := parseBlocks(br, b, name, lineNo, width); perr != nil {
						return nil, perr
					}
					break
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	if s == nil {
		return nil, &ParseError{File: name, Line: 1, Err: errors.New("empty file: expected a header row")}
	}
	l, err := b.finish()
	if err != nil {
		return nil, &ParseError{File: name, Line: lineNo, Err: err}
	}
	return l, nil
}

// splitCSV splits one line into fields. Unquoted fields alias line; quoted
// fields are unescaped into scratch (which the fields then alias, so scratch
// is sized up front and never reallocated while in use).
func splitCSV(line []byte, fields [][]byte, scratch []byte) ([][]byte, []byte, error) {
	if bytes.IndexByte(line, '"') < 0 {
		for {
			k := bytes.IndexByte(line, ',')
			if k < 0 {
				return append(fields, line), scratch, nil
			}
			fields = append(fields, line[:k])
			line = line[k+1:]
		}
	}
	if cap(scratch) < len(line) {
		scratch = make([]byte, 0, len(line))
	}
	for {
		if len(line) > 0 && line[0] == '"' {
			start := len(scratch)
			i := 1
			for {
				if i >= len(line) {
					return fields, scratch, errors.New(`unterminated quoted field (a quoted field cannot span lines)`)
				}
				if line[i] == '"' {
					if i+1 < len(line) && line[i+1] == '"' {
						scratch = append(scratch, '"')
						i += 2
						continue
					}
					break
				}
				scratch = append(scratch, line[i])
				i++
			}
			fields = append(fields, scratch[start:len(scratch):len(scratch)])
			line = line[i+1:]
			if len(line) == 0 {
				return fields, scratch, nil
			}
			if line[0] != ',' {
				return fields, scratch, errors.New(`expected "," after a closing quote`)
			}
			line = line[1:]
			continue
		}
		k := bytes.IndexByte(line, ',')
		if k < 0 {
			return append(fields, line), scratch, nil
		}
		fields = append(fields, line[:k])
		line = line[k+1:]
	}
}

// csvBlock is a run of whole lines; line is the number of the first.
type csvBlock struct {
	seq  int
	line int
	data []byte
}

type csvResult struct {
	seq int
	b   *builder
	err error
}

// blockSize is the parallel reader's unit of work.
const blockSize = 4 << 20

// parseBlocks parses the rest of br in blocks of whole lines on
// GOMAXPROCS goroutines and appends them, in order, to b. lineNo is the
// last line read so far.
func parseBlocks(br *bufio.Reader, b *builder, name string, lineNo, width int) error {
	workers := runtime.GOMAXPROCS(0)
	blocks := make(chan csvBlock, workers)
	results := make(chan csvResult, workers)
	free := make(chan *builder, 2*workers+2)
	for range cap(free) {
		w := newBuilder(b.s)
		w.mode = 1
		free <- w
	}
	freeData := make(chan []byte, 2*workers+2)
	done := make(chan struct{})
	var readErr error
	go func() { // reader
		defer close(blocks)
		var carry []byte
		line := lineNo + 1
		for seq := 0; ; seq++ {
			var buf []byte
			select {
			case buf = <-freeData:
			default:
				buf = make([]byte, 0, blockSize+64<<10)
			}
			buf = append(buf[:0], carry...)
			for {
				if cap(buf)-len(buf) < 64<<10 {
					buf = append(buf, make([]byte, blockSize)...)[:len(buf)]
				}
				n, err := br.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					if len(buf) > 0 {
						select {
						case blocks <- csvBlock{seq, line, buf}:
						case <-done:
						}
					}
					return
				}
				if err != nil {
					readErr = err
					return
				}
				if len(buf) >= blockSize {
					if k := bytes.LastIndexByte(buf, '\n'); k >= 0 {
						carry = append(carry[:0], buf[k+1:]...)
						buf = buf[:k+1]
						break
					}
				}
			}
			select {
			case blocks <- csvBlock{seq, line, buf}:
			case <-done:
				return
			}
			line += bytes.Count(buf, []byte{'\n'})
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var fields [][]byte
			var scratch []byte
			for blk := range blocks {
				w := <-free
				w.log.N = 0
				l := w.log
				l.Action, l.Reward, l.PScore = l.Action[:0], l.Reward[:0], l.PScore[:0]
				l.Position, l.Timestamp, l.Context = l.Position[:0], l.Timestamp[:0], l.Context[:0]
				if l.PiE != nil {
					l.PiE.Values = l.PiE.Values[:0]
				}
				if l.QHat != nil {
					l.QHat.Values = l.QHat.Values[:0]
				}
				w.maxA, w.maxP = -1, 0
				var err error
				fields, scratch, err = parseLines(w, blk.data, blk.line, name, width, fields, scratch)
				select {
				case freeData <- blk.data:
				default:
				}
				results <- csvResult{blk.seq, w, err}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	pending := map[int]csvResult{}
	next := 0
	var firstErr error
	for r := range results {
		pending[r.seq] = r
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if firstErr == nil {
				if p.err != nil {
					firstErr = p.err
					close(done)
				} else {
					b.appendFrom(p.b)
				}
			}
			free <- p.b
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return readErr
}

// parseLines parses whole lines of data into w; line is the first's
// number.
func parseLines(w *builder, data []byte, line int, name string, width int, fields [][]byte, scratch []byte) ([][]byte, []byte, error) {
	perr := func(col int, err error) error {
		pe := &ParseError{File: name, Line: line, Column: col, Err: err}
		if col >= 1 && col <= len(w.s.cols) {
			pe.Name = w.s.cols[col-1].name
		}
		return pe
	}
	var rw row
	for len(data) > 0 {
		k := bytes.IndexByte(data, '\n')
		var ln []byte
		if k < 0 {
			ln, data = data, nil
		} else {
			ln, data = data[:k], data[k+1:]
		}
		if len(ln) > 0 && ln[len(ln)-1] == '\r' {
			ln = ln[:len(ln)-1]
		}
		if len(ln) > 0 {
			var qerr error
			fields, scratch, qerr = splitCSV(ln, fields[:0], scratch[:0])
			if qerr != nil {
				return fields, scratch, perr(len(fields)+1, qerr)
			}
			if len(fields) != width {
				return fields, scratch, perr(0, fmt.Errorf("%d fields, the header has %d", len(fields), width))
			}
			rw = row{}
			for j, f := range fields {
				if ferr := w.field(j, f, &rw); ferr != nil {
					return fields, scratch, perr(j+1, ferr)
				}
			}
			if fe := w.push(&rw); fe != nil {
				return fields, scratch, perr(fe.col, fe.err)
			}
		}
		line++
	}
	return fields, scratch, nil
}
