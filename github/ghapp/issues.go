package ghapp

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// Issue is a repository issue as shardgate reads it. GitHub lists pull
// requests among issues (they share numbers); PullRequest marks them.
type Issue struct {
	Number  int
	Title   string
	Body    string
	State   string // "open" or "closed"
	Labels  []string
	Author  string // login
	Bot     bool   // written by a bot (an App), as GitHub types the author
	HTMLURL string
	// PullRequest is set for a pull request listed as an issue.
	PullRequest bool
}

// IssueEdit is what an issue is changed with; an empty field is left as it is.
type IssueEdit struct {
	Title, Body string
	State       string // "open" or "closed"
}

// Issues are the calls on repository issues (drift issues).
type Issues interface {
	// ListIssues returns one page of the repository's issues carrying label
	// in state ("open", "closed" or "all"), pull requests included as GitHub
	// lists them, newest first.
	ListIssues(ctx context.Context, owner, repo, label, state string, page int) (Page[Issue], error)
	// GetIssue reads one issue (ErrNotFound when there is none).
	GetIssue(ctx context.Context, owner, repo string, number int) (Issue, error)
	// CreateIssue opens an issue with labels and returns it. A creation is
	// never retried blind: the caller looks for it (by a marker) first.
	CreateIssue(ctx context.Context, owner, repo, title, body string, labels []string) (Issue, error)
	// EditIssue changes an issue's title, body or state.
	EditIssue(ctx context.Context, owner, repo string, number int, edit IssueEdit) error
}

var _ Issues = (*Client)(nil)

func issueOf(is *github.Issue) Issue {
	out := Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), State: is.GetState(),
		Author: is.GetUser().GetLogin(), Bot: is.GetUser().GetType() == "Bot", HTMLURL: is.GetHTMLURL(),
		PullRequest: is.IsPullRequest(), Labels: []string{}}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

// ListIssues implements Issues.
func (c *Client) ListIssues(ctx context.Context, owner, repo, label, state string, pg int) (Page[Issue], error) {
	opts := &github.IssueListByRepoOptions{State: state, ListOptions: github.ListOptions{Page: pg, PerPage: perPage}}
	if label != "" {
		opts.Labels = []string{label}
	}
	is, resp, err := c.gh.Issues.ListByRepo(ctx, owner, repo, opts)
	if err != nil {
		return Page[Issue]{}, classify(resp, err)
	}
	out := make([]Issue, 0, len(is))
	for _, i := range is {
		out = append(out, issueOf(i))
	}
	return page(out, resp), nil
}

// GetIssue implements Issues.
func (c *Client) GetIssue(ctx context.Context, owner, repo string, number int) (Issue, error) {
	is, resp, err := c.gh.Issues.Get(ctx, owner, repo, number)
	if err != nil {
		return Issue{}, classify(resp, err)
	}
	return issueOf(is), nil
}

// CreateIssue implements Issues.
func (c *Client) CreateIssue(ctx context.Context, owner, repo, title, body string, labels []string) (Issue, error) {
	is, resp, err := c.gh.Issues.Create(ctx, owner, repo, &github.IssueRequest{Title: &title, Body: &body, Labels: &labels})
	if err != nil {
		return Issue{}, classify(resp, err)
	}
	return issueOf(is), nil
}

// EditIssue implements Issues.
func (c *Client) EditIssue(ctx context.Context, owner, repo string, number int, edit IssueEdit) error {
	req := &github.IssueRequest{}
	if edit.Title != "" {
		req.Title = &edit.Title
	}
	if edit.Body != "" {
		req.Body = &edit.Body
	}
	if edit.State != "" {
		req.State = &edit.State
	}
	_, resp, err := c.gh.Issues.Edit(ctx, owner, repo, number, req)
	return classify(resp, err)
}

// Branches are the calls on a repository's branches.
type Branches interface {
	// BranchHead is the SHA of the commit branch points at.
	BranchHead(ctx context.Context, owner, repo, branch string) (string, error)
}

var _ Branches = (*Client)(nil)

// BranchHead reads the head through a comparison of the branch with itself
// (its base commit): the one commit-reading call the App's permissions
// already cover.
func (c *Client) BranchHead(ctx context.Context, owner, repo, branch string) (string, error) {
	cmp, resp, err := c.gh.Repositories.CompareCommits(ctx, owner, repo, branch, branch, nil)
	if err != nil {
		return "", classify(resp, err)
	}
	sha := cmp.GetBaseCommit().GetSHA()
	if sha == "" {
		return "", fmt.Errorf("read the head of %s: GitHub gave no commit", branch)
	}
	return sha, nil
}
