package ghapp

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/go-github/v60/github"
)

// perPage is the page size of every list read (GitHub's largest).
const perPage = 100

// Client implements the narrow interfaces over a go-github client (usually
// an installation's, from a ClientCreator). Errors are go-github's, so that
// callers still tell a transient one; a 404 also matches ErrNotFound.
type Client struct{ gh *github.Client }

var (
	_ Comments = (*Client)(nil)
	_ Labels   = (*Client)(nil)
	_ Teams    = (*Client)(nil)
)

// FromClient wraps gh.
func FromClient(gh *github.Client) *Client { return &Client{gh: gh} }

// notFoundError is a 404 from GitHub: errors.Is(err, ErrNotFound) and
// errors.As to the go-github error both hold.
type notFoundError struct{ err error }

func (e *notFoundError) Error() string   { return e.err.Error() }
func (e *notFoundError) Unwrap() []error { return []error{e.err, ErrNotFound} }
func classify(resp *github.Response, err error) error {
	if err != nil && resp != nil && resp.StatusCode == http.StatusNotFound {
		return &notFoundError{err: err}
	}
	return err
}

func page[T any](items []T, resp *github.Response) Page[T] {
	p := Page[T]{Items: items}
	if resp != nil {
		p.Next, p.Last = resp.NextPage, resp.LastPage
	}
	return p
}

// ListComments implements Comments.
func (c *Client) ListComments(ctx context.Context, owner, repo string, number, pg int) (Page[Comment], error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{Page: pg, PerPage: perPage}}
	cs, resp, err := c.gh.Issues.ListComments(ctx, owner, repo, number, opts)
	if err != nil {
		return Page[Comment]{}, classify(resp, err)
	}
	out := make([]Comment, 0, len(cs))
	for _, ic := range cs {
		out = append(out, comment(ic))
	}
	return page(out, resp), nil
}

func comment(ic *github.IssueComment) Comment {
	return Comment{ID: ic.GetID(), Body: ic.GetBody(), Author: ic.GetUser().GetLogin(), Bot: ic.GetUser().GetType() == "Bot",
		IssueURL: ic.GetIssueURL(), CreatedAt: ic.GetCreatedAt().Time, UpdatedAt: ic.GetUpdatedAt().Time}
}

// GetComment implements Comments.
func (c *Client) GetComment(ctx context.Context, owner, repo string, id int64) (Comment, error) {
	ic, resp, err := c.gh.Issues.GetComment(ctx, owner, repo, id)
	if err != nil {
		return Comment{}, classify(resp, err)
	}
	return comment(ic), nil
}

// CreateComment implements Comments.
func (c *Client) CreateComment(ctx context.Context, owner, repo string, number int, body string) (int64, error) {
	ic, resp, err := c.gh.Issues.CreateComment(ctx, owner, repo, number, &github.IssueComment{Body: &body})
	if err != nil {
		return 0, classify(resp, err)
	}
	return ic.GetID(), nil
}

// EditComment implements Comments.
func (c *Client) EditComment(ctx context.Context, owner, repo string, id int64, body string) error {
	_, resp, err := c.gh.Issues.EditComment(ctx, owner, repo, id, &github.IssueComment{Body: &body})
	return classify(resp, err)
}

// ListLabels implements Labels.
func (c *Client) ListLabels(ctx context.Context, owner, repo string, number, pg int) (Page[string], error) {
	ls, resp, err := c.gh.Issues.ListLabelsByIssue(ctx, owner, repo, number, &github.ListOptions{Page: pg, PerPage: perPage})
	if err != nil {
		return Page[string]{}, classify(resp, err)
	}
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		names = append(names, l.GetName())
	}
	return page(names, resp), nil
}

// ListIssueEvents implements Labels.
func (c *Client) ListIssueEvents(ctx context.Context, owner, repo string, number, pg int) (Page[IssueEvent], error) {
	es, resp, err := c.gh.Issues.ListIssueEvents(ctx, owner, repo, number, &github.ListOptions{Page: pg, PerPage: perPage})
	if err != nil {
		return Page[IssueEvent]{}, classify(resp, err)
	}
	out := make([]IssueEvent, 0, len(es))
	for _, e := range es {
		out = append(out, IssueEvent{ID: e.GetID(), Event: e.GetEvent(), Label: e.GetLabel().GetName(),
			Actor: e.GetActor().GetLogin(), CreatedAt: e.GetCreatedAt().Time})
	}
	return page(out, resp), nil
}

// RemoveLabel implements Labels.
func (c *Client) RemoveLabel(ctx context.Context, owner, repo string, number int, name string) error {
	// go-github does not escape the name, and exception labels hold a "/".
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, owner, repo, number, url.PathEscape(name))
	return classify(resp, err)
}

// TeamMembershipState implements Teams.
func (c *Client) TeamMembershipState(ctx context.Context, org, slug, login string) (string, error) {
	m, resp, err := c.gh.Teams.GetTeamMembershipBySlug(ctx, org, slug, login)
	if err != nil {
		return "", classify(resp, err)
	}
	return m.GetState(), nil
}
