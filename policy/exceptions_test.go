package policy

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func TestEvaluateExceptions(t *testing.T) {
	deleteAndScale := changeSet(
		moduleChange("orders", "billing", planparse.ActionDelete, intp(4), nil),
		scaleChange("payments", "ledger", 2, 12),
	)
	conflict := changeSet(
		moduleChange("orders", "billing", planparse.ActionNoop, intp(4), intp(4)),
		moduleChange("orders", "audit", planparse.ActionCreate, nil, intp(8)),
	)
	unknown := func() *planparse.ChangeSet {
		c := moduleChange("orders", "billing", planparse.ActionCreate, nil, nil)
		c.Unknown = []string{planparse.FieldStreamPrefix}
		return changeSet(c)
	}()
	tests := []struct {
		name            string
		changes         *planparse.ChangeSet
		labels          []Label
		wantRules       []string
		wantApplied     []string
		wantNotCounted  []string
		wantAppliedFrom string // actor of the first exception
	}{
		{
			name:            "counted label waives its rule only",
			changes:         deleteAndScale,
			labels:          []Label{{Name: "policy-exception/no_destroy", Actor: "ops-lead", Counted: true}},
			wantRules:       []string{RuleQuiesceAttestation, RuleShardDelta},
			wantApplied:     []string{RuleNoDestroy},
			wantAppliedFrom: "ops-lead",
		},
		{
			name:    "every waivable rule waived",
			changes: deleteAndScale,
			labels: []Label{
				{Name: "policy-exception/no_destroy", Actor: "a", Counted: true},
				{Name: "policy-exception/shard_delta", Actor: "b", Counted: true},
				{Name: "policy-exception/quiesce_attestation", Actor: "c", Counted: true},
			},
			wantApplied:     []string{RuleNoDestroy, RuleQuiesceAttestation, RuleShardDelta},
			wantAppliedFrom: "a",
		},
		{
			name:    "label not counted does not waive",
			changes: deleteAndScale,
			labels: []Label{
				{Name: "policy-exception/no_destroy", Actor: "author", Counted: false, Reason: "added by the pull request's author"},
				{Name: "needs-review", Counted: false},
			},
			wantRules:      []string{RuleNoDestroy, RuleQuiesceAttestation, RuleShardDelta},
			wantNotCounted: []string{"policy-exception/no_destroy"},
		},
		{
			name:           "label never waives a conflicting shard count",
			changes:        conflict,
			labels:         []Label{{Name: "policy-exception/conflicting_shard_count", Actor: "ops-lead", Counted: true}},
			wantRules:      []string{RuleConflictingShardCount},
			wantNotCounted: []string{"policy-exception/conflicting_shard_count"},
		},
		{
			name:           "label never waives an unknown value",
			changes:        unknown,
			labels:         []Label{{Name: "policy-exception/unknown_value", Actor: "ops-lead", Counted: true}},
			wantRules:      []string{RuleUnknownValue},
			wantNotCounted: []string{"policy-exception/unknown_value"},
		},
		{
			name:      "label of an unknown rule is left to the caller",
			changes:   deleteAndScale,
			labels:    []Label{{Name: "policy-exception/shard-delta", Actor: "ops-lead", Counted: true}},
			wantRules: []string{RuleNoDestroy, RuleQuiesceAttestation, RuleShardDelta},
		},
	}
	e := newEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := e.Evaluate(context.Background(), Request{ChangeSet: tt.changes, Labels: tt.labels, Now: now})
			require.NoError(t, err)
			require.Equal(t, len(tt.wantRules) == 0, d.Allowed)
			require.Equal(t, nonNil(tt.wantRules), violationRules(d))
			applied := []string{}
			for _, x := range d.ExceptionsApplied {
				applied = append(applied, x.Rule)
				require.Equal(t, ExceptionLabelPrefix+x.Rule, x.Label)
				require.NotEmpty(t, x.Message)
			}
			require.Equal(t, nonNil(tt.wantApplied), applied)
			if tt.wantAppliedFrom != "" {
				require.Equal(t, tt.wantAppliedFrom, d.ExceptionsApplied[0].Actor)
			}
			notCounted := []string{}
			for _, l := range d.LabelsNotCounted {
				notCounted = append(notCounted, l.Name)
				require.NotEmpty(t, l.Reason)
			}
			require.Equal(t, nonNil(tt.wantNotCounted), notCounted)
		})
	}
}

func TestEvaluateAttestationsUsed(t *testing.T) {
	e := newEngine(t)
	used := attestation("orders", now.Add(time.Minute))
	d, err := e.Evaluate(context.Background(), Request{
		ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8), moduleChange("payments", "ledger", planparse.ActionCreate, nil, intp(2))),
		Attestations: []Attestation{
			used,
			attestation("orders", now.Add(-time.Minute)),  // expired
			attestation("payments", now.Add(time.Minute)), // not scaled
		},
		Now: now,
	})
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.Equal(t, []Attestation{used}, d.AttestationsUsed)
}
