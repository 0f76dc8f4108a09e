package ghapp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v60/github"
)

var _ API = (*Client)(nil)

// PullRequestOf is a go-github pull request (a webhook payload's) as the
// flows read it.
func PullRequestOf(pr *github.PullRequest) PullRequest {
	out := PullRequest{Number: pr.GetNumber(), State: pr.GetState(), Draft: pr.GetDraft(), Merged: pr.GetMerged(),
		Author: pr.GetUser().GetLogin(), HeadSHA: pr.GetHead().GetSHA(), HeadRepo: pr.GetHead().GetRepo().GetFullName(),
		BaseRef: pr.GetBase().GetRef(), BaseSHA: pr.GetBase().GetSHA(), BaseRepo: pr.GetBase().GetRepo().GetFullName(),
		DefaultBranch: pr.GetBase().GetRepo().GetDefaultBranch(), MergeSHA: pr.GetMergeCommitSHA(),
		MergedBy: pr.GetMergedBy().GetLogin(), UpdatedAt: pr.GetUpdatedAt().Time}
	return out
}

// GetPullRequest implements PullRequests.
func (c *Client) GetPullRequest(ctx context.Context, owner, repo string, number int) (PullRequest, error) {
	pr, resp, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return PullRequest{}, classify(resp, err)
	}
	out := PullRequestOf(pr)
	if resp != nil && resp.Response != nil {
		if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			out.AnsweredAt = d
		}
	}
	return out, nil
}

// ListPullRequestFiles implements PullRequests.
func (c *Client) ListPullRequestFiles(ctx context.Context, owner, repo string, number, pg int) (Page[string], error) {
	fs, resp, err := c.gh.PullRequests.ListFiles(ctx, owner, repo, number, &github.ListOptions{Page: pg, PerPage: perPage})
	if err != nil {
		return Page[string]{}, classify(resp, err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.GetFilename())
		if prev := f.GetPreviousFilename(); prev != "" {
			names = append(names, prev)
		}
	}
	return page(names, resp), nil
}

// GetFile implements Contents.
func (c *Client) GetFile(ctx context.Context, owner, repo, path, ref string) ([]byte, error) {
	content, _, resp, err := c.gh.Repositories.GetContents(ctx, owner, repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, classify(resp, err)
	}
	if content == nil {
		return nil, &UndecodableError{Err: fmt.Errorf("%s is a directory, not a file", path)}
	}
	text, err := content.GetContent()
	if err != nil {
		return nil, &UndecodableError{Err: err}
	}
	return []byte(text), nil
}

// ReactToComment implements Reactions.
func (c *Client) ReactToComment(ctx context.Context, owner, repo string, id int64, content string) error {
	_, resp, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, owner, repo, id, content)
	return classify(resp, err)
}

// PermissionLevel implements Permissions.
func (c *Client) PermissionLevel(ctx context.Context, owner, repo, login string) (string, error) {
	p, resp, err := c.gh.Repositories.GetPermissionLevel(ctx, owner, repo, login)
	if err != nil {
		return "", classify(resp, err)
	}
	return p.GetPermission(), nil
}

// APIFor is the narrow API over the client of an installation.
func APIFor(cc ClientCreator, installation int64) (API, error) {
	gh, err := cc.NewInstallationClient(installation)
	if err != nil {
		return nil, err
	}
	return FromClient(gh), nil
}
