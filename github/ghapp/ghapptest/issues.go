package ghapptest

import (
	"context"
	"fmt"
	"slices"

	"github.com/shardgate/shardgate/github/ghapp"
)

var _ ghapp.Issues = (*GitHub)(nil)

// repoIssues are the issues of one repository, by number; mu is held.
func (g *GitHub) repoIssues(owner, repo string) map[int]*ghapp.Issue {
	if g.repoIssue == nil {
		g.repoIssue = map[string]map[int]*ghapp.Issue{}
	}
	k := owner + "/" + repo
	if g.repoIssue[k] == nil {
		g.repoIssue[k] = map[int]*ghapp.Issue{}
	}
	return g.repoIssue[k]
}

// AddIssue opens an issue as login (bot: written by an App), as a person or
// another App would, and returns it. Its number follows the repository's
// issues (pull requests the fake knows only by number are not counted).
func (g *GitHub) AddIssue(owner, repo, login string, bot bool, title, body string, labels []string) ghapp.Issue {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.repoIssues(owner, repo)
	n := len(is) + 1
	for is[n] != nil {
		n++
	}
	i := &ghapp.Issue{Number: n, Title: title, Body: body, State: "open", Labels: append([]string{}, labels...),
		Author: login, Bot: bot, HTMLURL: fmt.Sprintf("https://github.test/%s/%s/issues/%d", owner, repo, n)}
	is[n] = i
	return *i
}

// Issue is the issue as it is now; ok is false when there is none.
func (g *GitHub) Issue(owner, repo string, number int) (ghapp.Issue, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.repoIssues(owner, repo)[number]
	if i == nil {
		return ghapp.Issue{}, false
	}
	return *i, true
}

// Issues are the repository's issues, by number.
func (g *GitHub) Issues(owner, repo string) []ghapp.Issue {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.repoIssues(owner, repo)
	out := []ghapp.Issue{}
	for n := 1; len(out) < len(is); n++ {
		if i := is[n]; i != nil {
			out = append(out, *i)
		}
	}
	return out
}

// ListIssues implements ghapp.Issues: newest first, as GitHub lists them.
func (g *GitHub) ListIssues(_ context.Context, owner, repo, label, state string, page int) (ghapp.Page[ghapp.Issue], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ListIssues"); err != nil {
		return ghapp.Page[ghapp.Issue]{}, err
	}
	is := g.repoIssues(owner, repo)
	var out []ghapp.Issue
	for n := len(is) * 2; n > 0; n-- { // numbers may have gaps
		i := is[n]
		if i == nil || (state != "all" && i.State != state) || (label != "" && !slices.Contains(i.Labels, label)) {
			continue
		}
		out = append(out, *i)
	}
	return paged(out, page, g.PerPage), nil
}

// GetIssue implements ghapp.Issues.
func (g *GitHub) GetIssue(_ context.Context, owner, repo string, number int) (ghapp.Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("GetIssue"); err != nil {
		return ghapp.Issue{}, err
	}
	if i := g.repoIssues(owner, repo)[number]; i != nil {
		return *i, nil
	}
	return ghapp.Issue{}, notFound(fmt.Sprintf("issue %d", number))
}

// CreateIssue implements ghapp.Issues: the App opens it.
func (g *GitHub) CreateIssue(_ context.Context, owner, repo, title, body string, labels []string) (ghapp.Issue, error) {
	g.mu.Lock()
	if err := g.call("CreateIssue"); err != nil {
		g.mu.Unlock()
		return ghapp.Issue{}, err
	}
	g.mu.Unlock()
	return g.AddIssue(owner, repo, AppLogin, true, title, body, labels), nil
}

// EditIssue implements ghapp.Issues.
func (g *GitHub) EditIssue(_ context.Context, owner, repo string, number int, edit ghapp.IssueEdit) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("EditIssue"); err != nil {
		return err
	}
	i := g.repoIssues(owner, repo)[number]
	if i == nil {
		return notFound(fmt.Sprintf("issue %d", number))
	}
	if edit.Title != "" {
		i.Title = edit.Title
	}
	if edit.Body != "" {
		i.Body = edit.Body
	}
	if edit.State != "" {
		i.State = edit.State
	}
	return nil
}

var _ ghapp.Branches = (*GitHub)(nil)

// SetBranchHead makes branch point at sha.
func (g *GitHub) SetBranchHead(owner, repo, branch, sha string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.heads == nil {
		g.heads = map[string]string{}
	}
	g.heads[owner+"/"+repo+"@"+branch] = sha
}

// BranchHead implements ghapp.Branches: ErrNotFound for a branch never set.
func (g *GitHub) BranchHead(_ context.Context, owner, repo, branch string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("BranchHead"); err != nil {
		return "", err
	}
	sha, ok := g.heads[owner+"/"+repo+"@"+branch]
	if !ok {
		return "", fmt.Errorf("branch %s: %w", branch, ghapp.ErrNotFound)
	}
	return sha, nil
}
