// Package api holds the wire types of dpbandit's HTTP decision service
// (contract in openapi.yaml) that the service (package server) and its Go
// client (package client) share. It imports nothing but the standard
// library, so that the client stays light.
package api

// Budget is a privacy budget: (Epsilon, Delta), or Mu-GDP with Delta for
// reporting. It is a filter: the service never takes a step that would
// exceed it.
type Budget struct {
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta"`
	Mu      float64 `json:"mu,omitempty"`
}

// Amount is an amount of privacy budget, in the units the experiment
// accounts in (Rho for zCDP, Mu for GDP), with Epsilon at Delta wherever it
// is defined.
type Amount struct {
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	Mu      *float64 `json:"mu,omitempty"`
	Rho     *float64 `json:"rho,omitempty"`
}

// HistoryPoint is one sample of an experiment's counts over time. Rewards,
// RewardSum and RewardMean are raw aggregates: internal, not private.
type HistoryPoint struct {
	T            int64    `json:"t"` // Unix milliseconds
	Decisions    int64    `json:"decisions"`
	ArmDecisions []int64  `json:"arm_decisions"`
	Rewards      int64    `json:"rewards"`
	RewardSum    float64  `json:"reward_sum"`
	RewardMean   *float64 `json:"reward_mean,omitempty"`
}

// InternalArm is one arm's raw reward aggregates (internal, not private).
type InternalArm struct {
	Name       string   `json:"name"`
	Rewards    int64    `json:"rewards"`
	RewardSum  float64  `json:"reward_sum"`
	RewardMean *float64 `json:"reward_mean"`
}

// KeyRequest is the body of POST /v1/keys: the experiments a new client
// key may decide and reward on.
type KeyRequest struct {
	Experiments []string `json:"experiments"`
}

// LogLine is one line of an experiment's decision log (GET
// /v1/experiments/{id}/log, JSONL): a logged decision with its reward when
// known. The service writes it; the Go client reads it.
type LogLine struct {
	Seq      int64  `json:"seq"`
	EventID  string `json:"event_id"`
	Time     string `json:"time"`
	Arm      string `json:"arm"`
	ArmIndex int    `json:"arm_index"`
	// Frozen: played after the budget was exhausted, from the freeze
	// distribution (not by the policy).
	Frozen bool `json:"frozen,omitempty"`
	// Features is the chosen candidate as the policy saw it (scaled into
	// the unit ball); the other candidates are not stored.
	Features []float64 `json:"features,omitempty"`
	// Propensity and PropensityDraws are present when the decision was
	// asked with propensity: true (and the policy states them);
	// PropensityReleased says which.
	Propensity         *float64 `json:"propensity,omitempty"`
	PropensityDraws    *int     `json:"propensity_draws,omitempty"`
	PropensityReleased bool     `json:"propensity_released"`
	// Reward is the raw reward (in the experiment's reward_range) once
	// stored, absent before and once its value was deleted (RewardPurged);
	// RewardTime is when it was stored.
	Reward        *float64 `json:"reward,omitempty"`
	RewardTime    string   `json:"reward_time,omitempty"`
	DefaultReward bool     `json:"default_reward,omitempty"`
	RewardPurged  bool     `json:"reward_purged,omitempty"`
}
