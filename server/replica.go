package server

// Replica mode: `dpbandit serve --db postgres://... --replica`. Any number of
// processes serve the same experiments of one PostgreSQL schema; the
// protocol, its invariants and failure cases are in docs/replicas.md. In
// short:
//
//   - Budget: each replica spends only from blocks reserved in PostgreSQL
//     transactions on the experiment's budget row (store.Replicated.Reserve).
//     The row holds the privacy.Filter of everything ever granted; a block
//     counts as spent when granted, so a crashed replica's unused block is
//     never returned or reused. Blocks are sized for about one second of
//     this replica's steps and at most a quarter of what is not yet granted.
//   - Learning: one replica per experiment holds the learner lease (a row
//     with a fencing token and an expiry in database time). It folds the
//     rewards in sequence (= commit) order into its copy of the policy and
//     commits the new state with the consumed offset, fenced by the lease,
//     in one transaction: each reward is applied exactly once.
//   - Deciding: every replica decides from the newest committed state it
//     has polled (every Poll), charging each step's cost, computed from the
//     state it decided from, on its own block. Decisions are logged (with
//     sequence numbers in commit order) before they are answered, so a
//     reward may go to any replica.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/store"
)

// replicable lists the policy families a replica may serve, with the
// reason each can be: its Update is deterministic (no noise drawn while
// learning), its NextCost depends only on the state Update builds (never
// on Select), and Select changes nothing that later costs or decisions
// depend on but a round counter for the report. Then a replica deciding
// from a committed state charges exactly that state's step cost, and the
// one learner's state does not depend on which replica decided.
// docs/replicas.md §5 says why the others are refused.
var replicable = map[string]string{
	"ts-gaussian": "Ou, Avella Medina & Cummings (AISTATS 2024) Algorithm 1: μ_t = 1/sqrt(n+1) of the state decided from",
	"gaussian-ts": "Gaussian TS with the 1/n posterior (docs/reproduction-decisions.md A1): μ_t = 1/sqrt(n) of the state decided from",
}

// replicableNames lists the replicable policies, sorted.
func replicableNames() []string {
	out := make([]string, 0, len(replicable))
	for n := range replicable {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// checkReplicable refuses what replica mode cannot serve, at creation.
func checkReplicable(req createRequest) error {
	if req.Policy == autoPolicy {
		return badf("policy: \"auto\" is not available in replica mode (its choice may be an epoch-based pure-DP policy, which cannot be replicated); name one of %v", replicableNames())
	}
	if _, ok := replicable[req.Policy]; !ok {
		return badf("policy: %q cannot be served by replicas (serve --replica); replica mode serves %v, whose step cost depends only on the learned state. "+
			"Epoch-based pure-DP policies count plays per epoch in Select and AdaPrivate releases batch increments whose cost is set by Select's schedule, "+
			"so replicas deciding on their own would break their accounting (docs/replicas.md §5); serve those without --replica", req.Policy, replicableNames())
	}
	if req.DefaultReward != nil {
		return badf("default_reward: not available in replica mode (no replica sweeps unrewarded decisions); post every reward, or serve without --replica")
	}
	if len(req.Arms) > 0 && req.Dim != nil {
		return badf("dim: replica mode serves K-armed policies only")
	}
	if req.RewardRetention != "" {
		return badf("reward_retention: replica mode keeps every reward value (it does not purge them, docs/replicas.md §8); omit reward_retention, or serve without --replica to have values deleted")
	}
	return nil
}

// ReplicaOptions configure a replica (NewReplica).
type ReplicaOptions struct {
	// Store is the shared database (required; store/postgres.OpenReplica).
	// The Replica does not close it.
	Store store.Replicated
	// AdminKey is the admin key: required unless one is stored already
	// (replicas must agree on it, so none generates one).
	AdminKey     string
	MetricsToken string
	Logger       *slog.Logger
	MaxBodyBytes int64 // default 1 MiB
	RateLimit    float64
	RateBurst    int
	// Lease is the learner lease length L (default 2 s), renewed every L/4.
	Lease time.Duration
	// Poll is how often the newest state and the budget row are read, and
	// the learner folds new rewards (default 50 ms).
	Poll time.Duration
}

// Replica is one replica of the decision service.
type Replica struct {
	o    ReplicaOptions
	st   store.Replicated
	auth *auth
	log  *slog.Logger
	h    http.Handler

	mu   sync.RWMutex
	exps map[string]*rexp
	ord  []*rexp
	bad  map[string]string // stored experiments not created in replica mode

	wmu   sync.Mutex
	wq    []*rwork
	wake  chan struct{}
	quit  chan struct{}
	wg    sync.WaitGroup
	close sync.Once

	// Counters for the status view and the benchmarks.
	nDecisions, nFrozen, nReserve, nLeaseTakes, nLearned atomic.Int64
	reserveNanos                                         atomic.Int64
}

// rexp is one experiment as this replica serves it.
type rexp struct {
	cfg *Config

	mu        sync.Mutex
	pol       bandit.Policy // decision copy: the newest committed state
	met       bandit.Metered
	src       *policySource
	ids       *rand.ChaCha8
	version   int64 // state version pol holds
	allow     *privacy.Filter
	exhausted bool
	exhWhy    string
	released  []int64
	rateT0    time.Time
	rateN     int
	rate      float64

	resv sync.Mutex // one reservation in flight per experiment

	// Learner (the poll goroutine only).
	lease     store.Lease
	nextLease time.Time
	lpol      bandit.Policy // nil: reload from the store
	lapplied  int64
}

// rwork is a decision or reward waiting for the log writer.
type rwork struct {
	dec  *store.Decision
	rew  *store.Reward
	done chan error
}

// NewReplica starts a replica: it loads the replicated experiments, and
// starts the log writer and the poll loop (snapshots, learner lease,
// learning, new experiments).
func NewReplica(ctx context.Context, o ReplicaOptions) (*Replica, error) {
	if o.Store == nil {
		return nil, errors.New("server: ReplicaOptions.Store is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if o.Lease < 4*o.Poll {
		return nil, fmt.Errorf("server: the lease (%v) must be at least 4 polls (%v)", o.Lease, 4*o.Poll)
	}
	if o.AdminKey == "" {
		if _, err := o.Store.Meta(ctx, adminMeta); errors.Is(err, store.ErrNotFound) {
			return nil, errors.New("replica mode needs --admin-key (or DPBANDIT_ADMIN_KEY) on the first start of a database: replicas must share one admin key, so none generates one")
		}
	}
	a, _, err := newAuth(ctx, o.Store, o.Logger, o.AdminKey, o.MetricsToken, o.RateLimit, o.RateBurst)
	if err != nil {
		return nil, err
	}
	r := &Replica{o: o, st: o.Store, auth: a, log: o.Logger, exps: map[string]*rexp{}, bad: map[string]string{},
		wake: make(chan struct{}, 1), quit: make(chan struct{})}
	if err := r.discover(ctx); err != nil {
		return nil, err
	}
	r.h = r.routes()
	r.wg.Add(2)
	go r.writer()
	go r.poller()
	return r, nil
}

// ID is this replica's id (its lease holder name).
func (r *Replica) ID() string { return r.st.ReplicaID() }

// Close stops the poll loop and the writer (after it has logged what is
// queued). Unused reservations are not returned: they count as spent
// (docs/replicas.md §3). Call it after the HTTP server has stopped.
func (r *Replica) Close() error {
	r.close.Do(func() { close(r.quit) })
	r.wg.Wait()
	return nil
}

// discover loads the experiments not yet known (at start and every
// second): those with a budget row are served, the others are listed as
// not replicated.
func (r *Replica) discover(ctx context.Context) error {
	list, err := r.st.Experiments(ctx)
	if err != nil {
		return fmt.Errorf("loading experiments: %w", err)
	}
	for _, se := range list {
		r.mu.RLock()
		_, known := r.exps[se.ID]
		_, bad := r.bad[se.ID]
		r.mu.RUnlock()
		if known || bad {
			continue
		}
		x, err := r.load(ctx, se)
		r.mu.Lock()
		if err != nil {
			if ctx.Err() != nil {
				r.mu.Unlock()
				return err
			}
			r.bad[se.ID] = err.Error()
			r.log.Warn("experiment not served by this replica", "experiment", se.ID, "err", err)
		} else if r.exps[se.ID] == nil {
			r.exps[se.ID] = x
			r.ord = append(r.ord, x)
		}
		r.mu.Unlock()
	}
	return nil
}

// load builds an experiment's decision copy from its newest state.
func (r *Replica) load(ctx context.Context, se store.Experiment) (*rexp, error) {
	cfg, err := decodeConfig(se.Config)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if _, ok := replicable[cfg.Policy]; !ok {
		return nil, fmt.Errorf("experiment %s runs %s, which replica mode does not serve", se.ID, cfg.Policy)
	}
	st, b, err := r.st.Snapshot(ctx, se.ID)
	if err != nil {
		return nil, err
	}
	x, err := newRexp(cfg)
	if err != nil {
		return nil, err
	}
	if err := restorePolicy(x.pol, st.Policy); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", se.ID, err)
	}
	x.version = st.Version
	if b.Exhausted {
		x.exhausted, x.exhWhy = true, exhaustedWhy(b)
		if x.released, err = r.st.Released(ctx, cfg.ID, len(cfg.Arms)); err != nil {
			return nil, err
		}
	}
	return x, nil
}

func newRexp(cfg *Config) (*rexp, error) {
	src := newPolicySource()
	pol, met, err := buildReplicaPolicy(cfg, src)
	if err != nil {
		return nil, err
	}
	return &rexp{cfg: cfg, pol: pol, met: met, src: src, ids: noise.NewSecureSource(), rateT0: time.Now()}, nil
}

// buildReplicaPolicy builds a fresh policy of cfg drawing from src (the
// secure select stream: the θ draws are compared, never released).
func buildReplicaPolicy(cfg *Config, src *policySource) (bandit.Policy, bandit.Metered, error) {
	d, err := bandit.Lookup(bandit.AnyKind, cfg.Policy)
	if err != nil {
		return nil, nil, err
	}
	impl, err := build(d, cfg.setting(), cfg.Params, rand.New(src))
	if err != nil {
		return nil, nil, fmt.Errorf("experiment %s: building %s: %w", cfg.ID, cfg.Policy, err)
	}
	p, ok := impl.(bandit.Policy)
	if !ok {
		return nil, nil, fmt.Errorf("experiment %s: %s is not a K-armed policy", cfg.ID, cfg.Policy)
	}
	m, ok := impl.(bandit.Metered)
	if !ok {
		return nil, nil, fmt.Errorf("experiment %s: policy %s is not metered", cfg.ID, cfg.Policy)
	}
	if _, ok := impl.(json.Marshaler); !ok {
		return nil, nil, fmt.Errorf("experiment %s: policy %s cannot serialise its state", cfg.ID, cfg.Policy)
	}
	return p, m, nil
}

func restorePolicy(p bandit.Policy, b []byte) error {
	u, ok := p.(json.Unmarshaler)
	if !ok {
		return errors.New("the policy cannot restore its state")
	}
	var err error
	if perr := safely(func() { err = u.UnmarshalJSON(b) }); perr != nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("restoring the policy state: %w", err)
	}
	return nil
}

func exhaustedWhy(b store.Budget) string {
	return fmt.Sprintf("a reservation found the budget unable to pay for the next step at %s (database clock); every replica freezes", b.ExhaustedAt.Format(time.RFC3339Nano))
}

// fullFilter is a filter of cfg's notion and budget with the whole budget
// spent.
func fullFilter(cfg *Config) (*privacy.Filter, error) {
	f, err := newFilter(cfg.Notion, cfg.FilterBudget)
	if err != nil {
		return nil, err
	}
	if rem := f.Remaining(); rem > 0 {
		if err := f.Spend(rem); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// replicaEngine is the Engine bytes of a replicated experiment's state. A
// server in one-server mode that opens the schema later (after every
// replica stopped) restores it as exhausted with its whole budget reserved:
// the budget it would otherwise see is not the replicas' (which lives in the
// budget row), so it must not take a step that costs anything.
func replicaEngine(cfg *Config) ([]byte, error) {
	f, err := fullFilter(cfg)
	if err != nil {
		return nil, err
	}
	fb, err := f.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return json.Marshal(engineState{Ledger: &ledgerState{Reserved: fb, All: true}, Exhausted: true,
		ExhaustWhy: "replicated experiment (serve --replica): its budget is kept in the replicas' budget row; serve it with --replica"})
}

// create stores a new replicated experiment.
func (r *Replica) create(ctx context.Context, cfg *Config, raw []byte) (*rexp, error) {
	x, err := newRexp(cfg)
	if err != nil {
		return nil, err
	}
	pb, err := x.pol.(json.Marshaler).MarshalJSON()
	if err != nil {
		return nil, err
	}
	eb, err := replicaEngine(cfg)
	if err != nil {
		return nil, err
	}
	g, err := newFilter(cfg.Notion, cfg.FilterBudget)
	if err != nil {
		return nil, err
	}
	gb, err := g.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if err := r.st.CreateReplicated(ctx, store.Experiment{ID: cfg.ID, Name: cfg.Name, Config: raw, CreatedAt: cfg.CreatedAt},
		store.State{Policy: pb, Engine: eb, Version: 1}, gb); err != nil {
		return nil, err
	}
	x.version = 1
	r.mu.Lock()
	r.exps[cfg.ID] = x
	r.ord = append(r.ord, x)
	r.mu.Unlock()
	return x, nil
}

func (r *Replica) get(ctx context.Context, id string) (*rexp, string) {
	r.mu.RLock()
	x, why := r.exps[id], r.bad[id]
	r.mu.RUnlock()
	if x != nil || why != "" {
		return x, why
	}
	// Created on another replica since the last discovery.
	if se, err := r.st.Experiment(ctx, id); err == nil {
		if x, err := r.load(ctx, se); err == nil {
			r.mu.Lock()
			if r.exps[id] == nil {
				r.exps[id] = x
				r.ord = append(r.ord, x)
			}
			x = r.exps[id]
			r.mu.Unlock()
			return x, ""
		} else {
			return nil, err.Error()
		}
	}
	return nil, ""
}

func (r *Replica) all() []*rexp {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*rexp(nil), r.ord...)
}

// decideOne makes one decision with a fresh event id (id: the client's,
// known not to be logged yet, or "" for a generated one), and logs it
// before returning.
func (r *Replica) decideOne(ctx context.Context, x *rexp, id string) (decision, error) {
	x.mu.Lock()
	var arm int
	frozen := false
	for {
		if x.exhausted {
			if x.cfg.OnExhausted == Stop {
				x.mu.Unlock()
				return decision{}, stoppedError{fmt.Sprintf("experiment %s is stopped: %s. Its on_exhausted rule is \"stop\", so no more decisions are made", x.cfg.ID, x.exhWhy)}
			}
			arm, frozen = frozenDraw(x.released, rand.New(x.src)), true
			break
		}
		c := x.met.NextCost()
		if c.Value != 0 && c.Notion != x.cfg.Notion {
			x.mu.Unlock()
			return decision{}, fmt.Errorf("policy %s reported a %s cost for a %s filter", x.cfg.Policy, c.Notion, x.cfg.Notion)
		}
		if c.Value != 0 && (x.allow == nil || !x.allow.CanSpend(c.Value)) {
			x.mu.Unlock()
			if err := r.reserve(ctx, x, c.Value); err != nil {
				return decision{}, err
			}
			x.mu.Lock()
			continue // the state or the exhaustion may have changed meanwhile
		}
		if c.Value != 0 {
			if err := x.allow.Spend(c.Value); err != nil {
				x.mu.Unlock()
				return decision{}, fmt.Errorf("charging the step: %w", err)
			}
		}
		if err := safely(func() { arm = x.pol.Select() }); err != nil {
			x.mu.Unlock()
			return decision{}, fmt.Errorf("policy %s failed to select (its step was charged; nothing was released): %w", x.cfg.Policy, err)
		}
		if arm < 0 || arm >= len(x.cfg.Arms) {
			x.mu.Unlock()
			return decision{}, fmt.Errorf("policy %s chose arm %d of %d", x.cfg.Policy, arm, len(x.cfg.Arms))
		}
		break
	}
	now := time.Now()
	if id == "" {
		id = (&experiment{ids: x.ids}).newEventID(now)
	}
	x.rateN++
	x.mu.Unlock()
	if frozen {
		r.nFrozen.Add(1)
	} else {
		r.nDecisions.Add(1)
	}
	d := &store.Decision{Experiment: x.cfg.ID, EventID: id, Arm: arm, Frozen: frozen, CreatedAt: time.UnixMilli(now.UnixMilli()).UTC()}
	if err := r.log1(ctx, &rwork{dec: d}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			// The same client event id was decided on another replica
			// meanwhile: answer that decision (this one is not released).
			if sd, gerr := r.st.Decision(ctx, x.cfg.ID, id); gerr == nil {
				return decision{EventID: id, Arm: x.cfg.Arms[sd.Arm], frozen: sd.Frozen}, nil
			}
		}
		return decision{}, err
	}
	return decision{EventID: id, Arm: x.cfg.Arms[arm], frozen: frozen}, nil
}

// frozenDraw draws from the empirical distribution of the released
// decisions (uniform if none): post-processing of released outputs.
func frozenDraw(released []int64, rng *rand.Rand) int {
	var total int64
	for _, c := range released {
		total += c
	}
	if total == 0 {
		return rng.IntN(len(released))
	}
	u := rng.Int64N(total)
	for i, c := range released {
		if u < c {
			return i
		}
		u -= c
	}
	return len(released) - 1
}

// steps sizes a block: about one second of this replica's steps at its
// recent rate, in [16, 32768], and at most 5% of the horizon (≥ 16).
func (x *rexp) stepsLocked(now time.Time) int {
	if dt := now.Sub(x.rateT0); dt >= 250*time.Millisecond {
		x.rate = 0.5*x.rate + 0.5*float64(x.rateN)/dt.Seconds()
		x.rateT0, x.rateN = now, 0
	}
	return min(max(int(x.rate), 16), 32768, max(16, x.cfg.Horizon/20))
}

// reserve obtains a new block that pays for a step of cost cost, or finds
// the budget exhausted (then x is exhausted, globally).
func (r *Replica) reserve(ctx context.Context, x *rexp, cost float64) error {
	x.resv.Lock()
	defer x.resv.Unlock()
	x.mu.Lock()
	if x.exhausted || (x.allow != nil && x.allow.CanSpend(cost)) {
		x.mu.Unlock()
		return nil // another request reserved meanwhile
	}
	n := x.stepsLocked(time.Now())
	x.mu.Unlock()
	var chunk float64
	t0 := time.Now()
	b, err := r.st.Reserve(ctx, x.cfg.ID, func(b store.Budget) (store.Grant, error) {
		var g privacy.Filter
		if err := g.UnmarshalJSON(b.Granted); err != nil {
			return store.Grant{}, fmt.Errorf("experiment %s: budget row: %w", x.cfg.ID, err)
		}
		if b.Exhausted || !g.CanSpend(cost) {
			return store.Grant{Exhausted: true}, nil
		}
		chunk = blockSize(&g, cost, n)
		if err := g.Spend(chunk); err != nil {
			return store.Grant{}, err
		}
		gb, err := g.MarshalJSON()
		return store.Grant{Granted: gb, Amount: chunk}, err
	})
	r.reserveNanos.Add(int64(time.Since(t0)))
	r.nReserve.Add(1)
	if err != nil {
		return fmt.Errorf("reserving privacy budget: %w", err)
	}
	if b.Exhausted {
		rel, err := r.st.Released(ctx, x.cfg.ID, len(x.cfg.Arms))
		if err != nil {
			return err
		}
		x.mu.Lock()
		x.exhausted, x.exhWhy, x.allow, x.released = true, exhaustedWhy(b), nil, rel
		x.mu.Unlock()
		return nil
	}
	a, err := newFilter(x.cfg.Notion, chunk)
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.allow = a // what was left of the previous block is smaller than the step: wasted, counted as spent
	x.mu.Unlock()
	return nil
}

// blockSize is the block to reserve from g (not yet spent) for steps of
// about cost, n of them: c·sqrt(n) under GDP (μ composes as the root of the
// sum of squares), c·n under additive notions; at most a quarter of what g
// has left (so a crash strands little and the last of the budget goes in
// shrinking blocks), at least the step; all that is left when the block
// does not fit. The caller checked g.CanSpend(cost).
func blockSize(g *privacy.Filter, cost float64, n int) float64 {
	var chunk float64
	if g.Notion() == privacy.NotionGDP {
		chunk = cost * math.Sqrt(float64(n))
	} else {
		chunk = cost * float64(n)
	}
	chunk = max(min(chunk, g.PerStep(4)), cost)
	if !g.CanSpend(chunk) {
		chunk = max(g.Remaining(), cost)
		if !g.CanSpend(chunk) {
			chunk = cost
		}
	}
	return chunk
}

// log1 queues one decision or reward for the writer and waits until it
// is durable (or failed).
func (r *Replica) log1(ctx context.Context, w *rwork) error {
	w.done = make(chan error, 1)
	r.wmu.Lock()
	r.wq = append(r.wq, w)
	r.wmu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the log: %w", ctx.Err())
	}
}

// writer logs queued decisions and rewards, all that is queued in one
// transaction (group commit); a batch that conflicts on an event id is
// retried one item per transaction, so that only the conflicting item fails.
func (r *Replica) writer() {
	defer r.wg.Done()
	for {
		select {
		case <-r.wake:
		case <-r.quit:
			r.flush()
			return
		}
		r.flush()
	}
}

func (r *Replica) flush() {
	for {
		r.wmu.Lock()
		ws := r.wq
		r.wq = nil
		r.wmu.Unlock()
		if len(ws) == 0 {
			return
		}
		err := r.st.Append(context.Background(), batchOf(ws))
		if errors.Is(err, store.ErrConflict) && len(ws) > 1 {
			for _, w := range ws {
				w.done <- r.st.Append(context.Background(), batchOf([]*rwork{w}))
			}
			continue
		}
		for _, w := range ws {
			w.done <- err
		}
	}
}

func batchOf(ws []*rwork) *store.Batch {
	b := &store.Batch{}
	for _, w := range ws {
		if w.dec != nil {
			b.Decisions = append(b.Decisions, *w.dec)
		} else {
			b.Rewards = append(b.Rewards, *w.rew)
		}
	}
	return b
}

// reward stores one reward for a logged decision (decided by any replica)
// and returns once it is durable. The learner applies it.
func (r *Replica) reward(ctx context.Context, x *rexp, id string, v float64) (rewardResult, error) {
	res := rewardResult{EventID: id, Status: "accepted"}
	if _, err := r.st.Decision(ctx, x.cfg.ID, id); errors.Is(err, store.ErrNotFound) {
		return res, errUnknownEvent
	} else if err != nil {
		return res, err
	}
	have := func() (rewardResult, bool, error) {
		sr, err := r.st.Reward(ctx, x.cfg.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return res, false, nil
		}
		if err != nil {
			return res, true, err
		}
		out, err := dupOrConflict(&experiment{cfg: x.cfg}, res, sr.Value, sr.Default, v, false)
		return out, true, err
	}
	if out, found, err := have(); found || err != nil {
		return out, err
	}
	err := r.log1(ctx, &rwork{rew: &store.Reward{Experiment: x.cfg.ID, EventID: id, Value: v, CreatedAt: time.Now().UTC()}})
	if errors.Is(err, store.ErrConflict) {
		// Stored meanwhile through another replica.
		if out, found, herr := have(); found || herr != nil {
			return out, herr
		}
	}
	if err != nil {
		return res, err
	}
	return res, nil
}

// poller refreshes the decision copies, runs the learner of the
// experiments whose lease this replica holds, and discovers new
// experiments and keys.
func (r *Replica) poller() {
	defer r.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-r.quit
		cancel()
	}()
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	lastDiscover := time.Now()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
		}
		if time.Since(lastDiscover) >= time.Second {
			lastDiscover = time.Now()
			if err := r.discover(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("discovering experiments", "err", err)
			}
			if err := r.auth.reload(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("reloading keys", "err", err)
			}
		}
		for _, x := range r.all() {
			if ctx.Err() != nil {
				return
			}
			r.lead(ctx, x)
			r.refresh(ctx, x)
		}
	}
}

// lead takes or renews x's learner lease (every L/4) and, while held,
// folds the rewards stored since the committed offset.
func (r *Replica) lead(ctx context.Context, x *rexp) {
	now := time.Now()
	if !now.Before(x.nextLease) {
		x.nextLease = now.Add(r.o.Lease / 4)
		l, err := r.st.AcquireLease(ctx, x.cfg.ID, x.lease, r.o.Lease)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.log.Error("learner lease", "experiment", x.cfg.ID, "err", err)
			}
			x.lease, x.lpol = store.Lease{}, nil
			return
		case !l.Held:
			if x.lease.Held {
				r.log.Warn("lost the learner lease", "experiment", x.cfg.ID, "holder", l.Holder, "token", l.Token)
			}
			x.lease, x.lpol = store.Lease{}, nil
			return
		case l.Token != x.lease.Token:
			r.log.Info("took the learner lease", "experiment", x.cfg.ID, "token", l.Token)
			r.nLeaseTakes.Add(1)
			x.lpol = nil // continue from the committed state and offset
		}
		x.lease = l
	}
	if !x.lease.Held {
		return
	}
	if err := r.learn(ctx, x); err != nil {
		if ctx.Err() == nil {
			r.log.Error("learning", "experiment", x.cfg.ID, "err", err)
		}
		x.lpol = nil
		if errors.Is(err, store.ErrLeaseLost) {
			x.lease = store.Lease{}
		}
	}
}

// learn folds the rewards after the learner's offset into its policy copy
// and commits state and offset, fenced by the lease.
func (r *Replica) learn(ctx context.Context, x *rexp) error {
	if x.lpol == nil {
		st, _, err := r.st.Snapshot(ctx, x.cfg.ID)
		if err != nil {
			return err
		}
		p, _, err := buildReplicaPolicy(x.cfg, newPolicySource())
		if err != nil {
			return err
		}
		if err := restorePolicy(p, st.Policy); err != nil {
			return err
		}
		x.lpol, x.lapplied = p, st.AppliedSeq
	}
	rs, err := r.st.RewardsAfter(ctx, x.cfg.ID, x.lapplied)
	if err != nil || len(rs) == 0 {
		return err
	}
	lx := &experiment{cfg: x.cfg, pol: x.lpol, armRew: make([]int64, len(x.cfg.Arms)), armSum: make([]float64, len(x.cfg.Arms))}
	for _, rw := range rs {
		if rw.Purged {
			return fmt.Errorf("reward %d (event %s) has no value to apply", rw.Seq, rw.EventID)
		}
		// Update is deterministic for every replicable policy: no stream
		// is needed, and a redo after a failed commit applies the same.
		// The learner's copy never decides, but a policy's state counts
		// its rounds (the Selects) and refuses fewer rounds than observed
		// rewards: each reward of a policy decision stands for the round
		// that made it, so the copy counts one Select per such reward (its
		// draw is discarded, never released; the replicas' Selects are
		// counted in the decision log).
		if !rw.Frozen && rw.Arm >= 0 && rw.Arm < len(x.cfg.Arms) {
			if err := safely(func() { x.lpol.Select() }); err != nil {
				return err
			}
		}
		if err := lx.learn(rw.Arm, rw.Frozen, rw.Features, rw.Value); err != nil {
			r.log.Error("reward quarantined: the policy could not apply it", "experiment", x.cfg.ID, "event", rw.EventID, "seq", rw.Seq, "err", err)
		}
	}
	last := rs[len(rs)-1].Seq
	pb, err := x.lpol.(json.Marshaler).MarshalJSON()
	if err != nil {
		return err
	}
	eb, err := replicaEngine(x.cfg)
	if err != nil {
		return err
	}
	if _, err := r.st.CommitLearned(ctx, x.cfg.ID, x.lease, x.lapplied, store.State{Policy: pb, Engine: eb, AppliedSeq: last}); err != nil {
		return err
	}
	r.nLearned.Add(int64(len(rs)))
	x.lapplied = last
	return nil
}

// refresh loads x's newest committed state into its decision copy and
// notices a global exhaustion.
func (r *Replica) refresh(ctx context.Context, x *rexp) {
	st, b, err := r.st.Snapshot(ctx, x.cfg.ID)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("reading the newest state", "experiment", x.cfg.ID, "err", err)
		}
		return
	}
	x.mu.Lock()
	newer := st.Version > x.version
	if newer {
		if err := restorePolicy(x.pol, st.Policy); err != nil {
			r.log.Error("restoring the newest state; keeping the previous one", "experiment", x.cfg.ID, "err", err)
		} else {
			x.version = st.Version
		}
	}
	exh := b.Exhausted && !x.exhausted
	x.mu.Unlock()
	if exh {
		rel, err := r.st.Released(ctx, x.cfg.ID, len(x.cfg.Arms))
		if err != nil {
			r.log.Error("reading the released decisions", "experiment", x.cfg.ID, "err", err)
			return
		}
		x.mu.Lock()
		// The unused rest of this replica's block is dropped: it counts as
		// spent, and exhaustion is global.
		x.exhausted, x.exhWhy, x.allow, x.released = true, exhaustedWhy(b), nil, rel
		x.mu.Unlock()
	}
}
