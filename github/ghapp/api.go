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

// CheckOutput is a check run's output; an empty Text is left out.
type CheckOutput struct {
	Title, Summary, Text string
	// Annotations mark files of the commit (at most MaxCheckAnnotations).
	Annotations []CheckAnnotation
}

// MaxCheckAnnotations is the most annotations GitHub takes in one request.
const MaxCheckAnnotations = 50

// CheckAnnotation is a check run's note on a file: Level is "notice",
// "warning" or "failure".
type CheckAnnotation struct {
	Path, Level, Title, Message string
	StartLine, EndLine          int
}

// CheckRun is a check run as listed.
type CheckRun struct {
	ID         int64
	ExternalID string
	Status     string // "queued", "in_progress", "completed"
}

// CheckRunUpdate is what a check run is created or updated with: Status
// "in_progress", or "completed" with a Conclusion, CompletedAt and Output.
// HeadSHA is only for a creation.
type CheckRunUpdate struct {
	Name, HeadSHA, ExternalID string
	Status, Conclusion        string
	CompletedAt               time.Time
	Output                    *CheckOutput
}

// Checks are the calls on check runs.
type Checks interface {
	// CreateCheckRun creates a check run and returns its id. Before it, the
	// caller looks for the run by its external id: a creation is not
	// repeated blind.
	CreateCheckRun(ctx context.Context, owner, repo string, run CheckRunUpdate) (int64, error)
	// UpdateCheckRun changes check run id.
	UpdateCheckRun(ctx context.Context, owner, repo string, id int64, run CheckRunUpdate) error
	// ListCheckRuns returns one page of the runs named name on sha, of the
	// App appID when it is positive.
	ListCheckRuns(ctx context.Context, owner, repo, sha, name string, appID int64, page int) (Page[CheckRun], error)
}

// PullRequest is a pull request as the flows read it.
type PullRequest struct {
	Number int
	State  string // "open", "closed"
	Draft  bool
	Merged bool
	Author string // login
	// HeadSHA is the head commit; HeadRepo the full name of the repository it
	// is in ("" when that repository is gone), BaseRepo the base's.
	HeadSHA, HeadRepo  string
	BaseRef, BaseSHA   string
	BaseRepo           string
	DefaultBranch      string // of the base repository; "" when not given
	MergeSHA, MergedBy string
	UpdatedAt          time.Time
	// AnsweredAt is GitHub's clock when it answered (the Date header); zero
	// for a pull request from a webhook payload.
	AnsweredAt time.Time
}

// PullRequests are the calls on pull requests.
type PullRequests interface {
	// GetPullRequest reads a pull request as it is now.
	GetPullRequest(ctx context.Context, owner, repo string, number int) (PullRequest, error)
	// ListPullRequestFiles returns one page of the paths the pull request
	// changes; a renamed file is listed under its new and its old path.
	ListPullRequestFiles(ctx context.Context, owner, repo string, number, page int) (Page[string], error)
}

// UndecodableError is a file GitHub gave that cannot be read as a file (an
// unknown encoding, a directory): the repository's problem, not GitHub's.
type UndecodableError struct{ Err error }

func (e *UndecodableError) Error() string { return "cannot decode the file: " + e.Err.Error() }

func (e *UndecodableError) Unwrap() error { return e.Err }

// Contents are the calls on a repository's files.
type Contents interface {
	// GetFile reads the file at path as it is at ref (a branch or a SHA);
	// ErrNotFound when there is none, an *UndecodableError when it cannot be
	// read as a file.
	GetFile(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
}

// Reactions are the calls on reactions.
type Reactions interface {
	// ReactToComment puts a reaction ("+1", "confused", ...) on an issue comment.
	ReactToComment(ctx context.Context, owner, repo string, id int64, content string) error
}

// Permissions are the calls on collaborators' permissions.
type Permissions interface {
	// PermissionLevel is login's permission on the repository ("admin",
	// "write", "read", "none").
	PermissionLevel(ctx context.Context, owner, repo, login string) (string, error)
}

// API is every call the flows make: what an installation's client answers.
type API interface {
	Comments
	Labels
	Teams
	Checks
	PullRequests
	Contents
	Reactions
	Permissions
	Issues
	Branches
	MergeGroups
}
