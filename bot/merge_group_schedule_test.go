package bot

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storetest"
)

// A merge group's job goes ahead of the pull request plans its installation
// queued before it, with one worker and nothing running, and while that
// installation runs a job: the queue waits on it. On both stores.
func TestMergeGroupJobGoesAheadOfQueuedPlans(t *testing.T) {
	t.Run("bolt", func(t *testing.T) {
		st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		groupGoesAhead(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		st, err := store.OpenPostgres(ctx, storetest.PostgresURL(t))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		groupGoesAhead(t, st)
	})
}

func groupGoesAhead(t *testing.T, st store.Store) {
	ctx := context.Background()
	put := func(event string, body []byte) string {
		t.Helper()
		id := identify(event, body)
		j := &store.Job{DeliveryID: githubtest.NewDeliveryID(), Kind: webhook.JobKindEvent, Event: event, Payload: body,
			Installation: id.Installation, Lane: id.Lane, CoalesceKey: id.CoalesceKey, Priority: id.Priority}
		require.NoError(t, st.Enqueue(ctx, j, 0))
		return j.ID
	}
	opened := func(number int) []byte {
		return githubtest.PullRequestOpened(t, githubtest.PRPayload{InstallationID: 1, Owner: owner, Repo: repoName, RepoID: 9, Number: number,
			HeadRef: "b", HeadSHA: "0123456789012345678901234567890123456789", BaseRef: "main", Author: author})
	}
	group := func(head string) string {
		return put("merge_group", githubtest.MergeGroupChecksRequested(t, githubtest.MergeGroupPayload{InstallationID: 1, Owner: owner, Repo: repoName, RepoID: 9,
			Group: githubtest.MergeGroup{HeadSHA: head, BaseSHA: "2222222222222222222222222222222222222222",
				HeadRef: "refs/heads/gh-readonly-queue/main/pr-2-2222222222222222222222222222222222222222", BaseRef: "refs/heads/main"}}))
	}
	first := put("pull_request", opened(1))
	waiting := put("pull_request", opened(2))
	idle := group("1111111111111111111111111111111111111111")
	claimed, err := st.Claim(ctx, "worker-1")
	require.NoError(t, err)
	require.Equal(t, idle, claimed.ID, "nothing running: the group's job, not the older plan %s", first)
	require.NoError(t, st.Complete(ctx, claimed.ID, claimed.Owner, nil))

	claimed, err = st.Claim(ctx, "worker-1")
	require.NoError(t, err)
	require.Equal(t, first, claimed.ID)
	busy := group("3333333333333333333333333333333333333333")
	claimed, err = st.Claim(ctx, "worker-2")
	require.NoError(t, err)
	require.Equal(t, busy, claimed.ID, "its installation running a job: the group's job, not the older plan %s", waiting)
}
