package githubtest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
)

// TestClientIssues drives ghapp.Issues through go-github against the fake:
// every request and answer is checked against GitHub's OpenAPI description.
func TestClientIssues(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	gh.AddLabel("acme", "infra", pr.Number, "shardgate/drift", "bob") // a pull request with the label is listed too
	client := ghapp.FromClient(newClient(t, gh, DefaultInstallationID))
	ctx := context.Background()

	mine, err := client.CreateIssue(ctx, "acme", "infra", "drift", "<!-- m -->\nbody", []string{"shardgate/drift"})
	require.NoError(t, err)
	require.Greater(t, mine.Number, pr.Number, "issues and pull requests share numbers")
	require.Equal(t, "open", mine.State)
	require.True(t, mine.Bot)
	require.Equal(t, []string{"shardgate/drift"}, mine.Labels)
	gh.CreateIssue("acme", "infra", "carol", "unrelated", "x")

	page, err := client.ListIssues(ctx, "acme", "infra", "shardgate/drift", "open", 1)
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	require.Equal(t, mine.Number, page.Items[0].Number, "newest first")
	require.True(t, page.Items[1].PullRequest)

	_, err = client.CreateComment(ctx, "acme", "infra", mine.Number, "gone")
	require.NoError(t, err)
	require.NoError(t, client.EditIssue(ctx, "acme", "infra", mine.Number, ghapp.IssueEdit{State: "closed"}))
	got, err := client.GetIssue(ctx, "acme", "infra", mine.Number)
	require.NoError(t, err)
	require.Equal(t, "closed", got.State)
	require.Equal(t, "<!-- m -->\nbody", got.Body, "an edit of the state keeps the body")
	require.Len(t, gh.Comments("acme", "infra", mine.Number), 1)

	page, err = client.ListIssues(ctx, "acme", "infra", "shardgate/drift", "closed", 1)
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.NoError(t, client.EditIssue(ctx, "acme", "infra", mine.Number, ghapp.IssueEdit{State: "open", Body: "<!-- m -->\nnew"}))
	issues := gh.Issues("acme", "infra")
	require.Len(t, issues, 2)
	require.Equal(t, "open", issues[0].State)
	require.Equal(t, "<!-- m -->\nnew", issues[0].Body)
	require.Equal(t, 2, issues[0].Edits)

	_, err = client.GetIssue(ctx, "acme", "infra", 999)
	require.True(t, errors.Is(err, ghapp.ErrNotFound))
}
