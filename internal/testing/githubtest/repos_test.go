package githubtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

func TestClientCompareAndRemovedFiles(t *testing.T) {
	gh := New(t)
	g := NewGitRepo(t)
	g.WriteFile("a/main.tf", "a\n")
	g.WriteFile("b/main.tf", "b\n")
	g.Commit("base")
	g.Branch("drop-b")
	g.RemoveFile("b/main.tf")
	g.WriteFile("a/main.tf", "a\na2\n")
	head := g.Commit("drop b")
	g.Checkout("main")
	g.WriteFile("c/main.tf", "c\n")
	g.Commit("main moves on")
	gh.AddRepo("acme", "infra", g)
	pr := gh.OpenPR("acme", "infra", PullRequest{User: "alice", HeadRef: "drop-b"})
	require.Equal(t, head, pr.HeadSHA)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	files, _, err := client.PullRequests.ListFiles(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	type f struct {
		name, status string
		add, del     int
	}
	var got []f
	for _, x := range files {
		got = append(got, f{x.GetFilename(), x.GetStatus(), x.GetAdditions(), x.GetDeletions()})
	}
	require.Equal(t, []f{{"a/main.tf", "modified", 1, 0}, {"b/main.tf", "removed", 0, 1}}, got)

	cmp, _, err := client.Repositories.CompareCommits(ctx, "acme", "infra", "main", "drop-b", nil)
	require.NoError(t, err)
	require.Equal(t, "diverged", cmp.GetStatus())
	require.Equal(t, 1, cmp.GetAheadBy())
	require.Equal(t, 1, cmp.GetBehindBy())
	require.Len(t, cmp.Commits, 1)
	require.Equal(t, head, cmp.Commits[0].GetSHA())
	require.Equal(t, "drop b", cmp.Commits[0].GetCommit().GetMessage())
	require.Len(t, cmp.Files, 2)
}

func TestClientStatusesTimelineAndPages(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	ctx := context.Background()

	_, _, err := client.Repositories.CreateStatus(ctx, "acme", "infra", pr.HeadSHA, &github.RepoStatus{
		State: github.String("pending"), Context: github.String("shardgate"), Description: github.String("queued"),
	})
	require.NoError(t, err)
	require.Equal(t, []CommitStatus{{ID: gh.Statuses("acme", "infra")[0].ID, SHA: pr.HeadSHA, State: "pending",
		Context: "shardgate", Description: "queued", Creator: DefaultBotLogin}}, gh.Statuses("acme", "infra"))

	gh.AddLabel("acme", "infra", pr.Number, "policy-exception/large_scale", "carol")
	timeline, _, err := client.Issues.ListIssueTimeline(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	require.Len(t, timeline, 1)
	require.Equal(t, "labeled", timeline[0].GetEvent())
	require.Equal(t, "carol", timeline[0].GetActor().GetLogin())
	require.Equal(t, "policy-exception/large_scale", timeline[0].GetLabel().GetName())

	for i := 0; i < 5; i++ {
		gh.AddComment("acme", "infra", pr.Number, "bob", fmt.Sprint(i))
	}
	var bodies []string
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}}
	pages := 0
	for {
		page, resp, err := client.Issues.ListComments(ctx, "acme", "infra", pr.Number, opts)
		require.NoError(t, err)
		pages++
		for _, c := range page {
			bodies = append(bodies, c.GetBody())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	require.Equal(t, 3, pages)
	require.Equal(t, []string{"0", "1", "2", "3", "4"}, bodies)
}

func TestClientSeesPRStateChanges(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	client := newClient(t, gh, DefaultInstallationID)
	tests := []struct {
		name       string
		change     func()
		wantState  string
		wantDraft  bool
		wantMerged bool
	}{
		{"draft", func() { gh.SetDraft("acme", "infra", pr.Number, true) }, "open", true, false},
		{"ready", func() { gh.SetDraft("acme", "infra", pr.Number, false) }, "open", false, false},
		{"merged", func() { gh.ClosePR("acme", "infra", pr.Number, true) }, "closed", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			got, _, err := client.PullRequests.Get(context.Background(), "acme", "infra", pr.Number)
			require.NoError(t, err)
			require.Equal(t, tt.wantState, got.GetState())
			require.Equal(t, tt.wantDraft, got.GetDraft())
			require.Equal(t, tt.wantMerged, got.GetMerged())
		})
	}
}
