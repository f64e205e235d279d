package eval

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpbandit/dpbandit/ctxenv"
)

// obdDir returns the sample's directory for a behaviour policy (random or
// bts), or skips the test when the data is absent.
func obdDir(t *testing.T, policy string) string {
	t.Helper()
	root, err := ctxenv.DataDir()
	if err != nil {
		t.Skipf("Open Bandit Dataset sample absent: %v", err)
	}
	dir := filepath.Join(root, "open-bandit-dataset-sample", policy)
	if _, err := os.Stat(filepath.Join(dir, "men", "men.csv")); err != nil {
		t.Skipf("Open Bandit Dataset sample absent: %s", dir)
	}
	return dir
}

// The reader keeps every row, maps the 1-based positions to 0..2, reads the
// propensities (constant 1/items for the random logger, in (0, 1] for BTS)
// and builds the user context (one-hot user features + affinities).
func TestReadOBD(t *testing.T) {
	for _, c := range []struct {
		policy, campaign string
		items            int
		clicks           float64
	}{{"random", "men", 34, 46}, {"random", "women", 46, 46}, {"bts", "men", 34, 69}, {"bts", "women", 46, 46}} {
		dir := obdDir(t, c.policy)
		l, err := ReadOBD(dir, c.campaign)
		if err != nil {
			t.Fatal(err)
		}
		if l.N != 10000 || l.A != c.items || l.P != 3 {
			t.Fatalf("%s/%s: N=%d A=%d P=%d", c.policy, c.campaign, l.N, l.A, l.P)
		}
		var clicks float64
		var pcount [3]int
		lo, hi := 1.0, 0.0
		for i := range l.N {
			clicks += l.Reward[i]
			pcount[l.Pos(i)]++
			lo, hi = min(lo, l.PScore[i]), max(hi, l.PScore[i])
			if i > 0 && l.Timestamp[i] < l.Timestamp[i-1] {
				t.Fatalf("%s/%s: round %d's timestamp precedes the previous one", c.policy, c.campaign, i)
			}
		}
		if clicks != c.clicks {
			t.Errorf("%s/%s: %v clicks, want %v", c.policy, c.campaign, clicks, c.clicks)
		}
		for p, k := range pcount {
			if k < 3000 {
				t.Errorf("%s/%s: position %d has %d rounds", c.policy, c.campaign, p, k)
			}
		}
		if c.policy == "random" && (math.Abs(lo-1/float64(c.items)) > 1e-12 || math.Abs(hi-1/float64(c.items)) > 1e-12) {
			t.Errorf("%s/%s: pscore in [%v, %v], want 1/%d", c.policy, c.campaign, lo, hi, c.items)
		}
		if !(lo > 0 && hi <= 1) {
			t.Errorf("%s/%s: pscore in [%v, %v]", c.policy, c.campaign, lo, hi)
		}
		// Four one-hot blocks (one 1 each) and the affinities.
		if l.D < 4+c.items {
			t.Fatalf("%s/%s: D = %d", c.policy, c.campaign, l.D)
		}
		var ones float64
		for _, v := range l.Context[:l.D-c.items] {
			ones += v
		}
		if ones != 4 {
			t.Errorf("%s/%s: first round's one-hot blocks sum to %v, want 4", c.policy, c.campaign, ones)
		}
		t.Logf("%s/%s: D = %d, pscore in [%.3g, %.3g], CTR %.4f", c.policy, c.campaign, l.D, lo, hi, clicks/float64(l.N))
		items, err := ReadOBDItems(dir, c.campaign)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != c.items {
			t.Fatalf("%d item vectors", len(items))
		}
		for j, x := range items {
			var s float64
			for _, v := range x {
				s += v * v
			}
			if s > 1+1e-12 {
				t.Errorf("item %d has norm² %v", j, s)
			}
		}
	}
	// The campaign directory itself is accepted too.
	if _, err := ReadOBD(filepath.Join(obdDir(t, "random"), "men"), "men"); err != nil {
		t.Error(err)
	}
	if _, err := ReadOBD(t.TempDir(), "men"); err == nil {
		t.Error("a directory without the log: no error")
	}
	if _, err := ReadOBD(t.TempDir(), "kids"); err == nil {
		t.Error("unknown campaign: no error")
	}
}

// OBD acceptance: Bernoulli TS's value, estimated on the uniform-random log
// with BTS's context-free distribution π(item | position) taken from the
// BTS log, against BTS's on-policy CTR (its own log's mean click). IPS,
// SNIPS and DR must bracket the on-policy CTR in both 95% intervals.
//
// π(item | position) is the empirical frequency of the item at that
// position in the BTS log (ContextFreePolicy): the unbiased estimate of the
// time-averaged BTS distribution, whose value is the on-policy CTR when
// click rates do not drift. The mean-propensity estimate
// (ContextFreePolicyFromPScores) is size-biased; its numbers are logged
// for comparison but not checked.
func TestOBDAcceptance(t *testing.T) {
	rdir, bdir := obdDir(t, "random"), obdDir(t, "bts")
	for _, campaign := range []string{"men", "women"} {
		rl, err := ReadOBD(rdir, campaign)
		if err != nil {
			t.Fatal(err)
		}
		bl, err := ReadOBD(bdir, campaign)
		if err != nil {
			t.Fatal(err)
		}
		onPolicy := mean(bl.Reward)
		onCI := NormalInterval(bl.Reward)
		t.Logf("%s: BTS on-policy CTR %.5f (95%% normal [%.5f, %.5f], n=%d); random logger's CTR %.5f",
			campaign, onPolicy, onCI.Lo, onCI.Hi, bl.N, mean(rl.Reward))
		for _, m := range []struct {
			name  string
			check bool
			fn    func(*Log, int) (*ActionDist, error)
		}{{"frequency", true, ContextFreePolicy}, {"mean pscore", false, ContextFreePolicyFromPScores}} {
			target, err := m.fn(bl, rl.A)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Evaluate(rl, target, Options{Estimators: []Estimator{IPS, SNIPS, DR}, Bootstrap: 2000, Seed: 1,
				Model: ModelOptions{Folds: 3, Seed: 1}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				in := func(iv Interval) bool { return iv.Lo <= onPolicy && onPolicy <= iv.Hi }
				t.Logf("%s, π from %s: %-5s %.5f normal [%.5f, %.5f] bootstrap [%.5f, %.5f] ESS %.0f; brackets %.5f: %v/%v",
					campaign, m.name, r.Estimator, r.Estimate, r.Normal.Lo, r.Normal.Hi, r.Bootstrap.Lo, r.Bootstrap.Hi, r.ESS,
					onPolicy, in(r.Normal), in(r.Bootstrap))
				if m.check && !(in(r.Normal) && in(r.Bootstrap)) {
					t.Errorf("%s: %s does not bracket the BTS on-policy CTR %.5f: estimate %.5f, normal [%.5f, %.5f], bootstrap [%.5f, %.5f]",
						campaign, r.Estimator, onPolicy, r.Estimate, r.Normal.Lo, r.Normal.Hi, r.Bootstrap.Lo, r.Bootstrap.Hi)
				}
			}
		}
	}
}
