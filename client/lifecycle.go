package client

import (
	"context"
	"net/http"
)

// An experiment's lifecycle (Experiment.Status), as its operator sets it
// with StopExperiment, ArchiveExperiment and DeleteExperiment.
const (
	// ExperimentActive: decisions and rewards are served.
	ExperimentActive = "active"
	// ExperimentStopped: no more decisions; rewards for past decisions are
	// still accepted.
	ExperimentStopped = "stopped"
	// ExperimentArchived: read-only, no decisions and no rewards.
	ExperimentArchived = "archived"
	// ExperimentUnavailable: stored, but it could not be loaded when the
	// service started, so it is not served (Experiment.Reason says why).
	ExperimentUnavailable = "unavailable"
)

// StopExperiment stops experiment id's decisions (admin key only) and
// returns the experiment, with Status ExperimentStopped.
//
// From then on a new decision is a 409 with code CodeExperimentStopped (a
// repeated event id still returns its decision). Rewards for the decisions
// already made are still accepted (202) and learned, so the log and the
// internal aggregates stay complete. The privacy spent stays recorded, and
// nothing more is spent. The stop is durable once this returns, and
// irreversible: create a new experiment to continue. Stopping again is a
// no-op, and stopping an archived experiment leaves it archived. An unknown
// id is a 404 (IsNotFound).
func (c *Client) StopExperiment(ctx context.Context, id string) (*Experiment, error) {
	return c.lifecycle(ctx, id, "/stop")
}

// ArchiveExperiment archives experiment id (admin key only) and returns
// the experiment, with Status ExperimentArchived.
//
// An archived experiment is stopped and read-only: decisions and rewards
// both get a 409 with code CodeExperimentArchived. Every reward value it
// stored is deleted now (the events keep their rewards and the counts do
// not change, as after reward_retention). It stays listed, with its counts
// and the privacy it spent. Archiving is durable once this returns, final
// and idempotent. An unknown id is a 404 (IsNotFound).
func (c *Client) ArchiveExperiment(ctx context.Context, id string) (*Experiment, error) {
	return c.lifecycle(ctx, id, "/archive")
}

func (c *Client) lifecycle(ctx context.Context, id, op string) (*Experiment, error) {
	var out Experiment
	if err := c.do(ctx, http.MethodPost, expPath(id, op), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteExperiment deletes experiment id (admin key only): its
// configuration, state, decisions and rewards go from the store in one
// transaction, and its id leaves every client key's scope. Afterwards the
// experiment is a 404 (IsNotFound) for the admin key, and a 403 for a
// client key that was scoped to it; rewards that were still waiting for
// their commit get a 404. An unknown id is a 404. An unavailable experiment
// (ExperimentUnavailable) can be deleted too.
//
// Deleting does not undo what the experiment released: its users' privacy
// loss is what its guarantee stated, and its spent budget is not refunded
// to anything. A new experiment has a budget of its own, which composes
// with the deleted one's for any user who was in both.
func (c *Client) DeleteExperiment(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, expPath(id, ""), nil, nil)
}
