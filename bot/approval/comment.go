package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
)

// Comment is a pull-request comment as GitHub has it now: the text an
// approval (an attestation) is given in.
type Comment struct {
	ID    int64
	Actor string
	Body  string
	// MadeAt is when this version was written: the last edit, else the
	// creation (GitHub's time, whole seconds).
	MadeAt time.Time
}

// ReadComment reads a comment back from GitHub. nil when it is gone, is not on
// this pull request (a delivery naming another issue's comment) or a bot's.
func ReadComment(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref, id int64) (*Comment, error) {
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
	return &Comment{ID: c.ID, Actor: c.Author, Body: c.Body, MadeAt: made}, nil
}
