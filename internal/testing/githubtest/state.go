package githubtest

import (
	"sort"
	"time"
)

// PullRequest is the fake's record of a pull request. Its issue number is
// Number: labels, comments and events hang off it.
type PullRequest struct {
	Number int
	Title  string
	Body   string
	User   string // author login
	// HeadRef is a branch of the head repository; HeadSHA is resolved from
	// it by OpenPR and SyncPR when left empty.
	HeadRef string
	HeadSHA string
	// HeadRepo is the head repository's full name; a different one than the
	// base repository makes the PR a fork PR. Empty means the same repo.
	HeadRepo string
	BaseRef  string // defaults to the repository's default branch
	BaseSHA  string
	Draft    bool
	State    string // open or closed
	Merged   bool
	// MergeCommitSHA and MergedBy are set by MergePR.
	MergeCommitSHA string
	MergedBy       string
	Labels         []string
	Created        time.Time
	// updated and closed are when the fake last changed the pull request
	// and closed it (touch): its answers stay the same, ETag included,
	// until it changes, as on GitHub.
	updated, closed time.Time
}

// updatedAt is when the pull request last changed.
func (p *PullRequest) updatedAt() time.Time {
	if p.updated.IsZero() {
		return p.Created
	}
	return p.updated
}

// touch records that a pull request changed now (updated_at), and when it
// was closed (closed_at); callers hold s.mu.
func (s *Server) touch(pr *PullRequest) {
	now := s.now().UTC()
	pr.updated = now
	switch {
	case pr.State != "closed":
		pr.closed = time.Time{}
	case pr.closed.IsZero():
		pr.closed = now
	}
}

// Comment is an issue comment.
type Comment struct {
	ID        int64
	Issue     int
	User      string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Issue is an issue that is not a pull request (a drift issue). It shares
// the repository's numbers with pull requests, as on GitHub.
type Issue struct {
	Number  int
	Title   string
	Body    string
	User    string
	State   string // open or closed
	Labels  []string
	Created time.Time
	Updated time.Time
	Closed  time.Time
	// Edits counts PATCH calls, so tests can tell an edited issue from a new one.
	Edits int
}

// Reaction is a reaction on an issue comment.
type Reaction struct {
	ID        int64
	CommentID int64
	User      string
	Content   string
}

// IssueEvent is a labeled or unlabeled event on an issue.
type IssueEvent struct {
	ID        int64
	Event     string // labeled, unlabeled
	Label     string
	Actor     string
	CreatedAt time.Time
}

// CheckRun is a check run as the bot last wrote it.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	ExternalID  string
	DetailsURL  string
	Title       string
	Summary     string
	Text        string
	StartedAt   time.Time
	CompletedAt time.Time
	// Annotations are "level path: message", in the order they came.
	Annotations []string
	// Updates counts PATCH calls, so tests can tell an edited run from a
	// new one.
	Updates int
}

// CommitStatus is a commit status as created by the bot.
type CommitStatus struct {
	ID          int64
	SHA         string
	State       string
	Context     string
	Description string
	TargetURL   string
	Creator     string
}

// repo is the state of one repository; guarded by Server.mu.
type repo struct {
	owner, name    string
	id             int64
	installationID int64
	defaultBranch  string
	git            *GitRepo
	pulls          map[int]*PullRequest
	issues         map[int]*Issue
	nextNumber     int
	comments       map[int64]*Comment
	reactions      map[int64][]*Reaction
	events         map[int][]*IssueEvent
	checkRuns      map[int64]*CheckRun
	statuses       []*CommitStatus
	permissions    map[string]string
}

func (r *repo) fullName() string { return r.owner + "/" + r.name }

func sortedKeys[K int | int64, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

func (p *PullRequest) clone() PullRequest {
	c := *p
	c.Labels = append([]string(nil), p.Labels...)
	return c
}

func hasLabel(labels []string, name string) bool {
	for _, l := range labels {
		if l == name {
			return true
		}
	}
	return false
}

func removeLabel(labels []string, name string) []string {
	out := labels[:0:0]
	for _, l := range labels {
		if l != name {
			out = append(out, l)
		}
	}
	return out
}
