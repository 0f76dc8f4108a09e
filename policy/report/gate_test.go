package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

const (
	coordA = "http://coord-a.internal/coord/v1"
	coordB = "http://coord-b.internal/coord/v1"
)

func mod(key string) string {
	return `module.stream_group["` + key + `"].terraform_data.stream_group`
}

// gateReport is a plan judged with live state: a tainted retry, a move, a scale
// found by pairing a move, drift, an invalid count, a provider resource missing
// attributes, two coordinators with one prefix, and other resources changed.
func gateReport() *Report {
	plan := []planparse.Change{
		{Address: mod("orders/billing"), StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coordA, Stream: coordA + " orders",
			Action: planparse.ActionUpdate, ShardsBefore: ip(5), ShardsAfter: ip(5), PriorShards: ip(5), Tainted: true,
			ActionReason: "replace_because_tainted", TerraformActions: []string{"delete", "create"}},
	}
	judged := []planparse.Change{
		{Address: mod("orders/billing"), StreamPrefix: "orders", ConsumerGroup: "billing", Coordinator: coordA, Stream: coordA + " orders",
			Action: planparse.ActionScale, ShardsBefore: ip(4), ShardsAfter: ip(5), PriorShards: ip(5), Tainted: true,
			ActionReason: "replace_because_tainted", TerraformActions: []string{"delete", "create"}},
		{Address: mod("orders/audit"), StreamPrefix: "orders", ConsumerGroup: "audit", Coordinator: coordB, Stream: coordB + " orders",
			Action: planparse.ActionScale, PriorShards: ip(2), ShardsAfter: ip(3), Tainted: true,
			ActionReason: "replace_because_tainted", TerraformActions: []string{"delete", "create"}},
		{Address: `module.streams_v2.module.stream_group["payments/ledger"].terraform_data.stream_group`, StreamPrefix: "payments", ConsumerGroup: "ledger",
			Coordinator: coordA, Stream: coordA + " payments", Action: planparse.ActionMove, ShardsBefore: ip(2), ShardsAfter: ip(2),
			MovedFrom: mod("payments/ledger"), TerraformActions: []string{"create"}},
		{Address: `module.streams_v2.module.stream_group["clicks/etl"].terraform_data.stream_group`, StreamPrefix: "clicks", ConsumerGroup: "etl",
			Coordinator: coordA, Stream: coordA + " clicks", Action: planparse.ActionScale, ShardsBefore: ip(2), ShardsAfter: ip(4),
			MovedFrom: mod("clicks/etl"), TerraformActions: []string{"create"}},
		{Address: mod("search/index"), StreamPrefix: "search", ConsumerGroup: "index", Coordinator: coordA, Stream: coordA + " search",
			Action: planparse.ActionNoop, ShardsBefore: ip(6), ShardsAfter: ip(8), TerraformActions: []string{"no-op"}},
		{Address: mod("carts/sync"), StreamPrefix: "carts", ConsumerGroup: "sync", Coordinator: coordA, Stream: coordA + " carts",
			Action: planparse.ActionCreate, InvalidShardCount: "4.5", TerraformActions: []string{"create"}},
		{Address: "redisstreamcoordinator_group.mail", Kind: planparse.KindGroup, StreamPrefix: "mail", ConsumerGroup: "send", Stream: "mail",
			Action: planparse.ActionUpdate, Missing: []string{"shards"}, TerraformActions: []string{"update"}},
	}
	return &Report{
		Project: "streams",
		ChangeSet: &planparse.ChangeSet{
			Incomplete: true,
			Changes:    plan,
			OtherChanges: []planparse.OtherChange{
				{Address: "aws_s3_bucket.archive", Type: "aws_s3_bucket", Actions: []string{"delete"}, Fingerprint: "f1"},
				{Address: "aws_iam_policy.writer", Type: "aws_iam_policy", Actions: []string{"update"}, Fingerprint: "f2"},
				{Address: `module.net.aws_security_group.this["a"]`, Type: "aws_security_group", Actions: []string{"update"}, Fingerprint: "f3"},
				{Address: "aws_instance.bastion", Type: "aws_instance", Actions: []string{"delete", "create"}, ActionReason: "replace_because_tainted", Fingerprint: "f4"},
			},
		},
		Decision: policy.Decision{
			Changes: judged,
			Violations: []policy.Violation{
				{Rule: policy.RuleInvalidShardCount, StreamPrefix: "carts", ConsumerGroup: "sync", Message: "shard_count 4.5 is not a whole number >= 1"},
				{Rule: policy.RuleUnknownValue, StreamPrefix: "mail", ConsumerGroup: "send", Message: "redisstreamcoordinator_group.mail lacks the attribute shards"},
				{Rule: policy.RuleQuiesceAttestation, StreamPrefix: "orders", Message: "scaling orders from 4 to 5 needs a producer-quiesce attestation",
					Waivable: true, ExceptionLabel: "policy-exception/quiesce_attestation"},
			},
			Warnings: []policy.Warning{
				{Rule: "drift", StreamPrefix: "search", ConsumerGroup: "index", Message: "the coordinator has 6 shards, the configuration asks for 8"},
				{Rule: "other_resource_destroyed", Address: "aws_s3_bucket.archive", Message: "aws_s3_bucket.archive is destroyed"},
				{Rule: "incomplete_plan", Message: "the plan is incomplete: more changes follow"},
			},
		},
		Coordinator: policy.Coordinator{Consulted: true, Reachable: true},
		Rules:       append(rules, policy.RuleInfo{ID: policy.RuleInvalidShardCount, Title: "Invalid shard count"}),
		Approvers:   "an approver (@alice or a member of @acme/sre) who is not the PR author",
	}
}

func TestGateGolden(t *testing.T) {
	r := gateReport()
	golden(t, "gate.md", r.Markdown(0))
	golden(t, "gate.txt", r.Text())
	golden(t, "gate.check-summary.md", r.CheckSummary(0))
	golden(t, "not_planned.md", NotPlanned("streams", "Error: Unsupported argument\n\n  on main.tf line 3, in module \"x\":\n   3:   shards = 4\n\n```\n", 0))
}

func TestJudgedChangesAreShown(t *testing.T) {
	r := gateReport()
	md := r.Markdown(0)
	require.Contains(t, md, "| `orders` | `billing` | scale | 4 → 5 | retry of a failed apply; live count 4 (the prior state says 5)",
		"Decision.Changes, not the plan's update 5→5")
	require.Contains(t, md, "unknown → 3 | retry of a failed apply; starting count unknown (the prior state says 2)")
	require.Contains(t, md, "| move | 2 → 2 | moved from `"+mod("payments/ledger")+"`; the coordinator is not called")
	require.Contains(t, md, "| scale | 2 → 4 | moved from `"+mod("clicks/etl")+"`")
	require.Contains(t, md, "| noop (drift) | 6 live, 8 configured | drift:")
	require.Contains(t, md, "| create | `4.5` (invalid) | shard count `4.5` is not a whole number of at least 1")
	require.Contains(t, md, "cannot be judged, the resource lacks `shards`")
	require.Contains(t, md, "coordinator `"+coordB+"`", "two coordinators: each row names its own")
	require.Contains(t, md, "**Other resources:** 1 to destroy, 1 to replace, 2 to update")
	require.Contains(t, md, "⚠️ **Incomplete plan**: Terraform deferred some changes: more changes follow in a later plan")
	require.NotContains(t, md, "@alice")

	r.Decision.Changes = nil
	md = r.Markdown(0)
	require.Contains(t, md, "| `orders` | `billing` | update | 5 → 5 |", "without a judgement, the plan's changes")
}

func TestJSONGateShape(t *testing.T) {
	b, err := gateReport().JSON()
	require.NoError(t, err)
	var got struct {
		Incomplete   bool             `json:"incomplete"`
		Changes      []map[string]any `json:"changes"`
		OtherChanges []map[string]any `json:"other_changes"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	require.True(t, got.Incomplete)
	require.Len(t, got.Changes, 6, "the judged changes without the noop")
	tainted := got.Changes[0]
	require.Equal(t, "scale", tainted["action"])
	require.Equal(t, 4.0, tainted["shards_before"])
	require.Equal(t, 5.0, tainted["prior_shards"])
	require.Equal(t, true, tainted["tainted"])
	require.Equal(t, coordA, tainted["coordinator"])
	require.Equal(t, coordA+" orders", tainted["stream"])
	require.Nil(t, got.Changes[1]["shards_before"], "unknown starting count is null")
	require.Equal(t, mod("payments/ledger"), got.Changes[2]["moved_from"])
	require.Equal(t, "move", got.Changes[2]["action"])
	require.Equal(t, "4.5", got.Changes[4]["invalid_shard_count"])
	require.Equal(t, []any{"shards"}, got.Changes[5]["missing"])
	require.NotContains(t, got.Changes[5], "moved_from", "unset fields are left out")

	require.Equal(t, map[string]any{"address": "aws_s3_bucket.archive", "type": "aws_s3_bucket", "actions": []any{"delete"}}, got.OtherChanges[0])
	require.Equal(t, "replace_because_tainted", got.OtherChanges[3]["action_reason"])
	require.Len(t, got.OtherChanges, 4)
}

func TestOtherChangesAreTrimmedToTheBudget(t *testing.T) {
	r := gateReport()
	var others []planparse.OtherChange
	for i := 0; i < 3000; i++ {
		others = append(others, planparse.OtherChange{Address: fmt.Sprintf("aws_s3_bucket.b%04d", i), Type: "aws_s3_bucket", Actions: []string{"delete"}})
	}
	r.ChangeSet.OtherChanges = others
	for _, limit := range []int{MaxCommentChars, 20000, 4000} {
		md := r.Markdown(limit)
		require.LessOrEqual(t, len(md), limit)
		require.Contains(t, md, "**Other resources:** 3000 to destroy", "the counts always show")
		require.Regexp(t, `_…\d+ other resource changes not shown`, md)
		require.Contains(t, md, "| `orders` | `billing` | scale |", "coordinator changes stay before other resources are cut")
		require.Equal(t, strings.Count(md, "<details>"), strings.Count(md, "</details>"))
		requireInert(t, md+sentinel, "trimmed")
	}
	txt := r.Text()
	require.Contains(t, txt, "Other resources: 3000 to destroy")
	require.Contains(t, txt, "  destroy   aws_s3_bucket.b2999\n", "the text lists them all")
}

func TestCheckRunOutput(t *testing.T) {
	r := gateReport()
	require.Equal(t, r.Summary(), r.CheckTitle())
	require.LessOrEqual(t, len(r.CheckTitle()), 250)
	sum := r.CheckSummary(0)
	require.Contains(t, sum, "- `invalid_shard_count` on `carts/sync`: shard_count 4.5 is not a whole number >= 1")
	require.Equal(t, r.Markdown(MaxCheckChars), r.CheckText(0))

	var violations []policy.Violation
	for i := 0; i < 5000; i++ {
		violations = append(violations, policy.Violation{Rule: "shard_delta", StreamPrefix: fmt.Sprintf("s%04d", i), Message: "too far"})
	}
	r.Decision.Violations = violations
	for _, limit := range []int{MaxCheckChars, 1000, 100, 10} {
		sum := r.CheckSummary(limit)
		require.LessOrEqual(t, len(sum), limit)
	}
	require.Regexp(t, `_…\d+ violations not shown`, r.CheckSummary(1000))
}

func TestNotPlannedKeepsTheEnd(t *testing.T) {
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, fmt.Sprintf("line %03d", i))
	}
	md := NotPlanned("p", strings.Join(lines, "\n"), 0)
	require.NotContains(t, md, "line 059")
	require.Contains(t, md, "line 060")
	require.Contains(t, md, "line 099")
	small := NotPlanned("p", strings.Join(lines, "\n"), 120)
	require.LessOrEqual(t, len(small), 120)
	require.Contains(t, small, "line 099", "the last lines say what went wrong")
	require.Contains(t, small, "…")
	for budget := 1; budget < 200; budget++ {
		require.LessOrEqual(t, len(NotPlanned(strings.Repeat("p", 500), strings.Repeat("x", 5000), budget)), budget)
	}
}
