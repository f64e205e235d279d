package eval

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genR6 writes n events in R6A's format: article ids 100..100+pool-1, a
// pool of k articles per event that drifts every 50 events (fixed when
// drift is false), user and article features (1, five memberships summing
// to 1), the displayed article uniform over the pool and the click
// Bernoulli(0.05 + 0.5·⟨u∘a⟩ over the memberships).
func genR6(n, pool, k int, drift bool, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 6))
	memberships := func() []float64 {
		f := make([]float64, 6)
		f[0] = 1
		s := 0.0
		for j := 1; j < 6; j++ {
			f[j] = r.ExpFloat64()
			s += f[j]
		}
		for j := 1; j < 6; j++ {
			f[j] /= s
		}
		return f
	}
	art := make([][]float64, pool)
	for a := range art {
		art[a] = memberships()
	}
	feat := func(f []float64) string {
		var b strings.Builder
		for j, v := range f {
			fmt.Fprintf(&b, " %d:%.6f", j+1, v)
		}
		return b.String()
	}
	var b bytes.Buffer
	live := make([]int, k)
	for i := range live {
		live[i] = i
	}
	for i := range n {
		if drift && i%50 == 49 {
			live = live[1:]
			live = append(live, (live[len(live)-1]+1)%pool)
		}
		u := memberships()
		shown := live[r.IntN(k)]
		p := 0.05
		for j := 1; j < 6; j++ {
			p += 0.5 * u[j] * art[shown][j] * 5
		}
		click := 0
		if r.Float64() < p {
			click = 1
		}
		fmt.Fprintf(&b, "%d %d %d |user%s", 1241160900+i, 100+shown, click, feat(u))
		for _, a := range live {
			fmt.Fprintf(&b, " |%d%s", 100+a, feat(art[a]))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// With a fixed pool, ReplayR6 must equal Replay on the same events as a
// flat log with the R6 candidates: the same matches and clicks. This pins
// the parsing of features and pools and the mapping from the displayed
// article id to its candidate index.
func TestReplayR6EqualsFlatReplay(t *testing.T) {
	const n, k = 4000, 5
	data := genR6(n, k, k, false, 1)
	for _, spec := range []string{"linucb:alpha=0.5", "lints"} {
		got, err := ReplayR6(bytes.NewReader(data), "gen", spec, R6Options{Seed: 3, Horizon: n, Delay: 4})
		if err != nil {
			t.Fatal(err)
		}
		// The same events as a flat log.
		l := &Log{N: n, A: k, P: 1, Action: make([]int32, n), Reward: make([]float64, n), PScore: make([]float64, n)}
		cands := make([][][]float64, n)
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte{'\n'}) {
			var ev r6Event
			if err := ev.parse(line, 6); err != nil {
				t.Fatal(err)
			}
			cands[i] = make([][]float64, k)
			for a := range k {
				cands[i][a] = make([]float64, 6)
				R6Candidate(cands[i][a], ev.user, ev.feats[a*6:(a+1)*6])
				if ev.ids[a] == ev.shown {
					l.Action[i] = int32(a)
				}
			}
			l.Reward[i], l.PScore[i] = ev.click, 1.0/k
		}
		want, err := Replay(l, spec, ReplayOptions{Seed: 3, Horizon: n, Delay: 4, Dim: 6,
			Candidates: func(i int) [][]float64 { return cands[i] }})
		if err != nil {
			t.Fatal(err)
		}
		if got.Matches != want.Matches || got.Clicks != want.Clicks || got.Rounds != n {
			t.Errorf("%s: R6 replay %d matches, %v clicks, %d events; flat replay %d matches, %v clicks",
				spec, got.Matches, got.Clicks, got.Rounds, want.Matches, want.Clicks)
		}
		if !got.Uniform || got.PScoreLo != 1.0/k || got.PScoreHi != 1.0/k {
			t.Errorf("%s: pscore range [%v, %v], uniform %v; want 1/%d", spec, got.PScoreLo, got.PScoreHi, got.Uniform, k)
		}
	}
}

// With a drifting pool of 10 articles among 25, a policy matches each
// event with probability 1/10: the matches lie within 4 binomial s.d. of
// n/10, and the gzip file, the plain file and a directory of day files
// give identical results.
func TestReplayR6Files(t *testing.T) {
	const n, k = 6000, 10
	data := genR6(n, 25, k, true, 2)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	gzPath := filepath.Join(dir, "events.gz")
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	days := filepath.Join(dir, "days")
	os.Mkdir(days, 0o755)
	lines := bytes.SplitAfter(data, []byte{'\n'})
	half := bytes.Join(lines[:n/2], nil)
	rest := bytes.TrimSuffix(bytes.Join(lines[n/2:], nil), []byte{'\n'}) // no final newline
	os.WriteFile(filepath.Join(days, "ydata-fp-td-clicks-v1_0.20090501"), half, 0o644)
	os.WriteFile(filepath.Join(days, "ydata-fp-td-clicks-v1_0.20090502"), rest, 0o644)
	var first *ReplayResult
	for _, p := range []string{plain, gzPath, days} {
		res, err := ReplayR6File(p, "linucb", R6Options{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if first == nil {
			first = res
			mu, sd := float64(n)/k, math.Sqrt(float64(n)/k*(1-1.0/k))
			if m := float64(res.Matches); math.Abs(m-mu) > 4*sd {
				t.Errorf("%d matches of %d events, want %.0f ± %.0f", res.Matches, n, mu, 4*sd)
			}
			continue
		}
		if res.Matches != first.Matches || res.Clicks != first.Clicks || res.Rounds != first.Rounds {
			t.Errorf("%s: %d events, %d matches, %v clicks; plain file: %d, %d, %v", p, res.Rounds, res.Matches, res.Clicks,
				first.Rounds, first.Matches, first.Clicks)
		}
	}
	res, err := ReplayR6File(plain, "linucb", R6Options{MaxEvents: 100})
	if err != nil || res.Rounds != 100 {
		t.Errorf("MaxEvents 100: %v events, %v", res, err)
	}
}

// Malformed events are errors naming the line and what was wrong;
// K-armed policies are refused.
func TestReplayR6Errors(t *testing.T) {
	good := "1241160900 109 0 |user 1:1 2:0.5 |109 1:1 2:0.25 |110 1:1\n"
	cases := []struct{ name, in, want string }{
		{"click", "1241160900 109 2 |user 1:1 |109 1:1\n", "click"},
		{"not in pool", "1241160900 111 0 |user 1:1 |109 1:1 |110 1:1\n", "not in the pool"},
		{"feature index", "1241160900 109 0 |user 7:0.5 |109 1:1\n", "index in [1, 6]"},
		{"feature value", "1241160900 109 0 |user 1:1.5 |109 1:1\n", "value in [0, 1]"},
		{"nan", "1241160900 109 0 |user 1:NaN |109 1:1\n", "value in [0, 1]"},
		{"no user", "1241160900 109 0 1:1 |109 1:1\n", "|user"},
		{"duplicate", "1241160900 109 0 |user 1:1 |109 1:1 |109 1:1\n", "twice"},
		{"article id", "1241160900 109 0 |user 1:1 |abc 1:1\n", "|ARTICLE_ID"},
		{"short", "1241160900 109 0\n", "want TIMESTAMP"},
	}
	for _, c := range cases {
		_, err := ReplayR6(strings.NewReader(good+c.in), "log", "linucb", R6Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: error %v, want one naming line 2 and %q", c.name, err, c.want)
		}
	}
	if _, err := ReplayR6(strings.NewReader(good), "log", "ucb1", R6Options{}); err == nil || !strings.Contains(err.Error(), "K-armed") {
		t.Errorf("ucb1 on R6: %v, want a refusal", err)
	}
	if _, err := ReplayR6(strings.NewReader(""), "log", "linucb", R6Options{}); err == nil {
		t.Error("empty input: no error")
	}
	// A bare feature index (R6B) is the value 1.
	if _, err := ReplayR6(strings.NewReader("1 109 1 |user 1 3 |109 2 |110\n"), "log", "linucb", R6Options{}); err != nil {
		t.Errorf("bare feature indices: %v", err)
	}
}

// No input makes ReplayR6 panic or hang.
func FuzzReplayR6(f *testing.F) {
	f.Add([]byte("1241160900 109 0 |user 1:1 2:0.5 |109 1:1 2:0.25 |110 1:1\n"))
	f.Add(genR6(5, 4, 3, true, 9))
	f.Add([]byte("1 1 1 |user |1"))
	f.Add([]byte("1 1 1 |user 1:1e308 |1 |"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ReplayR6(bytes.NewReader(data), "fuzz", "linucb", R6Options{Horizon: 100})
		if err == nil && (res.Matches > res.Rounds || res.Clicks > float64(res.Matches)) {
			t.Fatalf("%d matches, %v clicks of %d events", res.Matches, res.Clicks, res.Rounds)
		}
	})
}
