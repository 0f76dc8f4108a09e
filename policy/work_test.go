package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// instancesChangeSet is the change set planparse makes of planparsetest's plan for
// the instances, built directly: a 50,000-instance plan is 150 MB of JSON.
func instancesChangeSet(ins []planparsetest.Instance) *planparse.ChangeSet {
	coordinator := planparse.NormalizeURL(planparsetest.CoordinatorURL)
	cs := &planparse.ChangeSet{FormatVersion: "1.2", TerraformVersion: planparsetest.TerraformVersion}
	for _, in := range ins {
		c := planparse.Change{
			Address: in.Address(), Kind: planparse.KindModule, StreamPrefix: in.StreamPrefix, ConsumerGroup: in.ConsumerGroup,
			CoordinatorURL: planparsetest.CoordinatorURL, Coordinator: coordinator,
			Stream: planparse.StreamKey(coordinator, in.StreamPrefix),
			Action: planparse.ActionNoop, ShardsBefore: intp(in.ShardsBefore), ShardsAfter: intp(in.ShardsAfter),
			PriorShards: intp(in.ShardsBefore), TerraformActions: []string{"no-op"},
		}
		switch {
		case in.Removed:
			c.Action, c.ShardsAfter, c.ActionReason = planparse.ActionUnmanage, nil, "delete_because_no_module"
			c.TerraformActions = []string{"delete"}
		case in.ShardsAfter != in.ShardsBefore:
			c.Action, c.ActionReason = planparse.ActionScale, "replace_because_cannot_update"
			c.TerraformActions = []string{"delete", "create"}
		}
		cs.Changes = append(cs.Changes, c)
		if !in.Removed {
			cs.Desired = append(cs.Desired, planparse.Desired{
				Address: c.Address, StreamPrefix: c.StreamPrefix, ConsumerGroup: c.ConsumerGroup,
				Coordinator: coordinator, Stream: c.Stream, ShardCount: in.ShardsAfter,
			})
		}
	}
	return cs
}

// deniedRequest is a plan that many rules deny, 10% of the prefixes scaled and
// 1% of the instances removed, with live state for every changed group and no
// attestation.
func deniedRequest(instances int) Request {
	req := benchRequest(instancesChangeSet(planparsetest.Instances(instances, 10, 1)))
	req.Attestations = nil
	return req
}

// busyRequest is deniedRequest with every other kind of finding too, for one in
// a hundred changes of an action: tainted retries from an unknown count, drifted unchanged
// instances, invalid counts, destroyed other resources, and an incomplete plan.
func busyRequest(instances int) Request {
	req := deniedRequest(instances)
	cs := req.ChangeSet
	cs.Incomplete = true
	seen := map[planparse.Action]int{}
	for i := range cs.Changes {
		c := &cs.Changes[i]
		seen[c.Action]++
		if seen[c.Action]%100 != 50 {
			continue
		}
		switch c.Action {
		case planparse.ActionScale:
			c.Tainted, c.ShardsBefore, c.ActionReason = true, nil, "replace_because_tainted"
			s := req.Live[c.Stream]
			s.Groups = slices.DeleteFunc(slices.Clone(s.Groups), func(g LiveGroup) bool { return g.ConsumerGroup == c.ConsumerGroup })
			req.Live[c.Stream] = s
		case planparse.ActionNoop:
			s := req.Live[c.Stream]
			s.Coordinator, s.StreamPrefix = c.Coordinator, c.StreamPrefix
			s.Groups = append(slices.Clone(s.Groups), LiveGroup{ConsumerGroup: c.ConsumerGroup, ShardCount: *c.ShardsAfter + 1, State: "STABLE", LiveMembers: 1})
			req.Live[c.Stream] = s
		}
		cs.OtherChanges = append(cs.OtherChanges, planparse.OtherChange{Address: fmt.Sprintf("aws_s3_bucket.b%d", i), Type: "aws_s3_bucket", Actions: []string{"delete"}})
	}
	for i := range instances / 1000 {
		c := planparse.Change{
			Address: fmt.Sprintf("module.bad[%d].terraform_data.stream_group", i), Kind: planparse.KindModule,
			StreamPrefix: fmt.Sprintf("bad-%d", i), ConsumerGroup: "g", Stream: fmt.Sprintf("bad-%d", i),
			Action: planparse.ActionCreate, InvalidShardCount: "4.5",
		}
		cs.Changes = append(cs.Changes, c)
	}
	return req
}

// evalWork is how many evaluation steps OPA counts for one evaluation: the
// number of plug, resolve, rule-index and built-in operations (the counts of
// its timer histograms, not their times) plus its cache counters. Unlike a
// clock it does not depend on what else the machine runs.
func evalWork(t *testing.T, e *Engine, req Request) (int64, Decision) {
	t.Helper()
	m := metrics.New()
	d, err := e.evaluate(context.Background(), req, rego.EvalMetrics(m), rego.EvalInstrument(true))
	require.NoError(t, err)
	var work int64
	for name, v := range m.All() {
		switch {
		case strings.HasPrefix(name, "histogram_eval_op_"):
			work += v.(map[string]any)["count"].(int64)
		case strings.HasPrefix(name, "counter_eval_op_"):
			work += int64(v.(uint64))
		}
	}
	require.Positive(t, work, "OPA reported no evaluation work: %v", m.All())
	return work, d
}

// TestEvaluationWorkIsLinear fails when a rule walks the changes once per change
// or per stream: the work per instance of a denied plan may not grow by more
// than half from 1,000 to 50,000 instances.
func TestEvaluationWorkIsLinear(t *testing.T) {
	e := newEngine(t)
	tests := []struct {
		name    string
		request func(int) Request
		check   func(t *testing.T, n int, d Decision)
	}{
		{
			name:    "scaled and removed",
			request: deniedRequest,
			check: func(t *testing.T, n int, d Decision) {
				// Every scaled stream lacks its attestation, every removal is denied.
				require.Equal(t, map[string]int{RuleQuiesceAttestation: n / planparsetest.GroupsPerPrefix / 10, RuleNoDestroy: n / 100}, countRules(d.Violations))
			},
		},
		{
			name:    "every kind of finding",
			request: busyRequest,
			check: func(t *testing.T, n int, d Decision) {
				require.Equal(t, n/1000, countRules(d.Violations)[RuleInvalidShardCount])
				warnings := countRules(d.Warnings)
				for _, id := range []string{RuleShardDelta, RuleTaintedReplace, RuleDrift, RuleOtherResourceDestroyed, RuleIncompletePlan} {
					require.Positive(t, warnings[id], id)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perInstance := map[int]float64{}
			for _, n := range []int{1000, 50000} {
				work, d := evalWork(t, e, tt.request(n))
				require.False(t, d.Allowed)
				tt.check(t, n, d)
				perInstance[n] = float64(work) / float64(n)
				t.Logf("%d instances: %d evaluation steps, %.1f per instance", n, work, perInstance[n])
			}
			growth := perInstance[50000] / perInstance[1000]
			require.LessOrEqual(t, growth, 1.5, fmt.Sprintf("work per instance grew %.2fx from 1,000 to 50,000 instances", growth))
		})
	}
}

// countRules counts findings by rule.
func countRules[F Violation | Warning](findings []F) map[string]int {
	out := map[string]int{}
	for _, f := range findings {
		switch f := any(f).(type) {
		case Violation:
			out[f.Rule]++
		case Warning:
			out[f.Rule]++
		}
	}
	return out
}
