package drift

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
)

// maxIssuePages bounds the pages of labelled issues read looking for a marker.
const maxIssuePages = 10

// Reporter keeps a project's drift issue and record up to date.
type Reporter struct {
	Issues   ghapp.Issues
	Comments ghapp.Comments
	Store    Store
	// Redact, when set, is applied to every body written (the server's
	// secrets); the GitHub transport redacts too.
	Redact func(string) string
	// Notifier sends drift_opened and drift_closed (nil: none configured);
	// GitHubAPIURL gives the issues' web addresses (notify.go).
	Notifier     *notify.Notifier
	GitHubAPIURL string
}

// Report records a project's result and brings its drift issue in line: opened
// or edited in place when drifted, closed with a comment when the drift is
// gone, told about a failed check (opened saying so when none is open) but
// never closed by one. It returns the record stored.
func (r *Reporter) Report(ctx context.Context, owner, repo string, res Result) (*Record, error) {
	prev, err := r.Store.Get(ctx, res.Repo, res.Project)
	if err != nil {
		return nil, err
	}
	rec := record(res, prev, 0)
	if prev != nil {
		rec.Issue = prev.Issue
	}
	issue, err := r.find(ctx, owner, repo, res.Project, rec.Issue)
	if err != nil {
		return nil, err
	}
	if issue != nil {
		rec.Issue = issue.Number
	}
	switch res.Status {
	case StatusDrifted:
		err = r.upsert(ctx, owner, repo, issue, rec, res)
		if err == nil && (issue == nil || issue.State != "open") {
			r.notify(ctx, serverconfig.EventDriftOpened, owner, repo, rec.Issue, res)
		}
	case StatusClean:
		if issue != nil && issue.State == "open" {
			err = r.close(ctx, owner, repo, issue.Number, GoneComment(res))
			if err == nil {
				r.notify(ctx, serverconfig.EventDriftClosed, owner, repo, issue.Number, res)
			}
		}
	case StatusError:
		err = r.failed(ctx, owner, repo, issue, prev, rec, res)
	}
	if err != nil {
		return nil, err
	}
	rec.Error = r.redact(rec.Error)
	return rec, r.Store.Put(ctx, rec)
}

func (r *Reporter) redact(s string) string {
	if r.Redact == nil {
		return s
	}
	return r.Redact(s)
}

// upsert opens the issue, or edits it in place (reopening a closed one).
func (r *Reporter) upsert(ctx context.Context, owner, repo string, issue *ghapp.Issue, rec *Record, res Result) error {
	body := r.redact(Body(rec, res))
	if issue == nil {
		is, err := r.Issues.CreateIssue(ctx, owner, repo, Title(res.Project), body, []string{Label})
		if err != nil {
			return fmt.Errorf("open the drift issue of %s: %w", res.Project, err)
		}
		rec.Issue = is.Number
		return nil
	}
	edit := ghapp.IssueEdit{Body: body}
	if issue.State != "open" {
		edit.State = "open"
	}
	if err := r.Issues.EditIssue(ctx, owner, repo, issue.Number, edit); err != nil {
		return fmt.Errorf("edit drift issue #%d: %w", issue.Number, err)
	}
	return nil
}

func (r *Reporter) close(ctx context.Context, owner, repo string, number int, comment string) error {
	if _, err := r.Comments.CreateComment(ctx, owner, repo, number, r.redact(comment)); err != nil {
		return fmt.Errorf("comment on drift issue #%d: %w", number, err)
	}
	if err := r.Issues.EditIssue(ctx, owner, repo, number, ghapp.IssueEdit{State: "closed"}); err != nil {
		return fmt.Errorf("close drift issue #%d: %w", number, err)
	}
	return nil
}

// failed reports a check that could not tell: a comment on the open issue
// (once per distinct error), else an issue saying the check failed.
func (r *Reporter) failed(ctx context.Context, owner, repo string, issue *ghapp.Issue, prev, rec *Record, res Result) error {
	if issue != nil && issue.State == "open" {
		if prev != nil && prev.Status == StatusError && prev.Error == res.Error {
			return nil // said already
		}
		if _, err := r.Comments.CreateComment(ctx, owner, repo, issue.Number, r.redact(FailedComment(res))); err != nil {
			return fmt.Errorf("comment on drift issue #%d: %w", issue.Number, err)
		}
		return nil
	}
	return r.upsert(ctx, owner, repo, issue, rec, res)
}

// find returns the project's drift issue: the one remembered, if it still
// carries the marker, else the newest open one with the label and marker,
// else a closed one; nil when there is none. Only issues an App wrote count,
// so nobody fakes one by pasting the marker.
func (r *Reporter) find(ctx context.Context, owner, repo, project string, remembered int) (*ghapp.Issue, error) {
	marker := Marker(project)
	if remembered > 0 {
		is, err := r.Issues.GetIssue(ctx, owner, repo, remembered)
		switch {
		case errors.Is(err, ghapp.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("read drift issue #%d: %w", remembered, err)
		case ours(is, marker):
			return &is, nil
		}
	}
	for _, state := range []string{"open", "closed"} {
		for page := 1; page > 0 && page <= maxIssuePages; {
			p, err := r.Issues.ListIssues(ctx, owner, repo, Label, state, page)
			if err != nil {
				return nil, fmt.Errorf("list drift issues of %s/%s: %w", owner, repo, err)
			}
			for _, is := range p.Items {
				if ours(is, marker) {
					return &is, nil
				}
			}
			page = p.Next
		}
	}
	return nil, nil
}

func ours(is ghapp.Issue, marker string) bool {
	return !is.PullRequest && is.Bot && strings.HasPrefix(is.Body, marker+"\n")
}
