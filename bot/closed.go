package bot

import (
	"context"

	"github.com/google/go-github/v60/github"
)

// closed notes on the comment that the pull request was closed or merged.
func (s *Server) closed(ctx context.Context, ref PRRef, pr *github.PullRequest) error {
	unlock := s.prLocks.lock(ref.Key())
	defer unlock()
	st, err := s.rec.pr(ctx, ref)
	if err != nil || st == nil || st.CommentID == 0 {
		return err // never planned: nothing to update
	}
	gh, err := s.clients.NewInstallationClient(ref.Installation)
	if err != nil {
		return err
	}
	if pr.GetMerged() {
		st.Status = "merged; shardgate does not apply merged plans yet: apply them as you do today."
	} else {
		st.Status = "closed without merging."
	}
	plans, err := s.rec.plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	return s.publish(ctx, gh, st, orderPlans(plans, st.Projects))
}
