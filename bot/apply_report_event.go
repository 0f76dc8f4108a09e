package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/store"
)

// internalEvents are the events only shardgate queues (never taken from a
// delivery).
var internalEvents = []string{apply.EventReport}

// ApplyReport reports an apply's outcome that waited for GitHub's rate limit
// (apply.EventReport jobs): the check run, then the pull request's comment.
type ApplyReport struct{ *Base }

var _ webhook.EventHandler = (*ApplyReport)(nil)

// Handles implements webhook.EventHandler.
func (h *ApplyReport) Handles() []string { return internalEvents }

// Handle implements webhook.EventHandler. A limit met again postpones the
// job (the dispatcher's Wait); reporting twice changes nothing.
func (h *ApplyReport) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var rep apply.Report
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
