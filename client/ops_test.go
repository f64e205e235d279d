package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/client"
	"github.com/dpbandit/dpbandit/client/clienttest"
)

// The operator operations (stop, archive, delete, key listing and
// revocation) against the clienttest stand-in, which follows the service's
// contract for them (server/e2e_client_ops_test.go runs the same flow
// against `dpbandit serve`).

const opsAdmin = "ops-admin"

func opsSetup(t *testing.T) (*clienttest.Server, *client.Client) {
	t.Helper()
	srv := clienttest.NewServer(opsAdmin)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, opsAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func opsCreate(t *testing.T, c *client.Client, name string) string {
	t.Helper()
	exp, err := c.CreateExperiment(context.Background(), client.ExperimentSpec{
		Name: name, Arms: []string{"a", "b", "c"}, Policy: "mts-gaussian", Horizon: 10000,
		Budget: &client.Budget{Epsilon: 1, Delta: 1e-6},
	})
	if err != nil {
		t.Fatalf("CreateExperiment(%s): %v", name, err)
	}
	return exp.ID
}

// opsKey creates a client key scoped to exps and a client that uses it.
func opsKey(t *testing.T, srv *clienttest.Server, c *client.Client, exps ...string) (*client.Key, *client.Client) {
	t.Helper()
	k, err := c.CreateKey(context.Background(), exps...)
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	kc, err := client.New(srv.URL, k.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return k, kc
}

// wantAPIError fails unless err is an *APIError with this status and code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	if client.StatusOf(err) != status || client.ErrorCode(err) != code {
		t.Errorf("%s: err = %v; want %d %s", what, err, status, code)
	}
}

func TestListAndRevokeKey(t *testing.T) {
	srv, c := opsSetup(t)
	ctx := context.Background()
	exp := opsCreate(t, c, "keys")
	k, kc := opsKey(t, srv, c, exp)

	keys, err := c.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].ID != k.ID || keys[0].Role != "client" || !slices.Equal(keys[0].Experiments, []string{exp}) ||
		keys[0].Secret != "" || keys[0].CreatedAt.IsZero() {
		t.Fatalf("ListKeys = %+v; want the one client key %s on %s, without its secret", keys, k.ID, exp)
	}
	if _, err := kc.Decide(ctx, exp, client.DecideRequest{}); err != nil {
		t.Fatalf("Decide with the client key: %v", err)
	}

	// Listing and revoking keys need the admin key.
	_, err = kc.ListKeys(ctx)
	wantAPIError(t, "ListKeys with a client key", err, http.StatusForbidden, client.CodeForbidden)
	err = kc.RevokeKey(ctx, k.ID)
	wantAPIError(t, "RevokeKey with a client key", err, http.StatusForbidden, client.CodeForbidden)
	if !client.IsForbidden(err) {
		t.Errorf("IsForbidden(%v) = false", err)
	}

	if err := c.RevokeKey(ctx, k.ID); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	_, err = kc.Decide(ctx, exp, client.DecideRequest{})
	wantAPIError(t, "Decide with a revoked key", err, http.StatusUnauthorized, client.CodeUnauthorized)
	if !client.IsUnauthorized(err) {
		t.Errorf("IsUnauthorized(%v) = false", err)
	}
	err = c.RevokeKey(ctx, k.ID)
	wantAPIError(t, "RevokeKey again", err, http.StatusNotFound, client.CodeNotFound)
	if keys, err := c.ListKeys(ctx); err != nil || len(keys) != 0 {
		t.Errorf("ListKeys after the revocation = %+v, %v; want none", keys, err)
	}
	// Key ids are not reused after a revocation.
	k2, _ := opsKey(t, srv, c, exp)
	if k2.ID == k.ID {
		t.Errorf("a new key got the revoked key's id %s", k.ID)
	}
}

func TestStopExperiment(t *testing.T) {
	srv, c := opsSetup(t)
	ctx := context.Background()
	exp := opsCreate(t, c, "stop")
	_, kc := opsKey(t, srv, c, exp)

	if st, err := c.GetExperiment(ctx, exp); err != nil || st.Status != client.ExperimentActive {
		t.Fatalf("a new experiment: status %q, %v; want active", st.Status, err)
	}
	d, err := kc.Decide(ctx, exp, client.DecideRequest{EventID: "ev-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kc.StopExperiment(ctx, exp)
	wantAPIError(t, "StopExperiment with a client key", err, http.StatusForbidden, client.CodeForbidden)

	st, err := c.StopExperiment(ctx, exp)
	if err != nil {
		t.Fatalf("StopExperiment: %v", err)
	}
	if st.ID != exp || st.Status != client.ExperimentStopped || st.Decisions != 1 || len(st.Raw) == 0 {
		t.Errorf("StopExperiment = id %s status %q decisions %d; want %s stopped 1", st.ID, st.Status, st.Decisions, exp)
	}

	// No more decisions, single or batched, for any key.
	_, err = kc.Decide(ctx, exp, client.DecideRequest{})
	wantAPIError(t, "Decide once stopped", err, http.StatusConflict, client.CodeExperimentStopped)
	if !client.IsConflict(err) {
		t.Errorf("IsConflict(%v) = false", err)
	}
	_, err = c.DecideBatch(ctx, exp, 3)
	wantAPIError(t, "DecideBatch once stopped", err, http.StatusConflict, client.CodeExperimentStopped)
	// A repeated event id still returns its decision.
	if again, err := kc.Decide(ctx, exp, client.DecideRequest{EventID: "ev-1"}); err != nil || again.Arm != d.Arm {
		t.Errorf("repeating ev-1 once stopped = %+v, %v; want arm %s", again, err, d.Arm)
	}
	// Rewards for past decisions are still accepted.
	if err := kc.Reward(ctx, exp, d.EventID, 1); err != nil {
		t.Errorf("Reward for a past decision once stopped: %v", err)
	}

	// Idempotent; the status shows in Get and List.
	if st, err := c.StopExperiment(ctx, exp); err != nil || st.Status != client.ExperimentStopped {
		t.Errorf("StopExperiment again = %v, %v", st, err)
	}
	if st, err := c.GetExperiment(ctx, exp); err != nil || st.Status != client.ExperimentStopped || st.Rewards != 1 || st.Decisions != 1 {
		t.Errorf("GetExperiment once stopped: %+v, %v", st, err)
	}
	if l, err := c.ListExperiments(ctx); err != nil || len(l) != 1 || l[0].Status != client.ExperimentStopped {
		t.Errorf("ListExperiments once stopped: %+v, %v", l, err)
	}
	_, err = c.StopExperiment(ctx, "exp_nope")
	wantAPIError(t, "StopExperiment of an unknown id", err, http.StatusNotFound, client.CodeNotFound)
}

func TestArchiveExperiment(t *testing.T) {
	srv, c := opsSetup(t)
	ctx := context.Background()
	exp := opsCreate(t, c, "archive")
	_, kc := opsKey(t, srv, c, exp)
	ds, err := kc.DecideBatch(ctx, exp, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Reward(ctx, exp, ds[0].EventID, 1); err != nil {
		t.Fatal(err)
	}
	_, err = kc.ArchiveExperiment(ctx, exp)
	wantAPIError(t, "ArchiveExperiment with a client key", err, http.StatusForbidden, client.CodeForbidden)

	st, err := c.ArchiveExperiment(ctx, exp)
	if err != nil {
		t.Fatalf("ArchiveExperiment: %v", err)
	}
	if st.Status != client.ExperimentArchived || st.Decisions != 2 || st.Rewards != 1 {
		t.Errorf("ArchiveExperiment = status %q decisions %d rewards %d; want archived 2 1", st.Status, st.Decisions, st.Rewards)
	}
	// Read-only: no decisions, no rewards (new or repeated).
	_, err = kc.Decide(ctx, exp, client.DecideRequest{})
	wantAPIError(t, "Decide once archived", err, http.StatusConflict, client.CodeExperimentArchived)
	err = kc.Reward(ctx, exp, ds[1].EventID, 0)
	wantAPIError(t, "Reward once archived", err, http.StatusConflict, client.CodeExperimentArchived)
	err = kc.RewardBatch(ctx, exp, []client.Reward{{EventID: ds[1].EventID, Reward: 0}})
	wantAPIError(t, "RewardBatch once archived", err, http.StatusConflict, client.CodeExperimentArchived)
	err = kc.Reward(ctx, exp, "ev-never", 0)
	wantAPIError(t, "Reward for an unknown event once archived", err, http.StatusNotFound, client.CodeUnknownEvent)

	// Final: stopping leaves it archived; archiving again is a no-op.
	if st, err := c.StopExperiment(ctx, exp); err != nil || st.Status != client.ExperimentArchived {
		t.Errorf("StopExperiment of an archived experiment = %v, %v; want it still archived", st, err)
	}
	if st, err := c.ArchiveExperiment(ctx, exp); err != nil || st.Status != client.ExperimentArchived {
		t.Errorf("ArchiveExperiment again = %v, %v", st, err)
	}
	// Still listed, with its counts.
	if st, err := c.GetExperiment(ctx, exp); err != nil || st.Status != client.ExperimentArchived || st.Decisions != 2 || st.Rewards != 1 {
		t.Errorf("GetExperiment once archived: %+v, %v", st, err)
	}
	_, err = c.ArchiveExperiment(ctx, "exp_nope")
	wantAPIError(t, "ArchiveExperiment of an unknown id", err, http.StatusNotFound, client.CodeNotFound)
}

func TestDeleteExperiment(t *testing.T) {
	srv, c := opsSetup(t)
	ctx := context.Background()
	gone, kept := opsCreate(t, c, "gone"), opsCreate(t, c, "kept")
	k, kc := opsKey(t, srv, c, gone, kept)
	if _, err := kc.Decide(ctx, gone, client.DecideRequest{}); err != nil {
		t.Fatal(err)
	}
	err := kc.DeleteExperiment(ctx, gone)
	wantAPIError(t, "DeleteExperiment with a client key", err, http.StatusForbidden, client.CodeForbidden)

	if err := c.DeleteExperiment(ctx, gone); err != nil {
		t.Fatalf("DeleteExperiment: %v", err)
	}
	_, err = c.GetExperiment(ctx, gone)
	wantAPIError(t, "GetExperiment once deleted", err, http.StatusNotFound, client.CodeNotFound)
	if !client.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	err = c.DeleteExperiment(ctx, gone)
	wantAPIError(t, "DeleteExperiment again", err, http.StatusNotFound, client.CodeNotFound)
	_, err = c.StopExperiment(ctx, gone)
	wantAPIError(t, "StopExperiment once deleted", err, http.StatusNotFound, client.CodeNotFound)

	// The id left the key's scope; the key still works on the other one.
	keys, err := c.ListKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].ID != k.ID || !slices.Equal(keys[0].Experiments, []string{kept}) {
		t.Errorf("ListKeys after the deletion = %+v, %v; want %s scoped to [%s]", keys, err, k.ID, kept)
	}
	_, err = kc.Decide(ctx, gone, client.DecideRequest{})
	wantAPIError(t, "client Decide on the deleted experiment", err, http.StatusForbidden, client.CodeForbidden)
	if _, err := kc.Decide(ctx, kept, client.DecideRequest{}); err != nil {
		t.Errorf("client Decide on the kept experiment: %v", err)
	}
	l, err := c.ListExperiments(ctx)
	if err != nil || len(l) != 1 || l[0].ID != kept || l[0].Status != client.ExperimentActive {
		t.Errorf("ListExperiments after the deletion = %+v, %v; want only %s, active", l, err, kept)
	}
	// Ids are not reused.
	if id := opsCreate(t, c, "new"); id == gone || id == kept {
		t.Errorf("a new experiment got the id %s of an earlier one", id)
	}
}

// The stand-in refuses what the service refuses at creation, with its
// codes: the bounds of api/openapi.yaml (dim at most 128, ε at most 1000, μ
// at most 100, names of 1 to 200 characters) are 400 invalid_request; the
// rules the service states in words (no control characters, no blank name,
// unique arms, one kind of budget) 400 invalid_experiment.
func TestCreateLimits(t *testing.T) {
	_, c := opsSetup(t)
	ctx := context.Background()
	base := func() client.ExperimentSpec {
		return client.ExperimentSpec{Name: "limits", Arms: []string{"a", "b"}, Policy: "mts-gaussian", Horizon: 1000,
			Budget: &client.Budget{Epsilon: 1, Delta: 1e-6}}
	}
	const schema, rule = "invalid_request", "invalid_experiment"
	for _, tc := range []struct {
		name string
		edit func(*client.ExperimentSpec)
		code string // "" when accepted
	}{
		{"dim 128", func(s *client.ExperimentSpec) { s.Policy, s.Dim = "adaprivate-ts", 128 }, ""},
		{"dim 129", func(s *client.ExperimentSpec) { s.Policy, s.Dim = "adaprivate-ts", 129 }, schema},
		{"epsilon 1000", func(s *client.ExperimentSpec) { s.Budget.Epsilon = 1000 }, ""},
		{"epsilon 1000.5", func(s *client.ExperimentSpec) { s.Budget.Epsilon = 1000.5 }, schema},
		{"epsilon 0", func(s *client.ExperimentSpec) { s.Budget.Epsilon = 0 }, rule}, // omitted: no ε and no μ
		{"mu 100", func(s *client.ExperimentSpec) { s.Budget = &client.Budget{Mu: 100, Delta: 1e-6} }, ""},
		{"mu 101", func(s *client.ExperimentSpec) { s.Budget = &client.Budget{Mu: 101, Delta: 1e-6} }, schema},
		{"mu and epsilon", func(s *client.ExperimentSpec) { s.Budget.Mu = 1 }, rule},
		{"delta 0", func(s *client.ExperimentSpec) { s.Budget.Delta = 0 }, schema},
		{"delta 1", func(s *client.ExperimentSpec) { s.Budget.Delta = 1 }, schema},
		{"name of 200 characters", func(s *client.ExperimentSpec) { s.Name = strings.Repeat("é", 200) }, ""},
		{"name of 201 characters", func(s *client.ExperimentSpec) { s.Name = strings.Repeat("é", 201) }, schema},
		{"empty name", func(s *client.ExperimentSpec) { s.Name = "" }, schema},
		{"blank name", func(s *client.ExperimentSpec) { s.Name = "  " }, rule},
		{"name with NUL", func(s *client.ExperimentSpec) { s.Name = "a\x00b" }, rule},
		{"arm with a newline", func(s *client.ExperimentSpec) { s.Arms = []string{"a", "b\n"} }, rule},
		{"repeated arm", func(s *client.ExperimentSpec) { s.Arms = []string{"a", "a"} }, rule},
		{"one arm", func(s *client.ExperimentSpec) { s.Arms = []string{"a"} }, ""},
		{"no arms", func(s *client.ExperimentSpec) { s.Arms = nil }, schema},
		{"budget on a non-private policy", func(s *client.ExperimentSpec) { s.Policy = "ucb1" }, rule},
		{"no budget on a private policy", func(s *client.ExperimentSpec) { s.Budget = nil }, rule},
		{"on_exhausted \"halt\"", func(s *client.ExperimentSpec) { s.OnExhausted = "halt" }, schema},
	} {
		spec := base()
		tc.edit(&spec)
		_, err := c.CreateExperiment(ctx, spec)
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.code != "" && (client.StatusOf(err) != http.StatusBadRequest || client.ErrorCode(err) != tc.code):
			t.Errorf("%s: err = %v; want 400 %s", tc.name, err, tc.code)
		}
	}
}

// Views carry the privacy share in the budget's own units.
func TestPrivacyShare(t *testing.T) {
	_, c := opsSetup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		budget client.Budget
		unit   string
	}{
		{client.Budget{Epsilon: 1, Delta: 1e-6}, "ε at δ = 1e-06"},
		{client.Budget{Mu: 2, Delta: 1e-6}, "μ"},
	} {
		exp, err := c.CreateExperiment(ctx, client.ExperimentSpec{Name: "share", Arms: []string{"a", "b"}, Policy: "mts-gaussian",
			Horizon: 4, Budget: &tc.budget})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.DecideBatch(ctx, exp.ID, 1); err != nil {
			t.Fatal(err)
		}
		st, err := c.GetExperiment(ctx, exp.ID)
		if err != nil {
			t.Fatal(err)
		}
		p := st.Privacy
		if p.ShareUnit != tc.unit || !(p.Share >= p.Fraction && p.Share > 0 && p.Share <= 1) {
			t.Errorf("budget %+v: share %v %q, fraction %v; want a share in [fraction, 1] in %q", tc.budget, p.Share, p.ShareUnit, p.Fraction, tc.unit)
		}
	}
}

func TestErrorCode(t *testing.T) {
	if got := client.ErrorCode(nil); got != "" {
		t.Errorf("ErrorCode(nil) = %q", got)
	}
	if got := client.ErrorCode(errors.New("plain")); got != "" {
		t.Errorf("ErrorCode(plain) = %q", got)
	}
	err := fmt.Errorf("deciding: %w", &client.APIError{Status: 409, Code: client.CodeExperimentStopped})
	if got := client.ErrorCode(err); got != client.CodeExperimentStopped {
		t.Errorf("ErrorCode(wrapped) = %q", got)
	}
}
