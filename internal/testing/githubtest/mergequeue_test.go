package githubtest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

// A merge group is a real branch of merge commits off the base branch, its
// commits name their pull requests, and its webhooks are GitHub's payloads.
func TestMergeGroup(t *testing.T) {
	gh := New(t)
	g, pr := newRepoWithPR(t, gh)
	mainHead, err := g.Resolve("main")
	require.NoError(t, err)
	group := gh.QueueMergeGroup("acme", "infra", nil, pr.Number)
	require.Equal(t, mainHead, group.BaseSHA)
	require.Equal(t, "refs/heads/main", group.BaseRef)
	require.Equal(t, "refs/heads/gh-readonly-queue/main/pr-1-"+mainHead, group.HeadRef)

	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()
	cmp, _, err := client.Repositories.CompareCommits(ctx, "acme", "infra", group.BaseSHA, group.HeadSHA, nil)
	require.NoError(t, err)
	require.Len(t, cmp.Commits, 2, "the pull request's commit and the queue's merge commit")
	prs, _, err := client.PullRequests.ListPullRequestsWithCommit(ctx, "acme", "infra", cmp.Commits[0].GetSHA(), nil)
	require.NoError(t, err)
	require.Len(t, prs, 1)
	require.Equal(t, pr.Number, prs[0].GetNumber())
	prs, _, err = client.PullRequests.ListPullRequestsWithCommit(ctx, "acme", "infra", mainHead, nil)
	require.NoError(t, err)
	require.Empty(t, prs, "a commit of the default branch no open pull request brought")

	ev, err := github.ParseWebHook("merge_group", MergeGroupChecksRequested(t, gh.MergeGroupPayload("acme", "infra", group)))
	require.NoError(t, err)
	mg := ev.(*github.MergeGroupEvent)
	require.Equal(t, "checks_requested", mg.GetAction())
	require.Equal(t, group.HeadSHA, mg.GetMergeGroup().GetHeadSHA())
	require.Equal(t, group.BaseSHA, mg.GetMergeGroup().GetBaseSHA())
	require.Equal(t, "infra", mg.GetRepo().GetName())
	var destroyed struct {
		Action, Reason string
	}
	require.NoError(t, json.Unmarshal(MergeGroupDestroyed(t, gh.MergeGroupPayload("acme", "infra", group), "dequeued"), &destroyed))
	require.Equal(t, "destroyed", destroyed.Action)
	require.Equal(t, "dequeued", destroyed.Reason)
}
