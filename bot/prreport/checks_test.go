package prreport

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/terraform/runner"
)

// runsNamed are the fake's check runs of that name.
func runsNamed(gh *ghapptest.GitHub, name string) []ghapptest.CheckRun {
	var out []ghapptest.CheckRun
	for _, c := range gh.CheckRuns() {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// A check run is created once: a start whose earlier creation's answer was
// lost takes the run over (found by its external id), and finishing it
// completes that run.
func TestCheckRunIsCreatedOnceAndFinishedInPlace(t *testing.T) {
	ctx := context.Background()
	s, gh, _ := newWorld(t)
	name := CheckPlanPrefix + "streams"
	first, err := s.checks.Start(ctx, gh, seamRef, name, firstHead)
	require.NoError(t, err)
	again, err := s.checks.Start(ctx, gh, seamRef, name, firstHead) // the job retried
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, 1, gh.Calls("CreateCheckRun"))

	id, err := s.checks.Finish(ctx, gh, seamRef, 0, name, firstHead, "success", &ghapp.CheckOutput{Title: "Allowed", Summary: "ok"})
	require.NoError(t, err)
	require.Equal(t, first, id, "an id lost with its record is found again")
	runs := runsNamed(gh, name)
	require.Len(t, runs, 1)
	require.Equal(t, "completed", runs[0].Status)
	require.Equal(t, "success", runs[0].Conclusion)
	require.Equal(t, checkExternalID(name, firstHead), runs[0].ExternalID)

	// Completed, it is not taken over: a new plan of the commit opens a new run.
	_, err = s.checks.Start(ctx, gh, seamRef, name, firstHead)
	require.NoError(t, err)
	require.Equal(t, 2, gh.Calls("CreateCheckRun"))
}

// Starting the plan check on a new head completes the run still open on the
// old one, and the output is redacted.
func TestStartCheckSupersedesTheOldHeadsRun(t *testing.T) {
	const secret = "webhook-secret-0123"
	ctx := context.Background()
	s, gh, _ := newWorld(t, secret)
	name := CheckPlanPrefix + "streams"
	old, err := s.checks.Start(ctx, gh, seamRef, name, firstHead)
	require.NoError(t, err)
	_, err = s.checks.Start(ctx, gh, seamRef, name, pushedHead)
	require.NoError(t, err)
	for _, c := range runsNamed(gh, name) {
		if c.ID == old {
			require.Equal(t, "cancelled", c.Conclusion)
			require.Contains(t, c.Output.Title, "Superseded by 2222222")
		}
	}

	_, err = s.checks.Finish(ctx, gh, seamRef, 0, CheckConfigName, pushedHead, "failure", &ghapp.CheckOutput{Title: "t " + secret, Summary: "s " + secret, Text: secret})
	require.NoError(t, err)
	cfg := runsNamed(gh, CheckConfigName)
	require.Len(t, cfg, 1, "finished without a start: created completed")
	require.Equal(t, &ghapp.CheckOutput{Title: "t " + runner.Redacted, Summary: "s " + runner.Redacted, Text: runner.Redacted}, cfg[0].Output)
}
