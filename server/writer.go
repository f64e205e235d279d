package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpbandit/dpbandit/store"
)

// writer is the one goroutine that writes to the store. Each cycle is a
// group commit: it takes, from every experiment with work, the decisions
// served since its last commit, the rewards claimed since, and (under the
// experiment's mutex, so exactly consistent with them) the policy's
// serialised state and the ledger, including a pending reservation
// extension; it writes all of it in ONE transaction, fsynced
// (synchronous=FULL); and only then
//
//   - marks the decisions logged,
//   - activates the reservation extension (its budget may now be spent),
//   - applies the rewards to the policies, on an update stream keyed by a
//     seed stored in the same transaction, and acknowledges them (202).
//
// Rewards are thus applied only once durable: a reward that was never
// acknowledged never influenced a released decision, and a client retrying
// it after a crash cannot make the policy use it twice. The state written
// at commit k does not yet include commit k's rewards (AppliedSeq marks
// that); commit k+1 writes the state with them, and a restart in between
// replays them with the stored seed, drawing exactly the same noise.
//
// While a commit runs, decisions keep being served and new work queues, so
// the next cycle takes all of it at once: under load one fsync carries
// thousands of events.
type writer struct {
	e     *Engine
	sweep time.Duration

	mu      sync.Mutex
	dirty   []*experiment
	wake    chan struct{}
	urgent  atomic.Bool
	urgentC chan struct{}
	quit    chan struct{}
	done    chan struct{}
	stopO   sync.Once
	ops     chan func() // run by the writer goroutine between cycles (lifecycle.go)
	abort   atomic.Bool // tests: stop without the final commits (a simulated crash)
	hook    func()      // tests: called after each group commit

	failures int   // consecutive failed commits (writer goroutine only)
	lastErr  error // the last commit's error
}

func newWriter(e *Engine, o engineOptions) *writer {
	if o.SweepInterval <= 0 {
		o.SweepInterval = time.Second
	}
	return &writer{e: e, sweep: o.SweepInterval,
		wake: make(chan struct{}, 1), urgentC: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		ops: make(chan func())}
}

// kick queues x (called with x.mu held, once per clean→dirty transition).
func (w *writer) kick(x *experiment) {
	w.mu.Lock()
	w.dirty = append(w.dirty, x)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// hurry asks for the next commit now: a reward or a reservation is
// waiting for it. Decisions alone are coalesced for up to coalesce.
func (w *writer) hurry() {
	w.urgent.Store(true)
	select {
	case w.urgentC <- struct{}{}:
	default:
	}
}

// coalesce is how long decisions alone wait for company before a commit:
// fewer, larger transactions (decisions are acknowledged from memory, so no
// client waits for this).
const coalesce = 5 * time.Millisecond

func (w *writer) stop() {
	w.stopO.Do(func() { close(w.quit) })
	<-w.done
}

func (w *writer) run() {
	defer close(w.done)
	t := time.NewTicker(w.sweep)
	defer t.Stop()
	for {
		select {
		case <-w.wake:
			if !w.urgent.Load() {
				w.wait()
			}
		case <-w.urgentC:
		case op := <-w.ops:
			op()
		case <-t.C:
			w.sweepDefaults()
			w.housekeeping()
		case <-w.quit:
			if w.abort.Load() {
				return
			}
			if w.drain() {
				w.release()
				w.drain()
			}
			return
		}
		for !w.abort.Load() && w.cycle() {
			if w.failures > 0 {
				w.backoff()
				break
			}
			if !w.urgent.Load() {
				w.wait()
			}
		}
	}
}

// drain commits until nothing is pending, at a graceful stop. It gives up
// (reporting false) when commits keep failing: after maxDrainFailures, or
// at once when the store lost its lock (no commit can succeed again). What
// was pending is then lost as in a crash; the reservation on disk still
// covers the budget it spent.
func (w *writer) drain() bool {
	for w.cycle() {
		if w.failures == 0 {
			continue
		}
		if errors.Is(w.lastErr, store.ErrLockLost) || w.failures >= maxDrainFailures {
			w.e.log.Error("giving up the final commits: pending decisions and rewards are not stored (their budget is: the reservation covers it)",
				"failures", w.failures, "err", w.lastErr)
			return false
		}
		w.backoff()
	}
	return true
}

// maxDrainFailures is how many failed commits a graceful stop retries.
const maxDrainFailures = 5

// backoff waits after a failed commit: 10 ms doubling to 1 s, so that a
// store that refuses every commit is not retried (and logged) 200 times a
// second. A stop interrupts it.
func (w *writer) backoff() {
	d := min(10*time.Millisecond<<min(w.failures-1, 7), time.Second)
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-w.quit:
	}
}

// wait lets decisions accumulate for up to coalesce, unless something
// urgent arrives or the writer is stopped.
func (w *writer) wait() {
	tm := time.NewTimer(coalesce)
	defer tm.Stop()
	select {
	case <-w.urgentC:
	case <-tm.C:
	case <-w.quit:
	}
}

// release runs at a graceful shutdown, after every decision is logged: the
// unused reservation is given back (the durable reservation becomes the live
// filter's exact spent), so a clean restart does not lose budget. Nothing
// decides any more: the HTTP server has stopped.
func (w *writer) release() {
	for _, x := range w.e.all() {
		x.mu.Lock()
		if l := x.led; l != nil && (l.pend == nil || !l.pend.inflight) && len(x.pendEnt) == 0 {
			if l.pend != nil {
				l.failed(l.pend)
			}
			l.resv, l.covs, l.all = cloneFilter(l.f), nil, false
			x.markDirtyLocked(w)
		}
		x.mu.Unlock()
	}
}

// item is one experiment's part of a commit.
type item struct {
	x       *experiment
	applied int64 // AppliedSeq of the state written
	version int64 // its Version
	ents    []*entry
	claims  []*claim
	seed    [32]byte
	ext     *extension
}

// cycle runs one group commit; it reports whether it wrote anything.
func (w *writer) cycle() bool {
	w.urgent.Store(false)
	w.mu.Lock()
	xs := w.dirty
	w.dirty = nil
	w.mu.Unlock()
	if len(xs) == 0 {
		return false
	}
	b := &store.Batch{States: map[string]store.State{}}
	items := make([]item, 0, len(xs))
	for _, x := range xs {
		x.mu.Lock()
		it := item{x: x}
		x.dirty = false
		if x.deleted {
			x.mu.Unlock()
			continue
		}
		it.ents = x.pendEnt
		b.Decisions = append(b.Decisions, x.pendDec...)
		x.pendEnt, x.pendDec = nil, nil
		it.claims = x.pendRew
		x.pendRew = nil
		var seed *[32]byte
		if len(it.claims) > 0 {
			it.seed = newSeed()
			seed = &it.seed
			for _, c := range it.claims {
				x.rewardSeq++
				c.seq = x.rewardSeq
				b.Rewards = append(b.Rewards, store.Reward{Experiment: x.cfg.ID, EventID: c.ent.id, Seq: c.seq, Value: c.value, Default: c.def, CreatedAt: c.created})
			}
		}
		var led *ledgerState
		if x.led != nil && x.led.pend != nil && !x.led.pend.inflight {
			it.ext = x.led.pend
			it.ext.inflight = true
			b, _ := it.ext.next.MarshalJSON()
			led = &ledgerState{Reserved: b, All: it.ext.all || x.led.all}
		}
		// The state is as of exactly the decisions taken above and the
		// rewards applied so far: all under x.mu.
		st, err := x.snapshot(led, seed)
		if err != nil {
			// Cannot happen for a policy that marshals. Write nothing of
			// this experiment: its events stay pending.
			w.e.log.Error("snapshot failed", "experiment", x.cfg.ID, "err", err)
			b.Decisions = b.Decisions[:len(b.Decisions)-len(it.ents)]
			b.Rewards = b.Rewards[:len(b.Rewards)-len(it.claims)]
			x.pendEnt, x.pendDec = it.ents, decisionsOf(x, it.ents)
			x.pendRew = it.claims
			x.rewardSeq -= int64(len(it.claims))
			if it.ext != nil {
				it.ext.inflight = false
			}
			x.mu.Unlock()
			continue
		}
		b.States[x.cfg.ID] = st
		it.applied, it.version = st.AppliedSeq, st.Version
		x.mu.Unlock()
		items = append(items, it)
	}
	t0 := time.Now()
	err := w.e.st.Commit(context.Background(), b)
	w.e.m.commitDur.Observe(time.Since(t0).Seconds())
	w.e.m.commitN.Observe(float64(len(b.Decisions) + len(b.Rewards)))
	w.lastErr = err
	if err != nil {
		w.failures++
		w.e.m.commitErr.Inc()
		if w.failures <= 3 || w.failures%100 == 0 || errors.Is(err, store.ErrLockLost) && w.failures == 4 {
			w.e.log.Error("group commit failed; retrying with backoff", "err", err, "decisions", len(b.Decisions), "rewards", len(b.Rewards), "consecutive_failures", w.failures)
		}
	} else {
		w.failures = 0
	}
	now := time.Now()
	for _, it := range items {
		w.finish(it, err, now)
	}
	if w.hook != nil {
		w.hook()
	}
	return true
}

func decisionsOf(x *experiment, ents []*entry) []store.Decision {
	decs := make([]store.Decision, len(ents))
	for i, en := range ents {
		decs[i] = store.Decision{Experiment: x.cfg.ID, EventID: en.id, Seq: en.seq, Arm: int(en.arm), Frozen: en.frozen, CreatedAt: time.UnixMilli(en.created).UTC(), Features: en.features}
	}
	return decs
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// errCommit is what a reward waiting on a failed commit gets.
var errCommit = errors.New("the store could not commit; the reward was not stored, retry it")

// finish runs after the commit, under the experiment's mutex.
func (w *writer) finish(it item, err error, now time.Time) {
	x := it.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		// Nothing was written: put everything back for the next cycle.
		x.pendEnt = append(slicesClone(it.ents), x.pendEnt...)
		x.pendDec = append(decisionsOf(x, it.ents), x.pendDec...)
		x.rewardSeq -= int64(len(it.claims))
		for _, c := range it.claims {
			c.err = errCommit
			c.ent.claim = nil
			close(c.done)
		}
		if it.ext != nil {
			x.led.failed(it.ext)
		}
		if len(x.pendEnt) > 0 || (x.led != nil && x.led.pend != nil) {
			x.markDirtyLocked(w)
		}
		return
	}
	for _, en := range it.ents {
		en.logged = true
	}
	if n := len(it.ents); n > 0 {
		x.loggedSeq = it.ents[n-1].seq
		close(x.loggedC)
		x.loggedC = make(chan struct{})
	}
	if it.ext != nil {
		x.led.committed(it.ext)
	}
	x.durableApplied = max(x.durableApplied, it.applied)
	x.durableVersion = max(x.durableVersion, it.version)
	if len(it.claims) > 0 {
		x.marks = append(x.marks, purgeMark{seq: it.claims[len(it.claims)-1].seq, at: now})
		x.src.updates(it.seed)
		for _, c := range it.claims {
			if lerr := x.learn(int(c.ent.arm), c.ent.frozen, c.ent.features, c.value); lerr != nil {
				w.e.quarantine(x, quarantined{event: c.ent.id, seq: c.seq, err: lerr})
				c.err = quarantineError{lerr}
			}
			x.appliedSeq = c.seq
			c.durable = true
			if c.def {
				x.m.rewDefault.Inc()
			} else {
				x.m.rewClient.Inc()
			}
			close(c.done)
		}
		x.src.selects()
		// The state with these rewards applied is written by the next commit.
		x.markDirtyLocked(w)
	}
	x.evictLocked(now, w.e.retain)
}

// sweepDefaults gives the default reward to logged decisions older than
// their experiment's reward_wait that have none.
func (w *writer) sweepDefaults() {
	ctx := context.Background()
	now := time.Now()
	for _, x := range w.e.all() {
		if x.cfg.DefaultReward == nil {
			continue
		}
		x.mu.Lock()
		mark := x.defaultsMark
		x.mu.Unlock()
		ds, next, err := w.e.st.Unrewarded(ctx, x.cfg.ID, mark, now.Add(-x.cfg.wait), 2000)
		if err != nil {
			w.e.log.Error("default rewards", "experiment", x.cfg.ID, "err", err)
			continue
		}
		for _, d := range ds {
			if _, _, err := w.e.claimReward(ctx, x, d.EventID, *x.cfg.DefaultReward, true, now); err != nil && !errors.Is(err, errUnknownEvent) {
				w.e.log.Error("default reward", "experiment", x.cfg.ID, "event", d.EventID, "err", err)
			}
		}
		x.mu.Lock()
		if next > x.defaultsMark {
			x.defaultsMark = next
			x.markDirtyLocked(w)
		}
		x.mu.Unlock()
	}
}

// housekeeping records the history points the dashboard draws and evicts
// old decisions.
func (w *writer) housekeeping() {
	now := time.Now()
	for _, x := range w.e.all() {
		w.purge(x, now)
		x.mu.Lock()
		x.evictLocked(now, w.e.retain)
		x.chunkSteps(now)
		p := x.histPointLocked(now)
		if n := len(x.hist); n == 0 || x.hist[n-1].Decisions != p.Decisions || x.hist[n-1].Rewards != p.Rewards {
			x.hist = append(x.hist, p)
			if len(x.hist) > 240 { // keep the first point, thin the rest
				thin := x.hist[:1]
				for i := 1; i < len(x.hist); i += 2 {
					thin = append(thin, x.hist[i])
				}
				x.hist = thin
			}
		}
		x.mu.Unlock()
	}
}

// purge deletes the values of x's rewards that are in a durable policy
// state (never replayed) and were stored more than reward_retention ago
// (docs/privacy-model.md, retention: raw rewards are kept only as long as they are
// needed). Their rows stay: the events keep their rewards, counts do not
// change, and a repeat of such a reward gets a 409 saying its value is gone.
// The writer runs it (the store's one writer); the new watermark is
// persisted with the next state.
func (w *writer) purge(x *experiment, now time.Time) {
	x.mu.Lock()
	cut := now.Add(-x.cfg.retention)
	upTo := x.purgedSeq
	n := 0
	for n < len(x.marks) && !x.marks[n].at.After(cut) && x.marks[n].seq <= x.durableApplied {
		upTo = x.marks[n].seq
		n++
	}
	after := x.purgedSeq
	x.mu.Unlock()
	if upTo <= after {
		return
	}
	if _, err := w.e.st.PurgeRewards(context.Background(), x.cfg.ID, after, upTo); err != nil {
		w.e.log.Error("purging reward values failed; retrying at the next sweep", "experiment", x.cfg.ID, "err", err)
		return
	}
	x.mu.Lock()
	x.purgedSeq = upTo
	x.marks = x.marks[n:]
	x.markDirtyLocked(w)
	x.mu.Unlock()
}

func (x *experiment) histPointLocked(now time.Time) histPoint {
	p := histPoint{T: now.UnixMilli(), Decisions: x.seq, ArmDecisions: slicesClone(x.armDec)}
	for i := range x.armRew {
		p.Rewards += x.armRew[i]
		p.RewardSum += x.armSum[i]
	}
	if p.Rewards > 0 {
		m := p.RewardSum / float64(p.Rewards)
		p.RewardMean = &m
	}
	return p
}
