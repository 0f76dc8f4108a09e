package policy

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func warningRules(d Decision) []string {
	ids := []string{}
	for _, w := range d.Warnings {
		ids = append(ids, w.Rule)
	}
	return ids
}

// TestEvaluateJudgesTheEffect: the rules see what the apply does to the
// coordinator, and the decision reports it.
func TestEvaluateJudgesTheEffect(t *testing.T) {
	reachable := Coordinator{Consulted: true, Reachable: true}
	fresh := []Attestation{attestation("orders", now.Add(time.Hour))}
	move := moduleChange("orders", "billing", planparse.ActionMove, intp(4), intp(4))
	move.MovedFrom = "module.old.terraform_data.stream_group"
	tests := []struct {
		name         string
		req          Request
		wantRules    []string
		wantWarnings []string
		wantAction   planparse.Action
		wantBefore   *int
		wantMessage  string // part of the first finding's message, violation or else warning
	}{
		{
			name:      "tainted retry is a scale from the live count and needs the attestation",
			req:       Request{ChangeSet: changeSet(tainted("orders", "billing", 5, 5)), Coordinator: reachable, Live: liveStream("orders", liveGroup("billing", 4)), Now: now},
			wantRules: []string{RuleQuiesceAttestation}, wantWarnings: []string{RuleTaintedReplace},
			wantAction: planparse.ActionScale, wantBefore: intp(4),
			wantMessage: "scaling stream orders (module.orders_billing.terraform_data.stream_group)",
		},
		{
			name:      "tainted retry offline cannot be bounded and needs the attestation",
			req:       Request{ChangeSet: changeSet(tainted("orders", "billing", 5, 5)), Now: now},
			wantRules: []string{RuleQuiesceAttestation}, wantWarnings: []string{RuleShardDelta, RuleTaintedReplace},
			wantAction: planparse.ActionScale,
		},
		{
			name:         "tainted retry offline with the attestation passes with the warning",
			req:          Request{ChangeSet: changeSet(tainted("orders", "billing", 5, 5)), Attestations: fresh, Now: now},
			wantWarnings: []string{RuleShardDelta, RuleTaintedReplace}, wantAction: planparse.ActionScale,
			wantMessage: "from an unknown shard count to 5 shards: the delta could not be bounded",
		},
		{
			name:       "tainted retry the coordinator finished needs nothing",
			req:        Request{ChangeSet: changeSet(tainted("orders", "billing", 4, 5)), Coordinator: reachable, Live: liveStream("orders", liveGroup("billing", 5)), Now: now},
			wantAction: planparse.ActionUpdate, wantBefore: intp(5), wantWarnings: []string{RuleTaintedReplace},
		},
		{
			name:       "create of a group the coordinator has at another count is a scale",
			req:        Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(8))), Coordinator: reachable, Live: liveStream("orders", liveGroup("billing", 2))},
			wantRules:  []string{RuleQuiesceAttestation, RuleShardDelta},
			wantAction: planparse.ActionScale, wantBefore: intp(2),
		},
		{
			name:         "drift of an unchanged instance is a warning",
			req:          Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4))), Coordinator: reachable, Live: liveStream("orders", liveGroup("billing", 6))},
			wantWarnings: []string{RuleDrift}, wantAction: planparse.ActionNoop, wantBefore: intp(6),
			wantMessage: "asks for 4 shards but the coordinator has 6 for orders/billing",
		},
		{
			name:       "a move is no destroy",
			req:        Request{ChangeSet: changeSet(move)},
			wantAction: planparse.ActionMove, wantBefore: intp(4),
		},
	}
	e := newEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := e.Evaluate(context.Background(), tt.req)
			require.NoError(t, err)
			require.Equal(t, nonNil(tt.wantRules), violationRules(d))
			require.Equal(t, nonNil(tt.wantWarnings), warningRules(d))
			require.Len(t, d.Changes, 1)
			require.Equal(t, tt.wantAction, d.Changes[0].Action)
			require.Equal(t, tt.wantBefore, d.Changes[0].ShardsBefore)
			if tt.wantMessage == "" {
				return
			}
			if len(d.Violations) > 0 {
				require.Contains(t, d.Violations[0].Message, tt.wantMessage)
			} else {
				require.Contains(t, d.Warnings[0].Message, tt.wantMessage)
			}
		})
	}
}

func TestEvaluateReportsChangesWhenFailingClosed(t *testing.T) {
	e := newEngine(t)
	d, err := e.Evaluate(context.Background(), Request{
		ChangeSet: changeSet(tainted("orders", "billing", 5, 5)), Attestations: []Attestation{attestation("orders", now)},
		Coordinator: Coordinator{Consulted: true, Reachable: true}, Live: liveStream("orders", liveGroup("billing", 4)),
	})
	require.ErrorContains(t, err, "without the time")
	require.False(t, d.Allowed)
	require.Equal(t, []string{RulePolicyError}, violationRules(d))
	require.Len(t, d.Changes, 1)
	require.Equal(t, planparse.ActionScale, d.Changes[0].Action)
	require.Equal(t, intp(4), d.Changes[0].ShardsBefore)

	d, err = e.Evaluate(context.Background(), Request{})
	require.Error(t, err)
	require.NotNil(t, d.Changes)
	require.Empty(t, d.Changes)
}

func TestEvaluateInvalidCountsAndMissingAttributes(t *testing.T) {
	invalid := moduleChange("orders", "billing", planparse.ActionCreate, nil, nil)
	invalid.InvalidShardCount = "4.5"
	missing := planparse.Change{
		Address: "redisstreamcoordinator_group_shard_count.orders", Kind: planparse.KindShardCount, StreamPrefix: "orders",
		ConsumerGroup: "billing", Action: planparse.ActionUpdate, Missing: []string{"shard_count"}, TerraformActions: []string{"update"},
	}
	e := newEngine(t)
	labels := []Label{
		{Name: ExceptionLabelPrefix + RuleInvalidShardCount, Actor: "ops-lead", Counted: true},
		{Name: ExceptionLabelPrefix + RuleUnknownValue, Actor: "ops-lead", Counted: true},
	}
	d, err := e.Evaluate(context.Background(), Request{ChangeSet: changeSet(invalid, missing), Labels: labels})
	require.NoError(t, err)
	require.False(t, d.Allowed)
	require.Equal(t, []string{RuleInvalidShardCount, RuleUnknownValue}, violationRules(d))
	require.Equal(t, `module.orders_billing.terraform_data.stream_group asks for shard_count "4.5": a shard count must be a whole number >= 1`, d.Violations[0].Message)
	require.Contains(t, d.Violations[1].Message, "the redisstreamcoordinator_group_shard_count resource lacks the attribute shard_count")
	for _, v := range d.Violations {
		require.False(t, v.Waivable, v.Rule)
	}
	require.Empty(t, d.ExceptionsApplied)
	require.Len(t, d.LabelsNotCounted, 2, "labels of rules that cannot be waived do not count")

	// An unchanged instance whose count cannot be read is still denied.
	noop := moduleChange("orders", "billing", planparse.ActionNoop, nil, nil)
	noop.InvalidShardCount = "0"
	d, err = e.Evaluate(context.Background(), Request{ChangeSet: changeSet(noop)})
	require.NoError(t, err)
	require.Equal(t, []string{RuleInvalidShardCount}, violationRules(d))
}

func TestEvaluateOtherChangesAndIncompletePlans(t *testing.T) {
	cs := changeSet(moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4)))
	cs.Incomplete = true
	cs.OtherChanges = []planparse.OtherChange{
		{Address: "aws_s3_bucket.logs", Type: "aws_s3_bucket", Actions: []string{"delete"}, Fingerprint: "f1"},
		{Address: "aws_iam_policy.app", Type: "aws_iam_policy", Actions: []string{"update"}, Fingerprint: "f2"},
		{Address: "aws_instance.web", Type: "aws_instance", Actions: []string{"create", "delete"}, ActionReason: "replace_because_tainted", Fingerprint: "f3"},
	}
	d, err := newEngine(t).Evaluate(context.Background(), Request{ChangeSet: cs})
	require.NoError(t, err)
	require.True(t, d.Allowed, "warnings never deny")
	require.Equal(t, []Warning{
		{Rule: RuleIncompletePlan, Title: "Incomplete plan", Message: d.Warnings[0].Message},
		{Rule: RuleOtherResourceDestroyed, Title: "Other resource destroyed", Address: "aws_instance.web",
			Message: "aws_instance.web (aws_instance) is replaced: Terraform destroys it and creates it again"},
		{Rule: RuleOtherResourceDestroyed, Title: "Other resource destroyed", Address: "aws_s3_bucket.logs",
			Message: "aws_s3_bucket.logs (aws_s3_bucket) is destroyed"},
	}, d.Warnings)
	require.Contains(t, d.Warnings[0].Message, "more changes follow in a later plan")
}

// TestEvaluateStreamsOfTwoCoordinators: two coordinators with one prefix are two
// streams, each judged and named on its own; an attestation names a prefix and
// covers it on both.
func TestEvaluateStreamsOfTwoCoordinators(t *testing.T) {
	a := onCoordinator(scaleChange("orders", "billing", 4, 6), coordA)
	b := onCoordinator(scaleChange("orders", "audit", 8, 10), coordB)
	cs := changeSet(a, b)
	e := newEngine(t)

	d, err := e.Evaluate(context.Background(), Request{ChangeSet: cs, Now: now})
	require.NoError(t, err)
	require.Equal(t, []string{RuleQuiesceAttestation, RuleQuiesceAttestation}, violationRules(d), "different counts on two streams are no conflict")
	require.Equal(t, a.Stream, d.Violations[0].Stream)
	require.Equal(t, "orders", d.Violations[0].StreamPrefix)
	require.Contains(t, d.Violations[0].Message, "scaling stream orders on "+coordA+" (module.orders_billing.terraform_data.stream_group)")
	require.Equal(t, b.Stream, d.Violations[1].Stream)
	require.Contains(t, d.Violations[1].Message, "scaling stream orders on "+coordB+" (module.orders_audit.terraform_data.stream_group)")

	used := attestation("orders", now.Add(time.Hour))
	d, err = e.Evaluate(context.Background(), Request{ChangeSet: cs, Attestations: []Attestation{used}, Now: now})
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.Equal(t, []Attestation{used}, d.AttestationsUsed)

	// Waived violations keep their stream.
	d, err = e.Evaluate(context.Background(), Request{ChangeSet: cs, Now: now, Labels: []Label{{Name: ExceptionLabelPrefix + RuleQuiesceAttestation, Actor: "lead", Counted: true}}})
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.Len(t, d.ExceptionsApplied, 2)
	require.Equal(t, a.Stream, d.ExceptionsApplied[0].Stream)
}

func TestUserPolicyDeniesOtherChanges(t *testing.T) {
	e := newEngine(t, WithPolicyDirs("testdata/otherchanges"))
	cs := &planparse.ChangeSet{OtherChanges: []planparse.OtherChange{
		{Address: "aws_iam_policy.app", Type: "aws_iam_policy", Actions: []string{"update"}},
		{Address: "aws_sqs_queue.q", Type: "aws_sqs_queue", Actions: []string{"create"}},
	}}
	d, err := e.Evaluate(context.Background(), Request{ChangeSet: cs})
	require.NoError(t, err)
	require.False(t, d.Allowed)
	require.Equal(t, []Violation{{Rule: "iam_review", Title: "iam_review", Address: "aws_iam_policy.app",
		Message: "aws_iam_policy.app changes an IAM policy; ask the security team"}}, d.Violations)
}
