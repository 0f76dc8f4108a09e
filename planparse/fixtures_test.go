package planparse_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The shared fixtures are real plans of other providers: none is a coordinator change.
func TestParseForeignPlans(t *testing.T) {
	files, err := filepath.Glob("../testdata/terraform/plans/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			cs, err := planparse.ParseBytes(raw)
			require.NoError(t, err)
			require.NotEmpty(t, cs.FormatVersion)
			require.Empty(t, cs.Changes)
			require.Empty(t, cs.Desired)
			require.Empty(t, cs.Resources)
			require.Equal(t, managedChanges(t, raw), len(cs.OtherChanges))
		})
	}
}

// managedChanges counts the non-noop changes of managed resources in plan JSON.
func managedChanges(t *testing.T, raw []byte) int {
	t.Helper()
	var plan struct {
		ResourceChanges []struct {
			Mode   string `json:"mode"`
			Change struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	require.NoError(t, json.Unmarshal(raw, &plan))
	n := 0
	for _, rc := range plan.ResourceChanges {
		if rc.Mode != "data" && !slices.Equal(rc.Change.Actions, []string{"no-op"}) {
			n++
		}
	}
	return n
}

// withoutFingerprints checks every fingerprint and clears it, for comparing the rest.
func withoutFingerprints(t *testing.T, rs []planparse.ResourceChange) []planparse.ResourceChange {
	t.Helper()
	out := slices.Clone(rs)
	for i := range out {
		require.Regexp(t, hexSHA256, out[i].Fingerprint)
		out[i].Fingerprint = ""
	}
	return out
}

// The plans saved by TestParseTerraformPlans -update, checked without terraform.
func TestParseSavedPlans(t *testing.T) {
	t.Run("several changes", func(t *testing.T) {
		cs := parseFile(t, "testdata/module_several_changes.json")
		require.Equal(t, "1.5.7", cs.TerraformVersion)
		var got []string
		for _, c := range cs.Changes {
			got = append(got, c.StreamPrefix+"/"+c.ConsumerGroup+" "+string(c.Action))
		}
		require.Equal(t, []string{"orders/audit scale", "orders/billing scale", "payments/ledger unmanage", "refunds/ledger noop", "users/audit create"}, got)
		require.Len(t, cs.Desired, 4)
		require.Equal(t, []planparse.ResourceChange{
			{Address: addr("orders/audit"), Actions: []string{"delete", "create"}, ActionReason: "replace_because_cannot_update", Diff: []string{"shard_count: 4 -> 6"}},
			{Address: addr("orders/billing"), Actions: []string{"delete", "create"}, ActionReason: "replace_because_cannot_update", Diff: []string{"shard_count: 4 -> 6"}},
			{Address: addr("payments/ledger"), Actions: []string{"delete"}, ActionReason: "delete_because_no_module", Diff: []string{
				`consumer_group: "ledger" -> (none)`, `coordinator_base_url: "` + coordURL + `" -> (none)`, "shard_count: 2 -> (none)", `stream_prefix: "payments" -> (none)`}},
			{Address: addr("users/audit"), Actions: []string{"create"}, Diff: []string{
				`consumer_group: (none) -> "audit"`, `coordinator_base_url: (none) -> "` + coordURL + `"`, "shard_count: (none) -> 2", `stream_prefix: (none) -> "users"`}},
		}, withoutFingerprints(t, cs.Resources))
	})
	t.Run("unknown shard count", func(t *testing.T) {
		cs := parseFile(t, "testdata/module_unknown_shard_count.json")
		require.Len(t, cs.Changes, 1)
		require.Equal(t, planparse.ActionScale, cs.Changes[0].Action)
		require.Equal(t, []string{planparse.FieldShardCount}, cs.Changes[0].Unknown)
		require.Nil(t, cs.Changes[0].ShardsAfter)
		require.Empty(t, cs.Desired)
		require.Equal(t, []string{"shard_count: 4 -> (known after apply)"}, cs.Resources[0].Diff)
	})
}

// Reading from a stream (token by token, small buffers) gives what ParseBytes gives.
func TestParseReaderMatchesBytes(t *testing.T) {
	plan := planparsetest.GeneratePlan(300, 10, 5)
	want, err := planparse.ParseBytes(plan)
	require.NoError(t, err)
	got, err := planparse.Parse(iotest.HalfReader(bytes.NewReader(plan)))
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// GeneratePlan's plans parse into exactly the instances it describes.
func TestParseGeneratedPlan(t *testing.T) {
	instances := planparsetest.Instances(1000, 10, 1)
	cs, err := planparse.ParseBytes(planparsetest.GeneratePlan(1000, 10, 1))
	require.NoError(t, err)
	require.Len(t, cs.Changes, len(instances))
	desired := 0
	counts := map[planparse.Action]int{}
	for i, in := range instances {
		c := cs.Changes[i]
		counts[c.Action]++
		require.Equal(t, in.Address(), c.Address)
		require.Equal(t, in.StreamPrefix, c.StreamPrefix)
		require.Equal(t, in.ShardsBefore, *c.ShardsBefore)
		switch {
		case in.Removed:
			require.Equal(t, planparse.ActionUnmanage, c.Action)
		case in.ShardsAfter != in.ShardsBefore:
			require.Equal(t, planparse.ActionScale, c.Action)
			require.Equal(t, in.ShardsAfter, *c.ShardsAfter)
		default:
			require.Equal(t, planparse.ActionNoop, c.Action)
		}
		if !in.Removed {
			require.Equal(t, in.ShardsAfter, cs.Desired[desired].ShardCount)
			desired++
		}
	}
	require.Len(t, cs.Desired, desired)
	require.Equal(t, map[planparse.Action]int{planparse.ActionNoop: 890, planparse.ActionScale: 100, planparse.ActionUnmanage: 10}, counts)
	require.Len(t, cs.Resources, 110)
}

func parseFile(t *testing.T, path string) *planparse.ChangeSet {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	cs, err := planparse.ParseBytes(raw)
	require.NoError(t, err)
	return cs
}
