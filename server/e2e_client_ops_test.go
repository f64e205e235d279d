package server_test

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dpclient "github.com/dpbandit/dpbandit/client"
)

// TestE2EClientOps runs the operator's operations through the Go client
// against the real `dpbandit serve`: list and revoke keys, stop (decisions
// refused, rewards for past decisions accepted, durable across a restart),
// archive (rewards refused too), delete (gone, out of every key's scope),
// and the creation limits that package client's stand-in (clienttest)
// mirrors, with the same status codes and error codes.
func TestE2EClientOps(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	admin := func() *dpclient.Client { // p.url changes with a restart
		c, err := dpclient.New(p.url, adminKey)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	keyed := func(k *dpclient.Key) *dpclient.Client {
		c, err := dpclient.New(p.url, k.Secret)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := func(what string, err error, status int, code string) {
		t.Helper()
		if dpclient.StatusOf(err) != status || dpclient.ErrorCode(err) != code {
			t.Errorf("%s: err = %v; want %d %s", what, err, status, code)
		}
	}
	c := admin()

	exp, err := c.CreateExperiment(ctx, dpclient.ExperimentSpec{Name: "ops", Arms: []string{"a", "b", "c"}, Policy: "mts-gaussian",
		Horizon: 10000, Budget: &dpclient.Budget{Epsilon: 1, Delta: 1e-6}})
	if err != nil {
		t.Fatal(err)
	}
	// At ε = 1 over 10^4 decisions M-TS plays close to uniformly: the
	// service says so and names a policy that learns.
	if !strings.Contains(exp.Warning, "close to uniformly") {
		t.Errorf("mts-gaussian calibrated to (1, 1e-6) for 10000 decisions: warning %q, want one saying it plays close to uniformly", exp.Warning)
	}
	other, err := c.CreateExperiment(ctx, dpclient.ExperimentSpec{Name: "other", Arms: []string{"x", "y"}, Policy: "ucb1", Horizon: 100})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.GetExperiment(ctx, exp.ID); err != nil || st.Status != dpclient.ExperimentActive {
		t.Fatalf("new experiment: %+v, %v; want status active", st, err)
	}

	// ---- keys: list, revoke ----
	k1, err := c.CreateKey(ctx, exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	kc := keyed(k1)
	keys, err := c.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(keys, func(k dpclient.Key) bool { return k.ID == k1.ID })
	if i < 0 || keys[i].Role != "client" || !slices.Equal(keys[i].Experiments, []string{exp.ID}) || keys[i].Secret != "" || keys[i].CreatedAt.IsZero() {
		t.Fatalf("ListKeys = %+v; want %s (client, on %s, no secret)", keys, k1.ID, exp.ID)
	}
	// ev-1 is rewarded now, ev-2 once stopped, ev-3 once archived (refused).
	ds := map[string]dpclient.Decision{}
	for _, ev := range []string{"ev-1", "ev-2", "ev-3"} {
		d, err := kc.Decide(ctx, exp.ID, dpclient.DecideRequest{EventID: ev})
		if err != nil {
			t.Fatalf("Decide %s: %v", ev, err)
		}
		ds[ev] = d
	}
	if err := kc.Reward(ctx, exp.ID, "ev-1", 1); err != nil {
		t.Fatalf("Reward ev-1: %v", err)
	}
	_, err = kc.ListKeys(ctx)
	want("ListKeys with a client key", err, http.StatusForbidden, dpclient.CodeForbidden)
	want("RevokeKey with a client key", kc.RevokeKey(ctx, k1.ID), http.StatusForbidden, dpclient.CodeForbidden)
	if err := c.RevokeKey(ctx, k1.ID); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	_, err = kc.Decide(ctx, exp.ID, dpclient.DecideRequest{})
	want("Decide with the revoked key", err, http.StatusUnauthorized, dpclient.CodeUnauthorized)
	if !dpclient.IsUnauthorized(err) {
		t.Errorf("IsUnauthorized(%v) = false", err)
	}
	want("RevokeKey again", c.RevokeKey(ctx, k1.ID), http.StatusNotFound, dpclient.CodeNotFound)
	if keys, err := c.ListKeys(ctx); err != nil || slices.ContainsFunc(keys, func(k dpclient.Key) bool { return k.ID == k1.ID }) {
		t.Errorf("ListKeys after the revocation = %+v, %v; want %s gone", keys, err, k1.ID)
	}

	// A second key, on both experiments, for the rest.
	k2, err := c.CreateKey(ctx, exp.ID, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	kc = keyed(k2)

	// ---- stop ----
	_, err = kc.StopExperiment(ctx, exp.ID)
	want("StopExperiment with a client key", err, http.StatusForbidden, dpclient.CodeForbidden)
	st, err := c.StopExperiment(ctx, exp.ID)
	if err != nil {
		t.Fatalf("StopExperiment: %v", err)
	}
	if st.ID != exp.ID || st.Status != dpclient.ExperimentStopped || st.Decisions != 3 {
		t.Errorf("StopExperiment = %s status %q decisions %d; want %s stopped 3", st.ID, st.Status, st.Decisions, exp.ID)
	}
	stopped := func(when string) {
		t.Helper()
		_, err := kc.Decide(ctx, exp.ID, dpclient.DecideRequest{})
		want("Decide "+when, err, http.StatusConflict, dpclient.CodeExperimentStopped)
		if again, err := kc.Decide(ctx, exp.ID, dpclient.DecideRequest{EventID: "ev-1"}); err != nil || again.Arm != ds["ev-1"].Arm {
			t.Errorf("repeating ev-1 %s = %+v, %v; want its decision (arm %s)", when, again, err, ds["ev-1"].Arm)
		}
	}
	stopped("once stopped")
	if err := kc.Reward(ctx, exp.ID, "ev-2", 0); err != nil {
		t.Errorf("Reward for a past decision once stopped: %v; want it accepted", err)
	}
	if st, err := c.StopExperiment(ctx, exp.ID); err != nil || st.Status != dpclient.ExperimentStopped {
		t.Errorf("StopExperiment again (idempotent) = %v, %v", st, err)
	}
	if _, err := kc.Decide(ctx, other.ID, dpclient.DecideRequest{}); err != nil {
		t.Errorf("Decide on the other experiment: %v", err)
	}

	// The stop is durable: the same after a restart (the client key too).
	p.stop()
	p = start(t, p.db)
	c, kc = admin(), keyed(k2)
	st, err = c.GetExperiment(ctx, exp.ID)
	if err != nil || st.Status != dpclient.ExperimentStopped || st.Decisions != 3 || st.Rewards != 2 {
		t.Fatalf("after a restart: %+v, %v; want stopped with 3 decisions and 2 rewards", st, err)
	}
	stopped("after a restart")

	// ---- archive ----
	_, err = kc.ArchiveExperiment(ctx, exp.ID)
	want("ArchiveExperiment with a client key", err, http.StatusForbidden, dpclient.CodeForbidden)
	st, err = c.ArchiveExperiment(ctx, exp.ID)
	if err != nil {
		t.Fatalf("ArchiveExperiment: %v", err)
	}
	if st.Status != dpclient.ExperimentArchived || st.Decisions != 3 || st.Rewards != 2 {
		t.Errorf("ArchiveExperiment = status %q decisions %d rewards %d; want archived 3 2", st.Status, st.Decisions, st.Rewards)
	}
	want("Reward once archived", kc.Reward(ctx, exp.ID, "ev-3", 1), http.StatusConflict, dpclient.CodeExperimentArchived)
	_, err = kc.Decide(ctx, exp.ID, dpclient.DecideRequest{})
	want("Decide once archived", err, http.StatusConflict, dpclient.CodeExperimentArchived)
	if st, err := c.StopExperiment(ctx, exp.ID); err != nil || st.Status != dpclient.ExperimentArchived {
		t.Errorf("StopExperiment of an archived experiment = %v, %v; want it still archived", st, err)
	}
	l, err := c.ListExperiments(ctx)
	if i := slices.IndexFunc(l, func(e dpclient.Experiment) bool { return e.ID == exp.ID }); err != nil || i < 0 || l[i].Status != dpclient.ExperimentArchived {
		t.Errorf("ListExperiments: %v; want %s listed as archived", err, exp.ID)
	}

	// ---- delete ----
	want("DeleteExperiment with a client key", kc.DeleteExperiment(ctx, exp.ID), http.StatusForbidden, dpclient.CodeForbidden)
	if err := c.DeleteExperiment(ctx, exp.ID); err != nil {
		t.Fatalf("DeleteExperiment: %v", err)
	}
	_, err = c.GetExperiment(ctx, exp.ID)
	want("GetExperiment once deleted", err, http.StatusNotFound, dpclient.CodeNotFound)
	if !dpclient.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	want("DeleteExperiment again", c.DeleteExperiment(ctx, exp.ID), http.StatusNotFound, dpclient.CodeNotFound)
	_, err = c.StopExperiment(ctx, exp.ID)
	want("StopExperiment once deleted", err, http.StatusNotFound, dpclient.CodeNotFound)
	keys, err = c.ListKeys(ctx)
	i = slices.IndexFunc(keys, func(k dpclient.Key) bool { return k.ID == k2.ID })
	if err != nil || i < 0 || !slices.Equal(keys[i].Experiments, []string{other.ID}) {
		t.Errorf("ListKeys after the deletion = %+v, %v; want %s scoped to [%s] only", keys, err, k2.ID, other.ID)
	}
	_, err = kc.Decide(ctx, exp.ID, dpclient.DecideRequest{})
	want("client Decide on the deleted experiment", err, http.StatusForbidden, dpclient.CodeForbidden)
	if _, err := kc.Decide(ctx, other.ID, dpclient.DecideRequest{}); err != nil {
		t.Errorf("Decide on the other experiment after the deletion: %v", err)
	}
	if l, err := c.ListExperiments(ctx); err != nil || slices.ContainsFunc(l, func(e dpclient.Experiment) bool { return e.ID == exp.ID }) {
		t.Errorf("ListExperiments after the deletion: %v; want %s gone", err, exp.ID)
	}

	// ---- creation limits, with the codes clienttest mirrors ----
	// The bounds of api/openapi.yaml are 400 invalid_request, the rules
	// stated in words 400 invalid_experiment (client/ops_test.go's
	// TestCreateLimits checks the stand-in against the same table).
	const schema, rule = "invalid_request", "invalid_experiment"
	mts := func(b dpclient.Budget) dpclient.ExperimentSpec {
		return dpclient.ExperimentSpec{Name: "b", Arms: []string{"a", "b"}, Policy: "mts-gaussian", Horizon: 100, Budget: &b}
	}
	named := func(name string, arms ...string) dpclient.ExperimentSpec {
		return dpclient.ExperimentSpec{Name: name, Arms: arms, Policy: "ucb1", Horizon: 100}
	}
	for _, tc := range []struct {
		name string
		spec dpclient.ExperimentSpec
		code string // "" when accepted
	}{
		{"dim 128", dpclient.ExperimentSpec{Name: "d", Arms: []string{"a", "b"}, Policy: "lints", Horizon: 100, Dim: 128}, ""},
		{"dim 129", dpclient.ExperimentSpec{Name: "d", Arms: []string{"a", "b"}, Policy: "lints", Horizon: 100, Dim: 129}, schema},
		{"epsilon 1000.5", mts(dpclient.Budget{Epsilon: 1000.5, Delta: 1e-6}), schema},
		{"epsilon 0", mts(dpclient.Budget{Delta: 1e-6}), rule},
		{"mu 101", mts(dpclient.Budget{Mu: 101, Delta: 1e-6}), schema},
		{"mu and epsilon", mts(dpclient.Budget{Epsilon: 1, Mu: 1, Delta: 1e-6}), rule},
		{"delta 0", mts(dpclient.Budget{Epsilon: 1}), schema},
		{"name of 200 characters", named(strings.Repeat("é", 200), "a", "b"), ""},
		{"name of 201 characters", named(strings.Repeat("é", 201), "a", "b"), schema},
		{"empty name", named("", "a", "b"), schema},
		{"blank name", named("  ", "a", "b"), rule},
		{"name with NUL", named("a\x00b", "a", "b"), rule},
		{"arm with a newline", named("n", "a", "b\n"), rule},
		{"repeated arm", named("r", "a", "a"), rule},
		{"one arm", named("o", "a"), ""},
		{"no arms", named("z"), schema},
	} {
		_, err := c.CreateExperiment(ctx, tc.spec)
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("creating with %s: %v", tc.name, err)
		case tc.code != "":
			want("creating with "+tc.name, err, http.StatusBadRequest, tc.code)
		}
	}
}
