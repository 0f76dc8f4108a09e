package plan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// storedApplies is the apply queue as the Planner reads it (ApplyView): the
// jobs as stored.
type storedApplies struct{ jobs []*applyqueue.Job }

func (v storedApplies) ListForPR(context.Context, pullreq.Ref) ([]*applyqueue.Job, error) {
	var out []*applyqueue.Job
	for _, j := range v.jobs {
		c := *j
		out = append(out, &c)
	}
	return out, nil
}

func (v storedApplies) Blockers(context.Context, string) ([]applyqueue.Blocker, error) {
	return nil, nil
}

// A finished apply's outcome is on the comment at once, from the run's own
// copy of the job, before the scheduler records it: passed, not carried in
// the context.
func TestRefreshCommentShowsTheOutcomeNotRecordedYet(t *testing.T) {
	ctx := context.Background()
	s, gh, _ := seamPlanner(t, nil)
	require.NoError(t, s.Records.PutPR(ctx, &records.PRState{Ref: seamRef, HeadSHA: firstHead, Status: "merged by alice; applying"}))
	stored := &applyqueue.Job{Seq: "1", Ref: seamRef, Project: "streams", Streams: []string{"create-order"}, State: applyqueue.Converging, Progress: "waiting"}
	s.Applies = storedApplies{jobs: []*applyqueue.Job{stored}}
	body := func() string {
		cs := gh.Comments(seamRef.Owner, seamRef.Repo, seamRef.Number)
		require.Len(t, cs, 1)
		return cs[0].Body
	}

	require.NoError(t, s.RefreshComment(ctx, gh, seamRef, nil))
	require.Contains(t, body(), "🔄 converging")
	require.Contains(t, body(), "merged by alice; applying")

	final := *stored
	final.State, final.Reason = applyqueue.Applied, "applied and converged"
	require.NoError(t, s.RefreshComment(ctx, gh, seamRef, &final))
	require.Contains(t, body(), "| `streams` | ✅ applied | applied and converged |")
	require.Contains(t, body(), "merged and applied (1 project); the coordinator has converged.")
}
