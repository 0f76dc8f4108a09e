package apply

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/endstate"
	"github.com/shardgate/shardgate/internal/retry"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// preflight checks the attestations and the coordinator before anything runs.
func (r *applyRun) preflight(ctx context.Context) (applyqueue.State, string, bool) {
	r.step(ctx, applyqueue.Preflight, "checking the coordinator and the attestations")
	if reason, ok := r.waitAttestations(ctx); !ok {
		return applyqueue.Failed, reason, false
	}
	targets := endstate.ScaleTargets(judgedChanges(r.reviewed.ChangeSet, r.reviewed.Decision))
	for _, stream := range r.job.Streams {
		target, ok := targets[stream]
		if !ok {
			continue // unmanage/delete only: nothing to scale
		}
		coordinator, prefix := planparse.SplitStreamKey(stream)
		client, err := r.s.Coords.Client(coordinator)
		if err != nil {
			return applyqueue.Failed, err.Error(), false
		}
		deadline := r.s.Now().Add(r.s.PreflightWait)
		for {
			res, err := client.Preflight(ctx, prefix, target)
			if err != nil {
				return applyqueue.Failed, "pre-flight: the coordinator could not be read: " + report.FirstLine(err.Error()), false
			}
			if res.OK() {
				break
			}
			waitable := true
			for _, f := range res.Blocking() {
				if f.Kind != coord.FindingActiveMigration {
					waitable = false
				}
			}
			if r.resuming && waitable {
				break // our own scale's migration, from before the crash: converge will wait for it
			}
			if !waitable {
				return applyqueue.Failed, "pre-flight refused: " + res.Summary(), false
			}
			if r.s.Now().After(deadline) {
				return applyqueue.Failed, fmt.Sprintf("pre-flight: stream %s still has an active migration after %s: %s", prefix, r.s.PreflightWait, res.Summary()), false
			}
			r.progress(ctx, applyqueue.Preflight, "waiting: "+res.Summary())
			if err := retry.Sleep(ctx, r.s.Poll); err != nil {
				return applyqueue.Failed, "interrupted", false
			}
		}
	}
	return "", "", true
}

// waitAttestations makes sure every attestation the review relied on is still
// fresh; an expired one is asked for again on the PR, and waited for.
func (r *applyRun) waitAttestations(ctx context.Context) (string, bool) {
	deadline := r.s.Now().Add(r.s.AttestationWait)
	for {
		var expired []string
		atts, err := r.s.Records.Attestations(ctx, r.job.Ref, r.job.ReviewedSHA)
		if err != nil {
			return "store: " + err.Error(), false
		}
		for _, used := range r.reviewed.Decision.AttestationsUsed {
			if !freshAttestation(atts, used.StreamPrefix, r.s.Now()) {
				expired = append(expired, used.StreamPrefix)
			}
		}
		if len(expired) == 0 {
			return "", true
		}
		if r.s.Now().After(deadline) {
			return fmt.Sprintf("the producer-quiesce attestation for %s expired and no fresh one came within %s", strings.Join(expired, ", "), r.s.AttestationWait), false
		}
		var cmds []string
		for _, p := range expired {
			cmds = append(cmds, "`/shardgate attest quiesce "+p+"`")
		}
		r.progress(ctx, applyqueue.Preflight, "waiting for a fresh producer-quiesce attestation: the one given at review has expired; an approver comments "+strings.Join(cmds, " and ")+" once producers are paused again")
		if err := retry.Sleep(ctx, r.s.Poll); err != nil {
			return "interrupted", false
		}
	}
}

func freshAttestation(atts []policy.Attestation, stream string, now time.Time) bool {
	for _, a := range atts {
		if a.StreamPrefix == stream && a.ExpiresAt.After(now) {
			return true
		}
	}
	return false
}
