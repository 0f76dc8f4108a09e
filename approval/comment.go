package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/pullreq"
)

// prComment is a pull-request comment as GitHub has it now.
type prComment struct {
	id    int64
	actor string
	body  string
	// madeAt is when this version was written: the last edit, else the
	// creation (GitHub's time, whole seconds).
	madeAt time.Time
	edited bool
}

// readComment reads a comment back from GitHub. nil when it is gone, is not on
// this pull request (a delivery naming another issue's comment) or a bot's.
func readComment(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref, id int64) (*prComment, error) {
	c, err := gh.GetComment(ctx, ref.Owner, ref.Repo, id)
	switch {
	case errors.Is(err, ghapp.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read comment %d on %s: %w", id, ref, err)
	}
	log := logctx.Logger(ctx).WithField("comment_id", id)
	if !strings.HasSuffix(c.IssueURL, fmt.Sprintf("/issues/%d", ref.Number)) {
		log.Warn("the delivery names a comment of another issue; not run")
		return nil, nil
	}
	if c.Bot {
		return nil, nil
	}
	created := c.CreatedAt.UTC().Truncate(time.Second)
	made := c.UpdatedAt.UTC().Truncate(time.Second)
	if made.Before(created) {
		made = created
	}
	return &prComment{id: c.ID, actor: c.Author, body: c.Body, madeAt: made, edited: made.After(created)}, nil
}

// headWhen is the head commit an approval made at GitHub time t counts for,
// and the current head. It first updates the PR's head sightings from GitHub,
// so a push shardgate has not processed yet is known to follow t.
func (s *Planner) headWhen(ctx context.Context, ref pullreq.Ref, t time.Time) (head, current string, err error) {
	unlock := s.prLocks.lock(ref.Key())
	defer unlock()
	_, _, st, err := s.loadPR(ctx, ref)
	if err != nil {
		return "", "", err
	}
	if err := s.rec.PutPR(ctx, st); err != nil {
		return "", "", err
	}
	return st.HeadAt(t), st.HeadSHA, nil
}

// githubTime is GitHub's clock when it answered: the later of the answer's
// Date and the pull request's updated_at, whole seconds, or fallback when
// GitHub gave neither. A head first seen in that answer was pushed by then.
func githubTime(resp *github.Response, pr *github.PullRequest, fallback time.Time) time.Time {
	var t time.Time
	if resp != nil && resp.Response != nil {
		if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			t = d
		}
	}
	if u := pr.GetUpdatedAt().Time; u.After(t) {
		t = u
	}
	if t.IsZero() {
		t = fallback
	}
	return t.UTC().Truncate(time.Second)
}
