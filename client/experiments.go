package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/dpbandit/dpbandit/api"
)

// Budget is a privacy budget: (Epsilon, Delta), or Mu-GDP with Delta for
// reporting. It is a filter: the service never takes a step that would
// exceed it.
type Budget = api.Budget

// Duration is a time.Duration that is written in JSON as a Go duration
// string such as "10m0s" (the service's format for reward_wait).
type Duration time.Duration

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string ("10m", "1h30m") or a number of
// seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if err2 := json.Unmarshal(b, &secs); err2 != nil {
			return fmt.Errorf("duration: want a string such as \"10m\" or a number of seconds, got %s", b)
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	if s == "" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// ExperimentSpec is the body of POST /v1/experiments.
type ExperimentSpec struct {
	// Name is 1 to 200 characters (not bytes) of UTF-8 text, not blank and
	// without control characters.
	Name string `json:"name"`
	// Arms are 1 to 1000 unique names, each with the same rules as Name.
	Arms []string `json:"arms"`
	// Policy is a policy name, e.g. "mts-gaussian", "dp-ts-ucb", "beta-ts".
	Policy string `json:"policy"`
	// Horizon is the number of decisions the budget is calibrated for.
	Horizon int64 `json:"horizon"`
	// Budget is the privacy budget: Epsilon in (0, 1000] with Delta in
	// (0, 1), or Mu in (0, 100] (GDP) with Delta for reporting. nil (sent as
	// null) only for non-private policies, which are then marked "not
	// private".
	Budget *Budget `json:"budget"`
	// RewardRange is [lo, hi]; rewards outside it are rejected with a 400.
	RewardRange *[2]float64 `json:"reward_range,omitempty"`
	// RewardWait is how long a decision waits for its reward before it
	// gets DefaultReward (when one is set).
	RewardWait *Duration `json:"reward_wait,omitempty"`
	// RewardRetention is how long a reward's value is kept once the policy
	// state that includes it is durable (nil: the service's default, 24h;
	// 0 deletes it at once). A repeat of a reward whose value is gone is a
	// 409 (IsConflict).
	RewardRetention *Duration `json:"reward_retention,omitempty"`
	// DefaultReward is the reward of decisions whose reward did not arrive
	// within RewardWait; nil means none.
	DefaultReward *float64 `json:"default_reward,omitempty"`
	// OnExhausted is "freeze" (default) or "stop".
	OnExhausted string `json:"on_exhausted,omitempty"`
	// Params are the policy's parameters; free ones are calibrated to the
	// budget for the horizon.
	Params map[string]float64 `json:"params,omitempty"`
	// Dim is the feature dimension of the candidates, at most 128, required
	// for the contextual policies (adaprivate-ts, adaprivate-ucb, lints,
	// linucb) and refused for the others.
	Dim int `json:"dim,omitempty"`
	// FeatureNorm (contextual policies; 0: the service's default, 1) bounds
	// the candidates: each x is used as x/max(FeatureNorm, |x|).
	FeatureNorm float64 `json:"feature_norm,omitempty"`
	// DurableDecisions, when true, returns each decision only once it is
	// logged durably (one group commit, a few ms); nil or false serves
	// decisions from memory and logs them asynchronously. The service
	// forces it for policies whose Select updates the privacy accountant.
	DurableDecisions *bool `json:"durable_decisions,omitempty"`
}

// Created is the answer to CreateExperiment.
type Created struct {
	ID     string             `json:"id"`
	Name   string             `json:"name"`
	Policy string             `json:"policy"`
	Params map[string]float64 `json:"params"` // complete: defaults, yours and calibrated
	// Calibrated names the parameters set by calibrating the policy to the
	// budget for the horizon.
	Calibrated []string `json:"calibrated"`
	Private    bool     `json:"private"`
	// Accounting is how the budget is enforced: "filter" (each step's cost
	// is charged to a privacy filter), "horizon" (the guarantee holds for
	// Horizon decisions) or "none" (not private).
	Accounting string `json:"accounting"`
	Note       string `json:"note"`
	// Warning, when set, says in words that the budget pays for only a few
	// decisions of the policy (fewer than 100 and fewer than the horizon),
	// and what the experiment does after them (its OnExhausted rule).
	Warning string `json:"warning,omitempty"`
	// Privacy is the policy's privacy report at the budget's δ (a
	// privacy.Statement).
	Privacy json.RawMessage `json:"privacy"`
	// Guarantee states the guarantee in a sentence.
	Guarantee string `json:"guarantee"`
}

// Amount is an amount of privacy budget, in the units the experiment
// accounts in (Rho for zCDP, Mu for GDP), with Epsilon at Delta wherever it
// is defined.
type Amount = api.Amount

// Privacy is an experiment's privacy status.
type Privacy struct {
	Private bool `json:"private"`
	// Notion is the accounting notion ("gdp", "zcdp", "pure"), or "none"
	// for a non-private policy.
	Notion     string `json:"notion"`
	Accounting string `json:"accounting"`
	// Budget is nil for a non-private experiment.
	Budget    *Budget `json:"budget"`
	Spent     *Amount `json:"spent"`
	Remaining *Amount `json:"remaining"`
	// Fraction is the part of the budget spent, in [0, 1].
	Fraction float64 `json:"fraction"`
	// Share is the part of the budget spent in the budget's own units
	// (ShareUnit: "μ", or "ε at δ = …"), the number to show a user.
	Share       float64 `json:"share"`
	ShareUnit   string  `json:"share_unit"`
	Exhausted   bool    `json:"exhausted"`
	ExhaustedAt *int64  `json:"exhausted_at,omitempty"` // the first decision the filter refused
	Reason      string  `json:"reason,omitempty"`       // why it is exhausted
	// Report is the policy's privacy report (a privacy.Statement).
	Report json.RawMessage `json:"report,omitempty"`
	// Statement states the guarantee in a sentence.
	Statement string `json:"statement"`
}

// HistoryPoint is one sample of an experiment's counts over time. Rewards,
// RewardSum and RewardMean are raw aggregates: internal, not private.
type HistoryPoint = api.HistoryPoint

// InternalArm is one arm's raw reward aggregates (internal, not private).
type InternalArm = api.InternalArm

// Internal holds the raw aggregates the admin key sees, labelled "internal,
// not private": they are not differentially private and must never be
// shown to the users whose rewards they hold.
type Internal struct {
	Label     string         `json:"label"`
	Arms      []InternalArm  `json:"arms"`
	Rewards   int64          `json:"rewards"`
	RewardSum float64        `json:"reward_sum"`
	Series    []HistoryPoint `json:"series"`
}

// Experiment is an experiment's configuration and status, as answered by
// GET /v1/experiments/{id} and listed by GET /v1/experiments (both admin
// only), and by StopExperiment and ArchiveExperiment.
type Experiment struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Status is the experiment's lifecycle: ExperimentActive,
	// ExperimentStopped (StopExperiment), ExperimentArchived
	// (ArchiveExperiment) or ExperimentUnavailable: stored, but it could not
	// be loaded when the service started, so it is not served (Reason says
	// why; only ID, Name, Status, Reason and CreatedAt are set, and it can
	// be deleted). Status is empty from a service older than the lifecycle.
	Status string `json:"status"`
	// Reason says why an experiment is unavailable.
	Reason string `json:"reason,omitempty"`
	// Warning: see Created.Warning.
	Warning     string             `json:"warning,omitempty"`
	Arms        []string           `json:"arms"`
	Policy      string             `json:"policy"`
	Params      map[string]float64 `json:"params"`
	Calibrated  []string           `json:"calibrated"`
	Horizon     int64              `json:"horizon"`
	Budget      *Budget            `json:"budget"`
	RewardRange [2]float64         `json:"reward_range"`
	RewardWait  Duration           `json:"reward_wait"`
	// RewardRetention: see ExperimentSpec.
	RewardRetention Duration `json:"reward_retention"`
	DefaultReward   *float64 `json:"default_reward"`
	OnExhausted     string   `json:"on_exhausted"`
	// DurableDecisions: see ExperimentSpec (the value in force).
	DurableDecisions bool `json:"durable_decisions"`
	// Contextual is true for a contextual policy, which needs one candidate
	// feature vector of length Dim per arm in every decision request;
	// FeatureNorm is the norm the candidates are scaled to.
	Contextual  bool      `json:"contextual"`
	Dim         int       `json:"dim,omitempty"`
	FeatureNorm float64   `json:"feature_norm,omitempty"`
	Private     bool      `json:"private"`
	Note        string    `json:"note"`
	CreatedAt   time.Time `json:"created_at"`

	// Decisions counts the decisions served; LoggedDecisions those already
	// durable in the log.
	Decisions       int64 `json:"decisions"`
	LoggedDecisions int64 `json:"logged_decisions"`
	// Rewards counts the durable rewards.
	Rewards int64 `json:"rewards"`
	// ArmDecisions counts the decisions per arm, in Arms order;
	// FrozenDecisions those played after the budget was exhausted.
	ArmDecisions    []int64        `json:"arm_decisions"`
	FrozenDecisions int64          `json:"frozen_decisions"`
	Privacy         Privacy        `json:"privacy"`
	History         []HistoryPoint `json:"history,omitempty"`
	Internal        *Internal      `json:"internal,omitempty"`

	// Raw is the whole JSON object as answered, including fields this
	// version of the client does not know.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the known fields and keeps the whole object in Raw.
func (e *Experiment) UnmarshalJSON(b []byte) error {
	type plain Experiment
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Experiment(p)
	e.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// CreateExperiment creates an experiment (admin key only) and returns its
// id, calibrated parameters and privacy report.
func (c *Client) CreateExperiment(ctx context.Context, spec ExperimentSpec) (*Created, error) {
	var out Created
	if err := c.do(ctx, http.MethodPost, "/v1/experiments", spec, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListExperiments lists every experiment (admin key only).
func (c *Client) ListExperiments(ctx context.Context) ([]Experiment, error) {
	var out struct {
		Experiments []Experiment `json:"experiments"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/experiments", nil, &out); err != nil {
		return nil, err
	}
	return out.Experiments, nil
}

// GetExperiment returns one experiment's configuration and status (admin
// key only: a client key gets a 403).
func (c *Client) GetExperiment(ctx context.Context, id string) (*Experiment, error) {
	var out Experiment
	if err := c.do(ctx, http.MethodGet, expPath(id, ""), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health calls GET /healthz and returns nil when the service answers 2xx.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil)
}

// Policy describes a policy the service can run.
type Policy struct {
	Name    string `json:"name"`
	Private bool   `json:"private"`
	Summary string `json:"summary"`
	Source  string `json:"source"`
	Params  []struct {
		Name    string   `json:"name"`
		Default float64  `json:"default"`
		Min     float64  `json:"min"`
		Max     *float64 `json:"max"` // nil: unbounded
		Integer bool     `json:"integer"`
		Doc     string   `json:"doc"`
	} `json:"params"`
}

// Policies lists the policies the service can run, with their parameters.
func (c *Client) Policies(ctx context.Context) ([]Policy, error) {
	var out struct {
		Policies []Policy `json:"policies"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/policies", nil, &out); err != nil {
		return nil, err
	}
	return out.Policies, nil
}

// Key is an API key. Secret is set only in the answer to CreateKey: the
// service stores only its hash.
type Key struct {
	ID          string    `json:"id"`
	Secret      string    `json:"key,omitempty"`
	Role        string    `json:"role"` // "admin" or "client"
	Experiments []string  `json:"experiments"`
	CreatedAt   time.Time `json:"created_at"`
}

// CreateKey creates a client key that may decide and reward on the given
// experiments only (admin key only). Keep Key.Secret: it is shown once.
func (c *Client) CreateKey(ctx context.Context, experiments ...string) (*Key, error) {
	if len(experiments) == 0 {
		return nil, errors.New("client: CreateKey: name at least one experiment id")
	}
	in := api.KeyRequest{Experiments: experiments}
	var out Key
	if err := c.do(ctx, http.MethodPost, "/v1/keys", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeys lists the keys (admin key only), without their secrets.
func (c *Client) ListKeys(ctx context.Context) ([]Key, error) {
	var out struct {
		Keys []Key `json:"keys"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/keys", nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// RevokeKey revokes the client key with id Key.ID (admin key only; ListKeys
// lists the ids). The key stops authenticating from the service's answer
// on: its requests get 401 (IsUnauthorized), and it is deleted from the
// store. Decisions and rewards made with it stay as they are. An unknown id
// is a 404 (IsNotFound); the admin key is not revocable this way (restart
// the service with --admin-key to replace it).
func (c *Client) RevokeKey(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/keys/"+url.PathEscape(id), nil, nil)
}
