package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// An experiment's lifecycle, as the operator sets it (api/openapi.yaml
// states the same contract):
//
//   - active (status ""): decisions and rewards are served.
//   - stopped (POST /v1/experiments/{id}/stop): no more decisions (409
//     experiment_stopped); rewards for decisions already made are still
//     accepted and learned, so the log and the internal aggregates stay
//     complete. The privacy spent stays recorded. Irreversible: create a new
//     experiment to continue.
//   - archived (POST /v1/experiments/{id}/archive): stopped, and no more
//     rewards either (409 experiment_archived); every reward value already
//     in a durable policy state is deleted at once (the events keep their
//     rewards, as after reward_retention). The experiment stays listed, with
//     its counts and its privacy spent, read-only.
//   - deleted (DELETE /v1/experiments/{id}): its configuration, state,
//     decisions and rewards are deleted from the store in one transaction,
//     and its id leaves every client key's scope. Deleting does not undo
//     what the experiment released: its users' privacy loss is what its
//     guarantee stated, and its spent budget is not "refunded" to anything.
//     A new experiment has a budget of its own, which composes with the
//     deleted one's for any user who was in both.
//
// Every transition runs on the writer goroutine between group commits, so
// it is ordered with the commits, and it returns only once durable.
const (
	statusStopped  = "stopped"
	statusArchived = "archived"
)

// lifecycleError is what a decision (or, archived, a reward) on a stopped,
// archived or deleted experiment gets.
type lifecycleError struct {
	id, status string
	deleted    bool
}

func (e lifecycleError) Error() string {
	switch {
	case e.deleted:
		return fmt.Sprintf("experiment %s was deleted", e.id)
	case e.status == statusArchived:
		return fmt.Sprintf("experiment %s is archived: it is read-only (no decisions, no rewards); create a new experiment to continue", e.id)
	}
	return fmt.Sprintf("experiment %s was stopped by its operator: it makes no more decisions (rewards for decisions already made are still accepted); create a new experiment to continue", e.id)
}

func (e lifecycleError) apiError() *apiError {
	switch {
	case e.deleted:
		return errf(http.StatusNotFound, "not_found", e.Error())
	case e.status == statusArchived:
		return errf(http.StatusConflict, "experiment_archived", e.Error())
	}
	return errf(http.StatusConflict, "experiment_stopped", e.Error())
}

// errDeleted answers a reward that was waiting when its experiment was
// deleted.
var errDeleted = errors.New("the experiment was deleted before the reward was stored")

// onWriter runs op on the writer goroutine between group commits and
// returns its error, or ctx's.
func (w *writer) onWriter(ctx context.Context, op func() error) error {
	res := make(chan error, 1)
	select {
	case w.ops <- func() { res <- op() }:
	case <-w.done:
		return errors.New("the server is shutting down")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err() // the op still completes on the writer
	}
}

// commitNow runs group commits (on the writer goroutine) until x's state as
// of now is durable.
func (w *writer) commitNow(x *experiment) error {
	x.mu.Lock()
	want := x.version + 1
	x.markDirtyLocked(w)
	x.mu.Unlock()
	for range 3 {
		w.cycle()
		x.mu.Lock()
		ok := x.durableVersion >= want
		x.mu.Unlock()
		if ok {
			return nil
		}
	}
	return errCommit
}

// setStatus stops or archives x, durably. Archiving also deletes the values
// of the rewards already in a durable policy state (all of them, once the
// two commits below have written the state that includes the last ones).
func (e *Engine) setStatus(ctx context.Context, x *experiment, status string) error {
	return e.w.onWriter(ctx, func() error {
		x.mu.Lock()
		if x.deleted {
			x.mu.Unlock()
			return lifecycleError{id: x.cfg.ID, deleted: true}
		}
		if x.status == statusArchived || x.status == status {
			x.mu.Unlock()
			return nil // idempotent; archived is final
		}
		x.status = status
		x.mu.Unlock()
		e.log.Info("experiment "+status, "experiment", x.cfg.ID)
		// The first commit stores what is pending (decisions, rewards) with
		// the new status; the second the state with those rewards applied.
		if err := e.w.commitNow(x); err != nil {
			return err
		}
		if status != statusArchived {
			return nil
		}
		if err := e.w.commitNow(x); err != nil {
			return err
		}
		x.mu.Lock()
		after, upTo := x.purgedSeq, x.durableApplied
		x.mu.Unlock()
		if upTo > after {
			if _, err := e.st.PurgeRewards(ctx, x.cfg.ID, after, upTo); err != nil {
				return fmt.Errorf("deleting the reward values: %w", err)
			}
			x.mu.Lock()
			x.purgedSeq, x.marks = upTo, nil
			x.mu.Unlock()
		}
		return e.w.commitNow(x)
	})
}

// deleteExperiment deletes x from the store and the engine. Rewards still
// waiting for a commit get errDeleted.
func (e *Engine) deleteExperiment(ctx context.Context, id string) error {
	return e.w.onWriter(ctx, func() error {
		x := e.get(id)
		if x == nil && e.unavailableErr(id) == nil {
			return lifecycleError{id: id, deleted: true}
		}
		if err := e.st.DeleteExperiment(ctx, id); err != nil {
			return err
		}
		if x != nil {
			x.mu.Lock()
			x.deleted = true
			for _, c := range x.pendRew {
				c.err = errDeleted
				c.ent.claim = nil
				close(c.done)
			}
			x.pendRew, x.pendEnt, x.pendDec = nil, nil, nil
			x.mu.Unlock()
		}
		e.mu.Lock()
		delete(e.exps, id)
		e.ord = slices.DeleteFunc(e.ord, func(y *experiment) bool { return y.cfg.ID == id })
		delete(e.bad, id)
		e.badOrd = slices.DeleteFunc(e.badOrd, func(y string) bool { return y == id })
		e.mu.Unlock()
		e.log.Info("experiment deleted", "experiment", id)
		return nil
	})
}

// ---------- handlers ----------

func (s *Server) stopExperiment(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	return s.lifecycle(w, r, p, statusStopped)
}

func (s *Server) archiveExperiment(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	return s.lifecycle(w, r, p, statusArchived)
}

func (s *Server) lifecycle(w http.ResponseWriter, r *http.Request, p *principal, status string) *apiError {
	if e := adminOnly(p, status[:len(status)-2]+"ing an experiment"); e != nil {
		return e
	}
	var req struct{}
	if e := decodeBody(r, &req, true); e != nil {
		return e
	}
	x, e := s.experiment(r, p)
	if e != nil {
		return e
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := s.eng.setStatus(ctx, x, status); err != nil {
		var le lifecycleError
		if errors.As(err, &le) {
			return le.apiError()
		}
		return errf(http.StatusServiceUnavailable, "unavailable", fmt.Sprintf("the experiment could not be %s durably (%v); retry", status, err))
	}
	writeJSON(w, 200, view(x, false))
	return nil
}

func (s *Server) deleteExperiment(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "deleting an experiment"); e != nil {
		return e
	}
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := s.eng.deleteExperiment(ctx, id); err != nil {
		var le lifecycleError
		if errors.As(err, &le) {
			return errf(http.StatusNotFound, "not_found", fmt.Sprintf("no experiment %q; list them with GET /v1/experiments", id))
		}
		return errf(http.StatusServiceUnavailable, "unavailable", fmt.Sprintf("the experiment could not be deleted (%v); retry", err))
	}
	if err := s.auth.reload(ctx); err != nil {
		s.log.Error("reloading keys after a deletion", "err", err)
	}
	writeJSON(w, 200, map[string]any{"id": id, "deleted": true,
		"note": "its configuration, state, decisions and rewards are deleted, and it left every client key's scope; what it released stays released, and its spent budget is not refunded"})
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, p *principal) *apiError {
	if e := adminOnly(p, "revoking keys"); e != nil {
		return e
	}
	id := r.PathValue("id")
	if err := s.auth.revoke(r.Context(), id); err != nil {
		if errors.Is(err, errNoKey) {
			return errf(http.StatusNotFound, "not_found", fmt.Sprintf("no key %q; list them with GET /v1/keys (the admin key is not revocable: restart with --admin-key to replace it)", id))
		}
		return errf(http.StatusServiceUnavailable, "unavailable", "revoking the key failed: "+err.Error()+"; retry")
	}
	writeJSON(w, 200, map[string]any{"id": id, "revoked": true, "note": "the key no longer authenticates, from this request on"})
	return nil
}
