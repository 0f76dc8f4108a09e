// Package ghapptest is an in-memory GitHub behind ghapp's narrow interfaces,
// for unit tests of the flows: no HTTP, no OpenAPI. It keeps pull requests,
// their changed files, comments, labels, issue events, reactions, repository
// files, permissions, team memberships and check runs, pages lists as GitHub
// does (PerPage items a page, oldest first) and counts the calls made, so a
// test can say what was created, edited or read. Times come from Now, a
// clock the test sets.
package ghapptest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shardgate/shardgate/github/ghapp"
)

// GitHub is the fake. The zero value is not ready: use New.
type GitHub struct {
	// PerPage is the page size of every list (default 100, GitHub's largest).
	PerPage int
	// Now is GitHub's clock: the times of comments and events.
	Now func() time.Time
	// Fail, when set, is asked before each call (by its method name, e.g.
	// "CreateComment"); a non-nil answer is returned as the call's error.
	Fail func(call string) error

	mu      sync.Mutex
	nextID  int64
	issues  map[string]*issue
	members map[string]string // "org/slug|login" -> state
	checks  []CheckRun
	calls   map[string]int
	repos   repos // pull requests, files, permissions, reactions (pulls.go)
	// repoIssue are the repositories' issues ("owner/repo" -> number -> issue).
	repoIssue map[string]map[int]*ghapp.Issue
	heads     map[string]string // "owner/repo@branch" -> sha
	// groups are the merge groups' comparisons and commits' pull requests
	// (mergegroups.go).
	groups mergeGroups
}

type issue struct {
	comments []ghapp.Comment
	labels   []string
	events   []ghapp.IssueEvent
}

var _ ghapp.API = (*GitHub)(nil)

// New returns an empty fake GitHub whose clock is now.
func New(now func() time.Time) *GitHub {
	return &GitHub{PerPage: 100, Now: now, nextID: 1000, issues: map[string]*issue{}, members: map[string]string{}, calls: map[string]int{}}
}

func key(owner, repo string, number int) string { return fmt.Sprintf("%s/%s#%d", owner, repo, number) }

// issue returns the issue's state, made on first use; mu is held.
func (g *GitHub) issue(owner, repo string, number int) *issue {
	k := key(owner, repo, number)
	if g.issues[k] == nil {
		g.issues[k] = &issue{}
	}
	return g.issues[k]
}

// call counts a call and asks Fail about it; mu is held.
func (g *GitHub) call(name string) error {
	g.calls[name]++
	if g.Fail != nil {
		return g.Fail(name)
	}
	return nil
}

// Calls is how many times the named method was called.
func (g *GitHub) Calls(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[name]
}

func (g *GitHub) id() int64 { g.nextID++; return g.nextID }

func notFound(what string) error { return fmt.Errorf("%s: %w", what, ghapp.ErrNotFound) }

// paged is page p (0 or 1: the first) of items.
func paged[T any](items []T, p, per int) ghapp.Page[T] {
	if p < 1 {
		p = 1
	}
	last := max(1, (len(items)+per-1)/per)
	out := ghapp.Page[T]{Last: last}
	if p < last {
		out.Next = p + 1
	}
	if start := (p - 1) * per; start < len(items) {
		out.Items = append(out.Items, items[start:min(start+per, len(items))]...)
	}
	if last == 1 {
		out.Last = 0 // GitHub sends no Link header for a single page
	}
	return out
}

// AddComment posts a comment as login (bot: written by an App) and returns
// it, as a user or another App would.
func (g *GitHub) AddComment(owner, repo string, number int, login string, bot bool, body string) ghapp.Comment {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.Now()
	c := ghapp.Comment{ID: g.id(), Body: body, Author: login, Bot: bot, CreatedAt: now, UpdatedAt: now,
		IssueURL: fmt.Sprintf("https://api.github.test/repos/%s/%s/issues/%d", owner, repo, number)}
	is := g.issue(owner, repo, number)
	is.comments = append(is.comments, c)
	return c
}

// Comments are the issue's comments, oldest first.
func (g *GitHub) Comments(owner, repo string, number int) []ghapp.Comment {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ghapp.Comment(nil), g.issue(owner, repo, number).comments...)
}

// DeleteComment removes a comment, as someone deleting it on GitHub.
func (g *GitHub) DeleteComment(id int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, is := range g.issues {
		for i, c := range is.comments {
			if c.ID == id {
				is.comments = append(is.comments[:i], is.comments[i+1:]...)
				return
			}
		}
	}
}

// ListComments implements ghapp.Comments.
func (g *GitHub) ListComments(_ context.Context, owner, repo string, number, page int) (ghapp.Page[ghapp.Comment], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ListComments"); err != nil {
		return ghapp.Page[ghapp.Comment]{}, err
	}
	return paged(g.issue(owner, repo, number).comments, page, g.PerPage), nil
}

// find returns a pointer to comment id; mu is held.
func (g *GitHub) find(owner, repo string, id int64) *ghapp.Comment {
	prefix := owner + "/" + repo + "#"
	for k, is := range g.issues {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		for i := range is.comments {
			if is.comments[i].ID == id {
				return &is.comments[i]
			}
		}
	}
	return nil
}

// GetComment implements ghapp.Comments.
func (g *GitHub) GetComment(_ context.Context, owner, repo string, id int64) (ghapp.Comment, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("GetComment"); err != nil {
		return ghapp.Comment{}, err
	}
	if c := g.find(owner, repo, id); c != nil {
		return *c, nil
	}
	return ghapp.Comment{}, notFound(fmt.Sprintf("comment %d", id))
}

// AppLogin is the login the App's own comments are written as.
const AppLogin = "shardgate[bot]"

// CreateComment implements ghapp.Comments: the App posts.
func (g *GitHub) CreateComment(_ context.Context, owner, repo string, number int, body string) (int64, error) {
	g.mu.Lock()
	if err := g.call("CreateComment"); err != nil {
		g.mu.Unlock()
		return 0, err
	}
	g.mu.Unlock()
	return g.AddComment(owner, repo, number, AppLogin, true, body).ID, nil
}

// EditComment implements ghapp.Comments.
func (g *GitHub) EditComment(_ context.Context, owner, repo string, id int64, body string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("EditComment"); err != nil {
		return err
	}
	c := g.find(owner, repo, id)
	if c == nil {
		return notFound(fmt.Sprintf("comment %d", id))
	}
	c.Body, c.UpdatedAt = body, g.Now()
	return nil
}
