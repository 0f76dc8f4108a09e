package bot

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/api"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// replyTo is shardgate's reply to a comment, "" while there is none.
func (h *harness) replyTo(pr githubtest.PullRequest, c githubtest.Comment) string {
	for _, r := range h.gh.Comments(owner, repoName, pr.Number) {
		if r.User == h.gh.BotLogin() && strings.Contains(r.Body, "<!-- shardgate:reply "+strconv.FormatInt(c.ID, 10)+" ") {
			return r.Body
		}
	}
	return ""
}

// `/shardgate cancel` is the author's or an approver's: another writer's is
// refused and cancels nothing. With nothing running it cancels what is
// queued and leaves the finished checks alone. An apply is not cancelled:
// the reply says it goes on, and it does.
func TestCancelIsTheAuthorsOrAnApproversAndLeavesApplies(t *testing.T) {
	h := newHarness(t)
	pr := allowedScale(h, "scale-cancel")
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	ref := pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: pr.Number}
	h.gh.SetPermission(owner, repoName, "dave", "write")

	c := h.comment(pr, "dave", "/shardgate cancel")
	require.Contains(t, h.replyTo(pr, c), "@dave, only the pull request's author (@"+author+") or ")
	require.Contains(t, h.replyTo(pr, c), "nothing was cancelled")
	mark, err := h.srv.rec.PlanCancel(context.Background(), ref)
	require.NoError(t, err)
	require.Nil(t, mark, "a refused cancel records nothing")

	c = h.comment(pr, author, "/shardgate cancel")
	reply := h.replyTo(pr, c)
	require.Contains(t, reply, "@"+author+", cancelled: this pull request's plans queued before your comment will not run.")
	require.NotContains(t, reply, "running plan")
	require.NotContains(t, reply, "apply")
	mark, err = h.srv.rec.PlanCancel(context.Background(), ref)
	require.NoError(t, err)
	require.Equal(t, "@"+author, mark.By)
	require.Equal(t, "success", h.check(prreport.CheckGateName, head).Conclusion, "a finished check is left as it was")

	h.sim.SetDelay(500 * time.Millisecond) // the apply takes a while
	h.merge(pr, approver)
	c = h.comment(pr, teamMate, "/shardgate cancel")
	require.Contains(t, h.replyTo(pr, c), "An apply of this pull request is queued or running; it goes on: applies are not cancelled by `/shardgate cancel`.")
	h.sim.SetDelay(0)
	jobs := h.waitApplies(pr)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)

	// The jobs API's cancel (Server.CancelJob): a finished job or an
	// unknown one is not cancelled; a running one is the dispatcher's
	// (TestDispatcherCancelsARunningJobByID).
	code, r := h.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: c.ID, Body: c.Body, User: teamMate}))
	require.Equal(t, 202, code, r.Reason)
	h.waitJob(r.JobID)
	require.ErrorIs(t, h.srv.CancelJob(context.Background(), r.JobID, "ci-token"), ErrJobFinished)
	require.ErrorIs(t, h.srv.CancelJob(context.Background(), "99999999", "ci-token"), store.ErrNotFound)
	// The automation API answers a job that ended meanwhile with its 409.
	var no *api.Refusal
	require.ErrorAs(t, apiCanceller{s: h.srv}.CancelJob(context.Background(), r.JobID, "api token ci"), &no)
	require.Contains(t, no.Reason, "ended")
}
