// Package clienttest provides an in-memory stand-in for dpbandit's decision
// service, for testing code that uses package client (and the dashboard and
// load generator) without a database or the real policies.
//
// The stand-in follows the HTTP contract of `dpbandit serve` (bearer auth,
// create/list/get experiments, single and batched decisions, idempotent
// rewards with 400/404/409, client keys with their scopes, the operator's
// stop, archive, delete and key revocation, {"error": {"code", "message"}}
// bodies), but its policy is a uniformly random choice and its privacy
// "accountant" spends the budget linearly in the horizon (it never warns
// that a budget is small). It certifies nothing: never use it to serve
// traffic.
package clienttest

import (
	"cmp"
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
	"unicode"
	"unicode/utf8"
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

	status   string          // "" (active), stopped or archived
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
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta"`
	Mu      float64 `json:"mu,omitempty"` // GDP, with Delta for reporting
}

// apiKey is a client key: its id and the experiments in its scope.
type apiKey struct {
	id      string
	exps    []string
	created time.Time
}

type service struct {
	mu       sync.Mutex
	adminKey string
	keys     map[string]*apiKey // client key (the secret) → key
	keyOrder []string           // secrets, in creation order
	nKeys    int                // keys ever created, for their ids
	exps     map[string]*experiment
	order    []string
	nExps    int // experiments ever created, for their ids
	mux      *http.ServeMux
}

// The limits of `dpbandit serve` on a new experiment.
const (
	maxArms    = 1000
	maxNameLen = 200 // characters, for the name and each arm
	maxDim     = 128
	maxEpsilon = 1000.0
	maxMu      = 100.0
	maxCount   = 1000 // decisions in one request
)

const (
	statusStopped  = "stopped"
	statusArchived = "archived"
)

type ctxKey struct{}

var nonPrivate = map[string]bool{"beta-ts": true, "ucb1": true}

func newService(adminKey string) *service {
	s := &service{adminKey: adminKey, keys: map[string]*apiKey{}, exps: map[string]*experiment{}, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("POST /v1/experiments", s.auth(true, s.create))
	s.mux.HandleFunc("GET /v1/experiments", s.auth(true, s.list))
	s.mux.HandleFunc("GET /v1/experiments/{id}", s.auth(true, s.get))
	s.mux.HandleFunc("DELETE /v1/experiments/{id}", s.auth(true, s.deleteExperiment))
	s.mux.HandleFunc("POST /v1/experiments/{id}/stop", s.auth(true, s.setStatus(statusStopped)))
	s.mux.HandleFunc("POST /v1/experiments/{id}/archive", s.auth(true, s.setStatus(statusArchived)))
	s.mux.HandleFunc("POST /v1/experiments/{id}/decisions", s.auth(false, s.decide))
	s.mux.HandleFunc("POST /v1/experiments/{id}/rewards", s.auth(false, s.reward))
	s.mux.HandleFunc("POST /v1/keys", s.auth(true, s.createKey))
	s.mux.HandleFunc("GET /v1/keys", s.auth(true, s.listKeys))
	s.mux.HandleFunc("DELETE /v1/keys/{id}", s.auth(true, s.revokeKey))
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
			k, ok := s.keys[key]
			inScope := ok && slices.Contains(k.exps, r.PathValue("id"))
			s.mu.Unlock()
			switch {
			case !ok:
				fail(w, http.StatusUnauthorized, "unauthorized", "missing, wrong or revoked API key: send the header \"Authorization: Bearer KEY\" with the admin key or a client key")
				return
			case adminOnly:
				fail(w, http.StatusForbidden, "forbidden", "a client key may only decide and reward on its experiments; this needs the admin key")
				return
			case r.PathValue("id") != "" && !inScope:
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
	for _, id := range in.Experiments {
		if s.exps[id] == nil {
			fail(w, http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q", id))
			return
		}
	}
	key := "dpb_test_" + newEventID()[3:]
	s.nKeys++
	k := &apiKey{id: "key_" + strconv.Itoa(s.nKeys), exps: slices.Clone(in.Experiments), created: time.Now().UTC()}
	s.keys[key] = k
	s.keyOrder = append(s.keyOrder, key)
	writeJSON(w, http.StatusCreated, map[string]any{"id": k.id, "key": key, "role": "client", "experiments": k.exps,
		"note": "the key is shown only now"})
}

// listKeys lists the client keys without their secrets (the admin key is
// not listed, as by the service).
func (s *service) listKeys(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	out := make([]map[string]any, 0, len(s.keyOrder))
	for _, key := range s.keyOrder {
		k := s.keys[key]
		out = append(out, map[string]any{"id": k.id, "role": "client", "experiments": slices.Clone(k.exps), "created_at": k.created})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
}

// revokeKey deletes a client key: it no longer authenticates (401).
func (s *service) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	i := slices.IndexFunc(s.keyOrder, func(key string) bool { return s.keys[key].id == id })
	if i >= 0 {
		delete(s.keys, s.keyOrder[i])
		s.keyOrder = slices.Delete(s.keyOrder, i, i+1)
	}
	s.mu.Unlock()
	if i < 0 {
		fail(w, http.StatusNotFound, "not_found", fmt.Sprintf("no key %q; list them with GET /v1/keys (the admin key is not revocable)", id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "revoked": true, "note": "the key no longer authenticates, from this request on"})
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
		fail(w, http.StatusBadRequest, "bad_body", "invalid JSON body: "+err.Error())
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
	// As the service: first the bounds of api/openapi.yaml (400
	// invalid_request), then the rules it states in words (400
	// invalid_experiment).
	if msg := createSchema(in.Name, in.Arms, in.Policy, in.Horizon, in.Budget, in.Dim, in.FeatureNorm, in.OnExhausted); msg != "" {
		fail(w, http.StatusBadRequest, "invalid_request", msg+" (see api/openapi.yaml)")
		return
	}
	bad := func(msg string) { fail(w, http.StatusBadRequest, "invalid_experiment", msg) }
	if msg := checkText("name", in.Name); msg != "" {
		bad(msg)
		return
	}
	for i, a := range in.Arms {
		if msg := checkText(fmt.Sprintf("arms[%d]", i), a); msg != "" {
			bad(msg)
			return
		}
		if slices.Index(in.Arms, a) < i {
			bad(fmt.Sprintf("arms[%d]: arm %q is listed twice; arm names must be unique", i, a))
			return
		}
	}
	switch b := in.Budget; {
	case nonPrivate[in.Policy] && b != nil:
		bad("budget: policy " + in.Policy + " is not private: set \"budget\": null")
		return
	case in.FeatureNorm > 0 && in.Dim == 0:
		bad("dim: feature_norm is for contextual policies, which need dim")
		return
	case nonPrivate[in.Policy]:
	case b == nil:
		bad("budget: policy " + in.Policy + " is private and needs a budget, e.g. \"budget\": {\"epsilon\": 1, \"delta\": 1e-6}")
		return
	case b.Mu != 0 && b.Epsilon != 0:
		bad("budget: give either epsilon (with delta) or mu (GDP), not both")
		return
	case b.Mu == 0 && b.Epsilon == 0:
		bad(fmt.Sprintf("budget.epsilon: give ε in (0, %g] (or μ in (0, %g])", maxEpsilon, maxMu))
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
	if e.Params == nil {
		e.Params = map[string]float64{}
	}
	if e.Dim > 0 && e.FeatureNorm == 0 {
		e.FeatureNorm = 1
	}
	s.mu.Lock()
	s.nExps++
	e.ID = "exp_" + strconv.Itoa(s.nExps)
	e.CreatedAt = time.Now().UTC()
	s.exps[e.ID] = e
	s.order = append(s.order, e.ID)
	s.mu.Unlock()
	e.hist = []map[string]any{e.point()}
	writeJSON(w, http.StatusCreated, map[string]any{"id": e.ID, "name": e.Name, "policy": e.Policy, "params": e.Params,
		"calibrated": []string{}, "private": e.Budget != nil, "accounting": e.privacy()["accounting"],
		"privacy": map[string]any{"mechanism": e.Policy}, "guarantee": e.privacy()["statement"]})
}

// createSchema checks a new experiment against the bounds of
// api/openapi.yaml (lengths in characters, budget and dim ranges); a zero
// number stands for an absent field. It returns what is wrong, or "".
func createSchema(name string, arms []string, policy string, horizon int64, b *budget, dim int, norm float64, onExhausted string) string {
	text := func(field, s string) string {
		if n := utf8.RuneCountInString(s); n < 1 || n > maxNameLen {
			return fmt.Sprintf("%s: string length must be in [1, %d] (got %d)", field, maxNameLen, n)
		}
		return ""
	}
	if msg := text("name", name); msg != "" {
		return msg
	}
	if len(arms) < 1 || len(arms) > maxArms {
		return fmt.Sprintf("arms: give between 1 and %d items (got %d)", maxArms, len(arms))
	}
	for i, a := range arms {
		if msg := text(fmt.Sprintf("arms.%d", i), a); msg != "" {
			return msg
		}
	}
	switch {
	case policy == "":
		return "policy: minimum string length is 1"
	case horizon < 1 || horizon > 1<<40:
		return fmt.Sprintf("horizon: number must be in [1, %d]", int64(1)<<40)
	case b != nil && (b.Epsilon < 0 || b.Epsilon > maxEpsilon):
		return fmt.Sprintf("budget.epsilon: number must be in (0, %g]", maxEpsilon)
	case b != nil && (b.Mu < 0 || b.Mu > maxMu):
		return fmt.Sprintf("budget.mu: number must be in (0, %g]", maxMu)
	case b != nil && !(b.Delta > 0 && b.Delta < 1):
		return "budget.delta: number must be in (0, 1)"
	case dim < 0 || dim > maxDim:
		return fmt.Sprintf("dim: number must be in [1, %d]", maxDim)
	case norm < 0:
		return "feature_norm: number must be more than 0"
	case onExhausted != "" && onExhausted != "freeze" && onExhausted != "stop":
		return "on_exhausted: value is not one of the allowed values [\"freeze\", \"stop\"]"
	}
	return ""
}

// checkText validates a name (whose length createSchema checked) as the
// service does: valid UTF-8 without control characters, not blank. It
// returns what is wrong, or "".
func checkText(field, s string) string {
	if !utf8.ValidString(s) {
		return field + ": give valid UTF-8 text"
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fmt.Sprintf("%s: control character %U at byte %d is not allowed", field, r, i)
		}
	}
	if strings.TrimSpace(s) == "" {
		return fmt.Sprintf("%s: give a non-blank name of 1 to %d characters", field, maxNameLen)
	}
	return ""
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
			"remaining": nil, "fraction": 0, "share": 0, "share_unit": "", "exhausted": false,
			"statement": "not private: policy " + e.Policy + " gives no privacy guarantee; its decisions depend on raw rewards"}
	}
	f := math.Min(1, float64(e.decisions())/float64(e.Horizon))
	b := e.Budget
	// Share is the part spent in the budget's own units (ε or μ), which
	// grow as the square root of the additive cost (ρ or μ²).
	p := map[string]any{"private": true, "accounting": "filter", "budget": b, "fraction": f, "share": math.Sqrt(f), "exhausted": f >= 1}
	if b.Mu > 0 {
		amt := func(f float64) map[string]any { return map[string]any{"mu": b.Mu * math.Sqrt(f), "delta": b.Delta} }
		p["notion"], p["spent"], p["remaining"], p["share_unit"] = "gdp", amt(f), amt(1-f), "μ"
		p["statement"] = fmt.Sprintf("this experiment is %g-GDP for each user's reward", b.Mu)
	} else {
		rho := b.Epsilon * b.Epsilon / 100 // any positive number: the stand-in certifies nothing
		amt := func(f float64) map[string]any {
			return map[string]any{"rho": rho * f, "epsilon": b.Epsilon * math.Sqrt(f), "delta": b.Delta}
		}
		p["notion"], p["spent"], p["remaining"], p["share_unit"] = "zcdp", amt(f), amt(1-f), fmt.Sprintf("ε at δ = %g", b.Delta)
		p["statement"] = fmt.Sprintf("this experiment is (%g, %g)-DP for each user's reward", b.Epsilon, b.Delta)
	}
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
		"id": e.ID, "name": e.Name, "status": cmp.Or(e.status, "active"), "arms": e.Arms, "policy": e.Policy, "params": e.Params, "calibrated": []string{},
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

// setStatus stops or archives an experiment (idempotent; archived is
// final) and answers its view. Archiving deletes the reward values, which
// an archived experiment never compares again.
func (s *service) setStatus(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !decode(w, r, &struct{}{}) {
			return
		}
		e := s.lookup(w, r)
		if e == nil {
			return
		}
		if e.status != statusArchived {
			e.status = status
		}
		if e.status == statusArchived {
			clear(e.rewarded)
		}
		v := e.view(false)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, v)
	}
}

// deleteExperiment deletes an experiment and takes its id out of every
// client key's scope.
func (s *service) deleteExperiment(w http.ResponseWriter, r *http.Request) {
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	delete(s.exps, e.ID)
	s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == e.ID })
	for _, k := range s.keys {
		k.exps = slices.DeleteFunc(k.exps, func(id string) bool { return id == e.ID })
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": e.ID, "deleted": true,
		"note": "its configuration, state, decisions and rewards are deleted, and it left every client key's scope; what it released stays released, and its spent budget is not refunded"})
}

// refusal is the 409 of a decision (or, archived, a reward) on an
// experiment stopped or archived by its operator, or nil while it is
// active.
func (e *experiment) refusal() *[2]string {
	switch e.status {
	case statusStopped:
		return &[2]string{"experiment_stopped", "experiment " + e.ID + " was stopped by its operator: it makes no more decisions (rewards for decisions already made are still accepted); create a new experiment to continue"}
	case statusArchived:
		return &[2]string{"experiment_archived", "experiment " + e.ID + " is archived: it is read-only (no decisions, no rewards); create a new experiment to continue"}
	}
	return nil
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
	if in.Count != nil && (*in.Count < 1 || *in.Count > maxCount) {
		fail(w, http.StatusBadRequest, "invalid_count", fmt.Sprintf("count must be an integer in [1, %d] (got %d); omit it for a single decision", maxCount, *in.Count))
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
	exhausted := &[2]string{"budget_exhausted", "the privacy budget of " + e.ID + " is exhausted and on_exhausted is \"stop\": create a new experiment"}
	// one makes (or repeats) one decision, or returns the 409's code and
	// message.
	one := func(id string) (map[string]any, *[2]string) {
		if id == "" {
			id = newEventID()
		}
		if k, ok := e.decided[id]; ok {
			return answer(id, k), nil // a repeat, even once stopped
		}
		if no := e.refusal(); no != nil {
			return nil, no
		}
		if e.Budget != nil && e.decisions() >= e.Horizon && e.OnExhausted == "stop" {
			return nil, exhausted
		}
		if time.Since(e.lastPt) >= time.Second {
			e.hist = append(e.hist, e.point())
			e.lastPt = time.Now()
		}
		k := mrand.IntN(len(e.Arms))
		e.decided[id] = k
		e.propOf[id] = in.Propensity
		e.armN[k]++
		return answer(id, k), nil
	}
	if in.Count == nil {
		d, no := one(in.EventID)
		if no != nil {
			fail(w, http.StatusConflict, no[0], no[1])
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
		d, no := one(id)
		if no == exhausted && len(out) > 0 {
			// As the service: a batch cut short by the budget returns the
			// decisions made.
			writeJSON(w, http.StatusOK, map[string]any{"decisions": out,
				"stopped": fmt.Sprintf("only %d of %d decisions were made: %s", len(out), *in.Count, no[1])})
			return
		}
		if no != nil {
			fail(w, http.StatusConflict, no[0], no[1])
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
		if no := e.refusal(); no != nil && e.status == statusArchived {
			fail(w, http.StatusConflict, no[0], no[1]) // a stopped experiment still takes rewards
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
