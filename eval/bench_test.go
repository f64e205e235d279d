package eval

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// The benchmarks share one generated log: 1,000,000 rounds, 10 actions, 5
// context features, pi_e and qhat columns (about 250 MB of CSV), written
// once per process to a temporary directory.
//
//	go test ./eval -run '^$' -bench . -benchtime 1x
//
// Each benchmark reports peak_MB, the process's peak resident memory
// (VmHWM) so far; run one benchmark alone (-bench Pipeline) to read its
// own peak.
var bench struct {
	dirOnce sync.Once
	dir     string
	keep    bool // the folder is the user's (keepBenchDir): leave it
	dirErr  error
	log     *Log

	// files are the generated logs by name, each written on first use.
	mu    sync.Mutex
	files map[string]*benchFile
}

type benchFile struct {
	once sync.Once
	path string
	err  error
}

const benchN = 1_000_000

// keepBenchDir names a folder to write the generated logs to and keep
// (log.csv, log-noqhat.csv), e.g. to time the dpbandit command on them:
//
//	DPBANDIT_EVAL_BENCH_DIR=/tmp/evalbench go test ./eval -run '^$' -bench 'Pipeline' -benchtime 1x
const keepBenchDir = "DPBANDIT_EVAL_BENCH_DIR"

// benchWrite returns the path of the generated log name, writing it with
// s on first use.
func benchWrite(b *testing.B, name string, s synth) string {
	bench.dirOnce.Do(func() {
		if d := os.Getenv(keepBenchDir); d != "" {
			bench.dir, bench.keep = d, true
			bench.dirErr = os.MkdirAll(d, 0o755)
			return
		}
		bench.dir, bench.dirErr = os.MkdirTemp("", "eval-bench-")
	})
	if bench.dirErr != nil {
		b.Fatal(bench.dirErr)
	}
	bench.mu.Lock()
	if bench.files == nil {
		bench.files = map[string]*benchFile{}
	}
	f := bench.files[name]
	if f == nil {
		f = &benchFile{path: filepath.Join(bench.dir, name)}
		bench.files[name] = f
	}
	bench.mu.Unlock()
	f.once.Do(func() {
		w, err := os.Create(f.path)
		if err != nil {
			f.err = err
			return
		}
		defer w.Close()
		f.err = s.write(w)
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
	return f.path
}

// benchPath is the benchmark log: pi_e and qhat columns.
func benchPath(b *testing.B) string {
	return benchWrite(b, "log.csv", synth{N: benchN, A: 10, D: 5, Seed: 1, PiE: true, QHat: true})
}

// benchPathNoQHat is the same log without the qhat columns: what a user
// who fits the reward model has.
func benchPathNoQHat(b *testing.B) string {
	return benchWrite(b, "log-noqhat.csv", synth{N: benchN, A: 10, D: 5, Seed: 1, PiE: true})
}

func benchLog(b *testing.B) *Log {
	p := benchPath(b)
	if bench.log == nil {
		l, err := ReadFile(p, "csv")
		if err != nil {
			b.Fatal(err)
		}
		bench.log = l
	}
	return bench.log
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.dir != "" && !bench.keep {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// peakMB reads the process's peak resident set (VmHWM) in MB; 0 where
// /proc is unavailable.
func peakMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "VmHWM:" {
			kb, _ := strconv.ParseFloat(string(f[1]), 64)
			return kb / 1024
		}
	}
	return 0
}

func BenchmarkReadCSV(b *testing.B) {
	p := benchPath(b)
	st, _ := os.Stat(p)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadFile(p, "csv"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peakMB(), "peak_MB")
}

func BenchmarkTerms(b *testing.B) {
	l := benchLog(b)
	for b.Loop() {
		ComputeTerms(l, l.PiE, l.QHat)
	}
}

func BenchmarkContributions(b *testing.B) {
	l := benchLog(b)
	t := ComputeTerms(l, l.PiE, l.QHat)
	for _, e := range Estimators() {
		b.Run(string(e), func(b *testing.B) {
			for b.Loop() {
				if _, err := t.Contributions(e, DefaultSwitchTau); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBootstrap1000AllEstimators(b *testing.B) {
	l := benchLog(b)
	t := ComputeTerms(l, l.PiE, l.QHat)
	var stats []Ratio
	var wr []float64
	for _, e := range Estimators() {
		c, _ := t.Contributions(e, DefaultSwitchTau)
		if e == IPS {
			wr = c
		}
		if e == SNIPS {
			stats = append(stats, Ratio{Num: wr, Den: t.W})
		} else {
			stats = append(stats, Ratio{Num: c})
		}
	}
	b.ResetTimer()
	for b.Loop() {
		Bootstrap(stats, 1000, 1)
	}
}

func BenchmarkRewardModel(b *testing.B) {
	l := benchLog(b)
	for b.Loop() {
		if _, _, err := FitRewardModel(l, ModelOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peakMB(), "peak_MB")
}

// BenchmarkPipeline is the whole of `dpbandit evaluate --target columns
// --bootstrap 1000`: read the CSV, every estimator with q̂ from the log's
// columns, normal and bootstrap intervals.
func BenchmarkPipeline(b *testing.B) {
	p := benchPath(b)
	for b.Loop() {
		l, err := ReadFile(p, "csv")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Evaluate(l, l.PiE, Options{Bootstrap: 1000, Seed: 1, SwitchTau: DefaultSwitchTau}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peakMB(), "peak_MB")
}

// BenchmarkPipelineFittedModel is the pipeline with the cross-fitted
// reward model, on the log without qhat columns (a user fits the model
// when the log has no predictions).
func BenchmarkPipelineFittedModel(b *testing.B) {
	p := benchPathNoQHat(b)
	for b.Loop() {
		l, err := ReadFile(p, "csv")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Evaluate(l, l.PiE, Options{Bootstrap: 1000, Seed: 1, SwitchTau: DefaultSwitchTau}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peakMB(), "peak_MB")
}

// BenchmarkReplayLinUCB replays the 1,000,000-round log with a LinUCB
// target (Li et al. 2011's replay): disjoint=1 is Li et al. 2010's model,
// one ridge model per action on the 5 context features; shared is the
// same model written as one shared model on the 50-dimensional encoding
// e_a ⊗ x (same choices, TestReplayDisjointEqualsShared), 100 times the
// arithmetic per round.
func BenchmarkReplayLinUCB(b *testing.B) {
	l := benchLog(b)
	for _, c := range []struct{ name, spec string }{{"disjoint=1", "linucb:disjoint=1"}, {"shared", "linucb"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := Replay(l, c.spec, ReplayOptions{Horizon: l.N, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Matches), "matches")
			}
		})
	}
}
