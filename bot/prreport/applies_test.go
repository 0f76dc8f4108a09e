package prreport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// The Apply section names each job's state; a queued job says what it waits
// behind, a failed one how to retry; what a PR wrote is escaped and sensitive
// values hidden. The status sums up only once every apply has finished.
func TestApplySectionAndStatus(t *testing.T) {
	other := pullreq.Ref{Owner: "acme", Repo: "streams", Number: 3}
	jobs := []*applyqueue.Job{
		{Seq: "1", Project: "orders", Streams: []string{"orders"}, State: applyqueue.Applied, Reason: "applied 2 changes"},
		{Seq: "2", Project: "payments", State: applyqueue.Failed, Reason: "pre-flight: <b>busy</b>\nsecond line", Sensitive: []string{"busy"}},
		{Seq: "3", Project: "audit", State: applyqueue.Queued},
	}
	blockers := func(seq string) []applyqueue.Blocker {
		if seq != "3" {
			t.Errorf("blockers asked for %s, not queued", seq)
		}
		return []applyqueue.Blocker{{Stream: planparse.StreamKey("https://coord.example", "audit-events"), Ref: other, Project: "audit"}}
	}
	out := ApplySection(jobs, nil, blockers)
	require.Contains(t, out, "| `orders` | ✅ applied | applied 2 changes |")
	require.Contains(t, out, "An approver can retry with `/shardgate apply`.")
	require.NotContains(t, out, "<b>", "escaped")
	require.NotContains(t, out, "busy", "sensitive values hidden")
	require.NotContains(t, out, "second line", "one line per job")
	require.Contains(t, out, "waiting behind #3 (`audit`) on stream `audit-events`")
	require.Empty(t, ApplySection(nil, nil, blockers))

	require.Empty(t, ApplyStatus(jobs, nil), "one apply is still queued")
	jobs[2].State = applyqueue.Applied
	require.Equal(t, "merged; **not applied** (1 of 3 projects failed; see Apply below).", ApplyStatus(jobs, nil))
	jobs[1].State = applyqueue.Applied
	require.Equal(t, "merged and applied (3 projects); the coordinator has converged.", ApplyStatus(jobs, nil))
}

// A merge applies some projects and leaves the `apply: manual` ones for a
// command: the section and the status say which, and why; a project whose
// apply a command queued no longer waits. Projects without streams applied
// are not said to have converged on the coordinator.
func TestApplySectionWaitingProjects(t *testing.T) {
	jobs := []*applyqueue.Job{{Seq: "1", Project: "alarms", State: applyqueue.Applied, Reason: "applied; nothing to converge"}}
	waiting := []records.WaitingApply{{Project: "streams", Why: "`apply: manual` in `.shardgate.yaml`."}}
	out := ApplySection(jobs, waiting, nil)
	require.Contains(t, out, "| `alarms` | ✅ applied |")
	require.Contains(t, out, "| `streams` | ⏸️ waits for a command | `apply: manual` in `.shardgate.yaml`. An approver applies it with `/shardgate apply streams`. |")
	require.Equal(t, "merged and applied (1 project). 1 project waits for `/shardgate apply <project>` (see Apply below).", ApplyStatus(jobs, waiting))

	require.Contains(t, ApplySection(nil, waiting, nil), "waits for a command", "nothing applied on merge, one waits")
	require.Empty(t, ApplyStatus(nil, waiting), "no apply: the merge's own status stands")

	jobs = append(jobs, &applyqueue.Job{Seq: "2", Project: "streams", Streams: []string{"orders"}, State: applyqueue.Applied, Reason: "applied and converged"})
	out = ApplySection(jobs, waiting, nil)
	require.NotContains(t, out, "waits for a command", "the command queued it")
	require.Equal(t, "merged and applied (2 projects); the coordinator has converged.", ApplyStatus(jobs, waiting))
}

// A queued job behind an earlier apply of its project's Terraform state says so.
func TestApplySectionWaitsOnState(t *testing.T) {
	other := pullreq.Ref{Owner: "acme", Repo: "streams", Number: 4}
	jobs := []*applyqueue.Job{{Seq: "2", Project: "alarms", State: applyqueue.Queued}}
	out := ApplySection(jobs, nil, func(string) []applyqueue.Blocker {
		return []applyqueue.Blocker{{Ref: other, Project: "alarms"}}
	})
	require.Contains(t, out, "waiting behind #4 (`alarms`) on the project's Terraform state")
}
