package eval

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/dpbandit/dpbandit/bandit"
)

// Yahoo! Front Page Today Module user click log (Webscope R6A,
// ydata-fp-td-clicks-v1_0), the data of Li, Chu, Langford & Wang, WSDM 2011,
// and of Mishra & Thakurta, UAI 2015, §5.1. It is licensed (a Webscope data
// sharing agreement) and never shipped with dpbandit; ReplayR6 replays a
// policy through a user's copy.
//
// One event per line, fields separated by spaces:
//
//	TIMESTAMP DISPLAYED_ARTICLE CLICK |user F... |ARTICLE F... |ARTICLE F... ...
//
// where each F is a feature "index:value" (R6A: indices 1–6, 1 the
// constant, 2–6 the cluster memberships) or a bare "index" (value 1, as in
// the R6B release), and the |ARTICLE groups are the pool of articles live
// at that time (about 20). The displayed article was drawn uniformly from
// the pool, so replay is unbiased (Li et al. 2011).

// R6Options configure ReplayR6.
type R6Options struct {
	// Delay D: the reward of a matched event is fed back D matched events
	// later (0: at once).
	Delay int
	// Seed seeds the policy's generator.
	Seed uint64
	// Horizon is the T the policy is built for (tree-based policies size
	// their trees by it); 0 means 2²² (4,194,304), more than the ≈ 2·10⁶
	// matches of the whole R6A log.
	Horizon int
	// MaxEvents stops after that many events (0: the whole input).
	MaxEvents int
	// Dim is the number of features per user and per article (0: 6, R6A's);
	// feature indices run from 1 to Dim, larger ones are an error.
	Dim int
}

// R6DefaultHorizon is ReplayR6's horizon when none is given.
const R6DefaultHorizon = 1 << 22

// R6Candidate is the candidate vector of article a for user u: the
// elementwise product u∘a (the diagonal of Li et al. 2010's hybrid
// user⊗article features), scaled to norm ≤ 1 (divided by max(1, ‖u∘a‖)),
// the bound the tree-based private policies need. With R6A's features in
// [0, 1] it has d = 6 entries, [MT] §5.1's dimension.
func R6Candidate(dst, user, article []float64) {
	s := 0.0
	for j := range dst {
		dst[j] = user[j] * article[j]
		s += dst[j] * dst[j]
	}
	if s > 1 {
		n := math.Sqrt(s)
		for j := range dst {
			dst[j] /= n
		}
	}
}

// r6Event is one parsed line; its slices are reused between lines.
type r6Event struct {
	shown int64
	click float64
	user  []float64
	ids   []int64
	feats []float64 // len(ids)×dim
}

// parseR6Features reads "index:value" or "index" tokens into dst (indices
// 1..len(dst)) until the next "|" token; it returns the number of tokens
// consumed.
func parseR6Features(tok [][]byte, dst []float64) (int, error) {
	clear(dst)
	n := 0
	for ; n < len(tok) && (len(tok[n]) == 0 || tok[n][0] != '|'); n++ {
		k, v, hasV := bytes.Cut(tok[n], []byte{':'})
		idx, err := strconv.Atoi(string(k))
		if err != nil || idx < 1 || idx > len(dst) {
			return n, fmt.Errorf("feature %q: want index:value with index in [1, %d]", tok[n], len(dst))
		}
		val := 1.0
		if hasV {
			val, err = strconv.ParseFloat(string(v), 64)
			if err != nil || math.IsNaN(val) || math.IsInf(val, 0) || val < 0 || val > 1 {
				return n, fmt.Errorf("feature %q: want a value in [0, 1]", tok[n])
			}
		}
		dst[idx-1] = val
	}
	return n, nil
}

// parse reads one line into e.
func (e *r6Event) parse(line []byte, dim int) error {
	tok := bytes.Fields(line)
	if len(tok) < 5 {
		return errors.New("want TIMESTAMP ARTICLE CLICK |user FEATURES |ARTICLE FEATURES ...")
	}
	if _, err := strconv.ParseInt(string(tok[0]), 10, 64); err != nil {
		return fmt.Errorf("timestamp %q is not an integer", tok[0])
	}
	shown, err := strconv.ParseInt(string(tok[1]), 10, 64)
	if err != nil {
		return fmt.Errorf("displayed article %q is not an integer id", tok[1])
	}
	e.shown = shown
	switch string(tok[2]) {
	case "0":
		e.click = 0
	case "1":
		e.click = 1
	default:
		return fmt.Errorf("click %q: want 0 or 1", tok[2])
	}
	if string(tok[3]) != "|user" {
		return fmt.Errorf("field 4 is %q, want |user", tok[3])
	}
	if len(e.user) != dim {
		e.user = make([]float64, dim)
	}
	i := 4
	n, err := parseR6Features(tok[i:], e.user)
	if err != nil {
		return fmt.Errorf("user %w", err)
	}
	i += n
	e.ids, e.feats = e.ids[:0], e.feats[:0]
	for i < len(tok) {
		id, err := strconv.ParseInt(string(tok[i][1:]), 10, 64)
		if err != nil {
			return fmt.Errorf("pool entry %q: want |ARTICLE_ID", tok[i])
		}
		if slices.Contains(e.ids, id) {
			return fmt.Errorf("article %d is twice in the pool", id)
		}
		i++
		e.ids = append(e.ids, id)
		at := len(e.feats)
		e.feats = slices.Grow(e.feats, dim)[:at+dim] // reuses the buffer of earlier lines; parseR6Features clears it
		n, err := parseR6Features(tok[i:], e.feats[at:])
		if err != nil {
			return fmt.Errorf("article %d %w", id, err)
		}
		i += n
	}
	if len(e.ids) == 0 {
		return errors.New("empty article pool")
	}
	if !slices.Contains(e.ids, e.shown) {
		return fmt.Errorf("the displayed article %d is not in the pool", e.shown)
	}
	return nil
}

// ReplayR6 replays the contextual policy spec through the R6 events read
// from r (named name in errors): at every event the policy chooses among
// the pool's articles (candidates R6Candidate(user, article)); when its
// choice is the displayed article, the click counts and is fed back
// o.Delay matched events later (Li et al. 2011, Algorithm 3). Memory is
// constant: the events are streamed. K-armed policies are refused (the
// pool changes over time).
func ReplayR6(r io.Reader, name, spec string, o R6Options) (*ReplayResult, error) {
	if o.Delay < 0 {
		return nil, fmt.Errorf("replay delay must be ≥ 0, got %d", o.Delay)
	}
	if o.MaxEvents < 0 {
		return nil, fmt.Errorf("max events must be ≥ 0, got %d", o.MaxEvents)
	}
	dim := o.Dim
	if dim == 0 {
		dim = 6
	}
	if dim < 1 || dim > 10000 {
		return nil, fmt.Errorf("R6 feature dimension must be in [1, 10000], got %d", dim)
	}
	sp, d, err := lookupSpec(spec)
	if err != nil {
		return nil, err
	}
	if d.NewContextual == nil {
		return nil, fmt.Errorf("%s is a K-armed policy; R6's article pool changes over time, so replay it with a contextual policy (e.g. linucb, mt-linucb)", sp.Name)
	}
	horizon := o.Horizon
	if horizon == 0 {
		horizon = R6DefaultHorizon
	}
	s := bandit.Setting{K: 20, Horizon: horizon, Dim: dim}
	p, err := d.CompleteFor(s, sp.Params)
	if err != nil {
		return nil, err
	}
	pol, err := d.NewContextual(s, p, bandit.NewRand(o.Seed, replaySeed2))
	if err != nil {
		return nil, err
	}
	res := &ReplayResult{Policy: bandit.Spec{Name: sp.Name, Params: sp.Params}.String(), Delay: o.Delay,
		Uniform: true, PScoreLo: math.Inf(1), PScoreHi: math.Inf(-1)}
	rp := newReplayer(pol, dim, o.Delay)
	br := bufio.NewReaderSize(r, 1<<20)
	var ev r6Event
	var cands [][]float64
	var buf []float64
	for line := 1; o.MaxEvents == 0 || res.Rounds < o.MaxEvents; line++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &ParseError{Name: name, Line: line, Err: errors.New("line longer than 1 MiB")}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if perr := ev.parse(b, dim); perr != nil {
				return nil, &ParseError{Name: name, Line: line, Err: perr}
			}
			k := len(ev.ids)
			if cap(buf) < k*dim {
				buf = make([]float64, k*dim)
			}
			cands = cands[:0]
			shown := 0
			for a := range k {
				c := buf[a*dim : (a+1)*dim]
				R6Candidate(c, ev.user, ev.feats[a*dim:(a+1)*dim])
				cands = append(cands, c)
				if ev.ids[a] == ev.shown {
					shown = a
				}
			}
			ps := 1 / float64(k)
			res.PScoreLo, res.PScoreHi = min(res.PScoreLo, ps), max(res.PScoreHi, ps)
			res.Rounds++
			if err := rp.step(cands, shown, ev.click); err != nil {
				return nil, &ParseError{Name: name, Line: line, Err: err}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if res.Rounds == 0 {
		return nil, fmt.Errorf("%s: no events", name)
	}
	res.fill(res.Rounds, rp.matched)
	return res, nil
}

// ReplayR6File is ReplayR6 on a file (gzip-compressed or plain, by its
// first bytes) or a directory of such files (read in name order, as R6A
// ships one file per day).
func ReplayR6File(path, spec string, o R6Options) (*ReplayResult, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files = files[:0]
		for _, e := range ents {
			if e.Type().IsRegular() && e.Name()[0] != '.' {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no files", path)
		}
	}
	readers := make([]io.Reader, 0, len(files))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		br := bufio.NewReaderSize(fh, 1<<16)
		var rd io.Reader = br
		if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			gz, err := gzip.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			rd = gz
		}
		// A file without a final newline must not run into the next one.
		readers = append(readers, rd, bytes.NewReader([]byte{'\n'}))
	}
	return ReplayR6(io.MultiReader(readers...), path, spec, o)
}
