package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/endstate"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/terraform/runner"
)

// apply runs terraform apply of the saved plan of the merge commit. A state
// lock held by someone else is reported with its holder and waited out; it is
// never broken.
func (r *applyRun) apply(ctx context.Context, tj *runner.Job, current *planparse.ChangeSet) (applyqueue.State, string, bool) {
	if !ChangesAnything(current) {
		r.audit.TerraformOutcome = "nothing to apply: the state already holds the reviewed change"
		return "", "", true
	}
	// The one edit of the comment between the merge and the result: what
	// follows (convergence) shows there only once it takes progressEvery.
	r.progress(ctx, applyqueue.Applying, "terraform apply of the merge commit's plan, then the wait until the coordinator has converged")
	err := tj.Apply(ctx)
	r.recordBrokerCalls()
	if refusal, ok := r.brokerRefusal(); ok {
		// Whatever terraform made of the 403, the job stops here.
		r.audit.TerraformOutcome = "failed"
		return applyqueue.Failed, refusal, false
	}
	if err != nil {
		r.audit.TerraformOutcome = "failed"
		var stale *runner.StalePlanError
		if errors.As(err, &stale) {
			return applyqueue.Failed, "not applied: the Terraform state changed between plan and apply; retry with `/shardgate apply`", false
		}
		reason := "terraform apply failed: " + tj.Redact(err.Error())
		var af *runner.ApplyError
		if errors.As(err, &af) && strings.TrimSpace(af.Tail) != "" {
			reason += "\n" + tj.Redact(lastLines(af.Tail, 25))
		}
		return applyqueue.Failed, reason, false
	}
	r.audit.TerraformOutcome = "applied"
	return "", "", true
}

// converge waits until every stream the plan scaled is complete and safe.
func (r *applyRun) converge(ctx context.Context, current []planparse.Change) (applyqueue.State, string) {
	targets := endstate.ScaleTargets(current)
	if len(targets) == 0 {
		// Resumed after the apply: wait for the reviewed targets.
		targets = endstate.ScaleTargets(judgedChanges(r.reviewed.ChangeSet, r.reviewed.Decision))
	}
	start := r.s.Now()
	var done []string
	for _, stream := range r.job.Streams {
		target, ok := targets[stream]
		if !ok {
			continue
		}
		coordinator, prefix := planparse.SplitStreamKey(stream)
		client, err := r.s.Coords.Client(coordinator)
		if err != nil {
			return applyqueue.Failed, "applied, but " + err.Error()
		}
		r.step(ctx, applyqueue.Converging, fmt.Sprintf("waiting until stream `%s` is complete and safe at %d shards", prefix, target))
		wctx, cancel := context.WithTimeout(ctx, r.s.Config.ConvergeTimeout)
		// Convergence shows on the PR once it has taken progressEvery.
		last := r.s.Now()
		err = client.WaitConverged(wctx, prefix, target, func(st coord.ConvergenceStatus) {
			if r.s.Now().Sub(last) < r.s.ProgressEvery || st.Converged {
				return
			}
			last = r.s.Now()
			r.progress(ctx, applyqueue.Converging, fmt.Sprintf("stream `%s` → %d shards: %s", prefix, target, convergenceText(st)))
		})
		cancel()
		r.s.Metrics.ObserveConvergence(err, r.s.Now().Sub(start))
		if err != nil {
			if ctx.Err() != nil {
				return applyqueue.Converging, "interrupted"
			}
			var regressed *coord.MetadataRegressedError
			if errors.As(err, &regressed) {
				return applyqueue.Failed, fmt.Sprintf("applied, but stream %s's coordinator metadata went back while converging (%s): "+
					"Redis was probably restored from older data; stop admin changes to the stream and check the coordinator", prefix, report.FirstLine(err.Error()))
			}
			return applyqueue.Failed, fmt.Sprintf("applied, but stream %s did not converge within %s: %s", prefix, r.s.Config.ConvergeTimeout, report.FirstLine(err.Error()))
		}
		done = append(done, fmt.Sprintf("`%s` at %d shards", prefix, target))
	}
	r.audit.ConvergenceSeconds = r.s.Now().Sub(start).Seconds()
	if len(done) == 0 {
		return applyqueue.Applied, "applied; nothing to converge (no shard count changed)"
	}
	return applyqueue.Applied, fmt.Sprintf("applied and converged in %s: %s", r.s.Now().Sub(start).Round(time.Second), strings.Join(done, ", "))
}

func convergenceText(st coord.ConvergenceStatus) string {
	var parts []string
	for _, g := range st.Groups {
		state := string(g.MigrationState)
		if state == "" {
			state = "no active migration"
		}
		parts = append(parts, fmt.Sprintf("%s: %s, routing %d, %s", g.ConsumerGroup, state, g.RoutingShardCount, g.GroupState))
	}
	return strings.Join(parts, "; ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
