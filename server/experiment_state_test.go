package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/store"
)

// Tests of an experiment's own bookkeeping (server/experiment.go): what it
// restores, counts, reports and sizes. Each pins a fact that a plausible
// one-character slip gets wrong; docs/mutation-survivors.md lists the
// gremlins mutants each one was written for.

// TestRestoreRefusesEmptyState: every stored state carries both the policy's
// state and the engine's (the first is written at creation). A record with
// either blob empty is damaged, and loading it as fresh would also start a
// fresh privacy ledger, forgetting the budget already spent: it must be
// listed as unavailable, not served, while an intact experiment beside it
// keeps serving.
func TestRestoreRefusesEmptyState(t *testing.T) {
	ts := newTS(t)
	spec := `{"name":"%s","arms":["a","b"],"policy":"ts-gaussian","horizon":1000,"budget":{"mu":1,"delta":1e-6}}`
	good := ts.create(fmt.Sprintf(spec, "good"))
	noPolicy := ts.create(fmt.Sprintf(spec, "no-policy"))
	noEngine := ts.create(fmt.Sprintf(spec, "no-engine"))
	for _, id := range []string{good, noPolicy, noEngine} {
		if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", ``); code != 200 {
			t.Fatalf("decision on %s: %d %v", id, code, m)
		}
	}
	ts.close()
	st, err := openSQLite(ts.path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	states := map[string]store.State{}
	for id, blank := range map[string]func(*store.State){
		noPolicy: func(s *store.State) { s.Policy = nil },
		noEngine: func(s *store.State) { s.Engine = nil },
	} {
		s, err := st.LoadState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Policy) == 0 || len(s.Engine) == 0 {
			t.Fatalf("the engine wrote a state with an empty blob: policy %d bytes, engine %d bytes", len(s.Policy), len(s.Engine))
		}
		blank(&s)
		s.Version++
		states[id] = s
	}
	if err := st.Commit(ctx, &store.Batch{States: states}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ts.open()
	if code, m := ts.admin("POST", "/v1/experiments/"+good+"/decisions", ``); code != 200 {
		t.Fatalf("the intact experiment: %d %v", code, m)
	}
	for _, id := range []string{noPolicy, noEngine} {
		code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", ``)
		if c, _ := errOf(m); code != 503 || c != "experiment_unavailable" {
			t.Errorf("%s with an empty blob: %d %v, want 503 experiment_unavailable", id, code, m)
		}
	}
	_, m := ts.admin("GET", "/v1/experiments", "")
	damaged := 0
	for _, e := range m["experiments"].([]any) {
		e := e.(map[string]any)
		if r, _ := e["reason"].(string); e["status"] == "unavailable" && strings.Contains(r, "damaged") {
			damaged++
		}
	}
	if damaged != 2 {
		t.Errorf("%d experiments listed as unavailable with a damaged state, want 2: %v", damaged, m)
	}
}

// TestArmStatsSurviveRestart: the per-arm counts of decisions and rewards
// and the per-arm reward sums the admin view reports equal the ones
// recorded from the responses, and a restart restores them exactly.
func TestArmStatsSurviveRestart(t *testing.T) {
	ts := newTS(t)
	arms := []string{"a", "b", "c"}
	id := ts.create(`{"name":"stats","arms":["a","b","c"],"policy":"ucb1","horizon":100,"budget":null}`)
	path := "/v1/experiments/" + id
	var dec, rew [3]int64
	var sum [3]float64
	const n = 30
	for i := range n {
		ev := fmt.Sprint("e", i)
		code, d := ts.admin("POST", path+"/decisions", `{"event_id":"`+ev+`"}`)
		if code != 200 {
			t.Fatalf("decision %d: %d %v", i, code, d)
		}
		arm := -1
		for j, a := range arms {
			if d["arm"] == a {
				arm = j
			}
		}
		if arm < 0 {
			t.Fatalf("decision %d names no arm: %v", i, d)
		}
		dec[arm]++
		if i%4 == 3 {
			continue // some decisions get no reward
		}
		v := 0.125 * float64(i%7) // exact in binary: sums are exact
		if code, m := ts.admin("POST", path+"/rewards", fmt.Sprintf(`{"event_id":%q,"reward":%v}`, ev, v)); code != 202 {
			t.Fatalf("reward %d: %d %v", i, code, m)
		}
		rew[arm]++
		sum[arm] += v
	}
	var total int64
	for _, r := range rew {
		total += r
	}
	check := func(when string) {
		t.Helper()
		var m map[string]any
		for deadline := time.Now().Add(10 * time.Second); ; {
			_, m = ts.admin("GET", path, "")
			in, _ := m["internal"].(map[string]any)
			if got, _ := in["rewards"].(float64); int64(got) == total || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		ad, _ := m["arm_decisions"].([]any)
		in, _ := m["internal"].(map[string]any)
		ia, _ := in["arms"].([]any)
		if len(ad) != 3 || len(ia) != 3 {
			t.Fatalf("%s: view has %d arm_decisions and %d internal arms, want 3: %v", when, len(ad), len(ia), m)
		}
		for j := range arms {
			a := ia[j].(map[string]any)
			if ad[j].(float64) != float64(dec[j]) || a["rewards"].(float64) != float64(rew[j]) || a["reward_sum"].(float64) != sum[j] {
				t.Errorf("%s: arm %s: decisions %v rewards %v sum %v, want %d %d %v",
					when, arms[j], ad[j], a["rewards"], a["reward_sum"], dec[j], rew[j], sum[j])
			}
		}
	}
	check("before the restart")
	ts.restart()
	check("after the restart")
}

// TestStateVersionCountsCommits: the stored state's Version counts the
// commits that wrote it (store.State): 1 or more after the creation and
// strictly larger after later commits. Durable operations (stop, archive)
// wait until the version they need is durable, so a version that went
// backwards would make them fail.
func TestStateVersionCountsCommits(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"v","arms":["a","b"],"policy":"ucb1","horizon":100,"budget":null}`)
	version := func() int64 {
		t.Helper()
		ts.close()
		st, err := openSQLite(ts.path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.LoadState(context.Background(), id)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		ts.open()
		return s.Version
	}
	v1 := version()
	if v1 < 1 {
		t.Fatalf("state version after the creation = %d, want ≥ 1", v1)
	}
	for i := range 3 {
		if code, m := ts.admin("POST", "/v1/experiments/"+id+"/decisions", fmt.Sprintf(`{"event_id":"e%d"}`, i)); code != 200 {
			t.Fatalf("decision: %d %v", code, m)
		}
	}
	if v2 := version(); v2 <= v1 {
		t.Errorf("state version after more commits = %d, want > %d", v2, v1)
	}
	if code, m := ts.admin("POST", "/v1/experiments/"+id+"/stop", ""); code != 200 {
		t.Errorf("stop (waits for its state to be durable): %d %v", code, m)
	}
}

// lockedExperiment creates an experiment from spec on a fresh server and
// returns it locked, as the engine holds it while it steps or learns; the
// lock is released when the test ends (before the server closes).
func lockedExperiment(t *testing.T, spec string) *experiment {
	t.Helper()
	ts := newTS(t)
	x := ts.s.eng.get(ts.create(spec))
	x.mu.Lock()
	t.Cleanup(x.mu.Unlock)
	return x
}

// TestLearnRefusesAnArmOutOfRange: learn is the one place a stored reward
// reaches the per-arm arrays; arm = K (one past the end) must be an error,
// not an index out of range.
func TestLearnRefusesAnArmOutOfRange(t *testing.T) {
	x := lockedExperiment(t, `{"name":"l","arms":["a","b"],"policy":"ucb1","horizon":100,"budget":null}`)
	for _, arm := range []int{-1, 2, 3} {
		var err error
		if perr := safely(func() { err = x.learn(arm, false, nil, 0.5) }); perr != nil {
			t.Fatalf("learn(arm %d) of 2 panicked: %v", arm, perr)
		}
		if err == nil || !strings.Contains(err.Error(), "not one of the experiment's 2 arms") {
			t.Errorf("learn(arm %d) of 2: err = %v, want one naming the arm", arm, err)
		}
	}
	if err := x.learn(1, false, nil, 0.5); err != nil {
		t.Errorf("learn(arm 1) of 2: %v", err)
	}
}

// wrongNotion is a privacy meter that reports its costs in another notion
// than the experiment's filter.
type wrongNotion struct{ n privacy.Notion }

func (w wrongNotion) NextCost() privacy.Guarantee {
	return privacy.Guarantee{Notion: w.n, Value: 0.1}
}

// TestStepRefusesACostInAnotherNotion: a policy whose next step costs
// something in a notion other than the filter's must not be charged as if the
// number were in the filter's notion (a μ read as an ε, or the reverse): the
// step is refused with an error naming both notions, and nothing is charged.
func TestStepRefusesACostInAnotherNotion(t *testing.T) {
	x := lockedExperiment(t, `{"name":"n","arms":["a","b"],"policy":"ts-gaussian","horizon":1000,"budget":{"mu":1,"delta":1e-6}}`)
	if x.cfg.Notion != privacy.NotionGDP {
		t.Fatalf("ts-gaussian's filter notion = %v, want GDP", x.cfg.Notion)
	}
	x.met = wrongNotion{privacy.NotionPure}
	spent := x.led.f.Spent()
	seq := x.seq
	_, err := x.stepLocked("ev", time.Now(), 16, nil, false)
	if err == nil || !strings.Contains(err.Error(), "cost for a") {
		t.Fatalf("a step metered in %s on a %s filter: err = %v, want a notion mismatch", privacy.NotionPure, x.cfg.Notion, err)
	}
	if x.led.f.Spent() != spent || x.seq != seq {
		t.Errorf("the refused step changed the ledger (%v → %v) or the decision count (%d → %d)", spent, x.led.f.Spent(), seq, x.seq)
	}
}

// TestExhaustedAtIsTheRefusedDecision: exhausted_at is the number of the
// first decision the filter refused, which is the first frozen one: when the
// view first says "exhausted", the decision just made is that one.
// The reason shown with it names the same decision.
func TestExhaustedAtIsTheRefusedDecision(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"x","arms":["a","b"],"policy":"ts-gaussian","horizon":1000,"budget":{"mu":1.5,"delta":1e-6},"on_exhausted":"freeze"}`)
	path := "/v1/experiments/" + id
	for step := 1; step <= 200; step++ {
		ev := fmt.Sprint("e", step)
		if code, d := ts.admin("POST", path+"/decisions", `{"event_id":"`+ev+`"}`); code != 200 {
			t.Fatalf("decision %d: %d %v", step, code, d)
		}
		if code, m := ts.admin("POST", path+"/rewards", `{"event_id":"`+ev+`","reward":`+fmt.Sprint(step%2)+`}`); code != 202 {
			t.Fatalf("reward %d: %d %v", step, code, m)
		}
		_, m := ts.admin("GET", path, "")
		pr, _ := m["privacy"].(map[string]any)
		if pr["exhausted"] != true {
			continue
		}
		if at, _ := pr["exhausted_at"].(float64); at != float64(step) || m["frozen_decisions"] != 1.0 {
			t.Errorf("exhausted after decision %d: exhausted_at = %v, frozen_decisions = %v; want %d and 1", step, pr["exhausted_at"], m["frozen_decisions"], step)
		}
		// The reason an operator reads names the same decision.
		if why, _ := pr["reason"].(string); !strings.Contains(why, fmt.Sprintf("refused decision %d:", step)) {
			t.Errorf("exhausted after decision %d: reason %q does not name it", step, why)
		}
		return
	}
	t.Fatal("the filter never refused within 200 decisions")
}

// TestChunkSteps pins the reservation sizing rule: every ≥ 250 ms the
// decision rate r = decisions/elapsed is folded into rate ← ½·rate + ½·r,
// and a reservation is rate/2 steps (about half a second), within
// [16, 32768] and at most max(16, horizon/20).
func TestChunkSteps(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	x := &experiment{cfg: &Config{Horizon: 1_000_000}, rate: 100, rateT0: t0, rateN: 4000}
	step := func(now time.Time, wantN int, wantRate float64, wantCount int) {
		t.Helper()
		if n := x.chunkSteps(now); n != wantN || x.rate != wantRate || x.rateN != wantCount {
			t.Errorf("chunkSteps at +%v = %d (rate %v, count %d), want %d (rate %v, count %d)",
				now.Sub(t0), n, x.rate, x.rateN, wantN, wantRate, wantCount)
		}
	}
	// 4000 decisions in 2 s: r = 2000, rate = 50 + 1000 = 1050, n = 525.
	step(t0.Add(2*time.Second), 525, 1050, 0)
	// 100 ms later: too soon to measure; nothing changes.
	x.rateN = 10
	step(t0.Add(2100*time.Millisecond), 525, 1050, 10)
	// Exactly 250 ms after the last measurement: 10/0.25 = 40 per second.
	step(t0.Add(2250*time.Millisecond), 272, 545, 0)
	// A small horizon caps it at horizon/20.
	x.cfg.Horizon = 1000
	step(t0.Add(2250*time.Millisecond), 50, 545, 0)
	// No load for a long time: the floor of 16.
	x.cfg.Horizon = 1_000_000
	x.rate = 0
	step(t0.Add(time.Hour), 16, 0, 0)
	// A huge rate: the ceiling of 32768.
	x.rateN = 1 << 20
	step(t0.Add(time.Hour+time.Second), 32768, 1<<19, 0)
}

// TestStepsCountTowardsTheRate: each decision adds one to the count the
// rate is measured from.
func TestStepsCountTowardsTheRate(t *testing.T) {
	x := lockedExperiment(t, `{"name":"r","arms":["a","b"],"policy":"ucb1","horizon":100,"budget":null}`)
	n0 := x.rateN
	for i := range 7 {
		if _, err := x.stepLocked(fmt.Sprint("r", i), time.Now(), 16, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	if x.rateN != n0+7 {
		t.Errorf("7 decisions moved the rate count from %d to %d, want %d", n0, x.rateN, n0+7)
	}
}

// TestRetentionAfterRestart: rewards stored before a restart are still
// purged once reward_retention has passed (counted from the restart, since
// when they were stored is not kept), even if no new reward arrives.
func TestRetentionAfterRestart(t *testing.T) {
	ts := newTS(t)
	id := ts.create(`{"name":"p","arms":["a","b"],"policy":"ucb1","horizon":100,"budget":null,"reward_retention":"1h"}`)
	path := "/v1/experiments/" + id
	for i := range 3 {
		ev := fmt.Sprint("e", i)
		if code, d := ts.admin("POST", path+"/decisions", `{"event_id":"`+ev+`"}`); code != 200 {
			t.Fatalf("decision %d: %d %v", i, code, d)
		}
		if code, m := ts.admin("POST", path+"/rewards", `{"event_id":"`+ev+`","reward":1}`); code != 202 {
			t.Fatalf("reward %d: %d %v", i, code, m)
		}
	}
	ts.restart()
	x := ts.s.eng.get(id)
	x.mu.Lock()
	rs, ps, da := x.rewardSeq, x.purgedSeq, x.durableApplied
	x.mu.Unlock()
	if rs != 3 || ps != 0 || da != 3 {
		t.Fatalf("after the restart: reward seq %d, purged seq %d, durable applied %d; want 3, 0, 3", rs, ps, da)
	}
	ts.s.eng.w.purge(x, time.Now().Add(30*time.Minute))
	x.mu.Lock()
	ps = x.purgedSeq
	x.mu.Unlock()
	if ps != 0 {
		t.Fatalf("purged up to %d half-way through the retention, want 0", ps)
	}
	ts.s.eng.w.purge(x, time.Now().Add(61*time.Minute))
	x.mu.Lock()
	ps = x.purgedSeq
	x.mu.Unlock()
	if ps != 3 {
		t.Errorf("an hour after the restart the rewards are purged up to %d, want 3", ps)
	}
	code, m := ts.admin("POST", path+"/rewards", `{"event_id":"e0","reward":1}`)
	if c, _ := errOf(m); code != 409 || c != "reward_purged" {
		t.Errorf("a repeat of a purged reward: %d %v, want 409 reward_purged", code, m)
	}
}
