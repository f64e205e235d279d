package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/privacy"
	"github.com/dpbandit/dpbandit/store"
)

// Handler returns the replica's HTTP handler: the API subset that replica
// mode serves (docs/replicas.md §6). Other /v1 routes answer 501.
func (r *Replica) Handler() http.Handler { return r.h }

// HTTPServer returns an http.Server for addr with the service's timeouts.
func (r *Replica) HTTPServer(addr string) *http.Server {
	return &http.Server{Addr: addr, Handler: r.h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(r.log.Handler(), slog.LevelWarn)}
}

func (r *Replica) routes() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, methods map[string]handler) {
		mux.HandleFunc(pattern, dispatch(methods, r.auth, r.o.MaxBodyBytes, r.log))
	}
	route("/v1/experiments", map[string]handler{"POST": r.createExperiment, "GET": r.listExperiments})
	route("/v1/experiments/{id}", map[string]handler{"GET": r.getExperiment})
	route("/v1/experiments/{id}/decisions", map[string]handler{"POST": r.decide})
	route("/v1/experiments/{id}/rewards", map[string]handler{"POST": r.rewards})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"status": "ok", "mode": "replica", "replica": r.ID(), "experiments": len(r.all())})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		writeErr(w, errf(http.StatusNotImplemented, "not_in_replica_mode", fmt.Sprintf("%s %s is not served in replica mode (serve --replica serves POST/GET /v1/experiments, GET /v1/experiments/{id}, POST .../decisions, POST .../rewards and GET /healthz; docs/replicas.md)", req.Method, req.URL.Path)))
	})
	return mux
}

func (r *Replica) createExperiment(w http.ResponseWriter, req *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "creating an experiment"); e != nil {
		return e
	}
	var cr createRequest
	if e := decodeBody(req, &cr, false); e != nil {
		return e
	}
	if err := checkReplicable(cr); err != nil {
		return errf(http.StatusBadRequest, "not_replicable", err.Error())
	}
	cfg, err := newConfig(cr, newID("exp_"), time.Now())
	if err != nil {
		return errf(http.StatusBadRequest, "invalid_experiment", err.Error())
	}
	if cfg.Accounting != AccountFilter {
		return errf(http.StatusBadRequest, "not_replicable", fmt.Sprintf("policy %s is served without a privacy filter here (accounting %q); replica mode serves private experiments with a budget", cfg.Policy, cfg.Accounting))
	}
	cfg.DurableDecisions = true // replicas log every decision before answering it
	raw, err := json.Marshal(cfg)
	if err != nil {
		return errf(500, "internal", err.Error())
	}
	if _, err := r.create(req.Context(), cfg, raw); err != nil {
		return errf(500, "internal", "storing the experiment failed: "+err.Error())
	}
	v, e := r.view(req.Context(), cfg.ID)
	if e != nil {
		return e
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (r *Replica) listExperiments(w http.ResponseWriter, req *http.Request, p *principal) *apiError {
	out := []map[string]any{}
	for _, x := range r.all() {
		if p.admin || p.scope[x.cfg.ID] {
			out = append(out, map[string]any{"id": x.cfg.ID, "name": x.cfg.Name, "policy": x.cfg.Policy})
		}
	}
	writeJSON(w, 200, map[string]any{"experiments": out})
	return nil
}

func (r *Replica) experiment(req *http.Request, p *principal) (*rexp, *apiError) {
	id := req.PathValue("id")
	if !p.admin && !p.scope[id] {
		return nil, errf(http.StatusForbidden, "forbidden", fmt.Sprintf("this client key is scoped to experiments %s, not %q; use a key created for it", strings.Join(p.exps, ", "), id))
	}
	x, why := r.get(req.Context(), id)
	if x == nil {
		if why != "" {
			return nil, errf(http.StatusConflict, "not_replicated", fmt.Sprintf("experiment %s is not served in replica mode: %s", id, why))
		}
		return nil, errf(http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q; list them with GET /v1/experiments", id))
	}
	return x, nil
}

// replicaView is GET /v1/experiments/{id} in replica mode: the privacy
// status read from the budget row at the time of the request (so spent is
// the same whichever replica answers), the lease, and this replica's view.
type replicaView struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Policy string   `json:"policy"`
	Arms   []string `json:"arms"`
	// RewardRange as in one-server mode (dpbandit loadtest reads it).
	RewardRange [2]float64    `json:"reward_range"`
	Privacy     replicaBudget `json:"budget_row"`
	Learner     replicaLease  `json:"learner"`
	Replica     replicaSelf   `json:"replica"`
}

type replicaBudget struct {
	Notion privacy.Notion `json:"notion"`
	Budget float64        `json:"budget"`
	// Spent is the certified spent: every block ever granted to any
	// replica, used or not.
	Spent        float64 `json:"spent"`
	Remaining    float64 `json:"remaining"`
	Exhausted    bool    `json:"exhausted"`
	ExhaustedAt  *int64  `json:"exhausted_at_ms,omitempty"`
	Reservations int64   `json:"reservations"`
}

type replicaLease struct {
	Holder    string `json:"holder"`
	Token     int64  `json:"token"`
	ExpiresMS int64  `json:"expires_at_ms"`
	// AppliedSeq is the committed offset: rewards up to it are in the
	// state; StateVersion counts the learner's commits.
	AppliedSeq   int64 `json:"applied_seq"`
	StateVersion int64 `json:"state_version"`
}

type replicaSelf struct {
	ID           string  `json:"id"`
	StateVersion int64   `json:"state_version"` // the state this replica decides from
	Exhausted    bool    `json:"exhausted"`
	Allowance    float64 `json:"allowance_remaining"` // of its current block
	Decisions    int64   `json:"decisions"`           // made from data by this process
	Frozen       int64   `json:"frozen_decisions"`
	Reservations int64   `json:"reservations"` // made by this process
	// ReserveMeanMS is the mean time of a reservation transaction.
	ReserveMeanMS float64 `json:"reserve_mean_ms"`
	LeaseTakes    int64   `json:"lease_takes"`
	Learned       int64   `json:"rewards_learned"` // folded by this process as the learner
}

func (r *Replica) view(ctx context.Context, id string) (replicaView, *apiError) {
	x, _ := r.get(ctx, id)
	if x == nil {
		return replicaView{}, errf(http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q", id))
	}
	st, b, err := r.st.Snapshot(ctx, id)
	if err != nil {
		return replicaView{}, errf(http.StatusServiceUnavailable, "unavailable", "reading the budget row: "+err.Error())
	}
	var g privacy.Filter
	if err := g.UnmarshalJSON(b.Granted); err != nil {
		return replicaView{}, errf(500, "internal", fmt.Sprintf("experiment %s: budget row: %v", id, err))
	}
	v := replicaView{ID: id, Name: x.cfg.Name, Policy: x.cfg.Policy, Arms: x.cfg.Arms, RewardRange: x.cfg.RewardRange,
		Privacy: replicaBudget{Notion: g.Notion(), Budget: g.Budget(), Spent: g.Spent(), Remaining: g.Remaining(), Exhausted: b.Exhausted, Reservations: b.Reservations},
		Learner: replicaLease{Holder: b.Lease.Holder, Token: b.Lease.Token, ExpiresMS: b.Lease.Expires.UnixMilli(), AppliedSeq: st.AppliedSeq, StateVersion: st.Version}}
	if b.Exhausted {
		at := b.ExhaustedAt.UnixMilli()
		v.Privacy.ExhaustedAt = &at
	}
	x.mu.Lock()
	v.Replica = replicaSelf{ID: r.ID(), StateVersion: x.version, Exhausted: x.exhausted}
	if x.allow != nil {
		v.Replica.Allowance = x.allow.Remaining()
	}
	x.mu.Unlock()
	v.Replica.Decisions, v.Replica.Frozen, v.Replica.Reservations = r.nDecisions.Load(), r.nFrozen.Load(), r.nReserve.Load()
	if n := v.Replica.Reservations; n > 0 {
		v.Replica.ReserveMeanMS = float64(r.reserveNanos.Load()) / float64(n) / 1e6
	}
	v.Replica.LeaseTakes, v.Replica.Learned = r.nLeaseTakes.Load(), r.nLearned.Load()
	return v, nil
}

func (r *Replica) getExperiment(w http.ResponseWriter, req *http.Request, p *principal) *apiError {
	x, e := r.experiment(req, p)
	if e != nil {
		return e
	}
	v, e := r.view(req.Context(), x.cfg.ID)
	if e != nil {
		return e
	}
	if !p.admin {
		// The spent depends on how many rewards arrived (not a DP output):
		// for the admin only, as in one-server mode.
		v.Privacy.Spent, v.Privacy.Remaining, v.Replica.Allowance = 0, 0, 0
	}
	writeJSON(w, 200, v)
	return nil
}

func (r *Replica) decide(w http.ResponseWriter, req *http.Request, p *principal) *apiError {
	x, e := r.experiment(req, p)
	if e != nil {
		return e
	}
	var dr decideRequest
	if e := decodeBody(req, &dr, true); e != nil {
		return e
	}
	if dr.Candidates != nil {
		return errf(http.StatusBadRequest, "invalid_candidates", fmt.Sprintf("experiment %s runs the K-armed policy %s: send no candidates", x.cfg.ID, x.cfg.Policy))
	}
	if dr.Propensity {
		return errf(http.StatusBadRequest, "propensity_unavailable", fmt.Sprintf("experiment %s runs %s, whose selection probabilities would be computed from raw reward statistics, which are not differentially private, so the service does not release them; omit propensity", x.cfg.ID, x.cfg.Policy))
	}
	base := ""
	if dr.EventID != nil {
		if e := checkEventID("event_id", *dr.EventID); e != nil {
			return e
		}
		base = *dr.EventID
	}
	n := 1
	if dr.Count != nil {
		n = *dr.Count
		if n < 1 || n > maxCount {
			return errf(http.StatusBadRequest, "invalid_count", fmt.Sprintf("count must be an integer in [1, %d] (got %d); omit it for a single decision", maxCount, n))
		}
		if suffix := len(strconv.Itoa(n - 1)); base != "" && len(base)+1+suffix > maxEventID {
			return errf(http.StatusBadRequest, "invalid_event_id", fmt.Sprintf("event_id %q has %d characters; with count %d the derived ids %s.0 to %s.%d must fit in %d characters", truncate(base, 40), len(base), n, truncate(base, 20), truncate(base, 20), n-1, maxEventID))
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	out := make([]decision, 0, n)
	for i := 0; i < n; i++ {
		id := base
		if base != "" && dr.Count != nil {
			id = fmt.Sprintf("%s.%d", base, i)
		}
		var d decision
		var err error
		if id != "" {
			if sd, gerr := r.st.Decision(ctx, x.cfg.ID, id); gerr == nil {
				d = decision{EventID: id, Arm: x.cfg.Arms[sd.Arm]} // as it was made
				out = append(out, d)
				continue
			} else if !errors.Is(gerr, store.ErrNotFound) {
				return errf(http.StatusServiceUnavailable, "unavailable", gerr.Error())
			}
		}
		if d, err = r.decideOne(ctx, x, id); err != nil {
			var se stoppedError
			if errors.As(err, &se) {
				msg := se.msg
				if !p.admin {
					msg = fmt.Sprintf("experiment %s is stopped: its privacy budget is exhausted and its on_exhausted rule is \"stop\"", x.cfg.ID)
				}
				if len(out) > 0 {
					writeJSON(w, 200, map[string]any{"decisions": out, "stopped": fmt.Sprintf("only %d of %d decisions were made: %s", len(out), n, msg)})
					return nil
				}
				return errf(http.StatusConflict, "budget_exhausted", msg)
			}
			return errf(http.StatusServiceUnavailable, "unavailable", "the decision could not be made and logged ("+err.Error()+"); retry")
		}
		out = append(out, d)
	}
	if dr.Count == nil {
		writeJSON(w, 200, out[0])
	} else {
		writeJSON(w, 200, map[string]any{"decisions": out})
	}
	return nil
}

func (r *Replica) rewards(w http.ResponseWriter, req *http.Request, p *principal) *apiError {
	x, e := r.experiment(req, p)
	if e != nil {
		return e
	}
	var rr rewardRequest
	if e := decodeBody(req, &rr, false); e != nil {
		return e
	}
	items, single, e := rewardItems(&rr, x.cfg)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	shadow := &experiment{cfg: x.cfg}
	if single {
		res, err := r.reward(ctx, x, *items[0].EventID, *items[0].Reward)
		if err != nil {
			return replicaRewardErr(shadow, p, *items[0].EventID, err)
		}
		writeJSON(w, http.StatusAccepted, res)
		return nil
	}
	results := make([]map[string]any, len(items))
	var worst *apiError
	for i, it := range items {
		res, err := r.reward(ctx, x, *it.EventID, *it.Reward)
		m := map[string]any{"event_id": res.EventID, "status": res.Status}
		if err != nil {
			ae := replicaRewardErr(shadow, p, *it.EventID, err)
			m["status"], m["error"] = "rejected", ae
			if worst == nil || ae.status > worst.status {
				worst = ae
			}
		}
		results[i] = m
	}
	if worst != nil {
		we := *worst
		we.Message = "not every reward of the batch was accepted (see results; accepted ones are durable): " + we.Message
		we.Results = results
		return &we
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"results": results})
	return nil
}

func replicaRewardErr(x *experiment, p *principal, id string, err error) *apiError {
	var ce conflictError
	if !errors.Is(err, errUnknownEvent) && !errors.As(err, &ce) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return errf(http.StatusServiceUnavailable, "unavailable", "the reward was not stored ("+err.Error()+"); retry it (rewards are idempotent per event id)")
	}
	return rewardErr(x, p, id, err)
}
