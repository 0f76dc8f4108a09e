package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// eventApplyReport is the event of the webhook-queue job that reports an
// apply's outcome GitHub's rate limit kept from being reported when the
// apply finished. GitHub sends no such event: intake does not take it.
const eventApplyReport = "shardgate_apply_report"

// applyReport is such a job's payload: what the apply's check run says, and
// its outcome. The job's other fields (and its sensitive values) are read
// from the apply queue when the report runs.
type applyReport struct {
	Seq        string             `json:"seq"`
	State      applyqueue.State   `json:"state"`
	Reason     string             `json:"reason"`
	CheckRunID int64              `json:"check_run_id,omitempty"`
	Conclusion string             `json:"conclusion"`
	Output     *ghapp.CheckOutput `json:"output,omitempty"`
}

// internalEvents are the events only shardgate queues (never taken from a
// delivery).
var internalEvents = []string{eventApplyReport}

// reportLater queues the report of a finished apply that GitHub's rate limit
// refused: the job waits in the webhook queue (persisted, postponed until
// the limit's reset like any job that meets it) and reports then. The apply
// itself is finished and is not run again.
func (r *applyRun) reportLater(ctx context.Context, conclusion string, out *ghapp.CheckOutput, cause error) {
	payload, err := json.Marshal(applyReport{Seq: r.job.Seq, State: r.job.State, Reason: r.job.Reason,
		CheckRunID: r.job.CheckRunID, Conclusion: conclusion, Output: out})
	if err == nil {
		ref := r.job.Ref
		err = r.s.queue.Enqueue(ctx, &store.Job{Kind: webhook.JobKindEvent, Event: eventApplyReport, Payload: payload,
			Installation: ref.Installation, Lane: ref.String()}, 0)
	}
	log := logctx.Logger(ctx).WithField("cause", cause.Error())
	if err != nil {
		log.WithError(err).Error("queue the apply's report for after GitHub's rate limit; it is not reported")
		return
	}
	r.s.notify()
	log.Warn("apply outcome not reported: GitHub's rate limit; it is reported once GitHub allows")
}

// ApplyReport reports an apply's outcome that waited for GitHub's rate limit
// (eventApplyReport jobs): the check run, then the pull request's comment.
type ApplyReport struct{ *Base }

var _ webhook.EventHandler = (*ApplyReport)(nil)

// Handles implements webhook.EventHandler.
func (h *ApplyReport) Handles() []string { return internalEvents }

// Handle implements webhook.EventHandler. A limit met again postpones the
// job (the dispatcher's Wait); reporting twice changes nothing.
func (h *ApplyReport) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var rep applyReport
	if err := json.Unmarshal(payload, &rep); err != nil {
		return fmt.Errorf("decode an apply report: %w", err)
	}
	job, err := h.applies.Get(ctx, rep.Seq)
	if errors.Is(err, store.ErrNotFound) {
		return nil // pruned: nothing left to report on
	}
	if err != nil {
		return err
	}
	ctx = withPR(ctx, job.Ref)
	if !job.State.Finished() {
		// The outcome is reported before the scheduler records it.
		job.State, job.Reason, job.Progress = rep.State, rep.Reason, ""
	}
	if job.CheckRunID == 0 {
		job.CheckRunID = rep.CheckRunID
	}
	gh, err := ghapp.APIFor(h.clients, job.Ref.Installation)
	if err != nil {
		return err
	}
	name := prreport.CheckApplyPrefix + job.Project
	if _, err := h.checks.Finish(ctx, gh, job.Ref, job.CheckRunID, name, job.MergeSHA, rep.Conclusion, rep.Output); err != nil {
		return err
	}
	return h.planner.RefreshComment(ctx, gh, job.Ref, job)
}

// waitForGitHub waits in place, holding the apply's lease and stream locks,
// while err is GitHub's rate limit (reading the merge commit met it): true
// once the limit has passed, false for any other error or when ctx ends.
// An apply is not failed for a limit, and its streams stay its own.
func (r *applyRun) waitForGitHub(ctx context.Context, err error) bool {
	until, limit, ok := ghapp.LimitWait(err, r.s.now())
	if !ok {
		return false
	}
	logctx.Logger(ctx).WithFields(logrus.Fields{"limit": "github " + limit + " rate limit", "until": until.UTC().Format(time.RFC3339)}).
		Warn("apply waits for GitHub's rate limit; it continues then")
	r.progress(ctx, r.job.State, "waiting for GitHub's "+limit+" rate limit until "+until.UTC().Format("15:04:05")+" UTC")
	wait := time.NewTimer(max(until.Sub(r.s.now()), 100*time.Millisecond))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wait.C:
		return true
	}
}
