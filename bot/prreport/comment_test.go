package prreport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

// shardgateComments are the App's comments holding the marker.
func shardgateComments(cs []ghapp.Comment) []ghapp.Comment {
	var out []ghapp.Comment
	for _, c := range cs {
		if c.Bot && strings.HasPrefix(c.Body, CommentMarker) {
			out = append(out, c)
		}
	}
	return out
}

// One comment per pull request, edited in place: found by id, else by its
// marker among the bots' comments (on any page), never created twice.
func TestUpsertCommentEditsTheOneCommentInPlace(t *testing.T) {
	ctx := context.Background()
	s, gh, _ := newWorld(t)
	gh.PerPage = 2 // the marker is searched on every page
	st := &records.PRState{Ref: seamRef}
	body := func(n int) string { return fmt.Sprintf("%s\nversion %d", CommentMarker, n) }
	// People commented first, one quoting the marker: the App's comment will
	// be on the second page, and theirs are never taken for it.
	for i := range 3 {
		gh.AddComment(seamRef.Owner, seamRef.Repo, seamRef.Number, "reviewer", false, fmt.Sprintf("%s quoted by a person %d", CommentMarker, i))
	}

	require.NoError(t, s.comments.Upsert(ctx, gh, st, body(1)))
	require.Equal(t, 1, gh.Calls("CreateComment"))
	first := st.CommentID
	require.NotZero(t, first)

	lists := gh.Calls("ListComments")
	require.NoError(t, s.comments.Upsert(ctx, gh, st, body(2)))
	require.Equal(t, 1, gh.Calls("CreateComment"), "known id: edited")
	require.Equal(t, lists, gh.Calls("ListComments"), "known id: no search")

	// The creation's answer was lost (the id was never stored): the job,
	// retried, finds the App's comment by its marker.
	st.CommentID = 0
	require.NoError(t, s.comments.Upsert(ctx, gh, st, body(3)))
	require.Equal(t, 1, gh.Calls("CreateComment"), "found by its marker, not created again")
	require.Equal(t, first, st.CommentID)

	// Someone deleted it: found missing, created once more, and only once.
	gh.DeleteComment(first)
	require.NoError(t, s.comments.Upsert(ctx, gh, st, body(4)))
	require.Equal(t, 2, gh.Calls("CreateComment"))
	require.NoError(t, s.comments.Upsert(ctx, gh, st, body(5)))
	mine := shardgateComments(gh.Comments(seamRef.Owner, seamRef.Repo, seamRef.Number))
	require.Len(t, mine, 1)
	require.Equal(t, body(5), mine[0].Body)
	require.Equal(t, st.CommentID, mine[0].ID)
}

// An error other than "gone" is not taken for a deleted comment: no second
// comment is created, and the error says what failed.
func TestUpsertCommentDoesNotCreateOnAnEditError(t *testing.T) {
	ctx := context.Background()
	s, gh, _ := newWorld(t)
	st := &records.PRState{Ref: seamRef}
	require.NoError(t, s.comments.Upsert(ctx, gh, st, CommentMarker+"\none"))
	outage := errors.New("502 from GitHub")
	gh.Fail = func(call string) error {
		if call == "EditComment" {
			return outage
		}
		return nil
	}
	err := s.comments.Upsert(ctx, gh, st, CommentMarker+"\ntwo")
	require.ErrorIs(t, err, outage)
	require.Contains(t, err.Error(), "edit comment on ")
	require.Equal(t, 1, gh.Calls("CreateComment"))
}

// What is posted is redacted, whatever the caller built.
func TestUpsertCommentRedactsTheBody(t *testing.T) {
	const secret = "coordinator-password-xyz"
	s, gh, _ := newWorld(t, secret)
	st := &records.PRState{Ref: seamRef}
	require.NoError(t, s.comments.Upsert(context.Background(), gh, st, CommentMarker+"\nstream "+secret))
	mine := shardgateComments(gh.Comments(seamRef.Owner, seamRef.Repo, seamRef.Number))
	require.Len(t, mine, 1)
	require.NotContains(t, mine[0].Body, secret)
	require.Contains(t, mine[0].Body, runner.Redacted)
}

// A reply to a command is posted once, however often its job runs.
func TestReplyIsPostedOnce(t *testing.T) {
	ctx := context.Background()
	s, gh, _ := newWorld(t)
	for range 3 {
		require.NoError(t, s.comments.Reply(ctx, gh, seamRef, 42, "Attested `create-order`."))
	}
	require.NoError(t, s.comments.Reply(ctx, gh, seamRef, 43, "Attested `create-order`."), "another command gets its own reply")
	require.Equal(t, 2, gh.Calls("CreateComment"))
	require.Len(t, gh.Comments(seamRef.Owner, seamRef.Repo, seamRef.Number), 2)
}

// The comment's budget is shared by the projects: with many projects each
// too long alone, every project keeps its section, and the whole fits
// GitHub's limit without being cut.
func TestRenderCommentSharesTheBudgetAmongProjects(t *testing.T) {
	s, _, _ := newWorld(t)
	st := &records.PRState{Ref: seamRef, HeadSHA: strings.Repeat("a", 40), Status: "done"}
	var plans []*records.Plan
	for i := range 20 {
		var diags []report.Diagnostic
		for j := range 200 {
			diags = append(diags, report.Diagnostic{Severity: "error", Summary: fmt.Sprintf("Unsupported argument %d", j),
				Detail: strings.Repeat("An argument named \"x\" is not expected here. ", 8), File: "main.tf", Line: j + 1})
		}
		plans = append(plans, &records.Plan{Project: fmt.Sprintf("project-%02d", i), Error: "terraform plan failed", Diagnostics: diags})
	}
	out := s.render.Comment(st, "", "", plans)
	require.LessOrEqual(t, len(out), report.MaxCommentChars)
	require.True(t, strings.HasPrefix(out, CommentMarker+"\n"))
	require.NotContains(t, out, "cut to fit GitHub's comment limit", "each project was kept to its share")
	for _, p := range plans {
		require.Contains(t, out, p.Project)
	}
}
