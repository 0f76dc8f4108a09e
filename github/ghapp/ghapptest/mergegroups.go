package ghapptest

import (
	"context"
	"fmt"

	"github.com/shardgate/shardgate/github/ghapp"
)

// mergeGroups hold what the merge-group calls answer.
type mergeGroups struct {
	comparisons map[string]ghapp.Comparison // "owner/repo@base...head"
	commitPRs   map[string][]int            // "owner/repo@sha" -> pull request numbers
}

var _ ghapp.MergeGroups = (*GitHub)(nil)

// SetComparison sets what Compare answers for base...head.
func (g *GitHub) SetComparison(owner, repo, base, head string, cmp ghapp.Comparison) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups.comparisons == nil {
		g.groups.comparisons = map[string]ghapp.Comparison{}
	}
	g.groups.comparisons[owner+"/"+repo+"@"+base+"..."+head] = cmp
}

// SetCommitPullRequests sets the pull requests GitHub associates with sha.
func (g *GitHub) SetCommitPullRequests(owner, repo, sha string, numbers ...int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups.commitPRs == nil {
		g.groups.commitPRs = map[string][]int{}
	}
	g.groups.commitPRs[owner+"/"+repo+"@"+sha] = numbers
}

// Compare implements ghapp.MergeGroups: ErrNotFound for a comparison never set.
func (g *GitHub) Compare(_ context.Context, owner, repo, base, head string, page int) (ghapp.Page[ghapp.Comparison], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("Compare"); err != nil {
		return ghapp.Page[ghapp.Comparison]{}, err
	}
	cmp, ok := g.groups.comparisons[owner+"/"+repo+"@"+base+"..."+head]
	if !ok {
		return ghapp.Page[ghapp.Comparison]{}, fmt.Errorf("compare %s...%s: %w", base, head, ghapp.ErrNotFound)
	}
	return ghapp.Page[ghapp.Comparison]{Items: []ghapp.Comparison{cmp}}, nil
}

// PullRequestsOfCommit implements ghapp.MergeGroups: the pull requests set
// for sha, as their records say.
func (g *GitHub) PullRequestsOfCommit(_ context.Context, owner, repo, sha string, page int) (ghapp.Page[ghapp.PullRequest], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("PullRequestsOfCommit"); err != nil {
		return ghapp.Page[ghapp.PullRequest]{}, err
	}
	var out []ghapp.PullRequest
	for _, n := range g.groups.commitPRs[owner+"/"+repo+"@"+sha] {
		out = append(out, ghapp.PullRequest{Number: n, State: "open"})
	}
	return paged(out, page, g.PerPage), nil
}
