package prreport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/pullreq"
)

// The Apply section names each job's state; a queued job says what it waits
// behind, a failed one how to retry; what a PR wrote is escaped and sensitive
// values hidden. The status sums up only once every apply has finished.
func TestApplySectionAndStatus(t *testing.T) {
	other := pullreq.Ref{Owner: "acme", Repo: "streams", Number: 3}
	jobs := []*applyqueue.Job{
		{Seq: "1", Project: "orders", State: applyqueue.Applied, Reason: "applied 2 changes"},
		{Seq: "2", Project: "payments", State: applyqueue.Failed, Reason: "pre-flight: <b>busy</b>\nsecond line", Sensitive: []string{"busy"}},
		{Seq: "3", Project: "audit", State: applyqueue.Queued},
	}
	blockers := func(seq string) []applyqueue.Blocker {
		if seq != "3" {
			t.Errorf("blockers asked for %s, not queued", seq)
		}
		return []applyqueue.Blocker{{Stream: planparse.StreamKey("https://coord.example", "audit-events"), Ref: other, Project: "audit"}}
	}
	out := ApplySection(jobs, blockers)
	require.Contains(t, out, "| `orders` | ✅ applied | applied 2 changes |")
	require.Contains(t, out, "An approver can retry with `/shardgate apply`.")
	require.NotContains(t, out, "<b>", "escaped")
	require.NotContains(t, out, "busy", "sensitive values hidden")
	require.NotContains(t, out, "second line", "one line per job")
	require.Contains(t, out, "waiting behind #3 (`audit`) on stream `audit-events`")
	require.Empty(t, ApplySection(nil, blockers))

	require.Empty(t, ApplyStatus(jobs), "one apply is still queued")
	jobs[2].State = applyqueue.Applied
	require.Equal(t, "merged; **not applied** (1 of 3 projects failed; see Apply below).", ApplyStatus(jobs))
	jobs[1].State = applyqueue.Applied
	require.Equal(t, "merged and applied (3 projects); the coordinator has converged.", ApplyStatus(jobs))
}
