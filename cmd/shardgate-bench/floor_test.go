package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The floor reads what judging a plan must read: every entry's actions and the
// shard counts before and after, counted here from the instances the plan was
// rendered from; a second build is taken from the cache.
func TestFloorReadsActionsAndShardCounts(t *testing.T) {
	o := options{repo: tftest.RepoRoot(), cache: t.TempDir()}
	bin, err := buildFloor(context.Background(), o)
	require.NoError(t, err)
	again, err := buildFloor(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, bin, again)

	ins := instances(200, soloPrefix+caseHeavy)
	plan := filepath.Join(o.cache, "plan.json")
	require.NoError(t, os.WriteFile(plan, planparsetest.Render(ins), 0o644))
	var want struct {
		Entries, Modules, Changed, Deletes, Creates int
		ShardsBefore                                int `json:"shards_before"`
		ShardsAfter                                 int `json:"shards_after"`
	}
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
	out, err := exec.Command(bin, plan).Output()
	require.NoError(t, err)
	got := want
	got.Entries = -1
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, want, got)

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
