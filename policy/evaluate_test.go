package policy

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func moduleChange(prefix, group string, action planparse.Action, before, after *int) planparse.Change {
	return planparse.Change{
		Address:        "module." + prefix + "_" + group + ".terraform_data.stream_group",
		Kind:           planparse.KindModule,
		StreamPrefix:   prefix,
		ConsumerGroup:  group,
		CoordinatorURL: "http://coordinator:8080",
		Action:         action,
		ShardsBefore:   before,
		ShardsAfter:    after,
	}
}

func scaleChange(prefix, group string, before, after int) planparse.Change {
	c := moduleChange(prefix, group, planparse.ActionScale, intp(before), intp(after))
	c.ActionReason, c.TerraformActions = "replace_because_cannot_update", []string{"delete", "create"}
	return c
}

func changeSet(changes ...planparse.Change) *planparse.ChangeSet {
	cs := &planparse.ChangeSet{FormatVersion: "1.2", Changes: changes}
	for _, c := range changes {
		if c.ShardsAfter != nil && c.Action != planparse.ActionDelete && c.Action != planparse.ActionUnmanage {
			cs.Desired = append(cs.Desired, planparse.Desired{
				Address: c.Address, StreamPrefix: c.StreamPrefix, ConsumerGroup: c.ConsumerGroup,
				Coordinator: c.Coordinator, Stream: c.Stream, ShardCount: *c.ShardsAfter,
			})
		}
	}
	return cs
}

func attestation(prefix string, expires time.Time) Attestation {
	return Attestation{StreamPrefix: prefix, Actor: "ops-lead", HeadSHA: "abc123", CreatedAt: expires.Add(-time.Hour), ExpiresAt: expires}
}

func liveStream(prefix string, groups ...LiveGroup) map[string]LiveStream {
	return map[string]LiveStream{prefix: {StreamPrefix: prefix, Groups: groups}}
}

func liveGroup(group string, shards int) LiveGroup {
	return LiveGroup{ConsumerGroup: group, ShardCount: shards, State: "STABLE", LiveMembers: 2, MetadataVersion: 12}
}

func TestEvaluateRules(t *testing.T) {
	fresh := []Attestation{attestation("orders", now.Add(time.Hour))}
	tests := []struct {
		name         string
		req          Request
		wantRules    []string // violations, in order
		wantMessage  string   // part of the first violation's message
		wantWarnings []string
		wantUsed     int // attestations used
	}{
		{name: "empty plan", req: Request{ChangeSet: &planparse.ChangeSet{}}},
		{
			name: "noop and create allowed",
			req: Request{ChangeSet: changeSet(
				moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4)),
				moduleChange("orders", "audit", planparse.ActionCreate, nil, intp(4)),
			)},
		},
		{
			name:        "delete denied",
			req:         Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionDelete, intp(4), nil))},
			wantRules:   []string{RuleNoDestroy},
			wantMessage: "removes the group's metadata",
		},
		{
			name:        "unmanage denied",
			req:         Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionUnmanage, intp(4), nil))},
			wantRules:   []string{RuleNoDestroy},
			wantMessage: "Terraform forgets the group but the coordinator keeps it",
		},
		{
			name:     "attested scale within limits allowed",
			req:      Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8)), Attestations: fresh, Now: now},
			wantUsed: 1,
		},
		{
			name:        "scale over delta denied",
			req:         Request{ChangeSet: changeSet(scaleChange("orders", "billing", 10, 15)), Attestations: fresh, Now: now},
			wantRules:   []string{RuleShardDelta},
			wantMessage: "from 10 to 15 shards (+5 shards, a factor of 1.5 up), over the limits of 4 shards and a factor of 2 per change",
			wantUsed:    1,
		},
		{
			name:        "scale down by a factor over limit denied",
			req:         Request{ChangeSet: changeSet(scaleChange("orders", "billing", 8, 3)), Attestations: fresh, Now: now},
			wantRules:   []string{RuleShardDelta},
			wantMessage: "from 8 to 3 shards (-5 shards, a factor of 2.67 down)",
			wantUsed:    1,
		},
		{
			name:        "configured limits",
			req:         Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 13)), Attestations: fresh, Now: now, Config: Config{MaxShardDelta: 10, MaxScaleFactor: 3}},
			wantRules:   []string{RuleShardDelta},
			wantMessage: "over the limits of 10 shards and a factor of 3 per change",
			wantUsed:    1,
		},
		{
			name:     "configured limits allow",
			req:      Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 12)), Attestations: fresh, Now: now, Config: Config{MaxShardDelta: 10, MaxScaleFactor: 3}},
			wantUsed: 1,
		},
		{
			name: "live count overrides the plan's before",
			req: Request{
				ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8)), Attestations: fresh, Now: now,
				Coordinator: Coordinator{Consulted: true, Reachable: true},
				Live:        liveStream("orders", liveGroup("billing", 2), liveGroup("audit", 16)),
			},
			wantRules:   []string{RuleShardDelta},
			wantMessage: "from 2 to 8 shards (+6 shards, a factor of 4 up)",
			wantUsed:    1,
		},
		{
			name: "live count can make a scale small",
			req: Request{
				ChangeSet: changeSet(scaleChange("orders", "billing", 1, 4)), Attestations: fresh, Now: now,
				Coordinator: Coordinator{Consulted: true, Reachable: true},
				Live:        liveStream("orders", liveGroup("billing", 3)),
			},
			wantUsed: 1,
		},
		{
			// Issue 21: the coordinator has the imported group at 6, the code
			// says 8: a scale, with the attestation it needs.
			name: "import at another live count is a scale",
			req: Request{
				ChangeSet: changeSet(func() planparse.Change {
					c := moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(8))
					c.Importing = true
					return c
				}()),
				Coordinator: Coordinator{Consulted: true, Reachable: true},
				Live:        liveStream("orders", liveGroup("billing", 6)),
			},
			wantRules:   []string{RuleQuiesceAttestation},
			wantMessage: "scaling stream orders",
		},
		{
			name:        "scale without attestation denied",
			req:         Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8), scaleChange("orders", "audit", 4, 8)), Now: now},
			wantRules:   []string{RuleQuiesceAttestation},
			wantMessage: "scaling stream orders (module.orders_audit.terraform_data.stream_group, module.orders_billing.terraform_data.stream_group)",
		},
		{
			name:        "expired attestation denied",
			req:         Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8)), Attestations: []Attestation{attestation("orders", now)}, Now: now},
			wantRules:   []string{RuleQuiesceAttestation},
			wantMessage: "pause its producers and drain their in-flight retries first",
		},
		{
			name:        "attestation of another stream does not count",
			req:         Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8)), Attestations: []Attestation{attestation("payments", now.Add(time.Hour))}, Now: now},
			wantRules:   []string{RuleQuiesceAttestation},
			wantMessage: "scaling stream orders",
		},
		{
			name: "duplicate tolerant stream needs no attestation",
			req:  Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8)), Config: Config{DuplicateTolerantStreams: []string{"orders"}}},
		},
		{
			name: "conflicting shard counts denied",
			req: Request{ChangeSet: changeSet(
				moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4)),
				moduleChange("orders", "audit", planparse.ActionCreate, nil, intp(8)),
			)},
			wantRules:   []string{RuleConflictingShardCount},
			wantMessage: "stream orders is asked for 2 different shard counts: 4 shards (module.orders_billing.terraform_data.stream_group); 8 shards (module.orders_audit.terraform_data.stream_group)",
		},
		{
			name: "a peer's count of the same stream conflicts",
			req: Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(4))),
				Peers: []planparse.Desired{{Address: "project `ledger`: module.audit", StreamPrefix: "orders", ConsumerGroup: "audit", ShardCount: 8}}},
			wantRules:   []string{RuleConflictingShardCount},
			wantMessage: "stream orders is asked for 2 different shard counts: 4 shards (module.orders_billing.terraform_data.stream_group); 8 shards (project `ledger`: module.audit)",
		},
		{
			name: "a peer of the same count agrees",
			req: Request{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(4))),
				Peers: []planparse.Desired{{Address: "project `ledger`: module.audit", StreamPrefix: "orders", ConsumerGroup: "audit", ShardCount: 4}}},
		},
		{
			name: "unknown shard count denied",
			req: Request{ChangeSet: changeSet(func() planparse.Change {
				c := moduleChange("orders", "billing", planparse.ActionScale, intp(4), nil)
				c.Unknown = []string{planparse.FieldShardCount}
				return c
			}()), Attestations: fresh, Now: now},
			wantRules:   []string{RuleUnknownValue},
			wantMessage: "shard_count unknown until apply",
			wantUsed:    1,
		},
		{
			name: "unknown coordinator url denied",
			req: Request{ChangeSet: changeSet(func() planparse.Change {
				c := moduleChange("orders", "billing", planparse.ActionUpdate, intp(4), intp(4))
				c.Unknown = []string{planparse.FieldCoordinatorURL}
				return c
			}())},
			wantRules:   []string{RuleUnknownValue},
			wantMessage: "coordinator_base_url unknown until apply",
		},
		{
			name:        "coordinator unreachable denied",
			req:         Request{ChangeSet: &planparse.ChangeSet{}, Coordinator: Coordinator{Consulted: true, Error: "dial tcp: connection refused"}},
			wantRules:   []string{RuleCoordinatorUnreachable},
			wantMessage: "the coordinator could not be read (dial tcp: connection refused)",
		},
		{
			name: "coordinator not consulted allowed",
			req:  Request{ChangeSet: &planparse.ChangeSet{}, Coordinator: Coordinator{Consulted: false}},
		},
		{
			name: "several rules sorted",
			req: Request{ChangeSet: changeSet(
				moduleChange("payments", "billing", planparse.ActionDelete, intp(4), nil),
				scaleChange("orders", "billing", 2, 12),
				moduleChange("audit", "billing", planparse.ActionUnmanage, intp(4), nil),
			), Now: now},
			wantRules: []string{RuleNoDestroy, RuleNoDestroy, RuleQuiesceAttestation, RuleShardDelta},
		},
		{
			name: "warnings never deny",
			req: Request{
				ChangeSet: changeSet(func() planparse.Change {
					c := scaleChange("orders", "billing", 4, 8)
					c.ActionReason = "replace_because_tainted"
					return c
				}()),
				Attestations: fresh, Now: now,
				Coordinator: Coordinator{Consulted: true, Reachable: true},
				Live: map[string]LiveStream{"orders": {StreamPrefix: "orders", MetadataVersionRegressed: true, Groups: []LiveGroup{
					liveGroup("billing", 4),
					{ConsumerGroup: "audit", ShardCount: 4, State: "EMPTY", ActiveMigrationID: "m-1", MigrationState: "ACTIVE"},
				}}},
			},
			wantWarnings: []string{"active_migration", "metadata_version_regressed", "no_live_members", "tainted_replace"},
			wantUsed:     1,
		},
	}
	e := newEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := e.Evaluate(context.Background(), tt.req)
			require.NoError(t, err)
			require.Equal(t, len(tt.wantRules) == 0, d.Allowed)
			require.Equal(t, nonNil(tt.wantRules), violationRules(d))
			if tt.wantMessage != "" {
				require.Contains(t, d.Violations[0].Message, tt.wantMessage)
			}
			warnings := []string{}
			for _, w := range d.Warnings {
				warnings = append(warnings, w.Rule)
			}
			require.Equal(t, nonNil(tt.wantWarnings), warnings)
			require.Len(t, d.AttestationsUsed, tt.wantUsed)
			require.Empty(t, d.ExceptionsApplied)
			for _, v := range d.Violations {
				info, ok := e.Rule(v.Rule)
				require.True(t, ok)
				require.Equal(t, info.Title, v.Title)
				require.Equal(t, info.Waivable, v.Waivable)
				require.Equal(t, info.ExceptionLabel, v.ExceptionLabel)
			}
		})
	}
}
