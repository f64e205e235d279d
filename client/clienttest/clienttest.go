// Package clienttest provides an in-memory stand-in for dpbandit's decision
// service, for testing code that uses package client (and the dashboard and
// load generator) without a database or the real policies.
//
// The stand-in follows the HTTP contract of `dpbandit serve` (bearer auth,
// create/list/get experiments, single and batched decisions, idempotent
// rewards with 400/404/409, {"error": {"code", "message"}} bodies), but its
// policy is a uniformly random choice and its privacy "accountant" spends
// the budget linearly in the horizon. It certifies nothing: never use it to
// serve traffic.
package clienttest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running stand-in. Close it when done.
type Server struct {
	*httptest.Server
	// AdminKey authenticates as the admin.
	AdminKey string
	svc      *service
}

// NewServer starts a stand-in on a loopback port that accepts adminKey as the
// admin key. Extra routes (e.g. the dashboard at "GET /") can be added with
// Handle before the first request.
func NewServer(adminKey string) *Server {
	svc := newService(adminKey)
	s := &Server{AdminKey: adminKey, svc: svc}
	s.Server = httptest.NewServer(svc.mux)
	return s
}

// Handler returns the stand-in's API as a handler, for mounting in a test's
// own mux or server.
func Handler(adminKey string) http.Handler { return newService(adminKey).mux }

// Handle adds a route to the stand-in's mux (Go 1.22 pattern syntax).
func (s *Server) Handle(pattern string, h http.Handler) { s.svc.mux.Handle(pattern, h) }

type experiment struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	Arms          []string           `json:"arms"`
	Policy        string             `json:"policy"`
	Params        map[string]float64 `json:"params"`
	Horizon       int64              `json:"horizon"`
	Budget        *budget            `json:"budget"`
	RewardRange   [2]float64         `json:"reward_range"`
	RewardWait    string             `json:"reward_wait"`
	Retention     string             `json:"reward_retention"`
	DefaultReward *float64           `json:"default_reward"`
	OnExhausted   string             `json:"on_exhausted"`
	Dim           int                `json:"dim,omitempty"`
	FeatureNorm   float64            `json:"feature_norm,omitempty"`
	Durable       bool               `json:"durable_decisions"`
	CreatedAt     time.Time          `json:"created_at"`

	decided  map[string]int  // event id → arm index
	propOf   map[string]bool // event ids decided with their propensity
	rewarded map[string]float64
	armN     []int64
	armR     []int64
	armSum   []float64
	hist     []map[string]any // a point per second with decisions
	lastPt   time.Time
}

type budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

type service struct {
	mu       sync.Mutex
	adminKey string
	keys     map[string]map[string]bool // client key → experiment ids in scope
	exps     map[string]*experiment
	order    []string
	mux      *http.ServeMux
}

type ctxKey struct{}

var nonPrivate = map[string]bool{"beta-ts": true, "ucb1": true}

func newService(adminKey string) *service {
	s := &service{adminKey: adminKey, keys: map[string]map[string]bool{}, exps: map[string]*experiment{}, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("POST /v1/experiments", s.auth(true, s.create))
	s.mux.HandleFunc("GET /v1/experiments", s.auth(true, s.list))
	s.mux.HandleFunc("GET /v1/experiments/{id}", s.auth(true, s.get))
	s.mux.HandleFunc("POST /v1/experiments/{id}/decisions", s.auth(false, s.decide))
	s.mux.HandleFunc("POST /v1/experiments/{id}/rewards", s.auth(false, s.reward))
	s.mux.HandleFunc("POST /v1/keys", s.auth(true, s.createKey))
	s.mux.HandleFunc("GET /v1/policies", s.auth(false, s.policies))
	// JSON 404s for unknown /v1 routes, per method so that a "GET /"
	// route for the dashboard does not conflict.
	for _, m := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
		s.mux.HandleFunc(m+" /v1/", func(w http.ResponseWriter, r *http.Request) {
			fail(w, http.StatusNotFound, "not_found", "no route "+r.Method+" "+r.URL.Path)
		})
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// auth admits the admin key everywhere and client keys, when !adminOnly,
// on the experiments in their scope.
func (s *service) auth(adminOnly bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if key != s.adminKey {
			s.mu.Lock()
			scope, ok := s.keys[key]
			s.mu.Unlock()
			switch {
			case !ok:
				fail(w, http.StatusUnauthorized, "unauthorized", "missing or wrong API key: send the header \"Authorization: Bearer KEY\" with the admin key or a client key")
				return
			case adminOnly:
				fail(w, http.StatusForbidden, "forbidden", "a client key may only decide and reward on its experiments; this needs the admin key")
				return
			case r.PathValue("id") != "" && !scope[r.PathValue("id")]:
				fail(w, http.StatusForbidden, "forbidden", fmt.Sprintf("this client key is not scoped to experiment %q", r.PathValue("id")))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		h(w, r)
	}
}

func (s *service) createKey(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Experiments []string `json:"experiments"`
	}
	if !decode(w, r, &in) {
		return
	}
	if len(in.Experiments) == 0 {
		fail(w, http.StatusBadRequest, "bad_body", "experiments: list the experiment ids the key may decide and reward on")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := map[string]bool{}
	for _, id := range in.Experiments {
		if s.exps[id] == nil {
			fail(w, http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q", id))
			return
		}
		scope[id] = true
	}
	key := "dpb_test_" + newEventID()[3:]
	s.keys[key] = scope
	writeJSON(w, http.StatusCreated, map[string]any{"id": "key_" + strconv.Itoa(len(s.keys)), "key": key, "role": "client", "experiments": in.Experiments})
}

func (s *service) policies(w http.ResponseWriter, r *http.Request) {
	type pol struct {
		Name    string `json:"name"`
		Private bool   `json:"private"`
		Summary string `json:"summary"`
	}
	out := []pol{{"mts-gaussian", true, "stand-in"}, {"dp-ts-ucb", true, "stand-in"}, {"ts-gaussian", true, "stand-in"},
		{"beta-ts", false, "stand-in"}, {"ucb1", false, "stand-in"}}
	writeJSON(w, http.StatusOK, map[string]any{"policies": out})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && err.Error() != "EOF" {
		fail(w, http.StatusBadRequest, "bad_request", "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

func (s *service) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name          string             `json:"name"`
		Arms          []string           `json:"arms"`
		Policy        string             `json:"policy"`
		Horizon       int64              `json:"horizon"`
		Budget        *budget            `json:"budget"`
		RewardRange   *[2]float64        `json:"reward_range"`
		RewardWait    string             `json:"reward_wait"`
		Retention     string             `json:"reward_retention"` // echoed; the stand-in keeps every value
		DefaultReward *float64           `json:"default_reward"`
		OnExhausted   string             `json:"on_exhausted"`
		Params        map[string]float64 `json:"params"`
		Dim           int                `json:"dim"`
		FeatureNorm   float64            `json:"feature_norm"`
		Durable       *bool              `json:"durable_decisions"`
	}
	if !decode(w, r, &in) {
		return
	}
	bad := func(msg string) { fail(w, http.StatusBadRequest, "invalid_experiment", msg) }
	switch {
	case strings.TrimSpace(in.Name) == "":
		bad("name is required")
		return
	case len(in.Arms) < 2:
		bad("arms must list at least 2 distinct arm names")
		return
	case in.Policy == "":
		bad("policy is required")
		return
	case in.Horizon < 1:
		bad("horizon must be a positive number of decisions")
		return
	case nonPrivate[in.Policy] && in.Budget != nil:
		bad("policy " + in.Policy + " is not private: set \"budget\": null")
		return
	case in.Dim < 0 || in.Dim > 10000 || in.FeatureNorm < 0 || (in.FeatureNorm > 0 && in.Dim == 0):
		bad("dim must be in [1, 10000] for a contextual policy, and feature_norm > 0 needs dim")
		return
	case !nonPrivate[in.Policy] && (in.Budget == nil || in.Budget.Epsilon <= 0 || in.Budget.Delta < 0 || in.Budget.Delta >= 1):
		bad("budget must be {\"epsilon\": E > 0, \"delta\": 0 ≤ D < 1} for private policy " + in.Policy)
		return
	}
	e := &experiment{Name: in.Name, Arms: in.Arms, Policy: in.Policy, Params: in.Params, Horizon: in.Horizon,
		Budget: in.Budget, RewardRange: [2]float64{0, 1}, RewardWait: in.RewardWait, Retention: in.Retention, DefaultReward: in.DefaultReward,
		OnExhausted: in.OnExhausted, Dim: in.Dim, FeatureNorm: in.FeatureNorm, Durable: in.Durable != nil && *in.Durable, CreatedAt: time.Now().UTC(),
		decided: map[string]int{}, propOf: map[string]bool{}, rewarded: map[string]float64{},
		armN: make([]int64, len(in.Arms)), armR: make([]int64, len(in.Arms)), armSum: make([]float64, len(in.Arms))}
	if in.RewardRange != nil {
		if !(in.RewardRange[0] < in.RewardRange[1]) {
			bad("reward_range must be [lo, hi] with lo < hi")
			return
		}
		e.RewardRange = *in.RewardRange
	}
	if e.OnExhausted == "" {
		e.OnExhausted = "freeze"
	}
	if e.OnExhausted != "freeze" && e.OnExhausted != "stop" {
		bad("on_exhausted must be \"freeze\" or \"stop\"")
		return
	}
	if e.Params == nil {
		e.Params = map[string]float64{}
	}
	if e.Dim > 0 && e.FeatureNorm == 0 {
		e.FeatureNorm = 1
	}
	s.mu.Lock()
	e.ID = "exp_" + strconv.Itoa(len(s.order)+1)
	e.CreatedAt = time.Now().UTC()
	s.exps[e.ID] = e
	s.order = append(s.order, e.ID)
	s.mu.Unlock()
	e.hist = []map[string]any{e.point()}
	writeJSON(w, http.StatusCreated, map[string]any{"id": e.ID, "name": e.Name, "policy": e.Policy, "params": e.Params,
		"calibrated": []string{}, "private": e.Budget != nil, "accounting": e.privacy()["accounting"],
		"privacy": map[string]any{"mechanism": e.Policy}, "guarantee": e.privacy()["statement"]})
}

func (e *experiment) decisions() int64 {
	var n int64
	for _, c := range e.armN {
		n += c
	}
	return n
}

// privacy spends the budget linearly in the horizon (a stand-in, not an
// accountant), in the server's "privacy" shape with zCDP accounting.
func (e *experiment) privacy() map[string]any {
	if e.Budget == nil {
		return map[string]any{"private": false, "notion": "none", "accounting": "none", "budget": nil, "spent": nil,
			"remaining": nil, "fraction": 0, "exhausted": false,
			"statement": "not private: policy " + e.Policy + " gives no privacy guarantee; its decisions depend on raw rewards"}
	}
	f := math.Min(1, float64(e.decisions())/float64(e.Horizon))
	rho := e.Budget.Epsilon * e.Budget.Epsilon / 100 // any positive number: the stand-in certifies nothing
	amt := func(f float64) map[string]any {
		return map[string]any{"rho": rho * f, "epsilon": e.Budget.Epsilon * math.Sqrt(f), "delta": e.Budget.Delta}
	}
	p := map[string]any{"private": true, "notion": "zcdp", "accounting": "filter", "budget": e.Budget,
		"spent": amt(f), "remaining": amt(1 - f), "fraction": f, "exhausted": f >= 1,
		"statement": fmt.Sprintf("this experiment is (%g, %g)-DP for each user's reward", e.Budget.Epsilon, e.Budget.Delta)}
	if f >= 1 {
		p["reason"] = fmt.Sprintf("the horizon of %d decisions is reached", e.Horizon)
	}
	return p
}

func (e *experiment) point() map[string]any {
	var rewards int64
	var sum float64
	for i := range e.Arms {
		rewards += e.armR[i]
		sum += e.armSum[i]
	}
	p := map[string]any{"t": time.Now().UnixMilli(), "decisions": e.decisions(), "arm_decisions": slices.Clone(e.armN),
		"rewards": rewards, "reward_sum": sum}
	if rewards > 0 {
		p["reward_mean"] = sum / float64(rewards)
	}
	return p
}

// view is the server's answer to GET /v1/experiments/{id}; full adds the
// history and the internal aggregates.
func (e *experiment) view(full bool) map[string]any {
	var rewards int64
	var sum float64
	arms := make([]map[string]any, len(e.Arms))
	for i, a := range e.Arms {
		rewards += e.armR[i]
		sum += e.armSum[i]
		arms[i] = map[string]any{"name": a, "rewards": e.armR[i], "reward_sum": e.armSum[i], "reward_mean": nil}
		if e.armR[i] > 0 {
			arms[i]["reward_mean"] = e.armSum[i] / float64(e.armR[i])
		}
	}
	v := map[string]any{
		"id": e.ID, "name": e.Name, "arms": e.Arms, "policy": e.Policy, "params": e.Params, "calibrated": []string{},
		"horizon": e.Horizon, "budget": e.Budget, "reward_range": e.RewardRange, "reward_wait": e.RewardWait, "reward_retention": e.Retention,
		"default_reward": e.DefaultReward, "on_exhausted": e.OnExhausted, "private": e.Budget != nil, "created_at": e.CreatedAt,
		"durable_decisions": e.Durable, "contextual": e.Dim > 0,
		"decisions": e.decisions(), "logged_decisions": e.decisions(), "rewards": rewards,
		"arm_decisions": slices.Clone(e.armN), "frozen_decisions": 0, "privacy": e.privacy(),
	}
	if e.Dim > 0 {
		v["dim"], v["feature_norm"] = e.Dim, e.FeatureNorm
	}
	if full {
		hist := append(slices.Clone(e.hist), e.point())
		v["history"] = hist
		v["internal"] = map[string]any{"label": "internal, not private: raw aggregates for the data owner; never show them to users",
			"arms": arms, "rewards": rewards, "reward_sum": sum, "series": hist}
	}
	return v
}

func (s *service) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	out := make([]map[string]any, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.exps[id].view(false))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"experiments": out, "role": "admin"})
}

// lookup returns the experiment with the lock held, or writes a 404 and
// returns nil with the lock released.
func (s *service) lookup(w http.ResponseWriter, r *http.Request) *experiment {
	s.mu.Lock()
	e := s.exps[r.PathValue("id")]
	if e == nil {
		s.mu.Unlock()
		fail(w, http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q", r.PathValue("id")))
	}
	return e
}

func (s *service) get(w http.ResponseWriter, r *http.Request) {
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	v := e.view(true)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

func newEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ev_" + hex.EncodeToString(b[:])
}

func (s *service) decide(w http.ResponseWriter, r *http.Request) {
	var in struct {
		EventID    string      `json:"event_id"`
		Candidates [][]float64 `json:"candidates"`
		Count      *int        `json:"count"`
		Propensity bool        `json:"propensity"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Count != nil && (*in.Count < 1 || *in.Count > 10000) {
		fail(w, http.StatusBadRequest, "bad_request", "count must be between 1 and 10000")
		return
	}
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	defer s.mu.Unlock()
	if e.Dim > 0 {
		// A contextual experiment needs one candidate of length dim per
		// arm, as the service checks (the stand-in ignores their values).
		ok := len(in.Candidates) == len(e.Arms)
		for _, x := range in.Candidates {
			ok = ok && len(x) == e.Dim
		}
		if !ok {
			fail(w, http.StatusBadRequest, "invalid_candidates", fmt.Sprintf("contextual experiment: send candidates, one feature vector per arm (%d), each of length dim (dim is %d)", len(e.Arms), e.Dim))
			return
		}
	}
	// The stand-in's choice is uniform: the propensity of any arm is 1/K,
	// exactly (returned when the decision was first asked with it).
	answer := func(id string, k int) map[string]any {
		d := map[string]any{"event_id": id, "arm": e.Arms[k]}
		if e.propOf[id] {
			d["propensity"] = 1 / float64(len(e.Arms))
		}
		return d
	}
	one := func(id string) (map[string]any, bool) {
		if id == "" {
			id = newEventID()
		}
		if k, ok := e.decided[id]; ok {
			return answer(id, k), true
		}
		if e.Budget != nil && e.decisions() >= e.Horizon && e.OnExhausted == "stop" {
			return nil, false
		}
		if time.Since(e.lastPt) >= time.Second {
			e.hist = append(e.hist, e.point())
			e.lastPt = time.Now()
		}
		k := mrand.IntN(len(e.Arms))
		e.decided[id] = k
		e.propOf[id] = in.Propensity
		e.armN[k]++
		return answer(id, k), true
	}
	stopped := func() {
		fail(w, http.StatusConflict, "budget_exhausted", "the privacy budget of "+e.ID+" is exhausted and on_exhausted is \"stop\": create a new experiment")
	}
	if in.Count == nil {
		d, ok := one(in.EventID)
		if !ok {
			stopped()
			return
		}
		writeJSON(w, http.StatusOK, d)
		return
	}
	out := make([]map[string]any, 0, *in.Count)
	for i := range *in.Count {
		id := "" // generated, or EventID.i as the service numbers a batch
		if in.EventID != "" {
			id = in.EventID + "." + strconv.Itoa(i)
		}
		d, ok := one(id)
		if !ok {
			stopped()
			return
		}
		out = append(out, d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"decisions": out})
}

type rewardIn struct {
	EventID string   `json:"event_id"`
	Reward  *float64 `json:"reward"`
}

func (s *service) reward(w http.ResponseWriter, r *http.Request) {
	var in struct {
		rewardIn
		Rewards []rewardIn `json:"rewards"`
	}
	if !decode(w, r, &in) {
		return
	}
	list := in.Rewards
	if len(list) == 0 {
		list = []rewardIn{in.rewardIn}
	}
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	defer s.mu.Unlock()
	// Check every reward before applying any, so a batch is all or nothing.
	for _, x := range list {
		if x.EventID == "" || x.Reward == nil {
			fail(w, http.StatusBadRequest, "bad_request", "each reward needs \"event_id\" and \"reward\"")
			return
		}
		if v := *x.Reward; math.IsNaN(v) || v < e.RewardRange[0] || v > e.RewardRange[1] {
			fail(w, http.StatusBadRequest, "reward_out_of_range",
				fmt.Sprintf("reward %v is outside the experiment's reward_range [%v, %v]", v, e.RewardRange[0], e.RewardRange[1]))
			return
		}
		if _, ok := e.decided[x.EventID]; !ok {
			fail(w, http.StatusNotFound, "unknown_event", fmt.Sprintf("no decision with event_id %q in %s", x.EventID, e.ID))
			return
		}
		if old, ok := e.rewarded[x.EventID]; ok && old != *x.Reward {
			fail(w, http.StatusConflict, "reward_conflict", fmt.Sprintf("event %q already has reward %v", x.EventID, old))
			return
		}
	}
	n := 0
	for _, x := range list {
		if _, ok := e.rewarded[x.EventID]; ok {
			continue
		}
		k := e.decided[x.EventID]
		e.rewarded[x.EventID] = *x.Reward
		e.armR[k]++
		e.armSum[k] += *x.Reward
		n++
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"accepted": n})
}
