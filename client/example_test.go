package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/dpbandit/dpbandit/client"
	"github.com/dpbandit/dpbandit/client/clienttest"
)

// The examples run against clienttest's in-memory stand-in; against a real
// service, pass its URL (e.g. http://127.0.0.1:8080) and the admin key that
// `dpbandit serve` printed on its first start.

func Example() {
	srv := clienttest.NewServer("admin-secret") // stands in for `dpbandit serve`
	defer srv.Close()

	ctx := context.Background()
	c, err := client.New(srv.URL, "admin-secret")
	if err != nil {
		log.Fatal(err)
	}

	// Create an experiment with a privacy budget of (1, 1e-6).
	exp, err := c.CreateExperiment(ctx, client.ExperimentSpec{
		Name:    "homepage-hero",
		Arms:    []string{"control", "blue", "green"},
		Policy:  "mts-gaussian",
		Horizon: 100000,
		Budget:  &client.Budget{Epsilon: 1, Delta: 1e-6},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Ask for a decision, show the arm, post the reward when it arrives.
	d, err := c.Decide(ctx, exp.ID, client.DecideRequest{EventID: "user-42-visit-1"})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Reward(ctx, exp.ID, d.EventID, 1); err != nil {
		log.Fatal(err)
	}

	st, err := c.GetExperiment(ctx, exp.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("decisions:", st.Decisions, "rewards:", st.Rewards)
	fmt.Printf("budget: (%g, %g)\n", st.Privacy.Budget.Epsilon, st.Privacy.Budget.Delta)
	// Output:
	// decisions: 1 rewards: 1
	// budget: (1, 1e-06)
}

func ExampleClient_DecideBatch() {
	srv := clienttest.NewServer("admin-secret")
	defer srv.Close()
	ctx := context.Background()
	c, _ := client.New(srv.URL, "admin-secret")
	exp, _ := c.CreateExperiment(ctx, client.ExperimentSpec{
		Name: "batch", Arms: []string{"a", "b"}, Policy: "beta-ts", Horizon: 1000, // not private: Budget nil
	})

	ds, err := c.DecideBatch(ctx, exp.ID, 3)
	if err != nil {
		log.Fatal(err)
	}
	rewards := make([]client.Reward, len(ds))
	for i, d := range ds {
		rewards[i] = client.Reward{EventID: d.EventID, Reward: 0.5}
	}
	if err := c.RewardBatch(ctx, exp.ID, rewards); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(ds), "decisions rewarded")
	// Output: 3 decisions rewarded
}

// Log each decision's propensity for off-policy evaluation (inverse
// propensity weighting). The stand-in chooses uniformly, so each propensity
// is exactly 1/2; `dpbandit serve` answers with the policy's own
// probability (a Monte Carlo estimate for Thompson sampling, with
// PropensityDraws set).
func ExampleDecideRequest_propensity() {
	srv := clienttest.NewServer("admin-secret")
	defer srv.Close()
	ctx := context.Background()
	c, _ := client.New(srv.URL, "admin-secret")
	exp, _ := c.CreateExperiment(ctx, client.ExperimentSpec{
		Name: "ope", Arms: []string{"a", "b"}, Policy: "beta-ts", Horizon: 1000,
	})
	d, err := c.Decide(ctx, exp.ID, client.DecideRequest{Propensity: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("propensity:", *d.Propensity, "exact:", d.PropensityDraws == 0)
	// Output: propensity: 0.5 exact: true
}

func ExampleAPIError() {
	srv := clienttest.NewServer("admin-secret")
	defer srv.Close()
	ctx := context.Background()
	c, _ := client.New(srv.URL, "admin-secret")
	exp, _ := c.CreateExperiment(ctx, client.ExperimentSpec{
		Name: "errors", Arms: []string{"a", "b"}, Policy: "beta-ts", Horizon: 1000,
	})
	d, _ := c.Decide(ctx, exp.ID, client.DecideRequest{})
	_ = c.Reward(ctx, exp.ID, d.EventID, 1)

	// A second, different reward for the same event is a conflict.
	err := c.Reward(ctx, exp.ID, d.EventID, 0)
	var ae *client.APIError
	if errors.As(err, &ae) {
		fmt.Println(ae.Status, client.IsConflict(err))
	}
	// A reward outside the reward range is a 400 that names the range.
	err = c.Reward(ctx, exp.ID, d.EventID, 7)
	fmt.Println(client.StatusOf(err))
	// Output:
	// 409 true
	// 400
}

// A contextual experiment: the policy scores one feature vector per arm, so
// every decision request carries the candidates (Dim features each, scaled
// to FeatureNorm).
func ExampleClient_Decide_contextual() {
	srv := clienttest.NewServer("admin-secret")
	defer srv.Close()
	ctx := context.Background()
	c, _ := client.New(srv.URL, "admin-secret")

	exp, err := c.CreateExperiment(ctx, client.ExperimentSpec{
		Name:        "article-ranking",
		Arms:        []string{"sports", "politics", "science"},
		Policy:      "adaprivate-ts",
		Horizon:     100000,
		Budget:      &client.Budget{Epsilon: 2, Delta: 1e-6},
		Dim:         3,
		FeatureNorm: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	d, err := c.Decide(ctx, exp.ID, client.DecideRequest{Candidates: [][]float64{
		{1, 0, 0.5}, {0, 1, 0.5}, {0.3, 0.3, 1}, // this user's features for each article
	}})
	if err != nil {
		log.Fatal(err)
	}
	_ = c.Reward(ctx, exp.ID, d.EventID, 1)

	_, err = c.Decide(ctx, exp.ID, client.DecideRequest{}) // no candidates
	fmt.Println("without candidates:", client.StatusOf(err))
	st, _ := c.GetExperiment(ctx, exp.ID)
	fmt.Println("contextual:", st.Contextual, "dim:", st.Dim, "feature norm:", st.FeatureNorm)
	// Output:
	// without candidates: 400
	// contextual: true dim: 3 feature norm: 2
}

// The operator's lifecycle of an experiment: stop its decisions (rewards
// for past decisions still count), archive it (read-only), delete it, and
// revoke the client key that served it. Each refusal is an *APIError whose
// ErrorCode says why.
func ExampleClient_StopExperiment() {
	srv := clienttest.NewServer("admin-secret")
	defer srv.Close()
	ctx := context.Background()
	admin, _ := client.New(srv.URL, "admin-secret")
	exp, err := admin.CreateExperiment(ctx, client.ExperimentSpec{
		Name: "spring-sale", Arms: []string{"a", "b", "c"}, Policy: "mts-gaussian",
		Horizon: 10000, Budget: &client.Budget{Epsilon: 1, Delta: 1e-6},
	})
	if err != nil {
		log.Fatal(err)
	}
	key, _ := admin.CreateKey(ctx, exp.ID)
	app, _ := client.New(srv.URL, key.Secret) // what the application uses
	d, _ := app.Decide(ctx, exp.ID, client.DecideRequest{})

	st, _ := admin.StopExperiment(ctx, exp.ID)
	fmt.Println("status:", st.Status)
	_, err = app.Decide(ctx, exp.ID, client.DecideRequest{})
	fmt.Println("decide:", client.StatusOf(err), client.ErrorCode(err))
	fmt.Println("reward for a past decision:", app.Reward(ctx, exp.ID, d.EventID, 1))

	st, _ = admin.ArchiveExperiment(ctx, exp.ID)
	fmt.Println("status:", st.Status, "decisions:", st.Decisions, "rewards:", st.Rewards)
	err = app.Reward(ctx, exp.ID, d.EventID, 1)
	fmt.Println("reward:", client.StatusOf(err), client.ErrorCode(err))

	if err := admin.DeleteExperiment(ctx, exp.ID); err != nil {
		log.Fatal(err)
	}
	_, err = admin.GetExperiment(ctx, exp.ID)
	fmt.Println("get:", client.IsNotFound(err))

	if err := admin.RevokeKey(ctx, key.ID); err != nil {
		log.Fatal(err)
	}
	_, err = app.Decide(ctx, exp.ID, client.DecideRequest{})
	fmt.Println("revoked key:", client.IsUnauthorized(err))
	// Output:
	// status: stopped
	// decide: 409 experiment_stopped
	// reward for a past decision: <nil>
	// status: archived decisions: 1 rewards: 1
	// reward: 409 experiment_archived
	// get: true
	// revoked key: true
}
