package apply

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// EventReport is the event of the webhook-queue job that reports an
// apply's outcome GitHub's rate limit kept from being reported when the
// apply finished. GitHub sends no such event: intake does not take it.
const EventReport = "shardgate_apply_report"

// Report is such a job's payload: what the apply's check run says, and
// its outcome. The job's other fields (and its sensitive values) are read
// from the apply queue when the report runs.
type Report struct {
	Seq        string             `json:"seq"`
	State      applyqueue.State   `json:"state"`
	Reason     string             `json:"reason"`
	CheckRunID int64              `json:"check_run_id,omitempty"`
	Conclusion string             `json:"conclusion"`
	Output     *ghapp.CheckOutput `json:"output,omitempty"`
}

// reportLater queues the report of a finished apply that GitHub's rate limit
// refused: the job waits in the webhook queue (persisted, postponed until
// the limit's reset like any job that meets it) and reports then. The apply
// itself is finished and is not run again.
func (r *applyRun) reportLater(ctx context.Context, conclusion string, out *ghapp.CheckOutput, cause error) {
	payload, err := json.Marshal(Report{Seq: r.job.Seq, State: r.job.State, Reason: r.job.Reason,
		CheckRunID: r.job.CheckRunID, Conclusion: conclusion, Output: out})
	if err == nil {
		ref := r.job.Ref
		err = r.s.Queue.Enqueue(ctx, &store.Job{Kind: webhook.JobKindEvent, Event: EventReport, Payload: payload,
			Installation: ref.Installation, Lane: ref.String()}, 0)
	}
	log := logctx.Logger(ctx).WithField("cause", cause.Error())
	if err != nil {
		log.WithError(err).Error("queue the apply's report for after GitHub's rate limit; it is not reported")
		return
	}
	r.s.Notify()
	log.Warn("apply outcome not reported: GitHub's rate limit; it is reported once GitHub allows")
}

// waitForGitHub waits in place, holding the apply's lease and stream locks,
// while err is GitHub's rate limit (reading the merge commit met it): true
// once the limit has passed, false for any other error or when ctx ends.
// An apply is not failed for a limit, and its streams stay its own.
func (r *applyRun) waitForGitHub(ctx context.Context, err error) bool {
	until, limit, ok := ghapp.LimitWait(err, r.s.Now())
	if !ok {
		return false
	}
	logctx.Logger(ctx).WithFields(logrus.Fields{"limit": "github " + limit + " rate limit", "until": until.UTC().Format(time.RFC3339)}).
		Warn("apply waits for GitHub's rate limit; it continues then")
	r.progress(ctx, r.job.State, "waiting for GitHub's "+limit+" rate limit until "+until.UTC().Format("15:04:05")+" UTC")
	wait := time.NewTimer(max(until.Sub(r.s.Now()), 100*time.Millisecond))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wait.C:
		return true
	}
}
