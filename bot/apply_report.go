package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/prreport"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/records"
	"github.com/shardgate/shardgate/report"
)

// progress records the job's step and detail and shows them on the PR. Errors
// here never stop an apply: they are logged.
func (r *applyRun) progress(ctx context.Context, state applyqueue.State, detail string) {
	r.job.State, r.job.Progress = state, detail
	err := r.s.applies.Update(ctx, r.job.Seq, func(j *applyqueue.Job) error {
		j.State, j.Progress = state, detail
		return nil
	})
	if errors.Is(err, applyqueue.ErrNotHolder) {
		logctx.Logger(ctx).WithError(err).Error("apply progress refused: this process no longer holds the job")
		return
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("record apply progress")
	}
	if err := r.s.pr.refreshComment(ctx, r.gh, r.job.Ref); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("show apply progress on the PR")
	}
}

// startCheck opens the apply check run on the merge commit.
func (r *applyRun) startCheck(ctx context.Context) {
	if r.job.CheckRunID != 0 {
		return
	}
	if err := r.s.applies.Fenced(ctx, r.job.Seq); err != nil {
		logctx.Logger(ctx).WithError(err).Error("apply check run not created: this process no longer holds the job")
		return
	}
	id, err := r.s.checks.Start(ctx, ghapp.FromClient(r.gh), r.job.Ref, prreport.CheckApplyPrefix+r.job.Project, r.job.MergeSHA)
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("create the apply check run")
		return
	}
	r.job.CheckRunID = id
	_ = r.s.applies.Update(ctx, r.job.Seq, func(j *applyqueue.Job) error { j.CheckRunID = id; return nil })
}

// finish completes the check run, writes the audit record and shows the outcome.
func (r *applyRun) finish(ctx context.Context, state applyqueue.State, reason string) {
	reason = r.s.redact.Redact(reason) // stored in the audit record, shown on GitHub
	r.job.State, r.job.Reason, r.job.Progress = state, reason, ""
	r.audit.Outcome, r.audit.Reason, r.audit.FinishedAt = string(state), reason, r.s.now().UTC()
	r.s.metrics.ObserveApply(string(state), r.s.now().Sub(r.started))
	// The audit record is written only while this process holds the job
	// (its fencing token checked in the same transaction): a process that
	// lost it reports nothing, here or on GitHub.
	raw, err := json.Marshal(r.audit)
	if err == nil {
		err = r.s.applies.PutFenced(ctx, r.job.Seq, records.BucketAudit, records.AuditKey(r.job.Seq, r.job.Attempt), raw)
	}
	if errors.Is(err, applyqueue.ErrNotHolder) {
		logctx.Logger(ctx).WithError(err).Error("apply outcome not recorded nor reported: this process no longer holds the job")
		return
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Error("write the apply audit record")
	}
	if r.gh == nil {
		return
	}
	// The scheduler records the outcome (Finish) once this run returns; the
	// comment shows it already, from this run's own copy of the job.
	final := *r.job
	defer func() {
		if err := r.s.pr.refreshComment(withFinal(ctx, &final), r.gh, r.job.Ref); err != nil {
			logctx.Logger(ctx).WithError(err).Warn("show the apply outcome on the PR")
		}
	}()
	conclusion, out := prreport.ApplyCheckOutput(state == applyqueue.Applied, report.Hide(r.job.Sensitive, reason))
	if _, err := r.s.checks.Finish(ctx, ghapp.FromClient(r.gh), r.job.Ref, r.job.CheckRunID, prreport.CheckApplyPrefix+r.job.Project, r.job.MergeSHA, conclusion, out); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("complete the apply check run")
	}
}

type finalKey struct{}

// withFinal carries the outcome of an apply job that the queue has not recorded yet.
func withFinal(ctx context.Context, j *applyqueue.Job) context.Context {
	return context.WithValue(ctx, finalKey{}, j)
}

// refreshComment re-renders the PR's comment with its plans and applies.
func (s *Planner) refreshComment(ctx context.Context, gh *github.Client, ref pullreq.Ref) error {
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	st, err := s.rec.PR(ctx, ref)
	if err != nil || st == nil {
		return err
	}
	plans, err := s.rec.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	if status := s.applyStatus(ctx, ref); status != "" {
		st.Status = status
	}
	return s.publish(ctx, gh, st, orderPlans(plans, st.Projects))
}

// applyStatus summarises the PR's applies once they have all finished.
func (s *Planner) applyStatus(ctx context.Context, ref pullreq.Ref) string {
	jobs, err := s.appliesForPR(ctx, ref)
	if err != nil || len(jobs) == 0 {
		return ""
	}
	applied, failed := 0, 0
	for _, j := range jobs {
		switch {
		case j.State == applyqueue.Applied:
			applied++
		case j.State == applyqueue.Failed:
			failed++
		default:
			return ""
		}
	}
	if failed > 0 {
		return fmt.Sprintf("merged; **not applied** (%d of %d projects failed; see Apply below).", failed, len(jobs))
	}
	return fmt.Sprintf("merged and applied (%s); the coordinator has converged.", plural(applied, "project"))
}

// renderApplies is the comment's Apply section: one line per apply job.
func (s *Planner) renderApplies(ctx context.Context, ref pullreq.Ref) string {
	if s.applies == nil {
		return ""
	}
	jobs, err := s.appliesForPR(ctx, ref)
	if err != nil || len(jobs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Apply\n\n| Project | State | Detail |\n|---|---|---|\n")
	for _, j := range jobs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", report.Code(j.Project), applyStateText(j.State), s.applyDetail(ctx, j))
	}
	return b.String()
}

func applyStateText(st applyqueue.State) string {
	switch st {
	case applyqueue.Applied:
		return "✅ applied"
	case applyqueue.Failed:
		return "❌ not applied"
	case applyqueue.Queued:
		return "⏳ queued"
	}
	return "🔄 " + string(st)
}

func (s *Planner) applyDetail(ctx context.Context, j *applyqueue.Job) string {
	return report.Hide(j.Sensitive, s.applyDetailText(ctx, j))
}

func (s *Planner) applyDetailText(ctx context.Context, j *applyqueue.Job) string {
	switch {
	case j.State == applyqueue.Failed:
		return report.Escape(oneLine(j.Reason)) + " An approver can retry with `/shardgate apply`."
	case j.State == applyqueue.Applied:
		return report.Escape(oneLine(j.Reason))
	case j.State == applyqueue.Queued:
		blockers, err := s.applies.Blockers(ctx, j.Seq)
		if err != nil || len(blockers) == 0 {
			return "starting"
		}
		var parts []string
		for _, b := range blockers {
			_, prefix := planparse.SplitStreamKey(b.Stream)
			parts = append(parts, fmt.Sprintf("waiting behind #%d (%s) on stream %s", b.Ref.Number, report.Code(b.Project), report.Code(prefix)))
		}
		return strings.Join(parts, "; ")
	}
	return report.Escape(oneLine(j.Progress))
}

// appliesForPR lists the PR's apply jobs, with a just-finished run's outcome.
func (s *Planner) appliesForPR(ctx context.Context, ref pullreq.Ref) ([]*applyqueue.Job, error) {
	jobs, err := s.applies.ListForPR(ctx, ref)
	if err != nil {
		return nil, err
	}
	if final, ok := ctx.Value(finalKey{}).(*applyqueue.Job); ok {
		for i, j := range jobs {
			if j.Seq == final.Seq {
				jobs[i] = final
			}
		}
	}
	return jobs, nil
}
