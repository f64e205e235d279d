package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/api"
	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

var base32Enc = base32.StdEncoding

// apiError is the JSON error body {"error": {"code", "message"}}.
type apiError struct {
	status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Results any    `json:"-"`
}

func errf(status int, code, msg string) *apiError {
	return &apiError{status: status, Code: code, Message: msg}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
	w.Write([]byte{'\n'})
}

func writeErr(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"error": e}
	if e.Results != nil {
		body["results"] = e.Results
	}
	writeJSON(w, e.status, body)
}

// handler is an API handler: it returns a status and body, or an error.
type handler func(w http.ResponseWriter, r *http.Request, p *principal) *apiError

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern, name string, methods map[string]handler) {
		mux.Handle(pattern, s.eng.m.observe(name, dispatch(methods, s.auth, s.o.MaxBodyBytes, s.log)))
	}
	route("/v1/experiments", "experiments", map[string]handler{"POST": s.createExperiment, "GET": s.listExperiments})
	route("/v1/experiments/{id}", "experiment", map[string]handler{"GET": s.getExperiment, "DELETE": s.deleteExperiment})
	route("/v1/experiments/{id}/stop", "stop", map[string]handler{"POST": s.stopExperiment})
	route("/v1/experiments/{id}/archive", "archive", map[string]handler{"POST": s.archiveExperiment})
	route("/v1/experiments/{id}/decisions", "decisions", map[string]handler{"POST": s.decide})
	route("/v1/experiments/{id}/rewards", "rewards", map[string]handler{"POST": s.rewards})
	route("/v1/experiments/{id}/log", "log", map[string]handler{"GET": s.decisionLog})
	route("/v1/keys", "keys", map[string]handler{"POST": s.createKey, "GET": s.listKeys})
	route("/v1/keys/{id}", "key", map[string]handler{"DELETE": s.revokeKey})
	route("/v1/policies", "policies", map[string]handler{"GET": s.policies})
	mux.Handle("GET /healthz", s.eng.m.observe("healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"status": "ok", "experiments": len(s.eng.all())})
	})))
	mux.Handle("GET /metrics", s.eng.m.observe("metrics", s.eng.m.handler(s.auth.metricsAccess)))
	mux.Handle("GET /openapi.yaml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(openapiYAML)
	}))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/v1" {
			writeErr(w, errf(http.StatusNotFound, "not_found", fmt.Sprintf("no API route %s %s; see the contract at GET /openapi.yaml", r.Method, r.URL.Path)))
			return
		}
		s.o.Dashboard.ServeHTTP(w, r)
	}))
	return mux
}

// decodeBody decodes a JSON body strictly (unknown fields are errors) and
// turns decoder errors into messages that say what to change.
func decodeBody(r *http.Request, v any, allowEmpty bool) *apiError {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errf(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body exceeds %d bytes; send smaller batches", mbe.Limit))
		}
		return errf(http.StatusBadRequest, "bad_body", "reading the request body failed: "+err.Error())
	}
	return decodeBytes(b, v, allowEmpty)
}

func decodeBytes(b []byte, v any, allowEmpty bool) *apiError {
	if len(bytes.TrimSpace(b)) == 0 {
		if allowEmpty {
			return nil
		}
		return errf(http.StatusBadRequest, "bad_body", "the request body is empty: send a JSON object (Content-Type: application/json)")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErr(err)
	}
	if dec.More() {
		return errf(http.StatusBadRequest, "bad_body", "the body has data after the JSON object: send exactly one object")
	}
	return nil
}

func jsonErr(err error) *apiError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		msg = fmt.Sprintf("the body is not valid JSON (at byte %d: %v); send a JSON object", se.Offset, se)
	case errors.As(err, &te):
		field := te.Field
		num, isNum := strings.CutPrefix(te.Value, "number ")
		switch {
		case field == "" && isNum:
			// Only the syntax check decodes into an untyped value, and it
			// keeps numbers as text; a number here is the whole body.
			msg = fmt.Sprintf("the body must be a JSON object, not the number %s%s", num, formHint(te.Type))
		case field == "":
			msg = fmt.Sprintf("the body must be a JSON object, not %s%s", aJSON(te.Value), formHint(te.Type))
		case isNum && strings.Contains(te.Type.String(), "float"):
			msg = fmt.Sprintf("field %s: %s is beyond the range of a number (a float64 holds magnitudes up to about 1.8e308); give a finite number", field, num)
		case isNum:
			msg = fmt.Sprintf("field %s must be %s, not %s", field, typeWord(te.Type.String()), num)
		default:
			msg = fmt.Sprintf("field %s must be %s, not %s", field, typeWord(te.Type.String()), aJSON(te.Value))
		}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		msg = "the body ends before the JSON object is complete"
	case strings.HasPrefix(msg, "json: unknown field "):
		msg = fmt.Sprintf("unknown field %s; see api/openapi.yaml for the fields of this request", strings.TrimPrefix(msg, "json: unknown field "))
	default:
		msg = "the body could not be decoded: " + msg
	}
	return errf(http.StatusBadRequest, "bad_body", msg)
}

// aJSON names a JSON value kind with its article ("an array").
func aJSON(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "string", "number", "bool":
		return "a " + kind
	}
	return kind
}

// forms shows the valid form of each request body, for messages about a
// body of the wrong shape.
var forms = map[reflect.Type]string{
	reflect.TypeFor[createRequest](): `{"name": "…", "arms": ["a", "b"], "policy": "…", "horizon": T, "budget": {"epsilon": ε, "delta": δ}}`,
	reflect.TypeFor[decideRequest](): `{} for one decision, or {"event_id": "…", "count": N, "candidates": [[…], …], "propensity": true}`,
	reflect.TypeFor[rewardRequest](): `{"event_id": "…", "reward": VALUE}, or for several rewards {"rewards": [{"event_id": "…", "reward": VALUE}, …]}`,
	reflect.TypeFor[keyRequest]():    `{"experiments": ["exp_…"]}`,
}

func formHint(t reflect.Type) string {
	if f := forms[t]; f != "" {
		return "; send " + f
	}
	return ""
}

func typeWord(t string) string {
	switch {
	case strings.Contains(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "[2]"):
		return "an array"
	case t == "bool":
		return "true or false"
	}
	return "an object"
}

// ---------- experiments ----------

func adminOnly(p *principal, what string) *apiError {
	if p.admin {
		return nil
	}
	return errf(http.StatusForbidden, "forbidden", fmt.Sprintf("a client key may only decide and reward on its experiments (%s); %s needs the admin key", strings.Join(p.exps, ", "), what))
}

func (s *Server) createExperiment(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "creating an experiment"); e != nil {
		return e
	}
	var req createRequest
	if e := s.readValidated(r, &req, false); e != nil {
		return e
	}
	chosen := ""
	if req.Policy == autoPolicy {
		var err error
		if chosen, err = chooseAuto(r.Context(), &req); err != nil {
			return errf(http.StatusBadRequest, "invalid_experiment", err.Error())
		}
	}
	cfg, err := newConfig(req, newID("exp_"), time.Now())
	if err != nil {
		return errf(http.StatusBadRequest, "invalid_experiment", err.Error())
	}
	cfg.Chosen = chosen
	if chosen == "" && cfg.Warning == "" {
		cfg.Warning = uniformWarning(r.Context(), cfg)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return errf(500, "internal", err.Error())
	}
	x, err := s.eng.create(r.Context(), cfg, raw)
	if err != nil {
		s.log.Error("create experiment", "err", err)
		return errf(500, "internal", "storing the experiment failed: "+err.Error())
	}
	writeJSON(w, http.StatusCreated, createdView(x))
	return nil
}

func (s *Server) listExperiments(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "listing experiments"); e != nil {
		return e
	}
	xs := s.eng.all()
	out := make([]expView, len(xs))
	for i, x := range xs {
		out[i] = view(x, false)
	}
	for _, u := range s.eng.unavailable() {
		out = append(out, expView{ID: u.id, Name: u.name, CreatedAt: u.created, Status: "unavailable", Reason: u.err.Error()})
	}
	writeJSON(w, 200, map[string]any{"experiments": out, "role": "admin"})
	return nil
}

func (s *Server) experiment(r *http.Request, p *principal) (*experiment, *apiError) {
	id := r.PathValue("id")
	if !p.admin && !p.scope[id] {
		return nil, errf(http.StatusForbidden, "forbidden", fmt.Sprintf("this client key is scoped to experiments %s, not %q; use a key created for it", strings.Join(p.exps, ", "), id))
	}
	x := s.eng.get(id)
	if x == nil {
		if u := s.eng.unavailableErr(id); u != nil {
			return nil, errf(http.StatusServiceUnavailable, "experiment_unavailable", fmt.Sprintf("experiment %s could not be loaded at start, so it is not served (%v); the operator can inspect it in the store or delete it with DELETE /v1/experiments/%s", id, u.err, id))
		}
		return nil, errf(http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q; list them with GET /v1/experiments", id))
	}
	return x, nil
}

func (s *Server) getExperiment(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "reading an experiment"); e != nil {
		return e
	}
	x, e := s.experiment(r, p)
	if e != nil {
		return e
	}
	writeJSON(w, 200, view(x, true))
	return nil
}

// ---------- decisions ----------

type decideRequest struct {
	EventID    *string     `json:"event_id"`
	Candidates [][]float64 `json:"candidates"`
	Count      *int        `json:"count"`
	Propensity bool        `json:"propensity"`
}

// propensityPolicies lists the served policies that state propensities
// (TestPropensityPoliciesListed keeps it equal to the registry's).
const propensityPolicies = "adaprivate-ts and adaprivate-ucb (from their released snapshot), the pure-DP epoch policies lazy-dp-ts, anytime-lazy-ucb, adap-ucb, dp-se, dp-ts, mt-ucb and mt-ts (from their released noisy values), and the non-private beta-ts, ucb1, lints and linucb"

const maxCount = 1000

// maxEventID is the longest event id, a batch's derived ids included.
const maxEventID = 128

var eventIDRe = regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`)

func checkEventID(field, id string) *apiError {
	if !eventIDRe.MatchString(id) {
		return errf(http.StatusBadRequest, "invalid_event_id", fmt.Sprintf("%s %q: use 1 to %d characters from A-Z a-z 0-9 . _ : -", field, truncate(id, 40), maxEventID))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	x, e := s.experiment(r, p)
	if e != nil {
		return e
	}
	var req decideRequest
	if s.o.ValidateAll {
		if e := s.readValidated(r, &req, true); e != nil {
			return e
		}
	} else if e := decodeBody(r, &req, true); e != nil {
		return e
	}
	cands, e := candidates(x.cfg, req.Candidates)
	if e != nil {
		return e
	}
	if req.Propensity && x.props == nil {
		return errf(http.StatusBadRequest, "propensity_unavailable", fmt.Sprintf("experiment %s runs %s, whose selection probabilities would be computed from raw reward statistics, which are not differentially private, so the service does not release them; omit propensity, or use a policy that states them: %s", x.cfg.ID, x.cfg.Policy, propensityPolicies))
	}
	base := ""
	if req.EventID != nil {
		if e := checkEventID("event_id", *req.EventID); e != nil {
			return e
		}
		base = *req.EventID
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if req.Count == nil {
		ds, err := s.eng.decide(ctx, x, []string{base}, cands, req.Propensity)
		if err != nil {
			return decideErr(err, p, x)
		}
		writeJSON(w, 200, ds[0])
		return nil
	}
	n := *req.Count
	if n < 1 || n > maxCount {
		return errf(http.StatusBadRequest, "invalid_count", fmt.Sprintf("count must be an integer in [1, %d] (got %d); omit it for a single decision", maxCount, n))
	}
	ids := make([]string, n)
	if suffix := len(strconv.Itoa(n - 1)); base != "" && len(base)+1+suffix > maxEventID {
		return errf(http.StatusBadRequest, "invalid_event_id", fmt.Sprintf("event_id %q has %d characters; with count %d the decisions get the ids %s.0 to %s.%d, which must fit in %d characters: give an event_id of at most %d characters",
			truncate(base, 40), len(base), n, truncate(base, 20), truncate(base, 20), n-1, maxEventID, maxEventID-1-suffix))
	}
	if base != "" {
		for i := range ids {
			ids[i] = fmt.Sprintf("%s.%d", base, i)
		}
	}
	ds, err := s.eng.decide(ctx, x, ids, cands, req.Propensity)
	if err != nil {
		var se stoppedError
		if errors.As(err, &se) && len(ds) > 0 {
			writeJSON(w, 200, map[string]any{"decisions": ds, "stopped": fmt.Sprintf("only %d of %d decisions were made: %s", len(ds), n, stoppedMsg(se, p, x))})
			return nil
		}
		return decideErr(err, p, x)
	}
	writeJSON(w, 200, map[string]any{"decisions": ds})
	return nil
}

// stoppedMsg is the exhaustion message: with the filter's numbers for the
// admin; without them for client keys (a step's cost can depend on how many
// rewards arrived, which is not a DP output).
func stoppedMsg(se stoppedError, p *principal, x *experiment) string {
	if p.admin {
		return se.msg
	}
	return fmt.Sprintf("experiment %s is stopped: its privacy budget is exhausted and its on_exhausted rule is \"stop\", so no more decisions are made; ask the experiment's owner for a new experiment", x.cfg.ID)
}

// candidates checks the candidate feature vectors of a decision: none for
// K-armed policies; for contextual ones exactly one finite vector of the
// experiment's dimension per arm, in arm order. Each is scaled into the unit
// ball: x/max(feature_norm, ‖x‖₂) (docs/privacy-model.md rule 6: bounded inputs).
func candidates(c *Config, in [][]float64) ([][]float64, *apiError) {
	if !c.Contextual {
		if in != nil {
			return nil, errf(http.StatusBadRequest, "invalid_candidates", fmt.Sprintf("experiment %s runs the K-armed policy %s, which chooses among its arms; omit candidates (they are for contextual policies)", c.ID, c.Policy))
		}
		return nil, nil
	}
	if len(in) != len(c.Arms) {
		return nil, errf(http.StatusBadRequest, "invalid_candidates", fmt.Sprintf("candidates: experiment %s runs the contextual policy %s: give one feature vector per arm, in arm order (%d vectors, got %d)", c.ID, c.Policy, len(c.Arms), len(in)))
	}
	out := make([][]float64, len(in))
	for i, x := range in {
		if len(x) != c.Dim {
			return nil, errf(http.StatusBadRequest, "invalid_candidates", fmt.Sprintf("candidates[%d] has %d features; the experiment's dim is %d", i, len(x), c.Dim))
		}
		var n2 float64
		for j, v := range x {
			if !finite(v) {
				return nil, errf(http.StatusBadRequest, "invalid_candidates", fmt.Sprintf("candidates[%d][%d] = %v is not a finite number", i, j, v))
			}
			n2 += v * v
		}
		scale := 1 / max(c.FeatureNorm, math.Sqrt(n2))
		y := make([]float64, len(x))
		for j, v := range x {
			y[j] = v * scale
		}
		out[i] = y
	}
	return out, nil
}

func decideErr(err error, p *principal, x *experiment) *apiError {
	var se stoppedError
	if errors.As(err, &se) {
		return errf(http.StatusConflict, "budget_exhausted", stoppedMsg(se, p, x))
	}
	var le lifecycleError
	if errors.As(err, &le) {
		return le.apiError()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errf(http.StatusServiceUnavailable, "unavailable", "the decision could not be made in time ("+err.Error()+"); retry")
	}
	return errf(500, "internal", err.Error())
}

// ---------- rewards ----------

type rewardItem struct {
	EventID *string  `json:"event_id"`
	Reward  *float64 `json:"reward"`
}

type rewardRequest struct {
	EventID *string      `json:"event_id"`
	Reward  *float64     `json:"reward"`
	Rewards []rewardItem `json:"rewards"`
}

func (s *Server) rewards(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	x, e := s.experiment(r, p)
	if e != nil {
		return e
	}
	var req rewardRequest
	if s.o.ValidateAll {
		if e := s.readValidated(r, &req, false); e != nil {
			return e
		}
	} else if e := decodeBody(r, &req, false); e != nil {
		return e
	}
	items, single, e := rewardItems(&req, x.cfg)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if single {
		res, err := s.eng.reward(ctx, x, *items[0].EventID, *items[0].Reward)
		if err != nil {
			return rewardErr(x, p, *items[0].EventID, err)
		}
		writeJSON(w, http.StatusAccepted, res)
		return nil
	}
	// Batch: claim all, then wait for all (one group commit usually).
	type pending struct {
		c   *claim
		res rewardResult
		err error
	}
	ps := make([]pending, len(items))
	now := time.Now()
	for i, it := range items {
		c, res, err := s.eng.claimReward(ctx, x, *it.EventID, *it.Reward, false, now)
		ps[i] = pending{c, res, err}
	}
	results := make([]map[string]any, len(items))
	var worst *apiError
	for i := range ps {
		pd := &ps[i]
		if pd.c != nil && pd.err == nil {
			select {
			case <-pd.c.done:
				pd.err = pd.c.err
			case <-ctx.Done():
				pd.err = ctx.Err()
			}
		}
		res := map[string]any{"event_id": pd.res.EventID, "status": pd.res.Status}
		if pd.err != nil {
			ae := rewardErr(x, p, pd.res.EventID, pd.err)
			res["status"], res["error"] = "rejected", ae
			if worst == nil || ae.status > worst.status {
				worst = ae
			}
		}
		results[i] = res
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

func rewardErr(x *experiment, p *principal, id string, err error) *apiError {
	var ce conflictError
	var le lifecycleError
	var qe quarantineError
	switch {
	case errors.As(err, &le):
		return le.apiError()
	case errors.Is(err, errDeleted):
		return errf(http.StatusNotFound, "not_found", fmt.Sprintf("experiment %s was deleted before the reward for %q was stored", x.cfg.ID, id))
	case errors.As(err, &qe):
		return errf(http.StatusInternalServerError, "reward_quarantined", qe.Error())
	case errors.Is(err, errUnknownEvent):
		return errf(http.StatusNotFound, "unknown_event", fmt.Sprintf("experiment %s has no decision with event_id %q: use the event_id returned by POST /v1/experiments/%s/decisions (a decision lost in a server crash before it was logged is unknown too)", x.cfg.ID, id, x.cfg.ID))
	case errors.As(err, &ce):
		code := "reward_conflict"
		if ce.code != "" {
			code = ce.code
		}
		if !p.admin {
			return errf(http.StatusConflict, code, ce.public)
		}
		return errf(http.StatusConflict, code, ce.msg)
	case errors.Is(err, errCommit):
		return errf(http.StatusServiceUnavailable, "unavailable", err.Error())
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return errf(http.StatusServiceUnavailable, "unavailable", "the reward could not be made durable in time; retry it (rewards are idempotent per event id)")
	}
	return errf(500, "internal", err.Error())
}

// ---------- keys and policies ----------

type keyRequest = api.KeyRequest

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "creating keys"); e != nil {
		return e
	}
	var req keyRequest
	if e := s.readValidated(r, &req, false); e != nil {
		return e
	}
	if len(req.Experiments) == 0 {
		return errf(http.StatusBadRequest, "bad_body", `experiments: list the experiment ids the key may decide and reward on, e.g. {"experiments": ["exp_…"]}`)
	}
	for _, id := range req.Experiments {
		if s.eng.get(id) == nil {
			return errf(http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q: create it first, or list them with GET /v1/experiments", id))
		}
	}
	k, key, err := s.auth.createKey(r.Context(), req.Experiments)
	if err != nil {
		return errf(500, "internal", "storing the key failed: "+err.Error())
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": k.ID, "key": key, "role": k.Role, "experiments": k.Experiments,
		"note": "the key is shown only now; the server stores only its SHA-256 hash"})
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "listing keys"); e != nil {
		return e
	}
	ks, err := s.o.Store.Keys(r.Context())
	if err != nil {
		return errf(500, "internal", err.Error())
	}
	out := make([]map[string]any, 0, len(ks))
	for _, k := range ks {
		out = append(out, map[string]any{"id": k.ID, "role": k.Role, "experiments": nonNilStrings(k.Experiments), "created_at": k.CreatedAt})
	}
	writeJSON(w, 200, map[string]any{"keys": out})
	return nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) policies(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	type param struct {
		Name    string   `json:"name"`
		Default float64  `json:"default"`
		Min     float64  `json:"min"`
		Max     *float64 `json:"max"`
		Integer bool     `json:"integer"`
		Doc     string   `json:"doc"`
	}
	type pol struct {
		Name       string  `json:"name"`
		Contextual bool    `json:"contextual"`
		Private    bool    `json:"private"`
		Summary    string  `json:"summary"`
		Source     string  `json:"source"`
		Params     []param `json:"params"`
	}
	var out []pol
	for _, d := range bandit.All(bandit.AnyKind) {
		if d.Serving == nil {
			continue // simulation only (docs/privacy-model.md rule 4)
		}
		q := pol{Name: d.Name, Contextual: d.NewContextual != nil, Private: d.Private, Summary: d.Summary, Source: d.Source, Params: []param{}}
		for _, pp := range d.Params {
			var mx *float64
			if !math.IsInf(pp.Max, 1) {
				v := pp.Max
				mx = &v
			}
			q.Params = append(q.Params, param{pp.Name, pp.Default, pp.Min, mx, pp.Integer, pp.Doc})
		}
		out = append(out, q)
	}
	writeJSON(w, 200, map[string]any{"policies": out})
	return nil
}

// ---------- views ----------

type createdResp struct {
	ID         string             `json:"id"`
	Name       string             `json:"name"`
	Policy     string             `json:"policy"`
	Params     map[string]float64 `json:"params"`
	Calibrated []string           `json:"calibrated"`
	Private    bool               `json:"private"`
	Accounting string             `json:"accounting"`
	Note       string             `json:"note"`
	Warning    string             `json:"warning,omitempty"`
	Chosen     string             `json:"chosen,omitempty"`
	Privacy    privacy.Statement  `json:"privacy"`
	Guarantee  string             `json:"guarantee"`
}

func createdView(x *experiment) createdResp {
	c := x.cfg
	return createdResp{ID: c.ID, Name: c.Name, Policy: c.Policy, Params: c.Params, Calibrated: nonNilStrings(c.Calibrated),
		Private: c.Private, Accounting: c.Accounting, Note: c.Note, Warning: c.Warning, Chosen: c.Chosen, Privacy: c.Report, Guarantee: guaranteeWords(c)}
}

type amount = api.Amount

type privacyView struct {
	Private    bool    `json:"private"`
	Notion     string  `json:"notion"`
	Accounting string  `json:"accounting"`
	Budget     *Budget `json:"budget"`
	Spent      *amount `json:"spent"`
	Remaining  *amount `json:"remaining"`
	Fraction   float64 `json:"fraction"` // spent/budget in the filter's additive cost (μ², ρ, ε, steps)
	// Share is spent/budget in the budget's own units, named by ShareUnit:
	// ε at the budget's δ for an (ε, δ) budget, μ for a GDP one. This is
	// the number to show a user (Fraction of μ² or ρ reads much smaller).
	Share       float64           `json:"share"`
	ShareUnit   string            `json:"share_unit"`
	Exhausted   bool              `json:"exhausted"`
	ExhaustedAt *int64            `json:"exhausted_at,omitempty"`
	Reason      string            `json:"reason,omitempty"`
	Report      privacy.Statement `json:"report"`
	Statement   string            `json:"statement"`
}

type expView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is active, stopped, archived (lifecycle.go) or unavailable (a
	// stored experiment that could not be loaded; Reason says why).
	Status        string             `json:"status"`
	Reason        string             `json:"reason,omitempty"`
	Arms          []string           `json:"arms"`
	Policy        string             `json:"policy"`
	Params        map[string]float64 `json:"params"`
	Calibrated    []string           `json:"calibrated"`
	Horizon       int                `json:"horizon"`
	Budget        *Budget            `json:"budget"`
	RewardRange   [2]float64         `json:"reward_range"`
	RewardWait    string             `json:"reward_wait"`
	Retention     string             `json:"reward_retention"`
	DefaultReward *float64           `json:"default_reward"`
	OnExhausted   string             `json:"on_exhausted"`
	Durable       bool               `json:"durable_decisions"`
	Contextual    bool               `json:"contextual"`
	Dim           int                `json:"dim,omitempty"`
	FeatureNorm   float64            `json:"feature_norm,omitempty"`
	Private       bool               `json:"private"`
	Note          string             `json:"note"`
	Warning       string             `json:"warning,omitempty"`
	Chosen        string             `json:"chosen,omitempty"`
	CreatedAt     time.Time          `json:"created_at"`
	Decisions     int64              `json:"decisions"`
	Logged        int64              `json:"logged_decisions"`
	Rewards       int64              `json:"rewards"`
	ArmDecisions  []int64            `json:"arm_decisions"`
	Frozen        int64              `json:"frozen_decisions"`
	Privacy       privacyView        `json:"privacy"`
	History       []histPoint        `json:"history,omitempty"`
	Internal      *internalView      `json:"internal,omitempty"`
}

type internalArm = api.InternalArm

type internalView struct {
	Label          string          `json:"label"`
	Arms           []internalArm   `json:"arms"`
	Rewards        int64           `json:"rewards"`
	RewardSum      float64         `json:"reward_sum"`
	RewardsApplied int64           `json:"rewards_applied_seq"`
	Series         []histPoint     `json:"series"`
	PolicyState    json.RawMessage `json:"policy_state"`
}

const internalLabel = "internal, not private: raw aggregates for the data owner; never show them to users"

// view renders an experiment (admin only; full adds history and the
// internal, not private, aggregates).
func view(x *experiment, full bool) expView {
	c := x.cfg
	x.mu.Lock()
	defer x.mu.Unlock()
	v := expView{ID: c.ID, Name: c.Name, Arms: c.Arms, Policy: c.Policy, Params: c.Params, Calibrated: nonNilStrings(c.Calibrated),
		Horizon: c.Horizon, Budget: c.Budget, RewardRange: c.RewardRange, RewardWait: c.RewardWait, Retention: c.RewardRetention, DefaultReward: c.DefaultReward,
		OnExhausted: c.OnExhausted, Durable: c.DurableDecisions, Contextual: c.Contextual, Dim: c.Dim, FeatureNorm: c.FeatureNorm,
		Private: c.Private, Note: c.Note, Warning: c.Warning, Chosen: c.Chosen, CreatedAt: c.CreatedAt,
		Decisions: x.seq, Logged: x.loggedSeq, Rewards: x.rewardSeq, ArmDecisions: slicesClone(x.armDec), Frozen: x.frozenDec,
		Status: cmp.Or(x.status, "active")}
	v.Privacy = x.privacyLocked()
	if full {
		v.History = slicesClone(x.hist)
		in := &internalView{Label: internalLabel, RewardsApplied: x.appliedSeq, Series: slicesClone(x.hist)}
		for i, name := range c.Arms {
			a := internalArm{Name: name, Rewards: x.armRew[i], RewardSum: x.armSum[i]}
			if a.Rewards > 0 {
				m := a.RewardSum / float64(a.Rewards)
				a.RewardMean = &m
			}
			in.Arms = append(in.Arms, a)
			in.Rewards += a.Rewards
			in.RewardSum += a.RewardSum
		}
		if b, err := x.impl().(json.Marshaler).MarshalJSON(); err == nil {
			in.PolicyState = b
		}
		v.Internal = in
	}
	return v
}

func fp(v float64) *float64 { return &v }

func (x *experiment) privacyLocked() privacyView {
	c := x.cfg
	pv := privacyView{Private: c.Private, Notion: string(c.Report.Certified.Notion), Accounting: c.Accounting, Budget: c.Budget,
		Exhausted: x.exhausted, Reason: x.exhaustWhy, Report: x.liveReportLocked(), Statement: guaranteeWords(c)}
	if x.exhausted {
		pv.ExhaustedAt = &x.exhaustedAt
	}
	if x.led == nil {
		pv.Notion = string(privacy.NotionNone)
		return pv
	}
	f := x.led.f
	spent, rem, budget := f.Spent(), f.Remaining(), f.Budget()
	delta := c.Budget.Delta
	pv.Notion = string(c.Notion)
	mk := func(v float64) *amount {
		a := &amount{Delta: &delta}
		switch c.Notion {
		case privacy.NotionGDP:
			a.Mu = fp(v)
		case privacy.NotionZCDP:
			a.Rho = fp(v)
		}
		if eps, _, err := guaranteeOf(c.Notion, v).Epsilon(delta); err == nil && !math.IsInf(eps, 0) {
			a.Epsilon = fp(eps)
		}
		if v == 0 {
			a.Epsilon = fp(0)
		}
		return a
	}
	pv.Spent, pv.Remaining = mk(spent), mk(rem)
	if c.Notion == privacy.NotionGDP {
		pv.Fraction = (spent * spent) / (budget * budget)
	} else {
		pv.Fraction = spent / budget
	}
	pv.Fraction = min(pv.Fraction, 1)
	switch {
	case c.Budget.Mu > 0 && c.Notion == privacy.NotionGDP:
		pv.Share, pv.ShareUnit = spent/budget, "μ"
	case c.Budget.Mu > 0:
		pv.Share, pv.ShareUnit = pv.Fraction, string(c.Notion)
	default:
		pv.ShareUnit = fmt.Sprintf("ε at δ = %g", delta)
		if pv.Spent.Epsilon != nil && c.Budget.Epsilon > 0 {
			pv.Share = *pv.Spent.Epsilon / c.Budget.Epsilon
		} else {
			pv.Share = 1 // ε at δ not finite: report all of it as spent
		}
	}
	pv.Share = min(max(pv.Share, pv.Fraction), 1) // never show less than the filter's own share
	return pv
}

// liveReportLocked is the policy's privacy report as of now, at the
// budget's δ: a policy's report can move after creation (M-TS's moves to
// its larger "lagged" bound once a Thompson round ran with pre-pull rewards
// outstanding), and the view must show the current one, not the one
// computed at creation. The budget itself is enforced by the filter from
// the actual step costs either way.
func (x *experiment) liveReportLocked() privacy.Statement {
	c := x.cfg
	if c.Budget == nil {
		return c.Report
	}
	pr, ok := x.impl().(bandit.Private)
	if !ok {
		return c.Report
	}
	var st privacy.Statement
	var err error
	if perr := safely(func() { st, err = pr.Privacy().At(c.Budget.Delta) }); perr != nil || err != nil {
		return c.Report
	}
	return st
}

// guaranteeWords states the experiment's guarantee in a sentence.
func guaranteeWords(c *Config) string {
	if !c.Private || c.Budget == nil {
		return fmt.Sprintf("not private: policy %s gives no privacy guarantee; its decisions depend on raw rewards", c.Policy)
	}
	b := c.Budget
	eps := b.Epsilon
	if b.Mu > 0 {
		if e, err := privacy.GDPEpsilon(b.Mu, b.Delta); err == nil {
			eps = e
		}
	}
	s := fmt.Sprintf("this experiment is (%.4g, %.3g)-DP for each user's reward (event-level: one decision's reward replaced)", eps, b.Delta)
	switch c.Accounting {
	case AccountFilter:
		s += fmt.Sprintf(", enforced by a %s privacy filter with budget %s = %.6g whatever the number of decisions", c.Notion, paramName(c.Notion), c.FilterBudget)
	}
	return s
}

// rewardItems validates a reward request's body, one reward or a batch,
// against the experiment's reward range, and returns its items and whether
// it was a single reward. Shared by the one-server and the replica routes.
func rewardItems(req *rewardRequest, cfg *Config) (items []rewardItem, single bool, e *apiError) {
	single = req.Rewards == nil
	switch {
	case single && req.EventID == nil && req.Reward == nil:
		return nil, false, errf(http.StatusBadRequest, "bad_body", `send {"event_id": ID, "reward": VALUE} or {"rewards": [{"event_id": ID, "reward": VALUE}, ...]}`)
	case single:
		items = []rewardItem{{req.EventID, req.Reward}}
	case req.EventID != nil || req.Reward != nil:
		return nil, false, errf(http.StatusBadRequest, "bad_body", `give either event_id and reward, or rewards (a batch), not both`)
	case len(req.Rewards) < 1 || len(req.Rewards) > maxCount:
		return nil, false, errf(http.StatusBadRequest, "bad_body", fmt.Sprintf("rewards must hold 1 to %d items (got %d)", maxCount, len(req.Rewards)))
	default:
		items = req.Rewards
	}
	lo, hi := cfg.RewardRange[0], cfg.RewardRange[1]
	for i, it := range items {
		where := "event_id"
		if !single {
			where = fmt.Sprintf("rewards[%d].event_id", i)
		}
		if it.EventID == nil {
			return nil, false, errf(http.StatusBadRequest, "bad_body", where+" is required")
		}
		if e := checkEventID(where, *it.EventID); e != nil {
			return nil, false, e
		}
		rw := strings.TrimSuffix(where, "event_id") + "reward"
		if it.Reward == nil {
			return nil, false, errf(http.StatusBadRequest, "bad_body", rw+" is required (a number in the experiment's reward_range)")
		}
		if v := *it.Reward; math.IsNaN(v) || v < lo || v > hi {
			return nil, false, errf(http.StatusBadRequest, "reward_out_of_range", fmt.Sprintf("%s = %v lies outside the experiment's reward_range [%v, %v]; send a reward in that range", rw, v, lo, hi))
		}
		if y, ok := cfg.normalize(*it.Reward); !ok {
			return nil, false, errf(http.StatusBadRequest, "reward_out_of_range", fmt.Sprintf("%s = %v does not scale into [0, 1] by the experiment's reward_range [%v, %v] (scaled: %v)", rw, *it.Reward, lo, hi, y))
		}
	}
	return items, single, nil
}

// dispatch serves one route: 405 with an Allow header for a method it does
// not take, then authentication, the body limit, the method's handler, and
// its error (logged when it is a server error). Shared by the one-server
// and the replica routes.
func dispatch(methods map[string]handler, a *auth, maxBody int64, log *slog.Logger) http.HandlerFunc {
	allow := make([]string, 0, len(methods))
	for m := range methods {
		allow = append(allow, m)
	}
	slices.Sort(allow)
	return func(w http.ResponseWriter, r *http.Request) {
		h := methods[r.Method]
		if h == nil {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeErr(w, errf(http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or "))))
			return
		}
		p, e := a.authenticate(r)
		if e != nil {
			writeErr(w, e)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if e := h(w, r, p); e != nil {
			if e.status >= 500 {
				log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", e.status, "code", e.Code, "message", e.Message)
			}
			writeErr(w, e)
		}
	}
}
