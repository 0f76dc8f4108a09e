package ghapp

import (
	"context"

	"github.com/google/go-github/v60/github"
)

// Comparison is what lies between two commits: the paths changed (a renamed
// file under its new and its old path) and the commits, oldest first.
type Comparison struct {
	Files   []string
	Commits []string
}

// MergeGroups are the calls that read a merge group of GitHub's merge queue:
// what it changes relative to its base, and the pull requests in it.
type MergeGroups interface {
	// Compare reads one page of the comparison of base with head.
	Compare(ctx context.Context, owner, repo, base, head string, page int) (Page[Comparison], error)
	// PullRequestsOfCommit returns one page of the pull requests GitHub
	// associates with a commit (open ones whose branch holds it, the merged
	// one that brought it in).
	PullRequestsOfCommit(ctx context.Context, owner, repo, sha string, page int) (Page[PullRequest], error)
}

var _ MergeGroups = (*Client)(nil)

// Compare implements MergeGroups. GitHub pages the files; every page repeats
// the commits (up to 250), which the caller keeps once.
func (c *Client) Compare(ctx context.Context, owner, repo, base, head string, pg int) (Page[Comparison], error) {
	cmp, resp, err := c.gh.Repositories.CompareCommits(ctx, owner, repo, base, head, &github.ListOptions{Page: pg, PerPage: perPage})
	if err != nil {
		return Page[Comparison]{}, classify(resp, err)
	}
	var out Comparison
	for _, f := range cmp.Files {
		out.Files = append(out.Files, f.GetFilename())
		if prev := f.GetPreviousFilename(); prev != "" {
			out.Files = append(out.Files, prev)
		}
	}
	for _, cm := range cmp.Commits {
		out.Commits = append(out.Commits, cm.GetSHA())
	}
	p := page([]Comparison{out}, resp)
	return p, nil
}

// PullRequestsOfCommit implements MergeGroups.
func (c *Client) PullRequestsOfCommit(ctx context.Context, owner, repo, sha string, pg int) (Page[PullRequest], error) {
	prs, resp, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, owner, repo, sha, &github.ListOptions{Page: pg, PerPage: perPage})
	if err != nil {
		return Page[PullRequest]{}, classify(resp, err)
	}
	var out []PullRequest
	for _, pr := range prs {
		out = append(out, PullRequestOf(pr))
	}
	return page(out, resp), nil
}
