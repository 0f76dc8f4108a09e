// Package prreport is what shardgate shows on a pull request: its one
// comment (rendered with the budget of GitHub's limit shared among the
// projects, found by its marker and edited in place), replies to commands
// (posted once), and check runs (created once, found by external id,
// superseded by a push, finished; the open ones remembered in the store so a
// restart finishes what a dead process left). Everything posted is redacted.
package prreport

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/store/records"
)

// CommentMarker is the hidden first line of shardgate's one comment per PR.
const CommentMarker = "<!-- shardgate -->"

// Comments posts shardgate's comment and its replies, redacted.
type Comments struct{ redact *redact.Redactor }

// NewComments posts comments redacted by r.
func NewComments(r *redact.Redactor) *Comments { return &Comments{redact: r} }

// Upsert edits shardgate's comment on the PR in place, creating it the
// first time. The comment is found by id, else by its marker among the PR's
// comments written by a bot, so a lost id — or a creation whose answer was
// lost, retried with its job — never leads to a second comment. The body is
// redacted.
func (s *Comments) Upsert(ctx context.Context, gh ghapp.Comments, st *records.PRState, body string) error {
	body = s.redact.Redact(body)
	ref := st.Ref
	if st.CommentID != 0 {
		err := gh.EditComment(ctx, ref.Owner, ref.Repo, st.CommentID, body)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ghapp.ErrNotFound) {
			return fmt.Errorf("edit comment on %s: %w", ref, err)
		}
		st.CommentID = 0 // deleted by someone: find or create again
	}
	id, err := findComment(ctx, gh, ref)
	if err != nil {
		return err
	}
	if id != 0 {
		if err := gh.EditComment(ctx, ref.Owner, ref.Repo, id, body); err != nil {
			return fmt.Errorf("edit comment on %s: %w", ref, err)
		}
		st.CommentID = id
		return nil
	}
	id, err = gh.CreateComment(ctx, ref.Owner, ref.Repo, ref.Number, body)
	if err != nil {
		return fmt.Errorf("create comment on %s: %w", ref, err)
	}
	st.CommentID = id
	return nil
}

// Reply answers a command comment once. The reply starts with a hidden marker
// naming the comment and the answer, so a job retried after a creation whose
// answer was lost finds its reply instead of posting it again. The body is
// redacted.
func (s *Comments) Reply(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref, commentID int64, text string) error {
	sum := sha256.Sum256([]byte(text))
	marker := fmt.Sprintf("<!-- shardgate:reply %d %x -->", commentID, sum[:8])
	id, err := findMarked(ctx, gh, ref, marker)
	if err != nil || id != 0 {
		return err
	}
	body := s.redact.Redact(marker + "\n" + text)
	if _, err := gh.CreateComment(ctx, ref.Owner, ref.Repo, ref.Number, body); err != nil {
		return fmt.Errorf("reply on %s: %w", ref, err)
	}
	return nil
}

func findComment(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref) (int64, error) {
	return findMarked(ctx, gh, ref, CommentMarker)
}

// findMarked returns the first comment of a bot on the PR that starts with
// marker; 0 when there is none.
func findMarked(ctx context.Context, gh ghapp.Comments, ref pullreq.Ref, marker string) (int64, error) {
	page := 0
	for read := 0; read < 50; read++ {
		comments, err := gh.ListComments(ctx, ref.Owner, ref.Repo, ref.Number, page)
		if err != nil {
			return 0, fmt.Errorf("list comments of %s: %w", ref, err)
		}
		for _, c := range comments.Items {
			if strings.HasPrefix(c.Body, marker) && c.Bot {
				return c.ID, nil
			}
		}
		if comments.Next == 0 {
			break
		}
		page = comments.Next
	}
	return 0, nil
}
