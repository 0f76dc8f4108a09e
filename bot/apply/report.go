package apply

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// step records the job's step and detail in the queue (the status page shows
// it) without editing the PR's comment: the routine steps of an apply
// (pre-flight checks, the re-plan, the wait for convergence) pass unshown,
// and the comment's next edit shows where the job is then. Each edit of the
// comment is a write GitHub's secondary limits count.
func (r *applyRun) step(ctx context.Context, state applyqueue.State, detail string) {
	r.record(ctx, state, detail)
}

// progress records the job's step and detail and shows them on the PR: the
// terraform apply starting, and waits a user should know about (an
// attestation, the coordinator, a state lock, slow convergence). Errors here
// never stop an apply: they are logged.
func (r *applyRun) progress(ctx context.Context, state applyqueue.State, detail string) {
	if !r.record(ctx, state, detail) {
		return
	}
	if err := r.s.PR.RefreshComment(ctx, r.gh, r.job.Ref, nil); err != nil {
		logctx.Logger(ctx).WithError(err).Warn("show apply progress on the PR")
	}
}

// record keeps the job's step and detail in the queue; false when this
// process no longer holds the job (then it shows nothing either).
func (r *applyRun) record(ctx context.Context, state applyqueue.State, detail string) bool {
	r.job.State, r.job.Progress = state, detail
	err := r.s.Applies.Update(ctx, r.job.Seq, func(j *applyqueue.Job) error {
		j.State, j.Progress = state, detail
		return nil
	})
	if errors.Is(err, applyqueue.ErrNotHolder) {
		logctx.Logger(ctx).WithError(err).Error("apply progress refused: this process no longer holds the job")
		return false
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("record apply progress")
	}
	return true
}

// startCheck opens the apply check run on the merge commit.
func (r *applyRun) startCheck(ctx context.Context) {
	if r.job.CheckRunID != 0 {
		return
	}
	if err := r.s.Applies.Fenced(ctx, r.job.Seq); err != nil {
		logctx.Logger(ctx).WithError(err).Error("apply check run not created: this process no longer holds the job")
		return
	}
	id, err := r.s.Checks.Start(ctx, r.gh, r.job.Ref, prreport.CheckApplyPrefix+r.job.Project, r.job.MergeSHA)
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("create the apply check run")
		return
	}
	r.job.CheckRunID = id
	if err := r.s.Applies.Update(ctx, r.job.Seq, func(j *applyqueue.Job) error { j.CheckRunID = id; return nil }); err != nil {
		// A later attempt finds the run by its external id instead.
		logctx.Logger(ctx).WithError(err).Warn("record the apply check run's id")
	}
}

// finish completes the check run, writes the audit record and shows the outcome.
func (r *applyRun) finish(ctx context.Context, state applyqueue.State, reason string) {
	reason = r.s.Redact.Redact(reason) // stored in the audit record, shown on GitHub
	r.recordBrokerCalls()
	r.job.State, r.job.Reason, r.job.Progress = state, reason, ""
	r.audit.Outcome, r.audit.Reason, r.audit.FinishedAt = string(state), reason, r.s.Now().UTC()
	r.s.Metrics.ObserveApply(string(state), r.s.Now().Sub(r.started))
	// The audit record is written only while this process holds the job
	// (its fencing token checked in the same transaction): a process that
	// lost it reports nothing, here or on GitHub.
	raw, err := json.Marshal(r.audit)
	if err == nil {
		err = r.s.Applies.PutFenced(ctx, r.job.Seq, records.BucketAudit, records.AuditKey(r.job.Seq, r.job.Attempt), raw)
	}
	if errors.Is(err, applyqueue.ErrNotHolder) {
		logctx.Logger(ctx).WithError(err).Error("apply outcome not recorded nor reported: this process no longer holds the job")
		return
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Error("write the apply audit record")
	}
	r.notifyOutcome(ctx, state, reason)
	if r.gh == nil {
		return
	}
	// The scheduler records the outcome (Finish) once this run returns; the
	// comment shows it already, from this run's own copy of the job.
	final := *r.job
	conclusion, out := prreport.ApplyCheckOutput(state == applyqueue.Applied, report.Hide(r.job.Sensitive, reason))
	_, err = r.s.Checks.Finish(ctx, r.gh, r.job.Ref, r.job.CheckRunID, prreport.CheckApplyPrefix+r.job.Project, r.job.MergeSHA, conclusion, out)
	if limited(err) {
		r.reportLater(ctx, conclusion, out, err)
		return
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("complete the apply check run")
	}
	err = r.s.PR.RefreshComment(ctx, r.gh, r.job.Ref, &final)
	if limited(err) {
		r.reportLater(ctx, conclusion, out, err)
		return
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("show the apply outcome on the PR")
	}
}

// limited says whether err is GitHub's rate limit (or shardgate holding a
// request back for it).
func limited(err error) bool {
	if err == nil {
		return false
	}
	return ghapp.IsLimit(err)
}
