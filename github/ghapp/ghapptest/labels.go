package ghapptest

import (
	"context"
	"fmt"
	"slices"

	"github.com/shardgate/shardgate/github/ghapp"
)

// AddLabel puts a label on the issue as actor, with its "labeled" event at
// the fake's Now.
func (g *GitHub) AddLabel(owner, repo string, number int, name, actor string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.issue(owner, repo, number)
	if !slices.Contains(is.labels, name) {
		is.labels = append(is.labels, name)
	}
	is.events = append(is.events, ghapp.IssueEvent{ID: g.id(), Event: "labeled", Label: name, Actor: actor, CreatedAt: g.Now()})
}

// AddEvent appends another event (a comment, a push: "head_ref_force_pushed")
// to the issue's timeline at the fake's Now.
func (g *GitHub) AddEvent(owner, repo string, number int, event, actor string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.issue(owner, repo, number)
	is.events = append(is.events, ghapp.IssueEvent{ID: g.id(), Event: event, Actor: actor, CreatedAt: g.Now()})
}

// Labels are the names of the issue's labels.
func (g *GitHub) Labels(owner, repo string, number int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.issue(owner, repo, number).labels...)
}

// ListLabels implements ghapp.Labels.
func (g *GitHub) ListLabels(_ context.Context, owner, repo string, number, page int) (ghapp.Page[string], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ListLabels"); err != nil {
		return ghapp.Page[string]{}, err
	}
	return paged(g.issue(owner, repo, number).labels, page, g.PerPage), nil
}

// ListIssueEvents implements ghapp.Labels.
func (g *GitHub) ListIssueEvents(_ context.Context, owner, repo string, number, page int) (ghapp.Page[ghapp.IssueEvent], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ListIssueEvents"); err != nil {
		return ghapp.Page[ghapp.IssueEvent]{}, err
	}
	return paged(g.issue(owner, repo, number).events, page, g.PerPage), nil
}

// RemoveLabel implements ghapp.Labels: the App takes the label off.
func (g *GitHub) RemoveLabel(_ context.Context, owner, repo string, number int, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("RemoveLabel"); err != nil {
		return err
	}
	is := g.issue(owner, repo, number)
	i := slices.Index(is.labels, name)
	if i < 0 {
		return notFound(fmt.Sprintf("label %s", name))
	}
	is.labels = slices.Delete(is.labels, i, i+1)
	is.events = append(is.events, ghapp.IssueEvent{ID: g.id(), Event: "unlabeled", Label: name, Actor: AppLogin, CreatedAt: g.Now()})
	return nil
}

// SetMember makes login a member of the team org/slug in state ("active",
// "pending"); "" removes the membership.
func (g *GitHub) SetMember(org, slug, login, state string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := org + "/" + slug + "|" + login
	if state == "" {
		delete(g.members, k)
		return
	}
	g.members[k] = state
}

// TeamMembershipState implements ghapp.Teams.
func (g *GitHub) TeamMembershipState(_ context.Context, org, slug, login string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("TeamMembershipState"); err != nil {
		return "", err
	}
	if st, ok := g.members[org+"/"+slug+"|"+login]; ok {
		return st, nil
	}
	return "", notFound(fmt.Sprintf("membership of %s in %s/%s", login, org, slug))
}
