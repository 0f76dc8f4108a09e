package records

import (
	"context"
	"strconv"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
)

// bucketPlanCancels keeps, per pull request, its last `/shardgate cancel`.
const bucketPlanCancels = "plan_cancels"

// PlanCancel is a pull request's last `/shardgate cancel`: the plan jobs
// queued before it (a smaller job id) are not run when their turn comes,
// on any replica.
type PlanCancel struct {
	By string `json:"by"`
	// JobID is the queued job the command came in; "" when it came
	// outside one (then only the running plans were stopped).
	JobID string    `json:"job_id,omitempty"`
	At    time.Time `json:"at"`
}

// Covers says whether the cancel stops the job id: one queued before it.
// Job ids are the store's, given in arrival order (decimal numbers, zero
// padded or not); a job outside the queue ("") is never covered.
func (c *PlanCancel) Covers(jobID string) bool {
	if c == nil || c.JobID == "" || jobID == "" {
		return false
	}
	job, err1 := strconv.ParseUint(jobID, 10, 64)
	mark, err2 := strconv.ParseUint(c.JobID, 10, 64)
	return err1 == nil && err2 == nil && job < mark
}

// PlanCancel is the pull request's last cancel; nil when it has none.
func (r Store) PlanCancel(ctx context.Context, ref pullreq.Ref) (*PlanCancel, error) {
	return GetJSON[PlanCancel](ctx, r.st, bucketPlanCancels, ref.Key())
}

// PutPlanCancel records the pull request's cancel, in place of any earlier.
func (r Store) PutPlanCancel(ctx context.Context, ref pullreq.Ref, c PlanCancel) error {
	c.At = c.At.UTC()
	return PutJSON(ctx, r.st, bucketPlanCancels, ref.Key(), c)
}
