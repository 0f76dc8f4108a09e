package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/policy"
)

// These tests are about who approved what and when: they need the fake GitHub
// and the service, but no plan, so their pull requests change no Terraform file
// and terraform never runs. The fake GitHub and the service share one clock;
// every step of a test moves it on, so GitHub's whole-second timestamps order
// the steps.

const exceptionLabel = "policy-exception/shard_delta"

// newApprovalHarness is the service and the fake GitHub without a coordinator
// or terraform state.
func newApprovalHarness(t *testing.T) (*harness, *fakeclock.Clock) {
	t.Helper()
	// GitHub's clock and the service's; the App's credentials keep the real
	// time (githubtest.WithCredentialClock).
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC))
	h := &harness{t: t, gh: githubtest.New(t, githubtest.WithClock(clock.Now)), repo: githubtest.NewGitRepo(t), logs: &lockedBuffer{}}
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n")
	h.repo.WriteFile("docs/README.md", "streams\n")
	h.repo.Commit("initial docs")
	h.gh.AddRepo(owner, repoName, h.repo)
	h.gh.AddTeamMember("acme", "sre", teamMate)
	for _, u := range []string{author, approver, teamMate} {
		h.gh.SetPermission(owner, repoName, u, "write")
	}
	h.cfg = &serverconfig.Config{
		Listen: "127.0.0.1:0", GitHubAPIURL: h.gh.URL(), AppID: h.gh.AppID(),
		PrivateKey: serverconfig.NewSecret(string(h.gh.AppPrivateKeyPEM())), WebhookSecret: serverconfig.NewSecret(testSecret),
		StorePath: filepath.Join(t.TempDir(), "shardgate.db"), TerraformBinary: tftest.Binary(t), LockTimeout: time.Minute,
		ApproverUsers: []string{approver}, ApproverTeams: []string{"acme/sre"},
		Policy: policy.DefaultConfig(), AttestationTTL: 2 * time.Hour, QueueSize: 100, Workers: 2, WorkDir: t.TempDir(),
	}
	h.opts = []Option{WithClock(clock.Now)}
	h.start()
	return h, clock
}

// openDocsPR opens a pull request that changes only documentation.
func (h *harness) openDocsPR(branch string) githubtest.PullRequest {
	h.t.Helper()
	h.repo.Checkout("main")
	h.repo.Branch(branch)
	h.repo.WriteFile("docs/"+branch+".md", "first\n")
	h.repo.Commit("docs on " + branch)
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	return pr
}

// pushDocs adds a commit to the PR's branch on GitHub; deliver says whether
// its synchronize event reaches shardgate now.
func (h *harness) pushDocs(pr githubtest.PullRequest, deliver bool) string {
	h.t.Helper()
	before := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	h.repo.Checkout(pr.HeadRef)
	h.repo.WriteFile("docs/"+pr.HeadRef+".md", "pushed at "+h.gh.PR(owner, repoName, pr.Number).HeadSHA+"\n")
	h.repo.Commit("another docs push")
	head := h.gh.SyncPR(owner, repoName, pr.Number)
	if deliver {
		h.run("pull_request", githubtest.PullRequestSynchronize(h.t, h.gh.PRPayload(owner, repoName, pr.Number), before))
	}
	return head
}

func (h *harness) commentPayload(pr githubtest.PullRequest, c githubtest.Comment) []byte {
	return githubtest.IssueCommentOnPR(h.t, githubtest.CommentPayload{
		InstallationID: 1, Owner: owner, Repo: repoName, RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number,
		Author: author, CommentID: c.ID, Body: c.Body, User: c.User})
}

func (h *harness) ref(pr githubtest.PullRequest) pullreq.Ref {
	return pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: pr.Number}
}

// attestedStreams are the streams attested for head sha, with their actors.
func (h *harness) attestedStreams(pr githubtest.PullRequest, sha string) map[string]string {
	h.t.Helper()
	atts, err := h.srv.rec.Attestations(context.Background(), h.ref(pr), sha)
	require.NoError(h.t, err)
	out := map[string]string{}
	for _, a := range atts {
		out[a.StreamPrefix] = a.Actor
	}
	return out
}

// judgedLabels judges the PR's labels as an evaluation would now.
func (h *harness) judgedLabels(pr githubtest.PullRequest) map[string]policy.Label {
	h.t.Helper()
	ctx := context.Background()
	gh, err := ghapp.APIFor(h.srv.clients, 1)
	require.NoError(h.t, err)
	st, err := h.srv.rec.PR(ctx, h.ref(pr))
	require.NoError(h.t, err)
	labels, err := h.srv.labels.Judge(ctx, gh, st)
	require.NoError(h.t, err)
	out := map[string]policy.Label{}
	for _, l := range labels {
		out[l.Name] = l
	}
	return out
}

func (h *harness) replies(pr githubtest.PullRequest) []string {
	var out []string
	for _, c := range h.gh.Comments(owner, repoName, pr.Number) {
		if c.User == h.gh.BotLogin() && !strings.HasPrefix(c.Body, prreport.CommentMarker) {
			out = append(out, c.Body)
		}
	}
	return out
}

// A push that lands between the approver's comment and its processing does
// not get the approval: it binds to the head the approver saw.
func TestAttestationBindsToTheHeadWhenTheCommentWasMade(t *testing.T) {
	tests := []struct {
		name string
		// syncFirst: shardgate processes the push before the comment; else
		// it learns of the push while processing the comment.
		syncFirst bool
	}{
		{"push processed first", true},
		{"push discovered by the command", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, clock := newApprovalHarness(t)
			pr := h.openDocsPR("attest-race")
			reviewed := h.gh.PR(owner, repoName, pr.Number).HeadSHA
			clock.Advance(30 * time.Second)
			c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
			clock.Advance(5 * time.Second)
			pushed := h.pushDocs(pr, tt.syncFirst)
			clock.Advance(5 * time.Second)
			h.run("issue_comment", h.commentPayload(pr, c))

			require.Empty(t, h.attestedStreams(pr, pushed), "the pushed head was never attested")
			require.Equal(t, map[string]string{"create-order": approver}, h.attestedStreams(pr, reviewed))
			replies := h.replies(pr)
			require.Len(t, replies, 1)
			require.Contains(t, replies[0], pullreq.ShortSHA(reviewed))
			require.Contains(t, replies[0], pullreq.ShortSHA(pushed))
		})
	}
}

// The attestation's validity runs from when it was made, not from when
// shardgate got to it.
func TestAttestationExpiresFromTheComment(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("attest-ttl")
	clock.Advance(30 * time.Second)
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
	made := clock.Now().Truncate(time.Second)
	clock.Advance(5 * time.Minute)
	h.run("issue_comment", h.commentPayload(pr, c))
	atts, err := h.srv.rec.Attestations(context.Background(), h.ref(pr), h.gh.PR(owner, repoName, pr.Number).HeadSHA)
	require.NoError(t, err)
	require.Len(t, atts, 1)
	require.True(t, atts[0].CreatedAt.Equal(made), "created %s, made %s", atts[0].CreatedAt, made)
	require.True(t, atts[0].ExpiresAt.Equal(made.Add(h.cfg.AttestationTTL)))
}

// A comment made in the same second as shardgate first saw a head cannot be
// told apart from one made before the push: it counts for the older head.
func TestAttestationInTheSecondOfAPushCountsForTheOlderHead(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("same-second")
	reviewed := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	clock.Advance(30 * time.Second)
	pushed := h.pushDocs(pr, true)
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
	clock.Advance(time.Second)
	h.run("issue_comment", h.commentPayload(pr, c))
	require.Empty(t, h.attestedStreams(pr, pushed))
	require.Equal(t, map[string]string{"create-order": approver}, h.attestedStreams(pr, reviewed))
}

// Re-sending a signed attest delivery under a new X-GitHub-Delivery neither
// approves a newer, unreviewed commit nor runs the command again.
func TestResentAttestDeliveryDoesNotApproveANewerHead(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("resend")
	reviewed := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	clock.Advance(30 * time.Second)
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
	payload := h.commentPayload(pr, c)
	clock.Advance(5 * time.Second)
	h.run("issue_comment", payload)
	require.Equal(t, map[string]string{"create-order": approver}, h.attestedStreams(pr, reviewed))
	repliesBefore := len(h.replies(pr))

	clock.Advance(time.Minute)
	pushed := h.pushDocs(pr, true)
	clock.Advance(time.Minute)
	code, r := h.deliver("issue_comment", payload, githubtest.WithDeliveryID(githubtest.NewDeliveryID()))
	require.Equal(t, 202, code, r.Reason)
	require.Equal(t, "queued", r.Status, "a new delivery id passes the intake")
	h.waitJob(r.JobID)

	require.Empty(t, h.attestedStreams(pr, pushed))
	require.Len(t, h.replies(pr), repliesBefore, "the command ran once")
}

// editPayload is the edited event of comment c, sent by editor.
func (h *harness) editPayload(pr githubtest.PullRequest, c githubtest.Comment, editor string) []byte {
	return githubtest.IssueCommentOnPR(h.t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: c.ID, Body: c.Body, User: c.User,
		Action: "edited", Sender: editor})
}

// The pull request's author edits an approver's attestation to name another
// stream: at any delay after it (the same second included), and whether
// shardgate read the comment before the edit or after, the edit grants
// nothing and revokes what the comment attested, and the PR is told.
func TestEditByAnotherRevokesTheAttestation(t *testing.T) {
	for _, tt := range []struct {
		name  string
		delay time.Duration
		// editFirst: the edit lands before shardgate reads the comment.
		editFirst bool
	}{
		{"same second, read after the edit", 0, true},
		{"same second, read before the edit", 0, false},
		{"90s later", 90 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, clock := newApprovalHarness(t)
			pr := h.openDocsPR("edit-race")
			head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
			clock.Advance(30 * time.Second)
			c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
			created := h.commentPayload(pr, c)
			if !tt.editFirst {
				h.run("issue_comment", created)
				require.Equal(t, map[string]string{"create-order": approver}, h.attestedStreams(pr, head))
			}
			clock.Advance(tt.delay)
			c = h.gh.EditComment(owner, repoName, c.ID, "/shardgate attest quiesce payment-events")
			if tt.editFirst {
				h.run("issue_comment", created)
			}
			h.run("issue_comment", h.editPayload(pr, c, author))

			require.Empty(t, h.attestedStreams(pr, head), "nothing attested after the author's edit")
			replies := h.replies(pr)
			require.NotEmpty(t, replies)
			last := replies[len(replies)-1]
			require.Contains(t, last, "@"+author+" edited this comment of @"+approver)
			require.Contains(t, last, "grants nothing")
			if !tt.editFirst {
				require.Contains(t, last, "The attestation it gave (`create-order`) is revoked")
			}
		})
	}
}

// A workflow's token edits as a bot, and an edit may be followed by the
// comment's deletion before shardgate reads it: either way the edit by
// another revokes what the comment attested.
func TestEditByABotOrOfADeletedCommentRevokes(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleted=%v", deleted), func(t *testing.T) {
			h, clock := newApprovalHarness(t)
			pr := h.openDocsPR("bot-edit")
			head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
			clock.Advance(30 * time.Second)
			c := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
			h.run("issue_comment", h.commentPayload(pr, c))
			require.Equal(t, map[string]string{"create-order": approver}, h.attestedStreams(pr, head))
			c = h.gh.EditComment(owner, repoName, c.ID, "/shardgate attest quiesce payment-events")
			var payload map[string]any
			require.NoError(t, json.Unmarshal(h.editPayload(pr, c, "github-actions[bot]"), &payload))
			payload["sender"].(map[string]any)["type"] = "Bot"
			edited, err := json.Marshal(payload)
			require.NoError(t, err)
			if deleted {
				h.gh.DeleteComment(owner, repoName, c.ID)
			}
			h.run("issue_comment", edited)
			require.Empty(t, h.attestedStreams(pr, head))
			replies := h.replies(pr)
			require.Len(t, replies, 1)
			require.Contains(t, replies[0], "The attestation it gave (`create-order`) is revoked")
		})
	}
}

// An edit by the comment's own author is theirs: an approver who edits a
// comment into an attestation attests; another's later edit of it revokes it.
func TestAuthorsOwnEditCounts(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("edited")
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	clock.Advance(30 * time.Second)
	c := h.gh.AddComment(owner, repoName, pr.Number, approver, "looks good")
	h.run("issue_comment", h.commentPayload(pr, c))
	clock.Advance(30 * time.Second)
	c = h.gh.EditComment(owner, repoName, c.ID, "/shardgate attest quiesce create-order")
	h.run("issue_comment", h.editPayload(pr, c, approver))
	require.Equal(t, map[string]string{"create-order": approver}, h.attestedStreams(pr, head))
	require.Empty(t, h.replies(pr))

	clock.Advance(time.Hour)
	c = h.gh.EditComment(owner, repoName, c.ID, "looks good")
	h.run("issue_comment", h.editPayload(pr, c, teamMate))
	require.Empty(t, h.attestedStreams(pr, head), "an approver's edit of another's comment revokes too")
	require.Len(t, h.replies(pr), 1)
}

// A forged "labeled by an approver" delivery (valid signature; the label is
// really there, but the author added it) does not count: the actor comes from
// GitHub's issue events.
func TestForgedLabeledDeliveryDoesNotCount(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("forged-label")
	clock.Advance(30 * time.Second)
	h.gh.AddLabel(owner, repoName, pr.Number, exceptionLabel, author)
	forged := h.gh.PRPayload(owner, repoName, pr.Number)
	forged.Sender = approver
	h.run("pull_request", githubtest.PullRequestLabeled(t, forged, exceptionLabel))

	l := h.judgedLabels(pr)[exceptionLabel]
	require.False(t, l.Counted)
	require.Equal(t, author, l.Actor)
	require.Contains(t, l.Reason, "author")
}

// An exception label added before a push counts for the older head only,
// whenever shardgate processes it and whatever head its delivery names.
func TestExceptionLabelBindsToTheHeadWhenItWasAdded(t *testing.T) {
	tests := []struct {
		name string
		// syncFirst: shardgate processes the push before the label (whose
		// delivery then names the pushed head, as a late redelivery built
		// from the PR's current state would).
		syncFirst bool
	}{
		{"push processed first", true},
		{"push discovered by the label event", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, clock := newApprovalHarness(t)
			pr := h.openDocsPR("label-race")
			reviewed := h.gh.PR(owner, repoName, pr.Number).HeadSHA
			clock.Advance(30 * time.Second)
			h.gh.AddLabel(owner, repoName, pr.Number, exceptionLabel, approver)
			clock.Advance(5 * time.Second)
			pushed := h.pushDocs(pr, tt.syncFirst)
			clock.Advance(5 * time.Second)
			labeled := h.gh.PRPayload(owner, repoName, pr.Number)
			labeled.Sender = approver
			h.run("pull_request", githubtest.PullRequestLabeled(t, labeled, exceptionLabel))

			st, err := h.srv.rec.PR(context.Background(), h.ref(pr))
			require.NoError(t, err)
			require.Equal(t, pushed, st.HeadSHA)
			if l, present := h.judgedLabels(pr)[exceptionLabel]; present {
				require.False(t, l.Counted, "a label added on %s counts for %s", pullreq.ShortSHA(reviewed), pullreq.ShortSHA(pushed))
			}
			require.NotContains(t, h.gh.Labels(owner, repoName, pr.Number), exceptionLabel, "the push removes it")
		})
	}
}

// An approver's label counts on the head it was added on; re-sending its
// delivery after a push does not bring it back.
func TestApproverLabelCountsOncePerEvent(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("label-ok")
	clock.Advance(30 * time.Second)
	h.gh.AddLabel(owner, repoName, pr.Number, exceptionLabel, approver)
	p := h.gh.PRPayload(owner, repoName, pr.Number)
	p.Sender = approver
	payload := githubtest.PullRequestLabeled(t, p, exceptionLabel)
	h.run("pull_request", payload)
	l := h.judgedLabels(pr)[exceptionLabel]
	require.True(t, l.Counted, l.Reason)
	require.Equal(t, approver, l.Actor)

	clock.Advance(time.Minute)
	h.pushDocs(pr, true)
	require.NotContains(t, h.gh.Labels(owner, repoName, pr.Number), exceptionLabel)
	clock.Advance(time.Minute)
	code, r := h.deliver("pull_request", payload, githubtest.WithDeliveryID(githubtest.NewDeliveryID()))
	require.Equal(t, 202, code, r.Reason)
	h.waitJob(r.JobID)
	require.NotContains(t, h.judgedLabels(pr), exceptionLabel)
}

func (h *harness) isApprover(login string) bool {
	h.t.Helper()
	gh, err := ghapp.APIFor(h.srv.clients, 1)
	require.NoError(h.t, err)
	ok, err := h.srv.approvers.IsApprover(context.Background(), gh, login)
	require.NoError(h.t, err)
	return ok
}

// A team answer is reused for at most a minute.
func TestTeamAnswersLiveAtMostAMinute(t *testing.T) {
	h, clock := newApprovalHarness(t)
	require.True(t, h.isApprover(teamMate))
	h.gh.RemoveTeamMember("acme", "sre", teamMate)
	clock.Advance(30 * time.Second)
	require.True(t, h.isApprover(teamMate), "answered from the cache")
	clock.Advance(31 * time.Second)
	require.False(t, h.isApprover(teamMate), "a minute later GitHub is asked again")
}

// membership and team events drop the team answers at once.
func TestTeamEventsDropTeamAnswers(t *testing.T) {
	membership := func(action string) []byte {
		return githubtest.Webhook(t, "membership", action+".payload", func(m map[string]any) {
			githubtest.Set(m, "member.login", teamMate)
			githubtest.Set(m, "team.slug", "sre")
			githubtest.Set(m, "organization.login", "acme")
		})
	}
	team := func(action string) []byte {
		return githubtest.Webhook(t, "team", action+".payload", func(m map[string]any) {
			githubtest.Set(m, "team.slug", "sre")
			githubtest.Set(m, "organization.login", "acme")
		})
	}
	tests := []struct {
		name, event string
		payload     func() []byte
	}{
		{"membership removed", "membership", func() []byte { return membership("removed") }},
		{"membership added", "membership", func() []byte { return membership("added") }},
		{"team edited", "team", func() []byte { return team("edited") }},
		{"team deleted", "team", func() []byte { return team("deleted") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newApprovalHarness(t)
			require.True(t, h.isApprover(teamMate))
			h.gh.RemoveTeamMember("acme", "sre", teamMate)
			h.run(tt.event, tt.payload())
			require.False(t, h.isApprover(teamMate))
		})
	}
}

// A delivery is only a hint: the comment is read back from GitHub, so a
// delivery naming a comment of another pull request, or carrying a body
// GitHub does not have, runs nothing.
func TestForgedCommentDeliveriesRunNothing(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("target")
	other := h.openDocsPR("other")
	head := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	clock.Advance(30 * time.Second)
	elsewhere := h.gh.AddComment(owner, repoName, other.Number, approver, "/shardgate attest quiesce create-order")
	lgtm := h.gh.AddComment(owner, repoName, pr.Number, approver, "lgtm")
	clock.Advance(5 * time.Second)
	for _, c := range []githubtest.Comment{
		{ID: elsewhere.ID, User: approver, Body: elsewhere.Body}, // another PR's comment, delivered as this one's
		{ID: lgtm.ID, User: approver, Body: "/shardgate attest quiesce create-order"},
	} {
		h.run("issue_comment", h.commentPayload(pr, c))
	}
	require.Empty(t, h.attestedStreams(pr, head))
	require.Empty(t, h.replies(pr))
}

// The labeled event that counts is the last one, however many events the pull
// request has: GitHub lists them oldest first, one page at a time.
func TestLatestLabelEventIsFoundOnTheLastPage(t *testing.T) {
	h, clock := newApprovalHarness(t)
	pr := h.openDocsPR("many-events")
	h.gh.AddLabel(owner, repoName, pr.Number, exceptionLabel, approver)
	for range 130 {
		h.gh.RemoveLabel(owner, repoName, pr.Number, exceptionLabel, approver)
		h.gh.AddLabel(owner, repoName, pr.Number, exceptionLabel, approver)
	}
	h.gh.RemoveLabel(owner, repoName, pr.Number, exceptionLabel, approver)
	clock.Advance(30 * time.Second)
	h.gh.AddLabel(owner, repoName, pr.Number, exceptionLabel, author)
	gh, err := ghapp.APIFor(h.srv.clients, 1)
	require.NoError(t, err)
	events, err := approval.LatestLabelEvents(context.Background(), gh, h.ref(pr), []string{exceptionLabel, "policy-exception/absent"})
	require.NoError(t, err)
	require.Equal(t, author, events[exceptionLabel].Actor)
	require.NotContains(t, events, "policy-exception/absent")
	l := h.judgedLabels(pr)[exceptionLabel]
	require.False(t, l.Counted)
	require.Equal(t, author, l.Actor)
}
