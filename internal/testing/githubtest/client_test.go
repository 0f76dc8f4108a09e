package githubtest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

func TestClientComments(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	created, _, err := client.Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("<!-- shardgate -->\nqueued")})
	require.NoError(t, err)
	require.Equal(t, DefaultBotLogin, created.GetUser().GetLogin())
	require.Equal(t, "Bot", created.GetUser().GetType())

	edited, _, err := client.Issues.EditComment(ctx, "acme", "infra", created.GetID(), &github.IssueComment{Body: github.String("<!-- shardgate -->\ndone")})
	require.NoError(t, err)
	require.Equal(t, created.GetID(), edited.GetID())

	gh.AddComment("acme", "infra", pr.Number, "bob", "/shardgate plan")
	list, _, err := client.Issues.ListComments(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "<!-- shardgate -->\ndone", list[0].GetBody())
	require.Equal(t, "bob", list[1].GetUser().GetLogin())

	got, _, err := client.Issues.GetComment(ctx, "acme", "infra", list[1].GetID())
	require.NoError(t, err)
	require.Equal(t, "/shardgate plan", got.GetBody())

	reaction, _, err := client.Reactions.CreateIssueCommentReaction(ctx, "acme", "infra", list[1].GetID(), "+1")
	require.NoError(t, err)
	require.Equal(t, "+1", reaction.GetContent())
	require.Equal(t, []Reaction{{ID: reaction.GetID(), CommentID: list[1].GetID(), User: DefaultBotLogin, Content: "+1"}},
		gh.Reactions("acme", "infra", list[1].GetID()))

	_, err = client.Issues.DeleteComment(ctx, "acme", "infra", created.GetID())
	require.NoError(t, err)
	comments := gh.Comments("acme", "infra", pr.Number)
	require.Len(t, comments, 1)
	require.Equal(t, "bob", comments[0].User)
}

func TestClientEditOthersCommentForbidden(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	c := gh.AddComment("acme", "infra", pr.Number, "bob", "hello")

	_, resp, err := client.Issues.EditComment(context.Background(), "acme", "infra", c.ID, &github.IssueComment{Body: github.String("x")})
	require.Error(t, err)
	require.Equal(t, 403, resp.StatusCode)
}

func TestClientCommentLengthLimit(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	tests := []struct {
		name   string
		length int
		want   int
	}{
		{"at the limit", maxCommentRunes, 201},
		{"over the limit", maxCommentRunes + 1, 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Repeat("é", tt.length)
			_, resp, err := client.Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, &github.IssueComment{Body: &body})
			require.Equal(t, tt.want, resp.StatusCode)
			require.Equal(t, tt.want == 201, err == nil)
		})
	}
}

func TestClientCheckRuns(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	run, _, err := client.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{
		Name: "shardgate/plan: orders", HeadSHA: pr.HeadSHA, Status: github.String("in_progress"),
		Output: &github.CheckRunOutput{Title: github.String("Planning"), Summary: github.String("planning orders")},
	})
	require.NoError(t, err)
	require.Equal(t, "in_progress", run.GetStatus())
	require.Len(t, run.PullRequests, 1)
	require.Equal(t, pr.Number, run.PullRequests[0].GetNumber())

	updated, _, err := client.Checks.UpdateCheckRun(ctx, "acme", "infra", run.GetID(), github.UpdateCheckRunOptions{
		Name: "shardgate/plan: orders", Conclusion: github.String("failure"),
		Output: &github.CheckRunOutput{Title: github.String("Denied"), Summary: github.String("1 violation"), Text: github.String("scale too large")},
	})
	require.NoError(t, err)
	require.Equal(t, "completed", updated.GetStatus())
	require.Equal(t, "failure", updated.GetConclusion())

	fetched, _, err := client.Checks.GetCheckRun(ctx, "acme", "infra", run.GetID())
	require.NoError(t, err)
	require.Equal(t, "Denied", fetched.GetOutput().GetTitle())

	runs := gh.CheckRuns("acme", "infra")
	require.Len(t, runs, 1)
	require.Equal(t, "shardgate/plan: orders", runs[0].Name)
	require.Equal(t, pr.HeadSHA, runs[0].HeadSHA)
	require.Equal(t, "failure", runs[0].Conclusion)
	require.Equal(t, "scale too large", runs[0].Text)
	require.Equal(t, 1, runs[0].Updates)
	require.False(t, runs[0].CompletedAt.IsZero())
}

func TestClientLabelsAndEvents(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	gh.AddLabel("acme", "infra", pr.Number, "policy-exception/large_scale", "carol")
	_, _, err := client.Issues.AddLabelsToIssue(ctx, "acme", "infra", pr.Number, []string{"shardgate"})
	require.NoError(t, err)
	// go-github v60 does not escape the label; the spec's {name} is one
	// segment, so callers escape it.
	_, err = client.Issues.RemoveLabelForIssue(ctx, "acme", "infra", pr.Number, url.PathEscape("policy-exception/large_scale"))
	require.NoError(t, err)
	require.Equal(t, []string{"shardgate"}, gh.Labels("acme", "infra", pr.Number))

	events, _, err := client.Issues.ListIssueEvents(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	type ev struct{ event, label, actor string }
	var got []ev
	for _, e := range events {
		got = append(got, ev{e.GetEvent(), e.GetLabel().GetName(), e.GetActor().GetLogin()})
		require.False(t, e.GetCreatedAt().IsZero())
	}
	require.Equal(t, []ev{
		{"labeled", "policy-exception/large_scale", "carol"},
		{"labeled", "shardgate", DefaultBotLogin},
		{"unlabeled", "policy-exception/large_scale", DefaultBotLogin},
	}, got)

	_, err = client.Issues.RemoveLabelForIssue(ctx, "acme", "infra", pr.Number, "absent")
	require.Error(t, err)
}

func TestClientPermissionsAndTeams(t *testing.T) {
	gh := New(t)
	newRepoWithPR(t, gh)
	gh.SetPermission("acme", "infra", "dave", "write")
	gh.AddTeamMember("acme", "platform", "erin")
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	tests := []struct {
		user, want string
	}{
		{"dave", "write"},
		{"mallory", "none"},
	}
	for _, tt := range tests {
		t.Run("permission "+tt.user, func(t *testing.T) {
			level, _, err := client.Repositories.GetPermissionLevel(ctx, "acme", "infra", tt.user)
			require.NoError(t, err)
			require.Equal(t, tt.want, level.GetPermission())
			require.Equal(t, tt.user, level.GetUser().GetLogin())
		})
	}

	m, _, err := client.Teams.GetTeamMembershipBySlug(ctx, "acme", "platform", "erin")
	require.NoError(t, err)
	require.Equal(t, "active", m.GetState())
	_, resp, err := client.Teams.GetTeamMembershipBySlug(ctx, "acme", "platform", "mallory")
	require.Error(t, err)
	require.Equal(t, 404, resp.StatusCode)
}

func TestClientPullAndFiles(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	got, _, err := client.PullRequests.Get(ctx, "acme", "infra", pr.Number)
	require.NoError(t, err)
	require.Equal(t, pr.HeadSHA, got.GetHead().GetSHA())
	require.Equal(t, "change", got.GetHead().GetRef())
	require.Equal(t, "acme/infra", got.GetHead().GetRepo().GetFullName())
	require.Equal(t, "main", got.GetBase().GetRef())
	require.Equal(t, "alice", got.GetUser().GetLogin())

	files, _, err := client.PullRequests.ListFiles(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	got2 := map[string]string{}
	for _, f := range files {
		got2[f.GetFilename()] = f.GetStatus()
	}
	require.Equal(t, map[string]string{"stacks/orders/main.tf": "modified", "stacks/payments/main.tf": "added"}, got2)
}

func TestClientForkPR(t *testing.T) {
	gh := New(t)
	g, _ := newRepoWithPR(t, gh)
	g.Branch("fork-change")
	g.WriteFile("stacks/orders/extra.tf", "# fork\n")
	g.Commit("fork change")
	pr := gh.OpenPR("acme", "infra", PullRequest{User: "outsider", HeadRef: "fork-change", HeadRepo: "outsider/infra"})
	client := newClient(t, gh, DefaultInstallationID)

	got, _, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
	require.NoError(t, err)
	require.Equal(t, "outsider/infra", got.GetHead().GetRepo().GetFullName())
	require.True(t, got.GetHead().GetRepo().GetFork())
	require.Equal(t, "acme/infra", got.GetBase().GetRepo().GetFullName())
}

func TestClientGetContents(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	file, _, _, err := client.Repositories.GetContents(ctx, "acme", "infra", ".shardgate.yaml", &github.RepositoryContentGetOptions{Ref: "main"})
	require.NoError(t, err)
	content, err := file.GetContent()
	require.NoError(t, err)
	require.Equal(t, "version: 1\n", content)

	file, _, _, err = client.Repositories.GetContents(ctx, "acme", "infra", "stacks/payments/main.tf", &github.RepositoryContentGetOptions{Ref: pr.HeadSHA})
	require.NoError(t, err)
	require.Equal(t, "main.tf", file.GetName())

	_, dir, _, err := client.Repositories.GetContents(ctx, "acme", "infra", "stacks", nil)
	require.NoError(t, err)
	require.Len(t, dir, 1)
	require.Equal(t, "stacks/orders", dir[0].GetPath())
	require.Equal(t, "dir", dir[0].GetType())

	_, _, resp, err := client.Repositories.GetContents(ctx, "acme", "infra", "stacks/payments/main.tf", &github.RepositoryContentGetOptions{Ref: "main"})
	require.Error(t, err)
	require.Equal(t, 404, resp.StatusCode)
}

func TestClientWrongInstallationCannotSeeRepo(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, 99)

	_, resp, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
	require.Error(t, err)
	require.Equal(t, 404, resp.StatusCode)
}
