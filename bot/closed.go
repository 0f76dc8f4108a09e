package bot

import (
	"context"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/records"
)

// closed queues the applies of a merged pull request (in merge order) and
// notes on the comment that it was closed or merged.
func (s *Base) closed(ctx context.Context, ref pullreq.Ref, pr ghapp.PullRequest) error {
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	st, err := s.rec.PR(ctx, ref)
	if err != nil || st == nil || st.CommentID == 0 {
		return err // never planned: nothing to update
	}
	gh, err := ghapp.APIFor(s.clients, ref.Installation)
	if err != nil {
		return err
	}
	// The API's view is authoritative (default branch, merge commit, who merged).
	if fresh, err := gh.GetPullRequest(ctx, ref.Owner, ref.Repo, ref.Number); err == nil {
		pr = fresh
	} else {
		logctx.Logger(ctx).WithError(err).Warn("read the merged pull request; using the event's copy")
	}
	if pr.Merged {
		if err := s.applier.EnqueueApplies(ctx, gh, st, pr); err != nil {
			return err
		}
	} else {
		st.Status = "closed without merging."
	}
	plans, err := s.rec.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	return s.planner.Publish(ctx, gh, st, records.OrderPlans(plans, st.Projects))
}
