package apply

import (
	"context"
	"fmt"
	"os"

	"github.com/shardgate/shardgate/coord/coordbroker"
	"github.com/shardgate/shardgate/coord/traceability"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store/records"
)

// startBroker starts the apply's coordinator broker, read-only until the
// merge commit's plan is judged (judge), and returns the environment
// terraform gets for it. Terraform never holds a coordinator credential: the
// broker adds them to the calls the review judged. stop, when the broker
// refuses a call, ends the job: nothing after it runs blind.
func (r *applyRun) startBroker(ctx context.Context, stop func()) (map[string]string, error) {
	job := r.job
	b, err := coordbroker.Start(coordbroker.Config{
		Coordinators:    r.s.Coordinators,
		Egress:          r.s.Config.Egress,
		Output:          r.live,
		ReadOnly:        true,
		RequestIDPrefix: traceability.RequestIDPrefix(job.Ref, job.Seq),
		RequestedBy:     fmt.Sprintf("shardgate:%s#%d merged by %s", job.Ref.FullName(), job.Ref.Number, job.MergedBy),
		Reason:          fmt.Sprintf("apply %s of %s#%d", pullreq.ShortSHA(job.MergeSHA), job.Ref.FullName(), job.Ref.Number),
		OnRefuse: func(c coordbroker.Call) {
			logctx.Logger(ctx).WithField("call", c.Summary).Warn("the coordinator broker refused a call the review did not judge; the apply stops")
			stop()
		},
	})
	if err != nil {
		return nil, fmt.Errorf("start the coordinator broker: %w", err)
	}
	dir, err := os.MkdirTemp("", "shardgate-broker-")
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("start the coordinator broker: %w", err)
	}
	r.broker = b
	prev := r.cleanup
	r.cleanup = func() {
		_ = b.Close()
		_ = os.RemoveAll(dir)
		prev()
	}
	bundle, err := b.WriteCABundle(dir)
	if err != nil {
		return nil, err
	}
	return b.Env(bundle), nil
}

// brokerChanges is the judged change set as the broker allows it: per
// module change the create and scale at the desired count, a delete only
// when the policy let it through (a waived delete).
func brokerChanges(judged []planparse.Change) []coordbroker.Change {
	var out []coordbroker.Change
	for _, c := range judged {
		switch c.Action {
		case planparse.ActionNoop, planparse.ActionUnmanage, planparse.ActionMove:
			// Terraform makes no coordinator call for these: an unchanged
			// instance's count must not license a scale back to it.
			continue
		}
		bc := coordbroker.Change{Coordinator: c.Coordinator, StreamPrefix: c.StreamPrefix, ConsumerGroup: c.ConsumerGroup}
		switch {
		case c.Action == planparse.ActionDelete:
			bc.Action = coordbroker.Delete
		case c.ShardsAfter != nil && c.Action == planparse.ActionCreate:
			bc.Action, bc.Shards = coordbroker.Create, *c.ShardsAfter
		case c.ShardsAfter != nil:
			bc.Action, bc.Shards = coordbroker.Scale, *c.ShardsAfter
		default:
			continue
		}
		out = append(out, bc)
	}
	return out
}

// brokerRefusal is the failed apply's reason when the broker refused a call.
func (r *applyRun) brokerRefusal() (string, bool) {
	if r.broker == nil {
		return "", false
	}
	c, ok := r.broker.Refused()
	if !ok {
		return "", false
	}
	return coordbroker.RefusedError(c).Error(), true
}

// recordBrokerCalls lists the job's coordinator calls in its audit record:
// every mutation, the first reads, and the count of the others.
func (r *applyRun) recordBrokerCalls() {
	if r.broker == nil {
		return
	}
	r.audit.CoordinatorCalls, r.audit.RequestIDs = nil, nil
	r.audit.OmittedCoordinatorReads, r.audit.OmittedRefusedCalls = r.broker.OmittedReads(), r.broker.OmittedRefusals()
	for _, c := range r.broker.Calls() {
		r.audit.CoordinatorCalls = append(r.audit.CoordinatorCalls, records.CoordinatorCall{Method: c.Method, Path: c.Path,
			Status: c.Status, RequestID: c.RequestID, Allowed: c.Allowed, Summary: c.Summary, Reason: c.Reason})
		if c.RequestID != "" {
			r.audit.RequestIDs = append(r.audit.RequestIDs, c.RequestID)
		}
	}
}
