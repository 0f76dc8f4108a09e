package githubtest

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// PRPayload holds the fields a pull_request payload is changed to; every
// other field stays as in the real fixture.
type PRPayload struct {
	InstallationID int64
	Owner, Repo    string
	RepoID         int64
	Number         int
	Title          string
	Author         string // pull_request.user.login
	Sender         string // sender.login; defaults to Author
	HeadRef        string
	HeadSHA        string
	HeadRepo       string // head.repo.full_name; defaults to Owner/Repo
	BaseRef        string
	BaseSHA        string
	// DefaultBranch is the repository's (repository.default_branch and
	// base.repo.default_branch); "" keeps the fixture's.
	DefaultBranch string
	Draft         bool
	Labels        []string
	// UpdatedAt is pull_request.updated_at (GitHub moves it with every
	// change of the pull request, a push included); zero keeps the
	// fixture's.
	UpdatedAt time.Time
}

// PRPayload describes a pull request of the fake as a webhook would, for
// the builders below.
func (s *Server) PRPayload(owner, name string, number int) PRPayload {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, pr := s.mustPR(owner, name, number)
	return PRPayload{
		InstallationID: r.installationID, Owner: owner, Repo: name, RepoID: r.id, Number: pr.Number,
		Title: pr.Title, Author: pr.User, Sender: pr.User, HeadRef: pr.HeadRef, HeadSHA: pr.HeadSHA,
		HeadRepo: pr.HeadRepo, BaseRef: pr.BaseRef, BaseSHA: pr.BaseSHA, DefaultBranch: r.defaultBranch, Draft: pr.Draft,
		Labels: append([]string(nil), pr.Labels...), UpdatedAt: s.now().UTC().Truncate(time.Second),
	}
}

func setRepository(m map[string]any, prefix string, owner, name string, id int64) {
	Set(m, prefix+"name", name)
	Set(m, prefix+"full_name", owner+"/"+name)
	Set(m, prefix+"owner.login", owner)
	if id != 0 {
		Set(m, prefix+"id", id)
	}
}

func (p PRPayload) apply(m map[string]any) {
	sender := p.Sender
	if sender == "" {
		sender = p.Author
	}
	headRepo := p.HeadRepo
	if headRepo == "" {
		headRepo = p.Owner + "/" + p.Repo
	}
	headOwner, headName := splitFullName(headRepo)
	Set(m, "installation.id", p.InstallationID)
	Set(m, "number", p.Number)
	setRepository(m, "repository.", p.Owner, p.Repo, p.RepoID)
	Set(m, "sender.login", sender)
	Set(m, "pull_request.number", p.Number)
	Set(m, "pull_request.title", p.Title)
	Set(m, "pull_request.user.login", p.Author)
	Set(m, "pull_request.draft", p.Draft)
	labels := []any{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"name": l, "color": "ededed", "default": false})
	}
	Set(m, "pull_request.labels", labels)
	if !p.UpdatedAt.IsZero() {
		Set(m, "pull_request.updated_at", p.UpdatedAt.Format(time.RFC3339))
	}
	if p.DefaultBranch != "" {
		Set(m, "repository.default_branch", p.DefaultBranch)
		Set(m, "pull_request.base.repo.default_branch", p.DefaultBranch)
	}
	Set(m, "pull_request.head.ref", p.HeadRef)
	Set(m, "pull_request.head.sha", p.HeadSHA)
	Set(m, "pull_request.head.label", headOwner+":"+p.HeadRef)
	Set(m, "pull_request.head.user.login", headOwner)
	setRepository(m, "pull_request.head.repo.", headOwner, headName, 0)
	Set(m, "pull_request.head.repo.fork", headRepo != p.Owner+"/"+p.Repo)
	Set(m, "pull_request.base.ref", p.BaseRef)
	Set(m, "pull_request.base.sha", p.BaseSHA)
	Set(m, "pull_request.base.label", p.Owner+":"+p.BaseRef)
	Set(m, "pull_request.base.user.login", p.Owner)
	setRepository(m, "pull_request.base.repo.", p.Owner, p.Repo, p.RepoID)
}

func splitFullName(full string) (string, string) {
	owner, name, _ := strings.Cut(full, "/")
	return owner, name
}

func prWebhook(t TB, fixture string, p PRPayload, extra func(map[string]any)) []byte {
	t.Helper()
	return Webhook(t, "pull_request", fixture, func(m map[string]any) {
		p.apply(m)
		if extra != nil {
			extra(m)
		}
	})
}

// PullRequestOpened derives from pull_request/opened.payload.json, changing
// the PRPayload fields.
func PullRequestOpened(t TB, p PRPayload) []byte {
	t.Helper()
	return prWebhook(t, "opened.payload", p, nil)
}

// PullRequestSynchronize derives from pull_request/synchronize.payload.json,
// changing the PRPayload fields, "before" and "after" (= HeadSHA).
func PullRequestSynchronize(t TB, p PRPayload, before string) []byte {
	t.Helper()
	return prWebhook(t, "synchronize.payload", p, func(m map[string]any) {
		Set(m, "before", before)
		Set(m, "after", p.HeadSHA)
	})
}

// PullRequestReopened derives from pull_request/reopened.payload.json,
// changing the PRPayload fields.
func PullRequestReopened(t TB, p PRPayload) []byte {
	t.Helper()
	return prWebhook(t, "reopened.payload", p, nil)
}

// PullRequestLabeled derives from pull_request/labeled.payload.json,
// changing the PRPayload fields and label.name; sender (p.Sender) is who
// added the label.
func PullRequestLabeled(t TB, p PRPayload, label string) []byte {
	t.Helper()
	return prWebhook(t, "labeled.payload", p, func(m map[string]any) { Set(m, "label.name", label) })
}

// PullRequestUnlabeled derives from pull_request/unlabeled.payload.json,
// changing the PRPayload fields and label.name.
func PullRequestUnlabeled(t TB, p PRPayload, label string) []byte {
	t.Helper()
	return prWebhook(t, "unlabeled.payload", p, func(m map[string]any) { Set(m, "label.name", label) })
}

// PullRequestReadyForReview derives from
// pull_request/ready_for_review.with-installation.payload.json, changing the
// PRPayload fields (draft is forced false).
func PullRequestReadyForReview(t TB, p PRPayload) []byte {
	t.Helper()
	p.Draft = false
	return prWebhook(t, "ready_for_review.with-installation.payload", p, nil)
}

// PullRequestClosed derives from pull_request/closed.payload.json (closed
// without merge), changing the PRPayload fields.
func PullRequestClosed(t TB, p PRPayload) []byte {
	t.Helper()
	return prWebhook(t, "closed.payload", p, nil)
}

// PullRequestClosedMergedSynthetic is SYNTHETIC: no public example of a
// merged close exists (testdata/PROVENANCE.md section 1). It is
// pull_request/closed.payload.json with the PRPayload fields plus merged:
// true, merged_at, merged_by and merge_commit_sha set.
func PullRequestClosedMergedSynthetic(t TB, p PRPayload, mergedBy, mergeCommitSHA string, mergedAt time.Time) []byte {
	t.Helper()
	return prWebhook(t, "closed.payload", p, func(m map[string]any) {
		Set(m, "pull_request.merged", true)
		Set(m, "pull_request.merged_at", mergedAt.UTC().Format(time.RFC3339))
		Set(m, "pull_request.merge_commit_sha", mergeCommitSHA)
		Set(m, "pull_request.merged_by", map[string]any{"login": mergedBy, "id": 1, "type": "User"})
	})
}

// CommentPayload holds the fields an issue_comment payload is changed to.
type CommentPayload struct {
	InstallationID int64
	Owner, Repo    string
	RepoID         int64
	Number         int    // the pull request
	Author         string // the pull request's author (issue.user.login)
	CommentID      int64
	Body           string
	User           string // comment.user.login and sender.login
	Action         string // defaults to "created"
	// Sender, when set, is sender.login instead of User: who edited
	// another's comment.
	Sender string
}

// IssueCommentOnPR derives from webhooks-extra/atlantis/githubIssueCommentEvent.json
// (an issue_comment on a pull request, which octokit has no example of),
// changing the CommentPayload fields and ADDING an installation object,
// which that fixture lacks.
func IssueCommentOnPR(t TB, c CommentPayload) []byte {
	t.Helper()
	rel := path.Join("webhooks-extra", "atlantis", "githubIssueCommentEvent.json")
	return webhookFrom(t, rel, func(m map[string]any) {
		action := c.Action
		if action == "" {
			action = "created"
		}
		Set(m, "action", action)
		Set(m, "installation", map[string]any{"id": c.InstallationID, "node_id": nodeID("Installation", c.InstallationID)})
		setRepository(m, "repository.", c.Owner, c.Repo, c.RepoID)
		Set(m, "issue.number", c.Number)
		Set(m, "issue.user.login", c.Author)
		Set(m, "issue.pull_request.url", "https://api.github.com/repos/"+c.Owner+"/"+c.Repo+"/pulls/"+itoa(int64(c.Number)))
		Set(m, "comment.id", c.CommentID)
		Set(m, "comment.body", c.Body)
		Set(m, "comment.user.login", c.User)
		Set(m, "comment.html_url", "https://github.example/"+c.Owner+"/"+c.Repo+"/pull/"+itoa(int64(c.Number))+
			"#issuecomment-"+itoa(c.CommentID))
		sender := c.User
		if c.Sender != "" {
			sender = c.Sender
		}
		Set(m, "sender.login", sender)
	})
}

// CheckRunPayload holds the fields a check_run payload is changed to.
type CheckRunPayload struct {
	InstallationID int64
	Owner, Repo    string
	RepoID         int64
	CheckRunID     int64
	Name           string
	HeadSHA        string
	AppID          int64 // check_run.app.id: the App that owns the run
	PRNumbers      []int
	Sender         string
}

// CheckRunRerequested derives from check_run/rerequested.payload.json,
// changing the CheckRunPayload fields; pull_requests gets one minimal entry
// per number. The App objects (check_run.app, check_run.check_suite.app)
// also get RFC 3339 created_at/updated_at: the fixture's "2018-04-25
// 20:42:10" form, from before GitHub settled on RFC 3339, makes go-github
// v60's ParseWebHook fail.
func CheckRunRerequested(t TB, c CheckRunPayload) []byte {
	t.Helper()
	return Webhook(t, "check_run", "rerequested.payload", func(m map[string]any) {
		Set(m, "installation.id", c.InstallationID)
		setRepository(m, "repository.", c.Owner, c.Repo, c.RepoID)
		Set(m, "check_run.id", c.CheckRunID)
		Set(m, "check_run.name", c.Name)
		Set(m, "check_run.head_sha", c.HeadSHA)
		Set(m, "check_run.check_suite.head_sha", c.HeadSHA)
		Set(m, "check_run.app.id", c.AppID)
		Set(m, "check_run.check_suite.app.id", c.AppID)
		for _, app := range []string{"check_run.app.", "check_run.check_suite.app."} {
			Set(m, app+"created_at", "2018-04-25T20:42:10Z")
			Set(m, app+"updated_at", "2018-04-25T20:42:10Z")
		}
		prs := []any{}
		for _, n := range c.PRNumbers {
			prs = append(prs, map[string]any{
				"number": n, "id": n,
				"url":  "https://api.github.com/repos/" + c.Owner + "/" + c.Repo + "/pulls/" + itoa(int64(n)),
				"head": map[string]any{"sha": c.HeadSHA},
			})
		}
		Set(m, "check_run.pull_requests", prs)
		if c.Sender != "" {
			Set(m, "sender.login", c.Sender)
		}
	})
}

// InstallationCreated derives from installation/created.payload.json,
// changing installation.id, installation.account.login and the
// repositories list (full names).
func InstallationCreated(t TB, installationID int64, account string, repos []string) []byte {
	t.Helper()
	return Webhook(t, "installation", "created.payload", func(m map[string]any) {
		Set(m, "installation.id", installationID)
		Set(m, "installation.account.login", account)
		list := []any{}
		for i, full := range repos {
			_, name := splitFullName(full)
			list = append(list, map[string]any{"id": i + 1, "node_id": nodeID("Repository", int64(i+1)), "name": name, "full_name": full, "private": false})
		}
		Set(m, "repositories", list)
	})
}

// Ping derives from ping/with-app_id.payload.json (a GitHub App's ping),
// changing hook.app_id.
func Ping(t TB, appID int64) []byte {
	t.Helper()
	return Webhook(t, "ping", "with-app_id.payload", func(m map[string]any) { Set(m, "hook.app_id", appID) })
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
