package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The floor reads what judging a plan must read: every entry's actions and the
// shard counts before and after, counted here from the instances the plan was
// rendered from and from check's own reading of the plan (planparse); a second
// build is taken from the cache.
func TestFloorReadsActionsAndShardCounts(t *testing.T) {
	o := options{repo: tftest.RepoRoot(), cache: t.TempDir()}
	bin, err := buildFloor(context.Background(), o)
	require.NoError(t, err)
	again, err := buildFloor(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, bin, again)

	ins := instances(200, soloPrefix+caseHeavy)
	plan := filepath.Join(o.cache, "plan.json")
	rendered := planparsetest.Render(ins)
	require.NoError(t, os.WriteFile(plan, rendered, 0o644))
	var want floorCounts
	for _, in := range ins {
		want.Entries++
		want.Modules++
		want.ShardsBefore += in.ShardsBefore
		switch {
		case in.Removed:
			want.Changed++
			want.Deletes++
		case in.ShardsAfter != in.ShardsBefore:
			want.Changed++
			want.Deletes++
			want.Creates++
			want.ShardsAfter += in.ShardsAfter
		default:
			want.ShardsAfter += in.ShardsAfter
		}
	}
	got := runFloor(t, bin, plan)
	require.Equal(t, want, got)
	checks := checkCounts(t, rendered)
	checks.Entries = got.Entries // check keeps no count of unchanged other resources
	require.Equal(t, checks, got, "the floor reads what check reads")

	t.Run("a plan it cannot parse is exit 2 with one line", func(t *testing.T) {
		bad := filepath.Join(o.cache, "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"resource_changes":[{"type":`), 0o644))
		var stderr bytes.Buffer
		cmd := exec.Command(bin, bad)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		require.Equal(t, 2, exit.ExitCode())
		require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1)
	})
}

// floorCounts are what the floor prints.
type floorCounts struct {
	Entries, Modules, Changed, Deletes, Creates int
	ShardsBefore                                int `json:"shards_before"`
	ShardsAfter                                 int `json:"shards_after"`
}

func runFloor(t *testing.T, bin, plan string) floorCounts {
	t.Helper()
	out, err := exec.Command(bin, plan).Output()
	require.NoError(t, err)
	got := floorCounts{Entries: -1}
	require.NoError(t, json.Unmarshal(out, &got))
	return got
}

// checkCounts are the floor's counts from check's own reading of the plan
// (planparse): its changes (every stream-group instance, no-ops included) and
// the other resources' changes; all but Entries, which counts the entries of
// other resources that do not change too.
func checkCounts(t *testing.T, plan []byte) floorCounts {
	t.Helper()
	cs, err := planparse.ParseBytes(plan)
	require.NoError(t, err)
	var c floorCounts
	count := func(actions []string) {
		for _, a := range actions {
			switch a {
			case "delete":
				c.Deletes++
			case "create":
				c.Creates++
			}
		}
	}
	for _, ch := range cs.Changes {
		c.Modules++
		if !slices.Equal(ch.TerraformActions, []string{"no-op"}) {
			c.Changed++
		}
		count(ch.TerraformActions)
		if ch.ShardsBefore != nil {
			c.ShardsBefore += *ch.ShardsBefore
		}
		if ch.ShardsAfter != nil {
			c.ShardsAfter += *ch.ShardsAfter
		}
	}
	for _, o := range cs.OtherChanges {
		count(o.Actions)
	}
	return c
}
