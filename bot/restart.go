package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// Texts of a plan check run a restart finishes.
const (
	restartedTitle   = "shardgate restarted before this finished"
	restartedSummary = "shardgate restarted before this plan finished; comment `/shardgate plan` on the pull request to plan again."
)

// finishAbandonedChecks completes the check runs an earlier process left in
// progress that nothing else will finish: a plan check whose job is neither
// queued nor running (a requeued job finishes its own), and an apply check
// whose apply job has finished (a running or resumable apply finishes its
// own when the scheduler resumes it). A check GitHub cannot be told about now
// stays recorded for the next start.
func (s *Server) finishAbandonedChecks(ctx context.Context) {
	checks := s.checks
	open, unreadable, err := checks.ListOpen(ctx, nil)
	if err != nil {
		s.log.WithError(err).Warn("list check runs left in progress")
		return
	}
	for _, key := range unreadable {
		s.log.WithField("key", key).Warn("drop an unreadable open check run record")
		if err := checks.Forget(ctx, key); err != nil {
			s.log.WithError(err).Warn("drop an unreadable open check run record")
		}
	}
	finished := 0
	for _, oc := range open {
		if ctx.Err() != nil {
			return
		}
		done, err := s.finishAbandoned(ctx, oc)
		if err != nil {
			s.log.WithError(err).WithFields(map[string]any{logctx.FieldRepo: oc.Ref.FullName(), logctx.FieldPR: oc.Ref.Number, "check": oc.Name}).
				Warn("finish a check run left in progress; trying again at the next start")
		}
		if done {
			finished++
		}
	}
	if finished > 0 {
		s.log.WithField("check_runs", finished).Warn("finished check runs left in progress by an earlier process")
	}
}

// finishAbandoned finishes one open check run if nothing else will; it holds
// the pull request's lock, so no plan of that PR runs meanwhile.
func (s *Server) finishAbandoned(ctx context.Context, seen prreport.OpenCheck) (bool, error) {
	unlock := s.prLocks.Lock(seen.Ref.Key())
	defer unlock()
	cur, err := s.checks.Open(ctx, seen.Key)
	if err != nil || cur == nil {
		return false, err // finished meanwhile
	}
	oc := *cur
	if strings.HasPrefix(oc.Name, prreport.CheckApplyPrefix) {
		return s.finishAbandonedApply(ctx, oc)
	}
	if oc.Job != "" {
		job, err := s.store.GetJob(ctx, oc.Job)
		switch {
		case err == nil && (job.State == store.JobQueued || job.State == store.JobRunning):
			return false, nil // the job plans again and finishes it
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return false, err
		}
	}
	title, summary := restartedTitle, restartedSummary
	return s.finishOpen(ctx, oc, "failure", &ghapp.CheckOutput{Title: title, Summary: summary})
}

// finishAbandonedApply finishes an apply check run whose apply job is over,
// with that job's outcome.
func (s *Server) finishAbandonedApply(ctx context.Context, oc prreport.OpenCheck) (bool, error) {
	jobs, err := s.applies.ListForPR(ctx, oc.Ref)
	if err != nil {
		return false, err
	}
	project := strings.TrimPrefix(oc.Name, prreport.CheckApplyPrefix)
	var last *applyqueue.Job
	for _, j := range jobs {
		if j.Project != project || j.MergeSHA != oc.SHA {
			continue
		}
		if !j.State.Finished() {
			return false, nil // the scheduler resumes it, and it finishes its check run
		}
		if last == nil || j.Seq > last.Seq {
			last = j
		}
	}
	state, reason := applyqueue.Failed, "shardgate restarted and holds no record of this apply; nothing was applied after the restart."
	if last != nil {
		state, reason = last.State, last.Reason
		if oc.ID == 0 {
			oc.ID = last.CheckRunID
		}
	}
	conclusion, out := prreport.ApplyCheckOutput(state == applyqueue.Applied, reason)
	return s.finishOpen(ctx, oc, conclusion, out)
}

// finishOpen completes an open check run; one whose creation never reached
// GitHub (no id, none found in progress) is only forgotten.
func (s *Server) finishOpen(ctx context.Context, oc prreport.OpenCheck, conclusion string, out *ghapp.CheckOutput) (bool, error) {
	gh, err := ghapp.APIFor(s.clients, oc.Ref.Installation)
	if err != nil {
		return false, err
	}
	if oc.ID == 0 {
		if oc.ID, err = s.checks.Find(ctx, gh, oc.Ref, oc.Name, oc.SHA, true); err != nil {
			return false, err
		}
		if oc.ID == 0 {
			return false, s.checks.Forget(ctx, oc.Key)
		}
	}
	if _, err := s.checks.Finish(ctx, gh, oc.Ref, oc.ID, oc.Name, oc.SHA, conclusion, out); err != nil {
		return false, err
	}
	return true, nil
}
