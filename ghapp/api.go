package ghapp

import (
	"context"
	"errors"
	"time"
)

// The narrow interfaces below are the GitHub calls shardgate's flows make,
// one small interface per kind of thing. Client implements them over
// go-github; ghapptest.GitHub implements them in memory for unit tests.
// Lists are read a page at a time (page 0 or 1 is the first, the oldest), as
// GitHub pages them, so a caller stops reading as soon as it found what it looks for.

// ErrNotFound is what a call returns (wrapped) when GitHub answered 404: the
// comment, label or membership is not there.
var ErrNotFound = errors.New("not found on GitHub")

// Page is one page of a list: its items, the next page (0: none) and the
// last page (0 when GitHub did not say).
type Page[T any] struct {
	Items      []T
	Next, Last int
}

// Comment is an issue or pull-request comment.
type Comment struct {
	ID       int64
	Body     string
	Author   string // login
	Bot      bool   // written by a bot (an App), as GitHub types the author
	IssueURL string // the API URL of the issue it is on
	// CreatedAt and UpdatedAt are GitHub's times.
	CreatedAt, UpdatedAt time.Time
}

// Comments are the calls on pull-request comments.
type Comments interface {
	// ListComments returns one page of the issue's comments, oldest first.
	ListComments(ctx context.Context, owner, repo string, number, page int) (Page[Comment], error)
	// GetComment reads one comment (ErrNotFound when it is gone).
	GetComment(ctx context.Context, owner, repo string, id int64) (Comment, error)
	// CreateComment posts a comment and returns its id. A creation is never
	// retried blind: the caller looks for it (by a marker) before posting.
	CreateComment(ctx context.Context, owner, repo string, number int, body string) (int64, error)
	// EditComment replaces a comment's body (ErrNotFound when it is gone).
	EditComment(ctx context.Context, owner, repo string, id int64, body string) error
}

// IssueEvent is one event of an issue's timeline as the issue events API
// gives it ("labeled", "unlabeled", ...).
type IssueEvent struct {
	ID        int64
	Event     string
	Label     string // the label's name, for label events
	Actor     string // login of who did it
	CreatedAt time.Time
}

// Labels are the calls on a pull request's labels and on who added them.
type Labels interface {
	// ListLabels returns one page of the names of the issue's labels.
	ListLabels(ctx context.Context, owner, repo string, number, page int) (Page[string], error)
	// ListIssueEvents returns one page of the issue's events, oldest first.
	ListIssueEvents(ctx context.Context, owner, repo string, number, page int) (Page[IssueEvent], error)
	// RemoveLabel takes a label off the issue (ErrNotFound when it is not on).
	RemoveLabel(ctx context.Context, owner, repo string, number int, name string) error
}

// Teams are the calls on organisation teams.
type Teams interface {
	// TeamMembershipState is login's membership state in org/slug ("active",
	// "pending"); ErrNotFound when login is not a member.
	TeamMembershipState(ctx context.Context, org, slug, login string) (string, error)
}
