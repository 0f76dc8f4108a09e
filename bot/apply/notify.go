package apply

import (
	"context"
	"fmt"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// notifyOutcome emits apply_succeeded or apply_failed for the job's end, once
// per attempt whichever process records it (the key is the attempt). It is
// called once the outcome is recorded, so a process that lost the job emits
// nothing; it stores the event and returns, never waiting on a receiver.
func (r *applyRun) notifyOutcome(ctx context.Context, state applyqueue.State, reason string) {
	if r.s.Notifier == nil {
		return
	}
	job := r.job
	event := serverconfig.EventApplyFailed
	if state == applyqueue.Applied {
		event = serverconfig.EventApplySucceeded
	}
	repo := job.Ref.Owner + "/" + job.Ref.Repo
	r.s.Notifier.Emit(ctx, fmt.Sprintf("apply %s/%d", job.Seq, job.Attempt), notify.Event{
		Event: event, Repository: repo, PullRequest: notify.PR(job.Ref.Number), Project: job.Project, SHA: job.MergeSHA,
		// The reason as the check run shows it: the plan's sensitive values
		// hidden; Emit redacts the server's secrets.
		Summary: report.Hide(job.Sensitive, reason),
		URL:     notify.PullURL(notify.WebURL(r.s.Config.GitHubAPIURL), repo, job.Ref.Number),
		At:      r.s.Now().UTC(),
	})
}
