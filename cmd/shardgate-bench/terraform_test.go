package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// The real-terraform plans: made once from an applied root, cached, and the
// synthesizer checked against them.
func TestRealPlanIsMadeOnceAndMatchesTheSynthesizer(t *testing.T) {
	o := options{repo: tftest.RepoRoot(), cache: t.TempDir(), terraform: tftest.Binary(t)}
	ctx := context.Background()
	for _, name := range []string{caseDenied, caseAllowed} {
		c, note, err := realPlan(ctx, o, 100, name)
		require.NoError(t, err)
		require.Equal(t, "synthesizer vs terraform at 100 instances, "+name+": identical after normalising random ids, the timestamp and the groups default", note)
		require.Equal(t, name == caseAllowed, c.allowed)
		require.Positive(t, c.bytes)
		if name == caseAllowed {
			require.Equal(t, []string{"stream-00009"}, c.attest, "10% of 10 prefixes")
			require.FileExists(t, c.data)
		}
	}
	plans, err := filepath.Glob(filepath.Join(o.cache, "terraform-100-*.json"))
	require.NoError(t, err)
	require.Len(t, plans, 2)
	before, err := os.Stat(plans[0])
	require.NoError(t, err)
	stamp := filepath.Join(o.cache, "terraform-100", "applied")
	applied, err := os.Stat(stamp)
	require.NoError(t, err)

	t.Run("the second run takes both from the cache", func(t *testing.T) {
		_, _, err := realPlan(ctx, o, 100, caseDenied)
		require.NoError(t, err)
		_, _, err = realPlan(ctx, o, 100, caseAllowed)
		require.NoError(t, err)
		after, err := os.Stat(plans[0])
		require.NoError(t, err)
		require.Equal(t, before.ModTime(), after.ModTime())
		again, err := os.Stat(stamp)
		require.NoError(t, err)
		require.Equal(t, applied.ModTime(), again.ModTime(), "not applied again")
	})
}

// The one-stream-per-instance plan terraform makes: every instance a stream of
// its own, relevant_attributes naming the coordinator resource the changes
// depend on, and conftest's twin policy still finding what shardgate finds.
func TestRealSoloPlanHasRelevantAttributes(t *testing.T) {
	o := options{repo: tftest.RepoRoot(), cache: t.TempDir(), terraform: tftest.Binary(t)}
	c, _, err := realPlan(context.Background(), o, 100, soloPrefix+caseDenied)
	require.NoError(t, err)
	plan, err := os.ReadFile(c.path)
	require.NoError(t, err)
	var doc struct {
		RelevantAttributes []struct {
			Resource  string `json:"resource"`
			Attribute []any  `json:"attribute"`
		} `json:"relevant_attributes"`
		ResourceChanges []struct {
			Address string `json:"address"`
		} `json:"resource_changes"`
	}
	require.NoError(t, json.Unmarshal(plan, &doc))
	require.Len(t, doc.ResourceChanges, 101, "100 stream groups and the coordinator resource")
	require.NotEmpty(t, doc.RelevantAttributes)
	require.Equal(t, "terraform_data.coordinator", doc.RelevantAttributes[0].Resource)
	allowed, want := shardgateViolations(t, plan, nil, nil)
	require.False(t, allowed)
	require.Empty(t, sameFindings(want, benchPolicyFindings(t, plan, nil, nil)))
	require.Equal(t, "no_destroy 1, quiesce_attestation 10", countByRule(want))

	t.Run("the floor reads terraform's plan as check does", func(t *testing.T) {
		bin, err := buildFloor(context.Background(), o)
		require.NoError(t, err)
		got := runFloor(t, bin, c.path)
		require.Equal(t, 101, got.Entries, "the coordinator resource is an entry, not a stream group")
		want := checkCounts(t, plan)
		want.Entries = got.Entries
		require.Equal(t, want, got)
	})
}
