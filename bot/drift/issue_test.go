package drift

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/planparse"
)

const owner, repoName = "acme", "infra"

func drifted(live int) Result {
	noop := module("module.orders.terraform_data.stream_group", "orders", "billing", planparse.ActionNoop, ip(4), ip(4))
	return Check(&planparse.ChangeSet{Changes: []planparse.Change{noop}}, reached, liveOf("orders", map[string]int{"billing": live}))
}

func stamped(res Result, at time.Time) Result {
	res.Repo, res.Project, res.Branch, res.Commit, res.CheckedAt = owner+"/"+repoName, "streams", "main", "0123456789abcdef0123456789abcdef01234567", at
	return res
}

func TestReporterKeepsOneIssuePerProject(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			gh := ghapptest.New(clock.Now)
			r := &Reporter{Issues: gh, Comments: gh, Store: NewStore(st)}

			// Someone else's issue with the label and a pasted marker is not ours.
			gh.AddIssue(owner, repoName, "mallory", false, "fake", Marker("streams")+"\nnothing", []string{Label})

			rec, err := r.Report(ctx, owner, repoName, stamped(drifted(7), clock.Now()))
			require.NoError(t, err)
			require.Equal(t, StatusDrifted, rec.Status)
			require.Equal(t, 2, rec.Issue)
			is, ok := gh.Issue(owner, repoName, 2)
			require.True(t, ok)
			require.Equal(t, "open", is.State)
			require.Equal(t, []string{Label}, is.Labels)
			require.Contains(t, is.Body, Marker("streams")+"\n")
			require.Contains(t, is.Body, "| `orders` | `billing` | `http://coord:8080` | 4 | 7 | +3 | "+t0.Format("2006-01-02 15:04")+" UTC |")

			// Later, and further: edited in place, "since" kept.
			clock.Advance(time.Hour)
			rec, err = r.Report(ctx, owner, repoName, stamped(drifted(9), clock.Now()))
			require.NoError(t, err)
			require.Equal(t, 2, rec.Issue)
			require.Equal(t, t0, rec.Since)
			is, _ = gh.Issue(owner, repoName, 2)
			require.Contains(t, is.Body, "| 4 | 9 | +5 | "+t0.Format("2006-01-02 15:04")+" UTC |")
			require.Equal(t, 1, gh.Calls("CreateIssue"))

			// A plan error: said on the issue, once; not closed, not drift.
			clock.Advance(time.Hour)
			failed := Failed(owner+"/"+repoName, "streams", "main", "abc", clock.Now(), "terraform plan: exit status 1", "")
			for range 2 {
				rec, err = r.Report(ctx, owner, repoName, failed)
				require.NoError(t, err)
			}
			require.Equal(t, StatusError, rec.Status)
			require.Equal(t, t0, rec.Since, "a failed check keeps what was known")
			is, _ = gh.Issue(owner, repoName, 2)
			require.Equal(t, "open", is.State)
			comments := gh.Comments(owner, repoName, 2)
			require.Len(t, comments, 1)
			require.Contains(t, comments[0].Body, "drift check of `abc`")
			require.Contains(t, comments[0].Body, "terraform plan: exit status 1")

			// Scaled back: a comment, then closed.
			clock.Advance(time.Hour)
			rec, err = r.Report(ctx, owner, repoName, stamped(drifted(4), clock.Now()))
			require.NoError(t, err)
			require.Equal(t, StatusClean, rec.Status)
			require.True(t, rec.Since.IsZero())
			is, _ = gh.Issue(owner, repoName, 2)
			require.Equal(t, "closed", is.State)
			comments = gh.Comments(owner, repoName, 2)
			require.Len(t, comments, 2)
			require.Contains(t, comments[1].Body, "The drift is gone")

			// Clean again: nothing more said.
			_, err = r.Report(ctx, owner, repoName, stamped(drifted(4), clock.Now()))
			require.NoError(t, err)
			require.Len(t, gh.Comments(owner, repoName, 2), 2)

			// Drift again: the same issue reopened, "since" starting anew.
			clock.Advance(time.Hour)
			rec, err = r.Report(ctx, owner, repoName, stamped(drifted(5), clock.Now()))
			require.NoError(t, err)
			require.Equal(t, 2, rec.Issue)
			require.Equal(t, clock.Now(), rec.Since)
			is, _ = gh.Issue(owner, repoName, 2)
			require.Equal(t, "open", is.State)
			require.Equal(t, 1, gh.Calls("CreateIssue"))

			list, err := r.Store.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Equal(t, Record{Repo: "acme/infra", Project: "streams", Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567",
				CheckedAt: clock.Now(), Status: StatusDrifted, Groups: rec.Groups, Since: clock.Now(), Issue: 2}, list[0])
		})
	}
}

func TestReporterFindsItsIssueWithoutTheStore(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	gh := ghapptest.New(clock.Now)
	gh.PerPage = 2
	for i := range 5 {
		gh.AddIssue(owner, repoName, ghapptest.AppLogin, true, "other", Marker("other"+string(rune('a'+i)))+"\n", []string{Label})
	}
	mine := gh.AddIssue(owner, repoName, ghapptest.AppLogin, true, "mine", Marker("streams")+"\nold", []string{Label})
	for i := range 5 {
		gh.AddIssue(owner, repoName, ghapptest.AppLogin, true, "newer", Marker("z"+string(rune('a'+i)))+"\n", []string{Label})
	}
	// A store that lost its records (a new database): the issue is found by
	// its marker, never opened twice.
	r := &Reporter{Issues: gh, Comments: gh, Store: NewStore(stores(t)["bolt"])}
	rec, err := r.Report(ctx, owner, repoName, stamped(drifted(6), clock.Now()))
	require.NoError(t, err)
	require.Equal(t, mine.Number, rec.Issue)
	require.Zero(t, gh.Calls("CreateIssue"))
}

func TestFailedCheckWithoutAnIssueOpensOneSayingSo(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	gh := ghapptest.New(clock.Now)
	r := &Reporter{Issues: gh, Comments: gh, Store: NewStore(stores(t)["bolt"])}
	rec, err := r.Report(ctx, owner, repoName, Failed("acme/infra", "streams", "main", "abc", clock.Now(), "terraform init: no such provider", "Error: x\n  on main.tf"))
	require.NoError(t, err)
	require.Equal(t, StatusError, rec.Status)
	is, ok := gh.Issue(owner, repoName, rec.Issue)
	require.True(t, ok)
	require.Contains(t, is.Body, "The drift check failed")
	require.Contains(t, is.Body, "this is not drift")
	require.NotContains(t, is.Body, "differ from the code")

	// Clean next time: closed with a comment.
	rec, err = r.Report(ctx, owner, repoName, stamped(drifted(4), clock.Now()))
	require.NoError(t, err)
	is, _ = gh.Issue(owner, repoName, rec.Issue)
	require.Equal(t, "closed", is.State)
}
