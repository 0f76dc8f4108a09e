package ghapptest

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/github/ghapp"
)

// repos are the fake's pull requests, files, permissions and reactions.
type repos struct {
	pulls       map[string]ghapp.PullRequest
	changed     map[string][]string
	files       map[string][]byte // "owner/repo@ref:path"
	permissions map[string]string // "owner/repo|login"
	reactions   []Reaction
}

// Reaction is a reaction the App put on a comment.
type Reaction struct {
	CommentID int64
	Content   string
}

func fileKey(owner, repo, ref, path string) string {
	return owner + "/" + repo + "@" + ref + ":" + path
}

// SetPullRequest stores a pull request (by pr.Number) and the paths it changes.
func (g *GitHub) SetPullRequest(owner, repo string, pr ghapp.PullRequest, changed ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.repos.pulls == nil {
		g.repos.pulls, g.repos.changed = map[string]ghapp.PullRequest{}, map[string][]string{}
	}
	g.repos.pulls[key(owner, repo, pr.Number)] = pr
	g.repos.changed[key(owner, repo, pr.Number)] = changed
}

// SetFile puts a file at path on ref (a branch or a SHA).
func (g *GitHub) SetFile(owner, repo, ref, path string, content []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.repos.files == nil {
		g.repos.files = map[string][]byte{}
	}
	g.repos.files[fileKey(owner, repo, ref, path)] = content
}

// SetPermission gives login a permission on the repository.
func (g *GitHub) SetPermission(owner, repo, login, permission string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.repos.permissions == nil {
		g.repos.permissions = map[string]string{}
	}
	g.repos.permissions[owner+"/"+repo+"|"+strings.ToLower(login)] = permission
}

// Reactions are the reactions the App made, in order.
func (g *GitHub) Reactions() []Reaction {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Reaction(nil), g.repos.reactions...)
}

// GetPullRequest implements ghapp.PullRequests; AnsweredAt is the fake's Now.
func (g *GitHub) GetPullRequest(_ context.Context, owner, repo string, number int) (ghapp.PullRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("GetPullRequest"); err != nil {
		return ghapp.PullRequest{}, err
	}
	pr, ok := g.repos.pulls[key(owner, repo, number)]
	if !ok {
		return ghapp.PullRequest{}, notFound(fmt.Sprintf("pull request %s", key(owner, repo, number)))
	}
	pr.AnsweredAt = g.Now()
	return pr, nil
}

// ListPullRequestFiles implements ghapp.PullRequests.
func (g *GitHub) ListPullRequestFiles(_ context.Context, owner, repo string, number, page int) (ghapp.Page[string], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ListPullRequestFiles"); err != nil {
		return ghapp.Page[string]{}, err
	}
	if _, ok := g.repos.pulls[key(owner, repo, number)]; !ok {
		return ghapp.Page[string]{}, notFound(fmt.Sprintf("pull request %s", key(owner, repo, number)))
	}
	return paged(g.repos.changed[key(owner, repo, number)], page, g.PerPage), nil
}

// GetFile implements ghapp.Contents.
func (g *GitHub) GetFile(_ context.Context, owner, repo, path, ref string) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("GetFile"); err != nil {
		return nil, err
	}
	b, ok := g.repos.files[fileKey(owner, repo, ref, path)]
	if !ok {
		return nil, notFound(fmt.Sprintf("%s at %s", path, ref))
	}
	return append([]byte(nil), b...), nil
}

// ReactToComment implements ghapp.Reactions.
func (g *GitHub) ReactToComment(_ context.Context, owner, repo string, id int64, content string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ReactToComment"); err != nil {
		return err
	}
	if g.find(owner, repo, id) == nil {
		return notFound(fmt.Sprintf("comment %d", id))
	}
	g.repos.reactions = append(g.repos.reactions, Reaction{CommentID: id, Content: content})
	return nil
}

// PermissionLevel implements ghapp.Permissions: "none" for who was given none.
func (g *GitHub) PermissionLevel(_ context.Context, owner, repo, login string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("PermissionLevel"); err != nil {
		return "", err
	}
	if p, ok := g.repos.permissions[owner+"/"+repo+"|"+strings.ToLower(login)]; ok {
		return p, nil
	}
	return "none", nil
}
