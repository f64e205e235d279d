package eval

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The Open Bandit Dataset (Saito, Aihara, Matsutani & Narita, "Open Bandit
// Dataset and Pipeline", NeurIPS 2021 Datasets and Benchmarks; st-tech/zr-obp)
// ships one directory per behaviour policy (random/, bts/), each with a
// campaign directory (men/, women/, all/) holding {campaign}.csv and
// item_context.csv. {campaign}.csv has an unnamed index column, then
// timestamp, item_id, position (1, 2, 3: left, centre, right), click,
// propensity_score (the behaviour policy's probability of that item at that
// position), user_feature_0..3 (hashed categorical) and
// user-item_affinity_0..(items−1) (numbers).

// OBDCampaigns are the campaigns of the Open Bandit Dataset.
var OBDCampaigns = []string{"all", "men", "women"}

// obdPaths returns the campaign's log and item-context paths under dir: dir
// may be the behaviour policy's directory (holding {campaign}/{campaign}.csv)
// or the campaign's own directory (holding {campaign}.csv).
func obdPaths(dir, campaign string) (logPath, itemPath string, err error) {
	if !slices.Contains(OBDCampaigns, campaign) {
		return "", "", fmt.Errorf("obd campaign %q: want men, women or all", campaign)
	}
	for _, d := range []string{filepath.Join(dir, campaign), dir} {
		p := filepath.Join(d, campaign+".csv")
		if _, err := os.Stat(p); err == nil {
			return p, filepath.Join(d, "item_context.csv"), nil
		}
	}
	return "", "", fmt.Errorf("obd: neither %s nor %s exists (--log is the behaviour policy's directory, e.g. open-bandit-dataset-sample/random, or its campaign directory)",
		filepath.Join(dir, campaign, campaign+".csv"), filepath.Join(dir, campaign+".csv"))
}

// ReadOBD reads the campaign's log of the Open Bandit Dataset as shipped:
// dir is a behaviour policy's directory (random/ or bts/, holding
// {campaign}/{campaign}.csv) or the campaign directory itself.
//
// Round i of the Log is the row's impression, in file order (the shipped
// files are sorted by timestamp): Action is item_id, Position is position − 1
// (0, 1, 2), PScore is propensity_score (the behaviour policy's
// probability of that item at that position), Reward is click, Timestamp is
// the impression time in Unix seconds. A = the largest item_id + 1 (or the
// item count of item_context.csv when it is larger), P = 3.
//
// Context (the user features, D columns) is, in order:
//   - a one-hot block per hashed categorical user_feature_0..3: one column
//     per distinct hash in this file, in byte order of the hashes (so the
//     encoding of one file is not comparable with another file's);
//   - user-item_affinity_0..(items−1) as read (numbers).
//
// Item features are not per-round; ReadOBDItems reads them.
func ReadOBD(dir, campaign string) (*Log, error) {
	logPath, _, err := obdPaths(dir, campaign)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return nil, err
	}
	l, err := parseOBD(b, logPath)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// splitLines splits b into its non-blank lines (CR LF or LF).
func splitLines(b []byte) [][]byte {
	ls := bytes.Split(b, []byte{'\n'})
	out := ls[:0]
	for _, l := range ls {
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func parseOBD(b []byte, name string) (*Log, error) {
	lines := splitLines(b)
	if len(lines) == 0 {
		return nil, &ParseError{File: name, Line: 1, Err: errors.New("empty file")}
	}
	header := strings.Split(string(lines[0]), ",")
	col := map[string]int{}
	for j, h := range header {
		col[strings.TrimSpace(h)] = j
	}
	need := []string{"item_id", "position", "click", "propensity_score"}
	for _, h := range need {
		if _, ok := col[h]; !ok {
			return nil, &ParseError{File: name, Line: 1, Err: fmt.Errorf("no %q column (not an Open Bandit Dataset log)", h)}
		}
	}
	ts, hasTS := col["timestamp"]
	var ucols []int // user_feature_k
	for k := 0; ; k++ {
		j, ok := col["user_feature_"+strconv.Itoa(k)]
		if !ok {
			break
		}
		ucols = append(ucols, j)
	}
	var acols []int // user-item_affinity_k
	for k := 0; ; k++ {
		j, ok := col["user-item_affinity_"+strconv.Itoa(k)]
		if !ok {
			break
		}
		acols = append(acols, j)
	}
	n := len(lines) - 1
	l := &Log{N: n, P: 3,
		Action: make([]int32, n), Position: make([]int32, n), Reward: make([]float64, n), PScore: make([]float64, n)}
	if hasTS {
		l.Timestamp = make([]float64, n)
	}
	rows := make([][]string, n)
	cats := make([]map[string]bool, len(ucols))
	for k := range cats {
		cats[k] = map[string]bool{}
	}
	for i := range n {
		line := i + 2
		f := strings.Split(string(lines[i+1]), ",")
		if len(f) != len(header) {
			return nil, &ParseError{File: name, Line: line, Err: fmt.Errorf("%d fields, the header has %d", len(f), len(header))}
		}
		rows[i] = f
		perr := func(h string, err error) error {
			return &ParseError{File: name, Line: line, Column: col[h] + 1, Err: err}
		}
		a, err := strconv.Atoi(f[col["item_id"]])
		if err != nil || a < 0 || a > math.MaxInt32-1 {
			return nil, perr("item_id", fmt.Errorf("item_id %q is not an index ≥ 0", f[col["item_id"]]))
		}
		p, err := strconv.Atoi(f[col["position"]])
		if err != nil || p < 1 || p > 3 {
			return nil, perr("position", fmt.Errorf("position %q is not 1, 2 or 3", f[col["position"]]))
		}
		r, err := strconv.ParseFloat(f[col["click"]], 64)
		if err != nil || (r != 0 && r != 1) {
			return nil, perr("click", fmt.Errorf("click %q is not 0 or 1", f[col["click"]]))
		}
		ps, err := strconv.ParseFloat(f[col["propensity_score"]], 64)
		if err != nil || !(ps > 0 && ps <= 1) {
			return nil, perr("propensity_score", fmt.Errorf("propensity_score %q is not in (0, 1]", f[col["propensity_score"]]))
		}
		l.Action[i], l.Position[i], l.Reward[i], l.PScore[i] = int32(a), int32(p-1), r, ps
		if a+1 > l.A {
			l.A = a + 1
		}
		if hasTS {
			t, err := parseOBDTime(f[ts])
			if err != nil {
				return nil, perr("timestamp", err)
			}
			l.Timestamp[i] = t
		}
		for k, j := range ucols {
			cats[k][f[j]] = true
		}
	}
	// One-hot blocks, categories in byte order.
	offs := make([]map[string]int, len(ucols))
	d := 0
	for k := range ucols {
		keys := make([]string, 0, len(cats[k]))
		for s := range cats[k] {
			keys = append(keys, s)
		}
		slices.Sort(keys)
		offs[k] = map[string]int{}
		for _, s := range keys {
			offs[k][s] = d
			d++
		}
	}
	d += len(acols)
	l.D = d
	if d > 0 {
		l.Context = make([]float64, n*d)
		for i, f := range rows {
			x := l.Context[i*d : (i+1)*d]
			for k, j := range ucols {
				x[offs[k][f[j]]] = 1
			}
			base := d - len(acols)
			for k, j := range acols {
				v, err := strconv.ParseFloat(f[j], 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, &ParseError{File: name, Line: i + 2, Column: j + 1, Err: fmt.Errorf("affinity %q is not a finite number", f[j])}
				}
				x[base+k] = v
			}
		}
	}
	if l.A < len(acols) {
		l.A = len(acols)
	}
	return l, nil
}

// parseOBDTime parses OBD's "2019-11-24 00:03:13.442536+00:00" (or RFC
// 3339) to Unix seconds.
func parseOBDTime(s string) (float64, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05-07:00", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return float64(t.UnixNano()) / 1e9, nil
		}
	}
	return 0, fmt.Errorf("timestamp %q is not a time", s)
}

// ReadOBDItems reads the campaign's item_context.csv (dir as for ReadOBD)
// and returns one feature vector per item id, encoded as the OBD simulator
// of package ctxenv does: item_feature_0 divided by the largest |value|
// over the items (so in [−1, 1]), then a one-hot block for each hashed
// categorical item_feature_1..3 (categories in byte order of the hash), the
// whole divided by 2, so every vector has norm ≤ 1.
func ReadOBDItems(dir, campaign string) ([][]float64, error) {
	_, path, err := obdPaths(dir, campaign)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := splitLines(b)
	if len(lines) < 2 {
		return nil, &ParseError{File: path, Line: 1, Err: errors.New("no items")}
	}
	col := map[string]int{}
	header := strings.Split(string(lines[0]), ",")
	for j, h := range header {
		col[strings.TrimSpace(h)] = j
	}
	names := []string{"item_id", "item_feature_0", "item_feature_1", "item_feature_2", "item_feature_3"}
	for _, h := range names {
		if _, ok := col[h]; !ok {
			return nil, &ParseError{File: path, Line: 1, Err: fmt.Errorf("no %q column", h)}
		}
	}
	n := len(lines) - 1
	f0 := make([]float64, n)
	cat := make([][]string, n)
	seen := make([]bool, n)
	sets := [3]map[string]bool{{}, {}, {}}
	maxAbs := 0.0
	for r := range n {
		f := strings.Split(string(lines[r+1]), ",")
		if len(f) != len(header) {
			return nil, &ParseError{File: path, Line: r + 2, Err: fmt.Errorf("%d fields, the header has %d", len(f), len(header))}
		}
		id, err := strconv.Atoi(f[col["item_id"]])
		if err != nil || id < 0 || id >= n || seen[id] {
			return nil, &ParseError{File: path, Line: r + 2, Err: fmt.Errorf("item_id %q is not in [0, %d) or repeats", f[col["item_id"]], n)}
		}
		seen[id] = true
		v, err := strconv.ParseFloat(f[col["item_feature_0"]], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &ParseError{File: path, Line: r + 2, Err: fmt.Errorf("item_feature_0 %q is not a finite number", f[col["item_feature_0"]])}
		}
		f0[id] = v
		maxAbs = max(maxAbs, math.Abs(v))
		cat[id] = []string{f[col["item_feature_1"]], f[col["item_feature_2"]], f[col["item_feature_3"]]}
		for k := range 3 {
			sets[k][cat[id][k]] = true
		}
	}
	offs := [3]map[string]int{}
	dim := 1
	for k := range 3 {
		keys := make([]string, 0, len(sets[k]))
		for s := range sets[k] {
			keys = append(keys, s)
		}
		slices.Sort(keys)
		offs[k] = map[string]int{}
		for _, s := range keys {
			offs[k][s] = dim
			dim++
		}
	}
	out := make([][]float64, n)
	for id := range n {
		x := make([]float64, dim)
		if maxAbs > 0 {
			x[0] = f0[id] / maxAbs / 2
		}
		for k := range 3 {
			x[offs[k][cat[id][k]]] = 0.5
		}
		out[id] = x
	}
	return out, nil
}

// ContextFreePolicy estimates a context-free policy's action distribution
// per position, π(a | p), from a log that policy generated, as the
// empirical frequency of each action among the rounds at each position:
// n(a, p) / n(p). For a policy whose distribution π_t changes over the
// log (a learning policy such as OBD's Bernoulli Thompson sampling, updated
// in batches), n(a, p)/n(p) is an unbiased estimate of the time-averaged
// (1/n(p)) Σ_t π_t(a | p), which is the distribution whose value equals
// the log's on-policy mean reward when rewards do not drift.
//
// The mean of the logged propensities of (a, p), the other natural
// estimate (ContextFreePolicyFromPScores), is size-biased: a round logs
// action a with probability π_t(a), so the mean over the rounds that
// logged a estimates Σ_t π_t(a)² / Σ_t π_t(a) = mean + variance/mean of
// π_t(a) over the log, so after normalisation it over-weights the actions
// whose probability varied most while the policy learned.
//
// a is the action count of the log to be evaluated (at least l.A).
func ContextFreePolicy(l *Log, a int) (*ActionDist, error) {
	if a < l.A {
		return nil, fmt.Errorf("the policy's log has %d actions, more than the %d asked for", l.A, a)
	}
	return cfTally(l, a, func(int) float64 { return 1 })
}

// ContextFreePolicyFromPScores estimates π(a | p) as the mean logged
// propensity of (a, p), normalised per position to sum to 1 (size-biased:
// see ContextFreePolicy). An action never logged at p gets 0.
func ContextFreePolicyFromPScores(l *Log, a int) (*ActionDist, error) {
	if a < l.A {
		return nil, fmt.Errorf("the policy's log has %d actions, more than the %d asked for", l.A, a)
	}
	sum, err := cfTally(l, a, func(i int) float64 { return l.PScore[i] })
	if err != nil {
		return nil, err
	}
	cnt, _ := cfTally(l, a, func(int) float64 { return 1 })
	// contextFree normalises; recover per-cell means: sum(a,p)/n(a,p) ∝
	// (sum/S_p)/(cnt/n_p).
	d := &ActionDist{N: 1, A: a, P: l.P, Shared: true, Values: make([]float64, a*l.P)}
	for p := range l.P {
		var s float64
		for k := range a {
			if c := cnt.Values[k*l.P+p]; c > 0 {
				d.Values[k*l.P+p] = sum.Values[k*l.P+p] / c
				s += d.Values[k*l.P+p]
			}
		}
		for k := range a {
			d.Values[k*l.P+p] /= s
		}
	}
	return d, nil
}

// cfTally returns Σ weight(i) over the rounds of each (action,
// position), normalised per position.
func cfTally(l *Log, a int, weight func(int) float64) (*ActionDist, error) {
	p := max(l.P, 1)
	d := &ActionDist{N: 1, A: a, P: p, Shared: true, Values: make([]float64, a*p)}
	tot := make([]float64, p)
	for i := range l.N {
		w := weight(i)
		d.Values[int(l.Action[i])*p+l.Pos(i)] += w
		tot[l.Pos(i)] += w
	}
	for q := range p {
		if tot[q] == 0 {
			return nil, fmt.Errorf("the policy's log has no round at position %d", q)
		}
		for k := range a {
			d.Values[k*p+q] /= tot[q]
		}
	}
	return d, nil
}
