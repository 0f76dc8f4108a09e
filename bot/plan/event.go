package plan

import (
	"context"
	"errors"
	"slices"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/records"
)

// Event is what a pull_request delivery says of its pull request: the
// pull request and its labels as GitHub sent them with the event.
type Event struct {
	pr     ghapp.PullRequest
	labels []string
}

// EventOf reads a pull_request event's pull request and labels.
func EventOf(ev *github.PullRequestEvent) *Event {
	e := &Event{pr: ghapp.PullRequestOf(ev.GetPullRequest()), labels: []string{}}
	for _, l := range ev.GetPullRequest().Labels {
		e.labels = append(e.labels, l.GetName())
	}
	return e
}

// current says whether the event is not older than what shardgate knows of
// the pull request (st, nil when nothing): its head is the known head, or
// one shardgate has not seen, pushed no earlier than the known head was seen.
// A delivery handled late, after a newer one, is not: its job reads GitHub.
func (e *Event) current(st *records.PRState) bool {
	if e == nil || e.pr.HeadSHA == "" {
		return false
	}
	if st == nil || st.HeadSHA == "" || e.pr.HeadSHA == st.HeadSHA {
		return true
	}
	seen := slices.ContainsFunc(st.Heads, func(h records.HeadSighting) bool { return h.SHA == e.pr.HeadSHA })
	return !seen && !e.pr.UpdatedAt.Before(st.HeadSeenAt)
}

// eventAPI answers a job's reads of the pull request and of its labels from
// the event that started the job (no GitHub call), and every other call
// through API.
type eventAPI struct {
	ghapp.API
	ref pullreq.Ref
	ev  *Event
}

// GetPullRequest implements ghapp.PullRequests.
func (a eventAPI) GetPullRequest(ctx context.Context, owner, repo string, number int) (ghapp.PullRequest, error) {
	if !a.same(owner, repo, number) {
		return a.API.GetPullRequest(ctx, owner, repo, number)
	}
	return a.ev.pr, nil
}

// ListLabels implements ghapp.Labels.
func (a eventAPI) ListLabels(ctx context.Context, owner, repo string, number, page int) (ghapp.Page[string], error) {
	if !a.same(owner, repo, number) || page != 0 {
		return a.API.ListLabels(ctx, owner, repo, number, page)
	}
	return ghapp.Page[string]{Items: slices.Clone(a.ev.labels)}, nil
}

// RemoveLabel implements ghapp.Labels: a label taken off is off the event's
// list too.
func (a eventAPI) RemoveLabel(ctx context.Context, owner, repo string, number int, name string) error {
	err := a.API.RemoveLabel(ctx, owner, repo, number, name)
	if a.same(owner, repo, number) && (err == nil || errors.Is(err, ghapp.ErrNotFound)) {
		a.ev.labels = slices.DeleteFunc(a.ev.labels, func(n string) bool { return n == name })
	}
	return err
}

func (a eventAPI) same(owner, repo string, number int) bool {
	return owner == a.ref.Owner && repo == a.ref.Repo && number == a.ref.Number
}
