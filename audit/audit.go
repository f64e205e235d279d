// Package audit checks a privacy claim from the outside: it runs a policy
// many times on pairs of neighbouring reward streams and turns the
// frequencies of a distinguishing event into a statistical lower bound on
// its privacy loss (ε at δ, and μ for Gaussian-DP claims), to compare with
// the value the policy certifies. A lower bound above the certified value
// is a bug in the policy or in its accounting.
//
// The method is the black-box audit of Jagielski, Ullman & Oprea (NeurIPS
// 2020, "Auditing differentially private machine learning: how private is
// private SGD?", Alg 1–2) and Nasr, Song, Thakurta, Papernot & Carlini (IEEE
// S&P 2021), with Clopper–Pearson intervals, and the Gaussian trade-off
// curve of f-DP (Dong, Roth & Su, JRSSB 2022) for μ as in Nasr, Hayes,
// Steinke, Balle, Tramèr, Jagielski, Carlini & Terzis (USENIX Security 2023).
// docs/audit.md states the procedure and its soundness argument.
//
// Procedure (Run):
//  1. Selection: every candidate neighbouring pair runs SelectionRuns
//     times on each of its two inputs with independent seeds. For every
//     statistic of the transcript and every threshold c on a grid, the
//     event {statistic ≥ c} (for a categorical statistic, an encoded arm
//     sequence: {code ∈ S} for the top codes by likelihood ratio, ranked
//     and scored on disjoint halves) is scored by the bound it would give
//     on these runs, at a Bonferroni-corrected level; the best (pair,
//     statistic, threshold or set, orientation) is chosen.
//  2. Evaluation: the chosen pair runs EvalRuns fresh times per input
//     (seeds disjoint from selection), and only the chosen event is
//     counted. The Clopper–Pearson bounds on these counts, at level
//     (1 − Confidence)/2 each, give the reported lower bounds.
package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Config is one audit.
type Config struct {
	// Mechanism names what is audited (e.g. the policy spec).
	Mechanism  string
	Candidates []Candidate
	// Report is the mechanism's privacy report: what the audit checks.
	Report privacy.Report
	// Delta is the δ at which ε is bounded and certified; for a pure-DP
	// report it is ignored and δ = 0 is used (the guarantee holds there).
	Delta float64
	// Runs is the number of runs per input in each phase: selection runs
	// split it over the candidates, evaluation gives it all to the chosen
	// one. Total runs = 4·Runs.
	Runs int
	// Confidence of the lower bounds, in (0, 1), e.g. 0.95.
	Confidence float64
	Seed       uint64
	Workers    int           // ≤ 0: GOMAXPROCS
	MaxTime    time.Duration // ≤ 0: none; else each phase stops cleanly at its share
	// Progress, if set, is called about once a second and at the end of
	// each phase from a separate goroutine.
	Progress func(Progress)
}

// Progress reports the runs done in a phase.
type Progress struct {
	Phase   string // "selection" or "evaluation"
	Done    int
	Total   int
	Elapsed time.Duration
}

// Event is the distinguishing event: {Stat ≥ Threshold} on the transcript
// of the pair Candidate, more likely on input World (World A; the other is
// B).
// For a categorical statistic (an encoded arm sequence) the event is
// instead {Stat ∈ Set}: SetSize codes, those with the largest likelihood
// ratio of world A to world B on the selection runs.
type Event struct {
	Candidate string  `json:"neighbours"`
	Stat      string  `json:"statistic"`
	Threshold float64 `json:"threshold"` // unused when SetSize > 0
	SetSize   int     `json:"set_size,omitempty"`
	World     int     `json:"more_likely_in_world"`
	stat      int
	cand      int
	set       map[float64]bool
}

func (e Event) String() string {
	w := "D′"
	if e.World == 0 {
		w = "D"
	}
	if e.SetSize > 0 {
		return fmt.Sprintf("{%s in a set of %d sequences}, more likely on %s; neighbours: %s", e.Stat, e.SetSize, w, e.Candidate)
	}
	return fmt.Sprintf("{%s ≥ %g}, more likely on %s; neighbours: %s", e.Stat, e.Threshold, w, e.Candidate)
}

// holds reports whether the event occurs for the statistics st.
func (e Event) holds(st []float64) bool {
	if e.set != nil {
		return e.set[st[e.stat]]
	}
	return st[e.stat] >= e.Threshold
}

// Point is one (type I, type II) error pair of a test between the inputs.
type Point struct {
	FPR float64 `json:"fpr"`
	FNR float64 `json:"fnr"`
}

// Result is the outcome of an audit.
type Result struct {
	Mechanism  string  `json:"mechanism"`
	Notion     string  `json:"notion"`
	Confidence float64 `json:"confidence"`
	Delta      float64 `json:"delta"`
	// Param is "mu" for a GDP certificate, "epsilon" otherwise; LowerBound,
	// Certified and Ratio are in that parameter.
	Param      string  `json:"param"`
	LowerBound float64 `json:"lower_bound"`
	Certified  float64 `json:"certified"`
	Ratio      float64 `json:"ratio"`
	// Violated is true when LowerBound > Certified: the certificate is
	// refuted at the stated confidence.
	Violated bool `json:"violated"`

	EpsilonLower     float64  `json:"epsilon_lower"`
	EpsilonCertified float64  `json:"epsilon_certified"`
	MuLower          *float64 `json:"mu_lower,omitempty"`
	MuCertified      *float64 `json:"mu_certified,omitempty"`

	Event Event `json:"event"`
	// Counts of the event on the evaluation runs: KA of NA on world A, KB
	// of NB on world B; their one-sided Clopper–Pearson bounds PALo, PBHi.
	KA   int     `json:"k_a"`
	NA   int     `json:"n_a"`
	KB   int     `json:"k_b"`
	NB   int     `json:"n_b"`
	PALo float64 `json:"p_a_lower"`
	PBHi float64 `json:"p_b_upper"`
	// Certified is the certified-free corner (FPR, FNR) = (PBHi, 1 − PALo);
	// Empirical is the point estimate (KB/NB, 1 − KA/NA).
	CertifiedPoint Point `json:"certified_point"`
	EmpiricalPoint Point `json:"empirical_point"`
	// SelectionPoints are the point estimates of the chosen statistic's
	// thresholds on the selection runs (for the plot).
	SelectionPoints []Point `json:"selection_points"`

	Candidates    []string `json:"neighbours_searched"`
	SelectionRuns int      `json:"selection_runs_per_input"` // per candidate
	EvalRuns      int      `json:"evaluation_runs_per_input"`
	TotalRuns     int      `json:"total_runs"`
	Stopped       bool     `json:"stopped_by_max_time"`
	Elapsed       float64  `json:"elapsed_seconds"`
	Workers       int      `json:"workers"`
}

// ErrNoRuns is returned when the time limit allowed no evaluation run.
var ErrNoRuns = errors.New("audit: the time limit stopped the audit before any evaluation run")

// maxSelectionBytes bounds the memory of the selection statistics (4 GiB).
const maxSelectionBytes = 4 << 30

// maxThresholds bounds the thresholds tried per statistic in selection.
const maxThresholds = 96

// Run performs the audit. ctx cancels it (like the time limit, it stops
// cleanly and reports what was run).
func Run(ctx context.Context, c Config) (*Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	res := &Result{Mechanism: c.Mechanism, Notion: string(c.Report.Certified.Notion), Confidence: c.Confidence,
		Workers: workers}
	delta := c.Delta
	if c.Report.Certified.Notion == privacy.NotionPure {
		delta = 0
	}
	res.Delta = delta
	var err error
	if c.Report.Certified.Notion == privacy.NotionPure {
		res.EpsilonCertified = c.Report.Certified.Value
	} else if res.EpsilonCertified, _, err = c.Report.Certified.Epsilon(c.Delta); err != nil {
		return nil, fmt.Errorf("audit: certified ε of %s at δ = %g: %w", c.Mechanism, c.Delta, err)
	}
	gdp := c.Report.Certified.Notion == privacy.NotionGDP
	if gdp {
		v := c.Report.Certified.Value
		res.MuCertified = &v
	}
	for _, cd := range c.Candidates {
		res.Candidates = append(res.Candidates, cd.Name)
	}
	gamma := (1 - c.Confidence) / 2
	// Selection scores every event by the bound it gives on the selection
	// runs at level gamma/M, M the number of events scored (a Bonferroni
	// correction): the best of many noisy scores is biased upwards (the
	// winner's curse, worst for rare events), and scoring every event by a
	// bound that holds for all of them at once keeps the choice honest.
	// This only steers the choice; the reported bound uses gamma on the
	// evaluation runs.
	gammaSel := gamma / float64(len(c.Candidates)*maxStats(c.Candidates)*2*maxThresholds)
	score := func(kA, nA, kB, nB int) float64 {
		lo, _ := CPLower(kA, nA, gammaSel)
		hi, _ := CPUpper(kB, nB, gammaSel)
		if gdp {
			return muScore(hi, 1-lo)
		}
		return epsScore(lo, hi, delta)
	}

	var selDeadline, evalDeadline time.Time
	if c.MaxTime > 0 {
		selDeadline = start.Add(c.MaxTime / 2)
		evalDeadline = start.Add(c.MaxTime)
	}

	// Phase 1: selection.
	nc := len(c.Candidates)
	perCand := max(1, c.Runs/nc)
	type selData struct {
		vals [2][]float64 // [world][run*nstats+j]
		n    [2]int
	}
	sel := make([]selData, nc)
	total := 2 * perCand * nc
	// Run i is candidate i mod nc, world (i/nc) mod 2: a prefix of runs
	// covers every candidate and both worlds evenly.
	done := c.parallel(ctx, "selection", total, workers, selDeadline, func(i int, r *rand.Rand, out []float64) {
		cand, world := i%nc, (i/nc)%2
		m := c.Candidates[cand].Mech
		m.Run(world, r, out[:len(m.Stats())])
	}, func(i int) (uint64, uint64) { return c.Seed, 1<<62 | uint64(i) }, func(i int, out []float64) {
		cand, world := i%nc, (i/nc)%2
		ns := len(c.Candidates[cand].Mech.Stats())
		sel[cand].vals[world] = append(sel[cand].vals[world], out[:ns]...)
		sel[cand].n[world]++
	}, maxStats(c.Candidates))
	res.SelectionRuns = perCand // runs made per pair and input (fewer when stopped)
	for _, sd := range sel {
		res.SelectionRuns = min(res.SelectionRuns, sd.n[0], sd.n[1])
	}
	res.TotalRuns += done

	best, bestScore := Event{cand: -1}, math.Inf(-1)
	var bestPoints []Point
	for ci, cd := range c.Candidates {
		s := sel[ci]
		if s.n[0] == 0 || s.n[1] == 0 {
			continue
		}
		names := cd.Mech.Stats()
		ns := len(names)
		var cat []bool
		if cm, ok := cd.Mech.(Categorical); ok {
			cat = cm.Categorical()
		}
		for j := range names {
			if j < len(cat) && cat[j] {
				for a := range 2 {
					ev, sc, pts := bestSet(s.vals, s.n, ns, j, a, score)
					if sc > bestScore {
						bestScore = sc
						ev.Candidate, ev.Stat, ev.World, ev.stat, ev.cand = cd.Name, names[j], a, j, ci
						best, bestPoints = ev, pts
					}
				}
				continue
			}
			v := [2][]float64{}
			for w := range 2 {
				v[w] = make([]float64, s.n[w])
				for r := range s.n[w] {
					v[w][r] = s.vals[w][r*ns+j]
				}
				slices.Sort(v[w])
			}
			var pts []Point
			for _, th := range thresholds(v[0], v[1]) {
				k := [2]int{countGE(v[0], th), countGE(v[1], th)}
				for a := range 2 {
					b := 1 - a
					sc := score(k[a], s.n[a], k[b], s.n[b])
					if sc > bestScore {
						bestScore = sc
						best = Event{Candidate: cd.Name, Stat: names[j], Threshold: th, World: a, stat: j, cand: ci}
					}
				}
				pts = append(pts, Point{FPR: float64(k[1]) / float64(s.n[1]), FNR: 1 - float64(k[0])/float64(s.n[0])})
			}
			if best.cand == ci && best.stat == j && best.set == nil {
				bestPoints = pts
			}
		}
	}
	if best.cand < 0 {
		if done == 0 {
			return nil, fmt.Errorf("%w (selection ran no runs; raise --max-time or lower --runs)", ErrNoRuns)
		}
		return nil, fmt.Errorf("audit: every statistic was constant on the %d selection runs: no event distinguishes the streams (try a longer horizon)", done)
	}
	if best.World == 0 || best.set != nil { // bestSet orients its points itself
		res.SelectionPoints = bestPoints
	} else { // orient the points so that the event is the test for world A
		for _, p := range bestPoints {
			res.SelectionPoints = append(res.SelectionPoints, Point{FPR: 1 - p.FNR, FNR: 1 - p.FPR})
		}
	}
	res.Event = best

	// Phase 2: evaluation of the chosen event on fresh runs.
	mech := c.Candidates[best.cand].Mech
	var k, n [2]int
	ns := len(mech.Stats())
	edone := c.parallel(ctx, "evaluation", 2*c.Runs, workers, evalDeadline, func(i int, r *rand.Rand, out []float64) {
		st := make([]float64, ns)
		mech.Run(i%2, r, st)
		out[0] = 0
		if best.holds(st) {
			out[0] = 1
		}
	}, func(i int) (uint64, uint64) { return c.Seed, 2<<62 | uint64(i) }, func(i int, out []float64) {
		w := i % 2
		n[w]++
		k[w] += int(out[0])
	}, 1)
	res.TotalRuns += edone
	res.Stopped = done < total || edone < 2*c.Runs
	a, b := best.World, 1-best.World
	if n[a] == 0 || n[b] == 0 {
		return nil, fmt.Errorf("%w (evaluation ran %d runs)", ErrNoRuns, edone)
	}
	res.EvalRuns = min(n[0], n[1])
	res.KA, res.NA, res.KB, res.NB = k[a], n[a], k[b], n[b]
	if res.PALo, err = CPLower(k[a], n[a], gamma); err != nil {
		return nil, err
	}
	if res.PBHi, err = CPUpper(k[b], n[b], gamma); err != nil {
		return nil, err
	}
	res.CertifiedPoint = Point{FPR: res.PBHi, FNR: 1 - res.PALo}
	res.EmpiricalPoint = Point{FPR: float64(k[b]) / float64(n[b]), FNR: 1 - float64(k[a])/float64(n[a])}
	res.EpsilonLower = EpsilonLowerBound(res.PALo, res.PBHi, delta)
	if gdp {
		mu, err := MuLowerBound(res.CertifiedPoint.FPR, res.CertifiedPoint.FNR)
		if err != nil {
			return nil, err
		}
		res.MuLower = &mu
		res.Param, res.LowerBound, res.Certified = "mu", mu, *res.MuCertified
	} else {
		res.Param, res.LowerBound, res.Certified = "epsilon", res.EpsilonLower, res.EpsilonCertified
	}
	if res.Certified > 0 {
		res.Ratio = res.LowerBound / res.Certified
	} else if res.LowerBound > 0 {
		res.Ratio = math.Inf(1)
	}
	res.Violated = res.LowerBound > res.Certified
	res.Elapsed = time.Since(start).Seconds()
	return res, nil
}

func (c Config) check() error {
	if len(c.Candidates) == 0 {
		return errors.New("audit: no neighbouring pair to audit")
	}
	if c.Runs < 1 {
		return fmt.Errorf("audit: runs %d is outside the valid range [1, ∞)", c.Runs)
	}
	if c.Runs > 1<<40 {
		return fmt.Errorf("audit: runs %d is outside the valid range [1, 2^40]", c.Runs)
	}
	if !(c.Confidence > 0 && c.Confidence < 1) {
		return fmt.Errorf("audit: confidence %v is outside the valid range (0, 1)", c.Confidence)
	}
	// Selection keeps every statistic of its 2·Runs runs (8 bytes each).
	if mem := 16 * float64(c.Runs) * float64(maxStats(c.Candidates)); mem > maxSelectionBytes {
		return fmt.Errorf("audit: runs %d would keep %.3g GiB of selection statistics in memory; the valid range is [1, %d] for this mechanism",
			c.Runs, mem/(1<<30), int(maxSelectionBytes/(16*float64(max(1, maxStats(c.Candidates))))))
	}
	if c.Report.Certified.Notion == privacy.NotionNone || c.Report.Certified.Notion == "" {
		return fmt.Errorf("audit: %s states no privacy guarantee; there is nothing to audit", c.Mechanism)
	}
	if c.Report.Certified.Notion != privacy.NotionPure && !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("audit: delta %v is outside the valid range (0, 1)", c.Delta)
	}
	return nil
}

func maxStats(cs []Candidate) int {
	m := 0
	for _, c := range cs {
		m = max(m, len(c.Mech.Stats()))
	}
	return m
}

// thresholds returns the thresholds tried: every distinct value of the
// pooled sorted samples when there are few, else maxThresholds quantiles.
// The smallest value is left out: {statistic ≥ min} holds in every run and
// distinguishes nothing (its complement is the empty event).
func thresholds(a, b []float64) []float64 {
	if len(a)+len(b) == 0 {
		return nil
	}
	all := make([]float64, 0, len(a)+len(b))
	all = append(all, a...)
	all = append(all, b...)
	slices.Sort(all)
	all = slices.Compact(all)
	all = all[1:] // a constant statistic (one value) has no event left
	if len(all) <= maxThresholds {
		return all
	}
	out := make([]float64, 0, maxThresholds)
	for i := range maxThresholds {
		out = append(out, all[(i*(len(all)-1))/(maxThresholds-1)])
	}
	return slices.Compact(out)
}

// bestSet finds the best event {code ∈ S} for the categorical statistic j
// oriented towards world a: the codes are ranked by the smoothed likelihood
// ratio (k_a + ½)/(k_b + ½) · n_b/n_a on half of the selection runs, and the
// sets scored, on the other half, are the top-m codes for up to
// maxThresholds values of m. It also returns the (FPR, FNR) points of those
// sets on the scoring half, oriented for world a.
func bestSet(vals [2][]float64, n [2]int, ns, j, a int, score func(kA, nA, kB, nB int) float64) (Event, float64, []Point) {
	b := 1 - a
	// Ranking on the selection runs and scoring on the same runs would pick
	// sets that fit their noise (many codes are rare): the codes are ranked
	// on the even-numbered selection runs (k) and the sets are scored on the
	// odd-numbered ones (h).
	type cnt struct{ k, h [2]int }
	counts := map[float64]*cnt{}
	var nh [2]int
	for w := range 2 {
		for r := range n[w] {
			v := vals[w][r*ns+j]
			c := counts[v]
			if c == nil {
				c = &cnt{}
				counts[v] = c
			}
			if r%2 == 0 {
				c.k[w]++
			} else {
				c.h[w]++
				nh[w]++
			}
		}
	}
	if nh[0] == 0 || nh[1] == 0 {
		return Event{}, math.Inf(-1), nil
	}
	codes := make([]float64, 0, len(counts))
	for v := range counts {
		codes = append(codes, v)
	}
	ratio := func(v float64) float64 {
		c := counts[v]
		return (float64(c.k[a]) + 0.5) / (float64(c.k[b]) + 0.5) * float64(n[b]-nh[b]) / float64(n[a]-nh[a])
	}
	slices.SortFunc(codes, func(x, y float64) int {
		rx, ry := ratio(x), ratio(y)
		switch {
		case rx > ry:
			return -1
		case rx < ry:
			return 1
		case x < y: // deterministic order among ties
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	// Prefix sizes m = 1..len−1 (the full set is the trivial event), at
	// most maxThresholds of them, evenly spaced.
	var sizes []int
	if m := len(codes) - 1; m <= maxThresholds {
		for i := 1; i <= m; i++ {
			sizes = append(sizes, i)
		}
	} else {
		for i := range maxThresholds {
			sizes = append(sizes, 1+i*(m-1)/(maxThresholds-1))
		}
		sizes = slices.Compact(sizes)
	}
	best, bestScore := Event{}, math.Inf(-1)
	var pts []Point
	kA, kB, next := 0, 0, 0
	for _, m := range sizes {
		for ; next < m; next++ {
			c := counts[codes[next]]
			kA += c.h[a]
			kB += c.h[b]
		}
		if sc := score(kA, nh[a], kB, nh[b]); sc > bestScore {
			bestScore = sc
			set := make(map[float64]bool, m)
			for _, v := range codes[:m] {
				set[v] = true
			}
			best = Event{SetSize: m, set: set}
		}
		pts = append(pts, Point{FPR: float64(kB) / float64(nh[b]), FNR: 1 - float64(kA)/float64(nh[a])})
	}
	return best, bestScore, pts
}

// countGE counts the values ≥ th in sorted v.
func countGE(v []float64, th float64) int {
	return len(v) - sort.SearchFloat64s(v, th)
}

// chunk is the number of runs a worker takes at a time.
const chunk = 64

// parallel runs n runs (run i with the generator of seed(i)) over workers
// goroutines, in chunks, until done or the deadline or ctx, and then feeds
// the outputs of the longest completed prefix of runs, in order, to collect.
// It returns the length of that prefix: which runs count is decided by the
// clock only, never by their outcomes. The first chunk runs whatever the
// deadline (not when ctx is cancelled).
func (c Config) parallel(ctx context.Context, phase string, n, workers int, deadline time.Time,
	run func(i int, r *rand.Rand, out []float64), seed func(i int) (uint64, uint64),
	collect func(i int, out []float64), nstats int) int {
	nch := (n + chunk - 1) / chunk
	var mu sync.Mutex
	outs := map[int][]float64{} // completed chunks not yet collected
	var next, doneRuns atomic.Int64
	start := time.Now()
	stop := make(chan struct{})
	var progWG sync.WaitGroup
	if c.Progress != nil {
		progWG.Add(1)
		go func() {
			defer progWG.Done()
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
					c.Progress(Progress{Phase: phase, Done: int(doneRuns.Load()), Total: n, Elapsed: time.Since(start)})
				}
			}
		}()
	}
	// The collector feeds completed chunks to collect in order as soon as
	// the prefix allows, so memory holds only the chunks ahead of a gap.
	prefix, nextCollect := 0, 0
	drain := func() { // with mu held
		for {
			buf, ok := outs[nextCollect]
			if !ok {
				return
			}
			delete(outs, nextCollect)
			lo, hi := nextCollect*chunk, min(n, (nextCollect+1)*chunk)
			for i := lo; i < hi; i++ {
				collect(i, buf[(i-lo)*nstats:(i-lo+1)*nstats])
			}
			prefix = hi
			nextCollect++
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ch := int(next.Add(1)) - 1
				if ch >= nch || ctx.Err() != nil {
					return
				}
				// The first chunk always runs (unless cancelled), so a phase
				// has some runs however short the limit.
				if ch > 0 && !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				lo, hi := ch*chunk, min(n, (ch+1)*chunk)
				buf := make([]float64, (hi-lo)*nstats)
				for i := lo; i < hi; i++ {
					s1, s2 := seed(i)
					run(i, bandit.NewRand(s1, s2), buf[(i-lo)*nstats:(i-lo+1)*nstats])
				}
				mu.Lock()
				outs[ch] = buf
				drain()
				mu.Unlock()
				doneRuns.Add(int64(hi - lo))
			}
		}()
	}
	wg.Wait()
	close(stop)
	progWG.Wait()
	if c.Progress != nil {
		c.Progress(Progress{Phase: phase, Done: prefix, Total: n, Elapsed: time.Since(start)})
	}
	return prefix
}
