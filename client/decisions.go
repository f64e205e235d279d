package client

import (
	"context"
	"errors"
	"net/http"
)

// DecideRequest is the body of one decision request. Every field is
// optional.
type DecideRequest struct {
	// EventID makes the request idempotent: repeating an event id returns
	// the same decision. The service generates one when it is empty.
	EventID string `json:"event_id,omitempty"`
	// Candidates are the feature vectors of the candidate actions, for
	// contextual policies.
	Candidates [][]float64 `json:"candidates,omitempty"`
	// Propensity asks for the probability with which the arm was chosen
	// (Decision.Propensity), for off-policy evaluation. The service offers
	// it only where it is differentially private (AdaPrivate-TS/UCB, from
	// their released snapshot) or the policy is not private; other
	// policies answer 400 (StatusOf(err) == 400).
	Propensity bool `json:"propensity,omitempty"`
}

// Decision is one decision: the event id to post the reward to, the chosen
// arm, and its propensity when the request asked for it.
type Decision struct {
	EventID string `json:"event_id"`
	Arm     string `json:"arm"`
	// Propensity is the probability with which Arm was chosen (nil unless
	// asked for). PropensityDraws is the number of Monte Carlo draws behind
	// it (0: exact); an estimate can be 0 for an arm chosen with probability
	// below about 1/PropensityDraws, so clip it before weighting by 1/p.
	Propensity      *float64 `json:"propensity,omitempty"`
	PropensityDraws int      `json:"propensity_draws,omitempty"`
}

// Decide asks experiment expID for one decision. A new decision on an
// experiment that makes no more is a 409 (IsConflict) whose ErrorCode says
// why: CodeExperimentStopped (StopExperiment), CodeExperimentArchived
// (ArchiveExperiment) or CodeBudgetExhausted (the budget is spent and
// OnExhausted is "stop"); a repeated EventID still returns its decision
// after a stop.
func (c *Client) Decide(ctx context.Context, expID string, req DecideRequest) (Decision, error) {
	var out Decision
	err := c.do(ctx, http.MethodPost, expPath(expID, "/decisions"), req, &out)
	return out, err
}

// DecideBatch asks experiment expID for count decisions in one request
// (each with its own generated event id).
func (c *Client) DecideBatch(ctx context.Context, expID string, count int) ([]Decision, error) {
	return c.DecideMany(ctx, expID, count, DecideRequest{})
}

// DecideMany asks experiment expID for count decisions (at most 1000) in one
// request that share req's Candidates (contextual policies) and Propensity.
// With req.EventID set, the decisions' event ids are EventID.0 …
// EventID.(count−1), and repeating the request returns the same decisions;
// without it each gets a generated id.
func (c *Client) DecideMany(ctx context.Context, expID string, count int, req DecideRequest) ([]Decision, error) {
	if count < 1 {
		return nil, errors.New("client: DecideMany: count must be at least 1")
	}
	var out struct {
		Decisions []Decision `json:"decisions"`
	}
	in := struct {
		DecideRequest
		Count int `json:"count"`
	}{req, count}
	if err := c.do(ctx, http.MethodPost, expPath(expID, "/decisions"), in, &out); err != nil {
		return nil, err
	}
	return out.Decisions, nil
}

// Reward is one reward for the decision with EventID.
type Reward struct {
	EventID string  `json:"event_id"`
	Reward  float64 `json:"reward"`
}

// Reward posts the reward of one decision. A nil error means the service
// answered 202: the reward is durable. Posting the same reward again is a
// no-op; a different reward for the same event is a 409 (IsConflict), an
// unknown event a 404 (IsNotFound), and a reward outside the experiment's
// reward range a 400. A stopped experiment (StopExperiment) still accepts
// the rewards of its past decisions; an archived one answers 409 with code
// CodeExperimentArchived.
func (c *Client) Reward(ctx context.Context, expID, eventID string, reward float64) error {
	return c.do(ctx, http.MethodPost, expPath(expID, "/rewards"), Reward{EventID: eventID, Reward: reward}, nil)
}

// RewardBatch posts several rewards in one request.
func (c *Client) RewardBatch(ctx context.Context, expID string, rewards []Reward) error {
	if len(rewards) == 0 {
		return errors.New("client: RewardBatch: no rewards")
	}
	in := struct {
		Rewards []Reward `json:"rewards"`
	}{rewards}
	return c.do(ctx, http.MethodPost, expPath(expID, "/rewards"), in, nil)
}
