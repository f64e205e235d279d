package server

import (
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/api"
	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/store"
)

// experiment is one running experiment: its policy, ledger and the
// in-memory part of its logs. Every field below mu is guarded by mu; the
// writer and the request handlers serialise on it (one mutex per
// experiment, so experiments never contend with each other).
type experiment struct {
	cfg *Config
	m   *expMetrics

	mu  sync.Mutex
	pol bandit.Policy     // K-armed policies
	ctx bandit.Contextual // contextual policies (pol is nil)
	met bandit.Metered    // set iff cfg.Accounting == AccountFilter (every private experiment)
	// props states the policy's selection probabilities (nil when the policy
	// does not; a private policy implements it only when they are
	// post-processing of released state, bandit.Propensities). prand draws
	// their Monte Carlo estimates (its own CSPRNG stream; the probabilities
	// are released, the draws are not); probs is scratch of length K.
	props bandit.Propensities
	prand *rand.Rand
	probs []float64
	src   *policySource
	ids   *rand.ChaCha8 // event-id generator (its own stream)
	led   *ledger       // nil for AccountNone

	exhausted   bool
	exhaustedAt int64 // the refused step: seq of the first decision not made by the policy
	exhaustWhy  string

	seq       int64         // last assigned decision seq (served decisions)
	loggedSeq int64         // last logged (committed) decision seq
	loggedC   chan struct{} // closed (and replaced) after each commit that logs decisions
	pendDec   []store.Decision
	pendEnt   []*entry
	pendRew   []*claim
	dirty     bool // queued at the writer

	recent map[string]*entry
	order  []*entry // FIFO for eviction
	head   int

	released  []int64 // per arm: decisions made by the policy (the freeze distribution)
	armDec    []int64 // per arm: all decisions served
	frozenDec int64

	rewardSeq  int64 // last stored reward seq
	appliedSeq int64 // last reward seq applied to the policy
	// Reward retention: durableApplied is the AppliedSeq of the last durable
	// state (rewards up to it are never replayed); purgedSeq the last seq
	// whose value is deleted; marks the commits with rewards not yet purged.
	durableApplied int64
	purgedSeq      int64
	marks          []purgeMark
	defaultsMark   int64 // decisions with seq ≤ this were examined for default rewards
	version        int64

	armRew []int64   // internal: rewards per arm
	armSum []float64 // internal: reward sums per arm (in the reward range)
	hist   []histPoint

	rateT0 time.Time
	rateN  int
	rate   float64 // decisions per second (EWMA)

	// status is the operator's lifecycle state: "" (active), stopped or
	// archived (lifecycle.go); deleted is set when the experiment is being
	// deleted (nothing of it is written any more).
	status  string
	deleted bool
	// durableVersion is the Version of the last state committed durably.
	durableVersion int64

	// restoreBad lists the stored rewards the restore could not apply
	// (quarantined; openEngine logs and counts them).
	restoreBad []quarantined
}

// entry is an in-memory decision: every decision not yet logged, and
// logged ones until evicted (then they live in the store only).
type entry struct {
	id       string
	seq      int64
	arm      int32
	frozen   bool
	logged   bool
	created  int64     // unix ms
	features []float64 // contextual: the chosen candidate (scaled)
	prop     *propensity
	claim    *claim
}

// propensity is the probability with which a decision's arm was chosen,
// from draws Monte Carlo draws (0: exact).
type propensity struct {
	p     float64
	draws int
}

// propensityDraws is the number of Monte Carlo draws behind a randomised
// policy's propensity: standard error sqrt(p(1−p)/4096) ≤ 0.0079.
const propensityDraws = 4096

// claim is a reward for one decision: pending until its commit is durable.
type claim struct {
	ent     *entry
	value   float64
	def     bool
	created time.Time
	seq     int64
	done    chan struct{} // closed when durable or failed
	err     error
	durable bool
}

// purgeMark says that the rewards with seq ≤ seq were stored at or before at
// (one per group commit with rewards).
type purgeMark struct {
	seq int64
	at  time.Time
}

// histPoint is one sample of an experiment's counts over time.
type histPoint = api.HistoryPoint

// engineState is the server's durable per-experiment state (store.State.Engine).
type engineState struct {
	Ledger       *ledgerState `json:"ledger,omitempty"`
	Exhausted    bool         `json:"exhausted"`
	ExhaustedAt  int64        `json:"exhausted_at,omitempty"`
	ExhaustWhy   string       `json:"exhaust_reason,omitempty"`
	Released     []int64      `json:"released"`
	ArmDecisions []int64      `json:"arm_decisions"`
	Frozen       int64        `json:"frozen_decisions"`
	ArmRewards   []int64      `json:"arm_rewards"`
	ArmSums      []float64    `json:"arm_sums"`
	DefaultsMark int64        `json:"defaults_mark"`
	PurgedSeq    int64        `json:"purged_seq,omitempty"`
	Status       string       `json:"status,omitempty"` // "", stopped or archived
	// UpdateSeed keys the update stream of the rewards with
	// AppliedSeq < seq ≤ RewardSeq (the last commit's), for an exact replay.
	UpdateSeed []byte `json:"update_seed,omitempty"`
}

// errStopped is returned by decide when on_exhausted is "stop".
type stoppedError struct{ msg string }

func (e stoppedError) Error() string { return e.msg }

// newExperiment builds the runtime of a configuration with a fresh policy.
func newExperiment(cfg *Config) (*experiment, error) {
	d, err := bandit.Lookup(bandit.AnyKind, cfg.Policy)
	if err != nil {
		return nil, err
	}
	e := &experiment{cfg: cfg, src: newPolicySource(), ids: noise.NewSecureSource(), recent: map[string]*entry{}, loggedC: make(chan struct{}),
		released: make([]int64, len(cfg.Arms)), armDec: make([]int64, len(cfg.Arms)),
		armRew: make([]int64, len(cfg.Arms)), armSum: make([]float64, len(cfg.Arms)), rateT0: time.Now()}
	impl, err := build(d, cfg.setting(), cfg.Params, rand.New(e.src))
	if err != nil {
		return nil, fmt.Errorf("experiment %s: building %s: %w", cfg.ID, cfg.Policy, err)
	}
	if pp, ok := impl.(bandit.Propensities); ok {
		e.props, e.prand, e.probs = pp, rand.New(noise.NewSecureSource()), make([]float64, len(cfg.Arms))
	}
	switch p := impl.(type) {
	case bandit.Policy:
		e.pol = p
	case bandit.Contextual:
		e.ctx = p
	default:
		return nil, fmt.Errorf("experiment %s: %s is neither a K-armed nor a contextual policy", cfg.ID, cfg.Policy)
	}
	if cfg.Accounting == AccountFilter {
		m, ok := impl.(bandit.Metered)
		if !ok {
			return nil, fmt.Errorf("experiment %s: policy %s is not metered", cfg.ID, cfg.Policy)
		}
		e.met = m
	}
	if cfg.Accounting != AccountNone {
		if e.led, err = newLedger(cfg.Notion, cfg.FilterBudget); err != nil {
			return nil, fmt.Errorf("experiment %s: %w", cfg.ID, err)
		}
	}
	if _, ok := impl.(json.Marshaler); !ok {
		return nil, fmt.Errorf("experiment %s: policy %s cannot serialise its state", cfg.ID, cfg.Policy)
	}
	return e, nil
}

// restore loads the durable state (no lock needed: not yet shared) and
// replays the rewards stored after the policy state with their stored seed.
//
// Every state the engine writes, from creation on, carries both the policy's
// state and its own (snapshot). A record with either missing is damaged:
// loading it as a fresh policy with a fresh ledger would forget the budget
// already spent, so it is refused and the experiment is listed as
// unavailable.
func (e *experiment) restore(st store.State, replay []store.JoinedReward) error {
	if len(st.Policy) == 0 || len(st.Engine) == 0 {
		missing := "policy state"
		if len(st.Engine) == 0 {
			missing = "engine state (privacy ledger, counts, seeds)"
		}
		return fmt.Errorf("the stored state is damaged: its %s is empty. Serving it would start a fresh privacy ledger and forget the budget already spent, "+
			"so it is not loaded; restore the database from a backup, or delete the experiment", missing)
	}
	u, ok := e.impl().(json.Unmarshaler)
	if !ok {
		return fmt.Errorf("policy %s cannot restore its state", e.cfg.Policy)
	}
	var err error
	if perr := safely(func() { err = u.UnmarshalJSON(st.Policy) }); perr != nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("restoring the policy state: %w", err)
	}
	var es engineState
	if err := json.Unmarshal(st.Engine, &es); err != nil {
		return fmt.Errorf("engine state: %w", err)
	}
	if es.Ledger != nil && e.led != nil {
		l, err := restoreLedger(*es.Ledger)
		if err != nil {
			return err
		}
		e.led = l
		if l.all && !es.Exhausted && (e.met == nil || e.met.NextCost().Value != 0) {
			// The whole budget was reserved: the live spent before the crash
			// is unknown up to the reservation, so no further step that
			// costs anything is taken. (A policy whose restored state says
			// its next steps cost nothing, such as a pure-DP epoch policy
			// that was charged its whole ε at its first step, keeps going:
			// spent := reserved covers everything it ever spent.)
			es.Exhausted, es.ExhaustedAt = true, st.DecisionSeq+1
			es.ExhaustWhy = "the whole remaining budget was reserved before a restart; the experiment is treated as exhausted (conservative)"
		}
	}
	e.exhausted, e.exhaustedAt, e.exhaustWhy = es.Exhausted, es.ExhaustedAt, es.ExhaustWhy
	switch es.Status {
	case "", statusStopped, statusArchived:
		e.status = es.Status
	default:
		return fmt.Errorf("engine state: unknown status %q", es.Status)
	}
	k := len(e.cfg.Arms)
	copyN := func(dst []int64, src []int64) {
		if len(src) == k {
			copy(dst, src)
		}
	}
	copyN(e.released, es.Released)
	copyN(e.armDec, es.ArmDecisions)
	copyN(e.armRew, es.ArmRewards)
	if len(es.ArmSums) == k {
		copy(e.armSum, es.ArmSums)
	}
	e.frozenDec, e.defaultsMark = es.Frozen, es.DefaultsMark
	e.seq, e.loggedSeq, e.rewardSeq, e.appliedSeq, e.version = st.DecisionSeq, st.DecisionSeq, st.RewardSeq, st.AppliedSeq, st.Version
	e.durableApplied, e.purgedSeq = st.AppliedSeq, es.PurgedSeq
	if e.rewardSeq > e.purgedSeq {
		// When the rewards stored before the restart were stored is not
		// kept: they count from now (their values are kept a bit longer).
		e.marks = []purgeMark{{seq: e.rewardSeq, at: time.Now()}}
	}
	if len(replay) > 0 {
		if len(es.UpdateSeed) != 32 {
			return fmt.Errorf("%d stored rewards after the policy state but no update seed", len(replay))
		}
		for _, r := range replay {
			if r.Purged {
				return fmt.Errorf("reward %d (event %s) must be replayed but its value was deleted: the store was purged beyond the durable policy state", r.Seq, r.EventID)
			}
		}
		e.restoreBad = e.applyRewards(replay, [32]byte(es.UpdateSeed))
	}
	return nil
}

// applyRewards feeds stored rewards to the policy on the update stream
// keyed by seed, in seq order. Rewards of frozen decisions are counted but
// not learned from (the policy did not make those decisions). A reward that
// cannot be applied is skipped (quarantined) and returned with the reason;
// the others are applied.
func (e *experiment) applyRewards(rs []store.JoinedReward, seed [32]byte) []quarantined {
	e.src.updates(seed)
	defer e.src.selects()
	var bad []quarantined
	for _, r := range rs {
		if err := e.learn(r.Arm, r.Frozen, r.Features, r.Value); err != nil {
			bad = append(bad, quarantined{event: r.EventID, seq: r.Seq, err: err})
		}
		e.appliedSeq = r.Seq
	}
	return bad
}

// quarantined is a stored record that could not be applied: it stays in
// the store, is logged and counted (dpbandit_quarantined_total), and the
// experiment keeps serving without it.
type quarantined struct {
	event string
	seq   int64
	err   error
}

// quarantineError is what a request waiting on a quarantined reward gets.
type quarantineError struct{ err error }

func (q quarantineError) Error() string {
	return "the reward was stored but the policy could not apply it, so it is quarantined (kept, not learned from): " + q.err.Error()
}

// impl is the policy, K-armed or contextual.
func (e *experiment) impl() any {
	if e.ctx != nil {
		return e.ctx
	}
	return e.pol
}

// learn applies one reward to the policy. It checks the record first (arm,
// features, and that the reward scales into [0, 1]) and runs the policy's
// Update under recover: a record the policy cannot take returns an error
// and is not counted, and no stored record can panic the writer or a
// restore. (A policy that panics part-way through Update may have changed
// part of its state; every policy validates its inputs before changing
// anything, so that is a policy bug, and the error says so.)
func (e *experiment) learn(arm int, frozen bool, x []float64, v float64) error {
	k := len(e.cfg.Arms)
	if arm < 0 || arm >= k {
		return fmt.Errorf("arm %d is not one of the experiment's %d arms", arm, k)
	}
	y, ok := e.cfg.normalize(v)
	if !ok || !finite(v) {
		return fmt.Errorf("reward %v does not scale into [0, 1] by the experiment's reward_range [%v, %v] (scaled: %v)", v, e.cfg.RewardRange[0], e.cfg.RewardRange[1], y)
	}
	if !frozen {
		var err error
		if e.ctx != nil {
			if len(x) != e.cfg.Dim {
				return fmt.Errorf("the decision's features have %d entries; the experiment's dim is %d", len(x), e.cfg.Dim)
			}
			for j, f := range x {
				if !finite(f) {
					return fmt.Errorf("feature %d of the decision is %v, not a finite number", j, f)
				}
			}
			err = safely(func() { e.ctx.Update(x, y) })
		} else {
			err = safely(func() { e.pol.Update(arm, y) })
		}
		if err != nil {
			return fmt.Errorf("policy %s refused it: %w", e.cfg.Policy, err)
		}
	}
	e.armRew[arm]++
	e.armSum[arm] += v
	return nil
}

// safely runs f and turns a panic into an error (with the panic's value),
// so that a policy's programmer error never takes the service down or
// leaves an experiment's mutex locked.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f()
	return nil
}

// snapshot returns the experiment's durable state, as of exactly the
// decisions assigned so far and the rewards applied so far. ledger, when
// non-nil, replaces the ledger state (a pending extension being committed).
func (e *experiment) snapshot(led *ledgerState, seed *[32]byte) (store.State, error) {
	var pb []byte
	var err error
	if perr := safely(func() { pb, err = e.impl().(json.Marshaler).MarshalJSON() }); perr != nil {
		err = perr
	}
	if err != nil {
		return store.State{}, fmt.Errorf("experiment %s: serialising the policy: %w", e.cfg.ID, err)
	}
	es := engineState{Exhausted: e.exhausted, ExhaustedAt: e.exhaustedAt, ExhaustWhy: e.exhaustWhy,
		Released: e.released, ArmDecisions: e.armDec, Frozen: e.frozenDec, ArmRewards: e.armRew, ArmSums: e.armSum,
		DefaultsMark: e.defaultsMark, PurgedSeq: e.purgedSeq, Status: e.status}
	if e.led != nil {
		if led == nil {
			s := e.led.state()
			led = &s
		}
		es.Ledger = led
	}
	if seed != nil {
		es.UpdateSeed = seed[:]
	}
	eb, err := json.Marshal(es)
	if err != nil {
		return store.State{}, err
	}
	e.version++
	return store.State{Policy: pb, Engine: eb, DecisionSeq: e.seq, RewardSeq: e.rewardSeq, AppliedSeq: e.appliedSeq, Version: e.version}, nil
}

// idEnc is base32hex in lower case without padding: its alphabet is in
// ASCII order, so byte order of ids follows byte order of the encoded bytes.
var idEnc = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// newEventID returns a fresh event id: "ev_" and 26 characters of base32hex
// (lower case) over 16 bytes, the unix time in milliseconds (6 bytes,
// big-endian) followed by 80 random bits. The time prefix makes generated
// ids arrive in nearly increasing order, so the store's unique index on
// (experiment, event_id) grows at its right edge instead of dirtying a
// random leaf page per decision (the decision log's main write cost); the
// 80 random bits keep ids unguessable. The time is not private: it is when
// the decision was served, which the caller already knows.
func (e *experiment) newEventID(now time.Time) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint64(b[:8], ms<<16)
	binary.LittleEndian.PutUint64(b[6:14], e.ids.Uint64())
	binary.LittleEndian.PutUint16(b[14:], uint16(e.ids.Uint64()))
	return "ev_" + idEnc.EncodeToString(b[:])
}

// decision is one served decision.
type decision struct {
	EventID string `json:"event_id"`
	Arm     string `json:"arm"`
	// Propensity is the probability with which Arm was chosen, when asked
	// for; PropensityDraws the Monte Carlo draws behind it (absent: exact).
	Propensity      *float64 `json:"propensity,omitempty"`
	PropensityDraws int      `json:"propensity_draws,omitempty"`
	frozen          bool
}

// decisionOf is the answer for a decision made earlier (a repeated event
// id): as it was first made, with its propensity if that request asked.
func decisionOf(arm string, p *propensity) decision {
	d := decision{Arm: arm}
	if p != nil {
		d.Propensity, d.PropensityDraws = &p.p, p.draws
	}
	return d
}

// errNeedReservation asks decide to wait for ext and retry.
type needReservation struct{ ext *extension }

func (needReservation) Error() string { return "waiting for a privacy reservation" }

// stepLocked makes one decision with event id id (not yet known), with its
// propensity when wantProp (the caller checked that e.props is set). It
// returns needReservation when the step is not covered by a durable
// reservation, and stoppedError when the budget is exhausted and
// on_exhausted is stop.
func (e *experiment) stepLocked(id string, now time.Time, chunkSteps int, cands [][]float64, wantProp bool) (decision, error) {
	if e.status != "" || e.deleted {
		return decision{}, lifecycleError{e.cfg.ID, e.status, e.deleted}
	}
	if !e.exhausted && e.led != nil {
		c := e.met.NextCost() // every private served policy is Metered (newConfig)
		if c.Value != 0 && c.Notion != e.cfg.Notion {
			return decision{}, fmt.Errorf("policy %s reported a %s cost for a %s filter", e.cfg.Policy, c.Notion, e.cfg.Notion)
		}
		x := c.Value
		switch {
		case !e.led.f.CanSpend(x):
			e.exhausted, e.exhaustedAt = true, e.seq+1
			e.exhaustWhy = fmt.Sprintf("the privacy filter refused decision %d: its cost %s = %.6g exceeds the remaining %.6g of the budget %.6g",
				e.seq+1, paramName(e.cfg.Notion), x, e.led.f.Remaining(), e.led.f.Budget())
		case !e.led.covered(x):
			return decision{}, needReservation{e.led.request(x, chunkSteps)}
		default:
			e.led.charge(x)
			if e.led.low() {
				e.led.request(x, chunkSteps)
			}
		}
	}
	var arm int
	frozen := false
	var prop *propensity
	if e.exhausted {
		if e.cfg.OnExhausted == Stop {
			return decision{}, stoppedError{fmt.Sprintf("experiment %s is stopped: %s. Its on_exhausted rule is \"stop\", so no more decisions are made; create a new experiment with a new budget, or use on_exhausted \"freeze\" to keep serving decisions from the past ones", e.cfg.ID, e.exhaustWhy)}
		}
		arm, frozen = e.frozenArm(), true
		if wantProp {
			prop = &propensity{p: e.frozenProb(arm)}
		}
	} else {
		draws := 0
		if wantProp {
			// Before Select: the distribution Select is about to draw from.
			if err := safely(func() { draws = e.props.SelectProbs(cands, e.probs, propensityDraws, e.prand) }); err != nil {
				return decision{}, fmt.Errorf("policy %s failed to state its propensities: %w", e.cfg.Policy, err)
			}
		}
		var err error
		if e.ctx != nil {
			err = safely(func() { arm = e.ctx.Select(cands) })
		} else {
			err = safely(func() { arm = e.pol.Select() })
		}
		if err != nil {
			return decision{}, fmt.Errorf("policy %s failed to select (its step was charged; nothing was released): %w", e.cfg.Policy, err)
		}
		if arm < 0 || arm >= len(e.cfg.Arms) {
			return decision{}, fmt.Errorf("policy %s chose arm %d of %d", e.cfg.Policy, arm, len(e.cfg.Arms))
		}
		if wantProp {
			prop = &propensity{p: e.probs[arm], draws: draws}
		}
	}
	e.seq++
	ms := now.UnixMilli()
	ent := &entry{id: id, seq: e.seq, arm: int32(arm), frozen: frozen, created: ms, prop: prop}
	if e.ctx != nil {
		ent.features = slicesClone(cands[arm])
	}
	e.recent[id] = ent
	e.order = append(e.order, ent)
	e.pendEnt = append(e.pendEnt, ent)
	sd := store.Decision{Experiment: e.cfg.ID, EventID: id, Seq: e.seq, Arm: arm, Frozen: frozen, CreatedAt: time.UnixMilli(ms).UTC(), Features: ent.features}
	if prop != nil {
		sd.Propensity, sd.PropensityDraws = &prop.p, prop.draws
	}
	e.pendDec = append(e.pendDec, sd)
	e.armDec[arm]++
	if frozen {
		e.frozenDec++
	} else {
		e.released[arm]++
	}
	e.rateN++
	d := decisionOf(e.cfg.Arms[arm], prop)
	d.EventID, d.frozen = id, frozen
	return d, nil
}

// frozenArm draws from the empirical distribution of the decisions the
// policy released before the budget ran out (uniform if there were none):
// post-processing of released outputs, with no privacy cost. The draw uses
// the secure select stream.
func (e *experiment) frozenArm() int {
	var total int64
	for _, c := range e.released {
		total += c
	}
	r := rand.New(e.src)
	if total == 0 {
		return r.IntN(len(e.released))
	}
	u := r.Int64N(total)
	for i, c := range e.released {
		if u < c {
			return i
		}
		u -= c
	}
	return len(e.released) - 1
}

// frozenProb is the probability with which frozenArm returns arm: its share
// of the released decisions (uniform if there were none). Exact, and
// post-processing of released outputs like the draw itself.
func (e *experiment) frozenProb(arm int) float64 {
	var total int64
	for _, c := range e.released {
		total += c
	}
	if total == 0 {
		return 1 / float64(len(e.released))
	}
	return float64(e.released[arm]) / float64(total)
}

// chunkSteps sizes a reservation: about half a second of decisions at the
// current rate, in [16, 32768], and at most 5% of the horizon (but ≥ 16).
func (e *experiment) chunkSteps(now time.Time) int {
	if dt := now.Sub(e.rateT0); dt >= 250*time.Millisecond {
		r := float64(e.rateN) / dt.Seconds()
		e.rate = 0.5*e.rate + 0.5*r
		e.rateT0, e.rateN = now, 0
	}
	n := int(e.rate / 2)
	n = min(max(n, 16), 32768, max(16, e.cfg.Horizon/20))
	return n
}

// paramName names the filter's additive parameter in the notion n.
func paramName(n privacy.Notion) string { return privacy.ParamName(n) }

// evictLocked drops logged decisions from memory: those with a durable
// reward at once, the others after retain.
func (e *experiment) evictLocked(now time.Time, retain time.Duration) {
	cut := now.Add(-retain).UnixMilli()
	for e.head < len(e.order) {
		en := e.order[e.head]
		if !en.logged {
			break
		}
		if c := en.claim; c != nil && !c.durable {
			break
		}
		if en.claim == nil && en.created > cut {
			break
		}
		if e.recent[en.id] == en {
			delete(e.recent, en.id)
		}
		e.order[e.head] = nil
		e.head++
	}
	if e.head > 1024 && e.head*2 > len(e.order) {
		n := copy(e.order, e.order[e.head:])
		clear(e.order[n:])
		e.order = e.order[:n]
		e.head = 0
	}
}

var errUnknownEvent = errors.New("unknown event")
