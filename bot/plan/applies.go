package plan

import (
	"context"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// RefreshComment re-renders the PR's comment with its plans and applies;
// final is an apply job whose outcome the queue has not recorded yet (the run
// that just finished: the scheduler records it once the run returns), nil
// for none.
func (s *Planner) RefreshComment(ctx context.Context, gh ghapp.API, ref pullreq.Ref, final *applyqueue.Job) error {
	unlock := s.PRLocks.Lock(ref.Key())
	defer unlock()
	st, err := s.Records.PR(ctx, ref)
	if err != nil || st == nil {
		return err
	}
	plans, err := s.Records.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	jobs := s.appliesForPR(ctx, ref, final)
	if status := prreport.ApplyStatus(jobs, st.Waiting); status != "" {
		st.Status = status
	}
	return s.publishWith(ctx, gh, st, records.OrderPlans(plans, st.Projects), s.applySection(ctx, jobs, st.Waiting))
}

// renderApplies is the comment's Apply section: one line per apply job, and
// one per merged project that waits for `/shardgate apply <project>`.
func (s *Planner) renderApplies(ctx context.Context, st *records.PRState) string {
	return s.applySection(ctx, s.appliesForPR(ctx, st.Ref, nil), st.Waiting)
}

func (s *Planner) applySection(ctx context.Context, jobs []*applyqueue.Job, waiting []records.WaitingApply) string {
	return prreport.ApplySection(jobs, waiting, func(seq string) []applyqueue.Blocker {
		blockers, err := s.Applies.Blockers(ctx, seq)
		if err != nil {
			logctx.Logger(ctx).WithError(err).Warn("read what an apply waits behind")
		}
		return blockers
	})
}

// appliesForPR lists the PR's apply jobs, final in place of its stored copy;
// none when there is no queue or it cannot be read (logged).
func (s *Planner) appliesForPR(ctx context.Context, ref pullreq.Ref, final *applyqueue.Job) []*applyqueue.Job {
	if s.Applies == nil {
		return nil
	}
	jobs, err := s.Applies.ListForPR(ctx, ref)
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("list the pull request's applies")
		return nil
	}
	if final != nil {
		for i, j := range jobs {
			if j.Seq == final.Seq {
				jobs[i] = final
			}
		}
	}
	return jobs
}
