package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/endstate"
	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/records"
)

// enqueueApplies turns a merge into one apply job per project whose reviewed
// plan changes the coordinator, in merge order. A redelivered merge adds nothing.
func (s *Applier) enqueueApplies(ctx context.Context, gh ghapp.API, st *records.PRState, pr ghapp.PullRequest) error {
	if def := pr.DefaultBranch; def != "" && pr.BaseRef != def {
		st.Status = fmt.Sprintf("merged into `%s`, not the default branch `%s`: shardgate applies merges into the default branch only.", pr.BaseRef, def)
		return nil
	}
	reviewed := pr.HeadSHA
	plans, err := s.rec.Plans(ctx, st.Ref, reviewed)
	if err != nil {
		return err
	}
	existing, err := s.applies.ListForPR(ctx, st.Ref)
	if err != nil {
		return err
	}
	queued := 0
	for _, p := range orderPlans(plans, st.Projects) {
		if p.ChangeSet == nil || len(endstate.Streams(p.ChangeSet)) == 0 {
			continue
		}
		if hasApply(existing, p.Project, pr.MergeSHA) {
			continue
		}
		job := &applyqueue.Job{Ref: st.Ref, Project: p.Project, Streams: endstate.Streams(p.ChangeSet), ReviewedSHA: reviewed,
			Sensitive: p.ChangeSet.SensitiveValues(),
			MergeSHA:  pr.MergeSHA, MergedBy: pr.MergedBy}
		if err := s.applies.Enqueue(ctx, job); errors.Is(err, applyqueue.ErrApplyExists) {
			continue // a redelivered or re-run merge event: already queued
		} else if err != nil {
			return err
		}
		queued++
	}
	switch {
	case len(plans) == 0:
		st.Status = "merged, but shardgate never planned the merged head commit: nothing to apply."
	case queued == 0 && len(existing) == 0:
		st.Status = "merged; no coordinator changes to apply."
	default:
		st.Status = fmt.Sprintf("merged by %s; applying in merge order, one stream at a time.", pr.MergedBy)
	}
	s.scheduler.Notify()
	return nil
}

func hasApply(jobs []*applyqueue.Job, project, mergeSHA string) bool {
	for _, j := range jobs {
		if j.Project == project && j.MergeSHA == mergeSHA {
			return true
		}
	}
	return false
}
