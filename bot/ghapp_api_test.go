package bot

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// The pull-request, contents, reaction and permission calls of ghapp.Client
// (tested here, beside the fake GitHub, so ghapp's tests never import bot/),
// against the fake GitHub (which checks every request against GitHub's
// OpenAPI description): what the flows read is what GitHub answers.
func TestClientPullRequestsContentsReactionsPermissions(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC)) // GitHub's; the App's credentials keep the real time (githubtest.WithCredentialClock)
	gh := githubtest.New(t, githubtest.WithClock(clock.Now))
	repo := githubtest.NewGitRepo(t)
	repo.WriteFile(".shardgate.yaml", "version: 1\n")
	repo.WriteFile("streams/main.tf", "# v1\n")
	base := repo.Commit("initial")
	repo.Branch("change")
	repo.WriteFile("streams/main.tf", "# v2\n")
	repo.WriteFile("billing/main.tf", "# new\n")
	repo.Commit("change")
	gh.AddRepo("acme", "streams", repo)
	pr := gh.OpenPR("acme", "streams", githubtest.PullRequest{HeadRef: "change", User: "bob"})
	cc, err := ghapp.NewClientCreator(gh.URL(), gh.AppID(), gh.AppPrivateKeyPEM(), nil)
	require.NoError(t, err)
	api, err := ghapp.APIFor(cc, 1)
	require.NoError(t, err)

	got, err := api.GetPullRequest(ctx, "acme", "streams", pr.Number)
	require.NoError(t, err)
	require.Equal(t, "open", got.State)
	require.Equal(t, "bob", got.Author)
	require.Equal(t, pr.HeadSHA, got.HeadSHA)
	require.Equal(t, base, got.BaseSHA)
	require.Equal(t, "acme/streams", got.HeadRepo)
	require.Equal(t, got.HeadRepo, got.BaseRepo)
	require.Equal(t, clock.Now(), got.AnsweredAt, "GitHub's clock, from the Date header")
	_, err = api.GetPullRequest(ctx, "acme", "streams", 999)
	require.ErrorIs(t, err, ghapp.ErrNotFound)

	files, err := api.ListPullRequestFiles(ctx, "acme", "streams", pr.Number, 0)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"streams/main.tf", "billing/main.tf"}, files.Items)

	b, err := api.GetFile(ctx, "acme", "streams", ".shardgate.yaml", base)
	require.NoError(t, err)
	require.Equal(t, "version: 1\n", string(b))
	_, err = api.GetFile(ctx, "acme", "streams", "absent.yaml", base)
	require.ErrorIs(t, err, ghapp.ErrNotFound)
	var undecodable *ghapp.UndecodableError
	_, err = api.GetFile(ctx, "acme", "streams", "streams", base)
	require.ErrorAs(t, err, &undecodable, "a directory is not a file")

	c := gh.AddComment("acme", "streams", pr.Number, "alice", "/shardgate plan")
	require.NoError(t, api.ReactToComment(ctx, "acme", "streams", c.ID, "+1"))
	require.Len(t, gh.Reactions("acme", "streams", c.ID), 1)

	gh.SetPermission("acme", "streams", "alice", "write")
	p, err := api.PermissionLevel(ctx, "acme", "streams", "alice")
	require.NoError(t, err)
	require.Equal(t, "write", p)
}
