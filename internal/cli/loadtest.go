package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/dpbandit/dpbandit/client"
)

type loadtestCmd struct {
	URL         string        `help:"Base URL of the service (default: ${default})." default:"http://127.0.0.1:8080" placeholder:"URL"`
	Key         string        `help:"API key: the admin key, or a client key scoped to the experiment; from the environment when not given." env:"DPBANDIT_KEY" placeholder:"KEY"`
	Experiment  string        `help:"Experiment id to load." required:"" placeholder:"ID"`
	Duration    time.Duration `help:"Measured time per mode, 100ms..1h (default: ${default})." default:"10s" placeholder:"D"`
	Concurrency int           `help:"Concurrent workers, each with one request in flight, 1..4096 (default: ${default})." default:"32" placeholder:"N"`
	Mode        string        `help:"What to measure: ${enum}; 'all' runs decide, reward and decide+reward in turn." enum:"decide,reward,decide+reward,all" default:"all"`
	RewardRange string        `name:"reward-range" help:"lo,hi of the rewards to post (default: the experiment's reward_range, read with GET; needed for a client key that cannot read it)." placeholder:"LO,HI"`
	Baseline    bool          `help:"Also measure a bare net/http handler in this process with the same generator, and print decide throughput as a fraction of it."`
	AllowRemote bool          `name:"allow-remote" help:"Allow a URL that is not on loopback. The generator is meant for a service on this machine."`
	JSON        bool          `help:"Print the results as JSON."`
}

func (loadtestCmd) Help() string {
	return `Runs a bounded load against a dpbandit service on this machine and prints, for each mode,
the requests that succeeded, the errors (by HTTP status), throughput and latency
percentiles (p50, p95, p99, max; log-linear histogram with ≤1.6% relative error).

Modes:
  decide         POST /v1/experiments/ID/decisions, one decision per request.
  reward         POST /v1/experiments/ID/rewards, one reward per request, for decisions
                 made beforehand with batched decide requests (not timed).
  decide+reward  one decision, then its reward; the latency is the pair's.
  all            the three above in turn, each for --duration.

Rewards are drawn per arm: arm k of K gets hi with probability (k+1)/(K+1), else lo,
so the policy has something to learn. Each worker keeps one request in flight; the
HTTP client keeps its connections alive.

Example:

  dpbandit loadtest --url http://127.0.0.1:8080 --key $DPBANDIT_ADMIN_KEY \
      --experiment exp_1 --duration 10s --concurrency 32 --mode all --baseline`
}

// A loadtest target: what one worker calls. Implemented over package client.
type ltTarget struct {
	c   *client.Client
	exp string
}

func (c *loadtestCmd) validate() error {
	if c.Key == "" {
		return badInput("--key is required (or set DPBANDIT_KEY): the admin key or a client key for --experiment")
	}
	if c.Experiment == "" {
		return badInput("--experiment is required: the id of an existing experiment")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badInput("--url %q must be an absolute http(s) URL such as http://127.0.0.1:8080", c.URL)
	}
	if !c.AllowRemote && !isLoopback(u.Hostname()) {
		return badInput("--url %q is not on loopback (127.0.0.1, ::1 or localhost); pass --allow-remote to load another machine", c.URL)
	}
	if c.Duration < 100*time.Millisecond || c.Duration > time.Hour {
		return badInput("--duration %v is outside its valid range [100ms, 1h]", c.Duration)
	}
	if c.Concurrency < 1 || c.Concurrency > 4096 {
		return badInput("--concurrency %d is outside its valid range [1, 4096]", c.Concurrency)
	}
	if c.RewardRange != "" {
		if _, err := parseRange(c.RewardRange); err != nil {
			return badInput("--reward-range %q: %v", c.RewardRange, err)
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func parseRange(s string) ([2]float64, error) {
	lo, hi, ok := strings.Cut(s, ",")
	if !ok {
		return [2]float64{}, errors.New("want lo,hi, e.g. 0,1")
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err1 != nil || err2 != nil || !(a < b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return [2]float64{}, errors.New("want two finite numbers lo < hi, e.g. 0,1")
	}
	return [2]float64{a, b}, nil
}

// ltResult is one measured mode.
type ltResult struct {
	Mode           string         `json:"mode"`
	Requests       uint64         `json:"requests"` // successful operations (pairs for decide+reward)
	Errors         uint64         `json:"errors"`
	ErrorsByStatus map[string]int `json:"errors_by_status,omitempty"` // "409", "network", ...
	FirstError     string         `json:"first_error,omitempty"`
	Seconds        float64        `json:"seconds"`
	PerSecond      float64        `json:"per_second"`
	LatencyMS      ltLatency      `json:"latency_ms"`
}

type ltLatency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

type ltReport struct {
	URL         string     `json:"url"`
	Experiment  string     `json:"experiment"`
	Concurrency int        `json:"concurrency"`
	Duration    string     `json:"duration"`
	GOMAXPROCS  int        `json:"client_gomaxprocs"`
	Results     []ltResult `json:"results"`
	Baseline    *ltResult  `json:"baseline,omitempty"`
	// DecideVsBaseline is decide throughput / bare net/http throughput.
	DecideVsBaseline *float64 `json:"decide_vs_baseline,omitempty"`
}

func (c *loadtestCmd) Run(g *Globals) error {
	if err := c.validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cl, err := newLoadClient(c.URL, c.Key, c.Concurrency)
	if err != nil {
		return badInput("%v", err)
	}
	tgt := &ltTarget{c: cl, exp: c.Experiment}

	// The experiment's arms and reward range, for realistic rewards.
	arms, rng := []string(nil), [2]float64{0, 1}
	if e, err := cl.GetExperiment(ctx, c.Experiment); err == nil {
		arms = e.Arms
		if e.RewardRange[0] < e.RewardRange[1] {
			rng = e.RewardRange
		}
	} else if client.StatusOf(err) != http.StatusForbidden {
		return fmt.Errorf("loadtest: reading experiment %s: %w", c.Experiment, err)
	}
	if c.RewardRange != "" {
		rng, _ = parseRange(c.RewardRange)
	}
	rewardFor := func(r *mrand.Rand, arm string) float64 {
		k, n := slices.Index(arms, arm), len(arms)
		p := 0.5
		if k >= 0 && n > 0 {
			p = float64(k+1) / float64(n+1)
		}
		if r.Float64() < p {
			return rng[1]
		}
		return rng[0]
	}

	// One decision first: a wrong key, experiment or stopped budget fails
	// here with the service's message instead of as a million errors.
	if _, err := cl.Decide(ctx, c.Experiment, client.DecideRequest{}); err != nil {
		return fmt.Errorf("loadtest: the first decision failed: %w", err)
	}

	modes := []string{c.Mode}
	if c.Mode == "all" {
		modes = []string{"decide", "reward", "decide+reward"}
	}
	rep := ltReport{URL: c.URL, Experiment: c.Experiment, Concurrency: c.Concurrency, Duration: c.Duration.String(),
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if !c.JSON {
		fmt.Fprintf(g.Stderr, "loadtest: %s experiment %s, %d workers, %v per mode\n", c.URL, c.Experiment, c.Concurrency, c.Duration)
	}
	for _, m := range modes {
		if ctx.Err() != nil {
			break
		}
		var r ltResult
		switch m {
		case "decide":
			r = runPhase(ctx, "decide", c.Concurrency, c.Duration, func(ctx context.Context, _ *mrand.Rand) error {
				_, err := tgt.c.Decide(ctx, tgt.exp, client.DecideRequest{})
				return err
			})
		case "reward":
			r, err = runRewardPhase(ctx, tgt, c.Concurrency, c.Duration, rewardFor)
			if err != nil {
				return err
			}
		case "decide+reward":
			r = runPhase(ctx, "decide+reward", c.Concurrency, c.Duration, func(ctx context.Context, rnd *mrand.Rand) error {
				d, err := tgt.c.Decide(ctx, tgt.exp, client.DecideRequest{})
				if err != nil {
					return err
				}
				return tgt.c.Reward(ctx, tgt.exp, d.EventID, rewardFor(rnd, d.Arm))
			})
		}
		rep.Results = append(rep.Results, r)
		if !c.JSON {
			fmt.Fprintf(g.Stderr, "loadtest: %s: %d ok, %d errors, %.0f/s\n", r.Mode, r.Requests, r.Errors, r.PerSecond)
		}
	}
	if c.Baseline && ctx.Err() == nil {
		b, err := runBaseline(ctx, c.Concurrency, c.Duration)
		if err != nil {
			return err
		}
		rep.Baseline = &b
		for _, r := range rep.Results {
			if r.Mode == "decide" && b.PerSecond > 0 {
				x := r.PerSecond / b.PerSecond
				rep.DecideVsBaseline = &x
			}
		}
	}
	if c.JSON {
		if err := writeJSON(g.Stdout, rep); err != nil {
			return err
		}
	} else {
		printLoadReport(g.Stdout, rep)
	}
	if ctx.Err() != nil {
		return errors.New("loadtest: interrupted; the results above are partial")
	}
	// Errors make the run fail (exit 1): a throughput with errors is not a
	// measurement of the service.
	for _, r := range rep.Results {
		if r.Errors > 0 {
			return fmt.Errorf("loadtest: %d of %d %s requests failed; first error: %s", r.Errors, r.Errors+r.Requests, r.Mode, r.FirstError)
		}
	}
	return nil
}

// newLoadClient makes a client whose connection pool holds a connection per
// worker, so that no request waits for a connection or opens a new one.
func newLoadClient(base, key string, conc int) (*client.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conc + 16
	tr.MaxIdleConnsPerHost = conc + 16
	tr.MaxConnsPerHost = 0
	tr.DisableCompression = true
	return client.New(base, key, client.WithHTTPClient(&http.Client{Transport: tr, Timeout: 30 * time.Second}),
		client.WithUserAgent("dpbandit-loadtest"))
}

// ltWorkerStats is what one worker gathers; merged after the phase.
type ltWorkerStats struct {
	hist   ltHist
	errs   map[string]int
	nerr   uint64
	first  string
	firstT time.Time
}

func (s *ltWorkerStats) fail(err error) {
	s.nerr++
	key := "network"
	if st := client.StatusOf(err); st != 0 {
		key = strconv.Itoa(st)
	} else if errors.Is(err, context.DeadlineExceeded) {
		key = "timeout"
	}
	if s.errs == nil {
		s.errs = map[string]int{}
	}
	s.errs[key]++
	if s.first == "" {
		s.first, s.firstT = err.Error(), time.Now()
	}
}

// runPhase runs op in conc workers until d has passed (or ctx ends) and
// returns the merged result: the latencies of the ops that succeeded, and
// the errors of the others.
func runPhase(ctx context.Context, mode string, conc int, d time.Duration,
	op func(ctx context.Context, r *mrand.Rand) error) ltResult {
	stats := make([]ltWorkerStats, conc)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range conc {
		wg.Go(func() {
			s := &stats[w]
			rnd := mrand.New(mrand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t0 := time.Now()
				err := op(ctx, rnd)
				switch {
				case err == nil:
					s.hist.record(time.Since(t0))
				case ctx.Err() == nil:
					s.fail(err)
				}
			}
		})
	}
	wg.Wait()
	return mergeStats(mode, stats, time.Since(start))
}

// runRewardPhase measures rewards only: it makes decisions beforehand with
// batched decide requests (untimed), then lets the workers post their rewards
// until d of reward time has passed, in chunks that double in size.
func runRewardPhase(ctx context.Context, tgt *ltTarget, conc int, d time.Duration,
	rewardFor func(*mrand.Rand, string) float64) (ltResult, error) {
	stats := make([]ltWorkerStats, conc)
	var active time.Duration
	chunk := max(conc*256, 4096)
	for active < d && ctx.Err() == nil {
		events, err := predecide(ctx, tgt, chunk, conc)
		if err != nil {
			return ltResult{}, fmt.Errorf("loadtest: making decisions for the reward phase: %w", err)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(d - active)
		for w := range conc {
			wg.Go(func() {
				s := &stats[w]
				rnd := mrand.New(mrand.NewPCG(uint64(w), uint64(start.UnixNano())))
				for ctx.Err() == nil && time.Now().Before(deadline) {
					i := next.Add(1) - 1
					if i >= int64(len(events)) {
						return
					}
					ev := events[i]
					t0 := time.Now()
					err := tgt.c.Reward(ctx, tgt.exp, ev.EventID, rewardFor(rnd, ev.Arm))
					if err != nil {
						if ctx.Err() == nil {
							s.fail(err)
						}
						continue
					}
					s.hist.record(time.Since(t0))
				}
			})
		}
		wg.Wait()
		active += time.Since(start)
		chunk = min(chunk*2, 1<<18)
	}
	return mergeStats("reward", stats, active), nil
}

// predecide makes n decisions with batched requests from conc goroutines.
func predecide(ctx context.Context, tgt *ltTarget, n, conc int) ([]client.Decision, error) {
	const batch = 500
	var mu sync.Mutex
	out := make([]client.Decision, 0, n)
	var firstErr error
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range min(conc, 8) {
		wg.Go(func() {
			for {
				k := min(int64(batch), left.Add(-batch)+batch)
				if k <= 0 {
					return
				}
				ds, err := tgt.c.DecideBatch(ctx, tgt.exp, int(k))
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				out = append(out, ds...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(out) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func mergeStats(mode string, stats []ltWorkerStats, elapsed time.Duration) ltResult {
	var h ltHist
	r := ltResult{Mode: mode, Seconds: elapsed.Seconds()}
	var firstT time.Time
	for i := range stats {
		s := &stats[i]
		h.merge(&s.hist)
		r.Errors += s.nerr
		for k, v := range s.errs {
			if r.ErrorsByStatus == nil {
				r.ErrorsByStatus = map[string]int{}
			}
			r.ErrorsByStatus[k] += v
		}
		if s.first != "" && (firstT.IsZero() || s.firstT.Before(firstT)) {
			r.FirstError, firstT = s.first, s.firstT
		}
	}
	r.Requests = h.n
	if elapsed > 0 {
		r.PerSecond = float64(h.n) / elapsed.Seconds()
	}
	ms := func(ns float64) float64 { return math.Round(ns/1e6*1000) / 1000 }
	if h.n > 0 {
		r.LatencyMS = ltLatency{P50: ms(h.quantile(0.50)), P95: ms(h.quantile(0.95)), P99: ms(h.quantile(0.99)),
			Max: ms(float64(h.max)), Mean: ms(float64(h.sum) / float64(h.n))}
	}
	return r
}

// runBaseline measures a bare net/http handler on loopback in this process,
// answering a constant decision, with the same generator.
func runBaseline(ctx context.Context, conc int, d time.Duration) (ltResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ltResult{}, fmt.Errorf("loadtest: baseline listener: %w", err)
	}
	body := []byte(`{"event_id":"ev_baseline","arm":"a"}` + "\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cl, err := newLoadClient("http://"+ln.Addr().String(), "baseline", conc)
	if err != nil {
		return ltResult{}, err
	}
	r := runPhase(ctx, "bare net/http", conc, d, func(ctx context.Context, _ *mrand.Rand) error {
		_, err := cl.Decide(ctx, "baseline", client.DecideRequest{})
		return err
	})
	return r, nil
}

func printLoadReport(w io.Writer, rep ltReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tok\terrors\tper second\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
	row := func(r ltResult) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t\n", r.Mode, r.Requests, r.Errors, r.PerSecond,
			fmtMS(r.LatencyMS.P50, r.Requests), fmtMS(r.LatencyMS.P95, r.Requests), fmtMS(r.LatencyMS.P99, r.Requests),
			fmtMS(r.LatencyMS.Max, r.Requests))
	}
	for _, r := range rep.Results {
		row(r)
	}
	if rep.Baseline != nil {
		row(*rep.Baseline)
	}
	tw.Flush()
	for _, r := range rep.Results {
		if r.Errors > 0 {
			keys := make([]string, 0, len(r.ErrorsByStatus))
			for k := range r.ErrorsByStatus {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = fmt.Sprintf("%s×%d", k, r.ErrorsByStatus[k])
			}
			fmt.Fprintf(w, "%s errors: %s; first: %s\n", r.Mode, strings.Join(parts, ", "), r.FirstError)
		}
	}
	if rep.DecideVsBaseline != nil {
		fmt.Fprintf(w, "decide throughput is %.0f%% of the bare net/http handler's (same generator, same run)\n", 100**rep.DecideVsBaseline)
	}
	fmt.Fprintf(w, "%d workers, one request in flight each; the reward mode's decisions were made beforehand in batches (untimed)\n", rep.Concurrency)
}

func fmtMS(v float64, n uint64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// ltHist is a log-linear latency histogram in nanoseconds: exact below 128
// ns, then 64 buckets per power of two (relative error ≤ 1/64). Fixed size,
// so a long run uses bounded memory.
type ltHist struct {
	counts   [64 * 64]uint64
	n        uint64
	sum, max int64
}

func ltBucket(v uint64) int {
	if v < 128 {
		return int(v)
	}
	s := bits.Len64(v) - 7
	return (s+1)*64 + int(v>>uint(s)) - 64
}

// ltLower is the smallest value in bucket i; the bucket holds
// [ltLower(i), ltLower(i+1)).
func ltLower(i int) uint64 {
	if i < 128 {
		return uint64(i)
	}
	s := i/64 - 1
	return uint64(i%64+64) << uint(s)
}

func (h *ltHist) record(d time.Duration) {
	v := max(int64(d), 0)
	i := min(ltBucket(uint64(v)), len(h.counts)-1)
	h.counts[i]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

func (h *ltHist) merge(o *ltHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the q-quantile (midpoint of its bucket).
func (h *ltHist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			lo, hi := ltLower(i), ltLower(i+1)
			v := float64(lo) + float64(hi-lo-1)/2
			return math.Min(v, float64(h.max))
		}
	}
	return float64(h.max)
}
