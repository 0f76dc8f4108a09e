package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
	"github.com/shardgate/shardgate/policy"
)

// benchPolicyFindings evaluates cmd/shardgate-bench/policy as conftest does (data.main.deny over
// the raw plan, attestations and labels as data) and returns its findings.
func benchPolicyFindings(t *testing.T, plan []byte, attest, labels []string) []finding {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("policy", "shardgate.rego"))
	require.NoError(t, err)
	var input any
	require.NoError(t, json.Unmarshal(plan, &input))
	attested := map[string]any{}
	for _, p := range attest {
		attested[p] = true
	}
	data := map[string]any{"attested_streams": attested, "labels": toAny(labels)}
	rs, err := rego.New(
		rego.Query("data.main.deny"),
		rego.Module("shardgate.rego", string(src)),
		rego.Store(inmem.NewFromObject(data)),
		rego.Input(input),
	).Eval(context.Background())
	require.NoError(t, err)
	require.Len(t, rs, 1)
	raw, err := json.Marshal(rs[0].Expressions[0].Value)
	require.NoError(t, err)
	var fs []finding
	require.NoError(t, json.Unmarshal(raw, &fs))
	return sorted(fs)
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// shardgateViolations judges the plan with shardgate's engine, as `shardgate check
// --attest P... --label L...` does without a coordinator.
func shardgateViolations(t *testing.T, plan []byte, attest, labels []string) (bool, []finding) {
	t.Helper()
	cs, err := planparse.ParseBytes(plan)
	require.NoError(t, err)
	engine, err := policy.New()
	require.NoError(t, err)
	now := time.Now()
	req := policy.Request{ChangeSet: cs, Config: policy.DefaultConfig(), Now: now}
	for _, p := range attest {
		req.Attestations = append(req.Attestations, policy.Attestation{StreamPrefix: p, Actor: "me", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	}
	for _, l := range labels {
		req.Labels = append(req.Labels, policy.Label{Name: l, Actor: "approver", Counted: true})
	}
	dec, err := engine.Evaluate(context.Background(), req)
	require.NoError(t, err)
	var fs []finding
	for _, v := range dec.Violations {
		fs = append(fs, finding{Rule: v.Rule, StreamPrefix: v.StreamPrefix, Address: v.Address})
	}
	return dec.Allowed, sorted(fs)
}

// The conftest policy the benchmark times is worth comparing only if it judges as
// shardgate does: the same findings, rule by rule, stream by stream, on every kind
// of change the stream-group module plans.
func TestBenchPolicyFindsWhatShardgateFinds(t *testing.T) {
	scaled := planparsetest.Instances(200, 10, 0)
	prefixes := scaledPrefixes(scaled)
	tooFar := planparsetest.Instances(40, 50, 0)
	for i, in := range tooFar {
		switch {
		case in.ShardsAfter == in.ShardsBefore:
		case in.ShardsBefore < 8:
			tooFar[i].ShardsAfter = in.ShardsBefore * 3 // over both limits
		default:
			tooFar[i].ShardsAfter = in.ShardsBefore + 6 // over max_shard_delta only
		}
	}
	conflicting := planparsetest.Instances(40, 50, 0)
	for i := range conflicting {
		if conflicting[i].ShardsAfter != conflicting[i].ShardsBefore && conflicting[i].ConsumerGroup == "group-001" {
			conflicting[i].ShardsAfter = conflicting[i].ShardsBefore
		}
	}
	tests := []struct {
		name        string
		plan        []byte
		attest      []string
		labels      []string
		wantAllowed bool
		wantRules   string
	}{
		{name: "denied: scaled unattested, removed", plan: planparsetest.GeneratePlan(200, 10, 1),
			wantRules: "no_destroy 2, quiesce_attestation 2"},
		{name: "allowed: every scaled stream attested", plan: planparsetest.Render(scaled), attest: prefixes, wantAllowed: true},
		{name: "partly attested", plan: planparsetest.Render(scaled), attest: prefixes[:1],
			wantRules: "quiesce_attestation 1"},
		{name: "scale too far", plan: planparsetest.Render(tooFar),
			wantRules: "quiesce_attestation 2, shard_delta 20"},
		{name: "conflicting counts", plan: planparsetest.Render(conflicting),
			wantRules: "conflicting_shard_count 2, quiesce_attestation 2"},
		{name: "heavy: mixed deltas, some beyond the limits, removed, nothing attested", plan: planparsetest.Render(heavyInstances(1000)),
			wantRules: "no_destroy 10, quiesce_attestation 10, shard_delta 40"},
		{name: "solo-denied: one stream per instance", plan: planparsetest.Render(instances(1000, soloPrefix+caseDenied)),
			wantRules: "no_destroy 10, quiesce_attestation 100"},
		{name: "solo-allowed: one stream per instance, every scaled stream attested", plan: planparsetest.Render(instances(1000, soloPrefix+caseAllowed)),
			attest: scaledPrefixes(instances(1000, soloPrefix+caseAllowed)), wantAllowed: true},
		{name: "solo-heavy: one stream per instance, mixed deltas", plan: planparsetest.Render(instances(1000, soloPrefix+caseHeavy)),
			wantRules: "no_destroy 10, quiesce_attestation 100, shard_delta 50"},
		{name: "exception label waives no_destroy", plan: planparsetest.GeneratePlan(200, 10, 1), labels: []string{"policy-exception/no_destroy"},
			wantRules: "quiesce_attestation 2"},
	}
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "plans", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	for _, f := range examples {
		plan, err := os.ReadFile(f)
		require.NoError(t, err)
		tests = append(tests, struct {
			name        string
			plan        []byte
			attest      []string
			labels      []string
			wantAllowed bool
			wantRules   string
		}{name: "terraform's plan " + filepath.Base(f), plan: plan, wantRules: "-"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allowed, want := shardgateViolations(t, tt.plan, tt.attest, tt.labels)
			got := benchPolicyFindings(t, tt.plan, tt.attest, tt.labels)
			require.Empty(t, sameFindings(want, got))
			if tt.wantRules != "-" {
				require.Equal(t, tt.wantAllowed, allowed)
				if !tt.wantAllowed {
					require.Equal(t, tt.wantRules, countByRule(got))
				}
			}
		})
	}
}
