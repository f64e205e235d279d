package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/store"
)

// Engine runs the experiments: decisions from memory, rewards through the
// group-commit writer, recovery from the store. It is safe for concurrent
// use.
type Engine struct {
	st     store.Store
	log    *slog.Logger
	retain time.Duration
	m      *metrics

	mu   sync.RWMutex
	exps map[string]*experiment
	ord  []*experiment
	// bad holds the stored experiments that could not be loaded, by id
	// (badOrd in store order): they are listed, not served.
	bad    map[string]*unavailable
	badOrd []string

	w *writer
}

// engineOptions configure an Engine.
type engineOptions struct {
	Retain        time.Duration // how long logged, unrewarded decisions stay in memory
	SweepInterval time.Duration // how often default rewards are applied
}

// openEngine loads every experiment from the store, replays the rewards
// stored after each policy state (with their stored seeds), and starts the
// writer.
func openEngine(ctx context.Context, st store.Store, log *slog.Logger, o engineOptions) (*Engine, error) {
	e := &Engine{st: st, log: log, retain: o.Retain, exps: map[string]*experiment{}, bad: map[string]*unavailable{}}
	e.m = newMetrics(e)
	list, err := st.Experiments(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading experiments: %w", err)
	}
	for _, se := range list {
		x, s, replayed, err := e.load(ctx, se)
		if err != nil {
			// One experiment whose stored configuration or state cannot be
			// loaded must not take the others down: it is kept aside,
			// listed as unavailable with the reason, and can be deleted.
			if ctx.Err() != nil {
				return nil, err
			}
			e.quarantineExperiment(se, err)
			continue
		}
		for _, q := range x.restoreBad {
			e.quarantine(x, q)
		}
		x.restoreBad = nil
		x.m = e.m.forExperiment(x.cfg.ID)
		x.hist = append(x.hist, x.histPointLocked(time.Now()))
		e.exps[x.cfg.ID] = x
		e.ord = append(e.ord, x)
		log.Info("experiment restored", "experiment", x.cfg.ID, "policy", x.cfg.Policy, "decisions", s.DecisionSeq,
			"rewards", s.RewardSeq, "replayed_rewards", replayed, "exhausted", x.exhausted)
	}
	e.w = newWriter(e, o)
	for _, x := range e.ord {
		x.mu.Lock()
		if x.led != nil && !x.exhausted && !x.led.all {
			x.led.request(0, x.chunkSteps(time.Now())) // reserve ahead before the first decision
		}
		x.markDirtyLocked(e.w)
		x.mu.Unlock()
	}
	go e.w.run()
	return e, nil
}

// load restores one stored experiment: its configuration, its state, and
// the rewards stored after the state (replayed). A panic anywhere in it (a
// policy's restore of a hostile state) is an error.
func (e *Engine) load(ctx context.Context, se store.Experiment) (x *experiment, s store.State, replayed int, err error) {
	perr := safely(func() {
		var cfg *Config
		if cfg, err = decodeConfig(se.Config); err != nil {
			err = fmt.Errorf("configuration: %w", err)
			return
		}
		if cfg.ID != se.ID {
			err = fmt.Errorf("configuration names experiment %q", cfg.ID)
			return
		}
		if x, err = newExperiment(cfg); err != nil {
			return
		}
		if s, err = e.st.LoadState(ctx, se.ID); err != nil {
			return
		}
		var replay []store.JoinedReward
		if replay, err = e.st.RewardsAfter(ctx, se.ID, s.AppliedSeq); err != nil {
			return
		}
		replayed = len(replay)
		err = x.restore(s, replay)
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return nil, s, 0, fmt.Errorf("experiment %s: %w", se.ID, err)
	}
	return x, s, replayed, nil
}

// unavailable is a stored experiment the engine could not load.
type unavailable struct {
	id, name string
	created  time.Time
	err      error
}

// quarantineExperiment keeps a stored experiment that cannot be loaded
// aside (logged, counted, listed as unavailable).
func (e *Engine) quarantineExperiment(se store.Experiment, err error) {
	e.log.Error("experiment quarantined: it cannot be loaded, so it is not served; the others are. Inspect it, or delete it with DELETE /v1/experiments/"+se.ID,
		"experiment", se.ID, "err", err)
	e.m.quarantined.WithLabelValues("experiment").Inc()
	e.bad[se.ID] = &unavailable{id: se.ID, name: se.Name, created: se.CreatedAt, err: err}
	e.badOrd = append(e.badOrd, se.ID)
}

// quarantine logs and counts a stored reward that could not be applied.
func (e *Engine) quarantine(x *experiment, q quarantined) {
	e.log.Error("reward quarantined: it is stored but the policy could not apply it; the experiment keeps serving without it",
		"experiment", x.cfg.ID, "event", q.event, "seq", q.seq, "err", q.err)
	e.m.quarantined.WithLabelValues("reward").Inc()
}

// unavailableErr is the answer for a request on an experiment that could
// not be loaded (nil when id is not one).
func (e *Engine) unavailableErr(id string) *unavailable {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.bad[id]
}

// unavailable lists the stored experiments that could not be loaded.
func (e *Engine) unavailable() []*unavailable {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]*unavailable, 0, len(e.badOrd))
	for _, id := range e.badOrd {
		out = append(out, e.bad[id])
	}
	return out
}

// Close stops the writer after a final commit of everything pending.
func (e *Engine) Close() error {
	e.w.stop()
	return nil
}

func (e *Engine) get(id string) *experiment {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.exps[id]
}

func (e *Engine) all() []*experiment {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return slices.Clone(e.ord)
}

// create stores a new experiment and starts it.
func (e *Engine) create(ctx context.Context, cfg *Config, raw []byte) (*experiment, error) {
	x, err := newExperiment(cfg)
	if err != nil {
		return nil, err
	}
	x.m = e.m.forExperiment(cfg.ID)
	st, err := x.snapshot(nil, nil)
	if err != nil {
		return nil, err
	}
	if err := e.st.CreateExperiment(ctx, store.Experiment{ID: cfg.ID, Name: cfg.Name, Config: raw, CreatedAt: cfg.CreatedAt}, st); err != nil {
		return nil, err
	}
	x.hist = append(x.hist, x.histPointLocked(time.Now()))
	e.mu.Lock()
	e.exps[cfg.ID] = x
	e.ord = append(e.ord, x)
	e.mu.Unlock()
	x.mu.Lock()
	if x.led != nil {
		x.led.request(0, x.chunkSteps(time.Now()))
		x.markDirtyLocked(e.w)
	}
	x.mu.Unlock()
	return x, nil
}

// decide serves n decisions. ids holds the event ids (empty strings are
// generated); wantProp asks for each new decision's propensity (the caller
// checked that the policy states them). A decision whose event id exists
// already is returned as it was made. The decision path never writes to the store and never waits for
// it, except when the write-ahead privacy reservation has run out (then it
// waits for the writer's next commit) and for a client-chosen event id not in
// memory, which costs one indexed read.
func (e *Engine) decide(ctx context.Context, x *experiment, ids []string, cands [][]float64, wantProp bool) ([]decision, error) {
	out := make([]decision, len(ids))
	known := make([]bool, len(ids))
	// Client event ids not in memory: look them up in the store first.
	var cold []int
	x.mu.Lock()
	for i, id := range ids {
		if id == "" {
			continue
		}
		if en := x.recent[id]; en != nil {
			out[i], known[i] = decisionOf(x.cfg.Arms[en.arm], en.prop), true
			out[i].EventID = id
		} else {
			cold = append(cold, i)
		}
	}
	x.mu.Unlock()
	for _, i := range cold {
		d, err := e.st.Decision(ctx, x.cfg.ID, ids[i])
		if err == nil {
			var p *propensity
			if d.Propensity != nil {
				p = &propensity{p: *d.Propensity, draws: d.PropensityDraws}
			}
			out[i], known[i] = decisionOf(x.cfg.Arms[d.Arm], p), true
			out[i].EventID = ids[i]
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	i := 0
	for i < len(ids) {
		x.mu.Lock()
		now := time.Now()
		n := x.chunkSteps(now)
		var wait *extension
		var err error
		for ; i < len(ids); i++ {
			if known[i] {
				continue
			}
			id := ids[i]
			if id == "" {
				id = x.newEventID(now)
			} else if en := x.recent[id]; en != nil { // made concurrently
				out[i] = decisionOf(x.cfg.Arms[en.arm], en.prop)
				out[i].EventID = id
				continue
			}
			var d decision
			d, err = x.stepLocked(id, now, n, cands, wantProp)
			if nr, ok := err.(needReservation); ok {
				wait, err = nr.ext, nil
				break
			}
			if err != nil {
				break
			}
			out[i] = d
			if d.frozen {
				x.m.decFrozen.Inc()
			} else {
				x.m.decPolicy.Inc()
			}
		}
		x.markDirtyLocked(e.w)
		if x.led != nil && x.led.pend != nil && !x.led.pend.inflight {
			e.w.hurry() // a reservation is needed soon (or now)
		}
		x.mu.Unlock()
		if err != nil {
			var se stoppedError
			if errors.As(err, &se) && i > 0 {
				if x.cfg.DurableDecisions {
					if werr := e.waitLogged(ctx, x); werr != nil {
						return nil, werr
					}
				}
				return out[:i], err
			}
			return nil, err
		}
		if wait != nil {
			select {
			case <-wait.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the privacy reservation: %w", ctx.Err())
			}
		}
	}
	if x.cfg.DurableDecisions {
		if err := e.waitLogged(ctx, x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// waitLogged returns once every decision served so far by x is logged
// durably (durable decisions).
func (e *Engine) waitLogged(ctx context.Context, x *experiment) error {
	x.mu.Lock()
	target := x.seq
	for x.loggedSeq < target {
		c := x.loggedC
		e.w.hurry()
		x.mu.Unlock()
		select {
		case <-c:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the decision to be logged: %w", ctx.Err())
		}
		x.mu.Lock()
	}
	x.mu.Unlock()
	return nil
}

func (x *experiment) markDirtyLocked(w *writer) {
	if !x.dirty {
		x.dirty = true
		w.kick(x)
	}
}

// rewardResult is the outcome of one reward.
type rewardResult struct {
	EventID string `json:"event_id"`
	Status  string `json:"status"` // "accepted" (stored now) or "duplicate" (stored before, same value)
}

// conflictError is a 409 for a reward. msg names the stored reward, for the
// admin (the data owner); public does not, for client keys: a stored reward
// is raw data, which never leaves through a client key (docs/privacy-model.md rule 2).
type conflictError struct{ msg, public, code string }

func (c conflictError) Error() string { return c.msg }

// reward records one reward and returns once it is durable (or failed).
func (e *Engine) reward(ctx context.Context, x *experiment, id string, v float64) (rewardResult, error) {
	c, res, err := e.claimReward(ctx, x, id, v, false, time.Now())
	if err != nil || c == nil {
		return res, err
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return res, fmt.Errorf("waiting for the reward to be durable: %w", ctx.Err())
	}
	if c.err != nil {
		return res, c.err
	}
	return res, nil
}

// claimReward checks the reward against the decision and any earlier reward
// and, if it is new, queues it for the writer. It returns the claim to wait
// for (nil when the answer is already known).
func (e *Engine) claimReward(ctx context.Context, x *experiment, id string, v float64, def bool, now time.Time) (*claim, rewardResult, error) {
	res := rewardResult{EventID: id, Status: "accepted"}
	x.mu.Lock()
	en := x.recent[id]
	x.mu.Unlock()
	if en == nil {
		d, err := e.st.Decision(ctx, x.cfg.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, res, errUnknownEvent
		}
		if err != nil {
			return nil, res, err
		}
		r, err := e.st.Reward(ctx, x.cfg.ID, id)
		if err == nil && r.Purged {
			if def {
				return nil, res, nil // a default never conflicts
			}
			m := fmt.Sprintf("event %s already has a reward, applied to the policy; its value was deleted after the experiment's reward_retention of %s, so a repeat cannot be compared with it and is not applied", id, x.cfg.RewardRetention)
			return nil, res, conflictError{msg: m, public: m, code: "reward_purged"}
		}
		if err == nil {
			res, err := dupOrConflict(x, res, r.Value, r.Default, v, def)
			return nil, res, err
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, res, err
		}
		x.mu.Lock()
		if en = x.recent[id]; en == nil {
			en = &entry{id: id, seq: d.Seq, arm: int32(d.Arm), frozen: d.Frozen, logged: true, created: d.CreatedAt.UnixMilli(), features: d.Features}
			x.recent[id] = en
			x.order = append(x.order, en)
		}
		x.mu.Unlock()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.deleted || x.status == statusArchived {
		return nil, res, lifecycleError{x.cfg.ID, x.status, x.deleted}
	}
	if c := en.claim; c != nil {
		if c.value != v {
			_, err := dupOrConflict(x, res, c.value, c.def, v, def)
			return nil, res, err
		}
		if def {
			return nil, res, nil
		}
		res.Status = "duplicate"
		if c.durable {
			return nil, res, c.err // nil, or the quarantine that the first answer reported
		}
		return c, res, nil // the same reward, in flight: wait for the same commit
	}
	c := &claim{ent: en, value: v, def: def, created: now.UTC(), done: make(chan struct{})}
	en.claim = c
	x.pendRew = append(x.pendRew, c)
	x.markDirtyLocked(e.w)
	e.w.hurry()
	return c, res, nil
}

func dupOrConflict(x *experiment, res rewardResult, have float64, haveDef bool, v float64, def bool) (rewardResult, error) {
	if have == v {
		res.Status = "duplicate"
		return res, nil
	}
	if def {
		return res, nil // a default never conflicts: the client's reward won
	}
	if haveDef {
		return res, conflictError{
			msg:    fmt.Sprintf("event %s already has the default reward %v, applied after the experiment's reward_wait of %s; a different reward (%v) cannot replace it. Post rewards within reward_wait", res.EventID, have, x.cfg.RewardWait, v),
			public: fmt.Sprintf("event %s already has the default reward, applied after the experiment's reward_wait of %s; a different reward (%v) cannot replace it. Post rewards within reward_wait", res.EventID, x.cfg.RewardWait, v),
		}
	}
	return res, conflictError{
		msg:    fmt.Sprintf("event %s already has the reward %v; a different reward (%v) is a conflict. Rewards are idempotent per event id: resend the same value, or use a new event", res.EventID, have, v),
		public: fmt.Sprintf("event %s already has a different reward than %v; rewards are idempotent per event id: resend the same value, or use a new event", res.EventID, v),
	}
}

// guaranteeOf wraps a filter value as a guarantee of its notion.
func guaranteeOf(n privacy.Notion, v float64) privacy.Guarantee {
	return privacy.Guarantee{Notion: n, Value: v}
}
