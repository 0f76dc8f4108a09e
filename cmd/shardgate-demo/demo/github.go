package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// jobTimeout bounds one webhook's job: a plan with the real terraform takes
// seconds, so minutes means something is stuck.
const jobTimeout = 3 * time.Minute

// deliver sends a signed webhook, as GitHub would, and waits until
// shardgate's job for it is done.
func (w *world) deliver(ctx context.Context, event string, body []byte) error {
	id, err := w.send(event, body)
	if err != nil {
		return err
	}
	return w.waitJob(ctx, event, id)
}

func (w *world) waitJob(ctx context.Context, event, id string) error {
	ctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		job, err := w.st.GetJob(ctx, id)
		if err == nil && job.State == store.JobDone {
			return nil
		}
		if err == nil && job.State == store.JobFailed {
			return fmt.Errorf("%w: shardgate's job for the %s webhook failed: %s", ErrUnexpected, event, job.LastError)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for shardgate's job for the %s webhook: %w", event, ctx.Err())
		case <-tick.C:
		}
	}
}

// comment is shardgate's comment on the pull request ("" before the first).
func (w *world) comment(number int) string {
	for _, c := range w.gh.Comments(owner, repoName, number) {
		if strings.HasPrefix(c.Body, prreport.CommentMarker) {
			return c.Body
		}
	}
	return ""
}

// shardgateComments counts shardgate's comments: the story expects one,
// edited in place.
func (w *world) shardgateComments(number int) int {
	n := 0
	for _, c := range w.gh.Comments(owner, repoName, number) {
		if strings.HasPrefix(c.Body, prreport.CommentMarker) {
			n++
		}
	}
	return n
}

// checkRun is the latest check run of that name on sha.
func (w *world) checkRun(name, sha string) (githubtest.CheckRun, bool) {
	var found githubtest.CheckRun
	ok := false
	for _, c := range w.gh.CheckRuns(owner, repoName) {
		if c.Name == name && c.HeadSHA == sha && (!ok || c.ID > found.ID) {
			found, ok = c, true
		}
	}
	return found, ok
}

// reactions are the reactions shardgate left on a comment.
func (w *world) reactions(commentID int64) []string {
	var out []string
	for _, r := range w.gh.Reactions(owner, repoName, commentID) {
		out = append(out, r.Content)
	}
	return out
}
