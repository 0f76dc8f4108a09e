package plan

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/store/records"
)

// An approval binds to the head that was current when its comment was made,
// by GitHub's times: HeadWhen first learns from GitHub of a push shardgate
// has not processed yet, so a comment made before it never counts for it.
func TestHeadWhenBindsToTheHeadOfTheComment(t *testing.T) {
	ctx := context.Background()
	s, gh, clock := seamPlanner(t, nil)
	t0 := clock.Now()
	// shardgate saw firstHead an hour ago; the push of pushedHead came 10s
	// after t0, and shardgate has not processed it when it reads the comment.
	require.NoError(t, s.Records.PutPR(ctx, &records.PRState{Ref: seamRef, HeadSHA: firstHead,
		Heads: []records.HeadSighting{{SHA: firstHead, Since: t0.Add(-time.Hour)}}}))
	gh.SetPullRequest(seamRef.Owner, seamRef.Repo, ghapp.PullRequest{Number: seamRef.Number, State: "open",
		HeadSHA: pushedHead, BaseRef: "main", UpdatedAt: t0.Add(10 * time.Second)})
	clock.Advance(time.Minute) // GitHub answers at t0+60s: pushedHead is seen from then

	head, current, err := s.HeadWhen(ctx, gh, seamRef, t0.Add(5*time.Second))
	require.NoError(t, err)
	require.Equal(t, firstHead, head, "made before the push: for the older head")
	require.Equal(t, pushedHead, current)

	head, _, err = s.HeadWhen(ctx, gh, seamRef, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, firstHead, head, "in the second the push was seen: not provably after it")

	clock.Advance(time.Minute)
	head, current, err = s.HeadWhen(ctx, gh, seamRef, t0.Add(90*time.Second))
	require.NoError(t, err)
	require.Equal(t, pushedHead, head, "made after the push was seen")
	require.Equal(t, pushedHead, current)

	head, _, err = s.HeadWhen(ctx, gh, seamRef, t0.Add(-2*time.Hour))
	require.NoError(t, err)
	require.Empty(t, head, "older than every head seen: binds to none")

	st, err := s.Records.PR(ctx, seamRef)
	require.NoError(t, err)
	require.Len(t, st.Heads, 2, "the push is recorded once, when first seen")
}
