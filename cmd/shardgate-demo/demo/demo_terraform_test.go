package demo

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// knownSecrets makes the demo's made-up credentials recognisable, so the
// test can prove they never reach the output.
func knownSecrets(t *testing.T) []string {
	t.Helper()
	var n atomic.Int32
	made := []string{"Wh00k-s3cret-0f-the-demo", "S1m-passw0rd-0f-the-demo"}
	old := newSecret
	newSecret = func() (string, error) { return made[int(n.Add(1)-1)%len(made)], nil }
	t.Cleanup(func() { newSecret = old })
	return made
}

// The whole story with the real terraform: denied, waived, allowed, merged,
// applied and converged, with the coordinator at 16 shards. It commits the
// module built into the demo (this test runs in cmd/shardgate-demo/demo, where no
// examples/ is). An apply that never starts fails it: shardgate applies on
// merge.
func TestWholeStory(t *testing.T) {
	secrets := knownSecrets(t)
	var out bytes.Buffer
	res, err := Run(t.Context(), Options{Terraform: tftest.Binary(t), Out: &out,
		ApplyTimeout: time.Minute, Tick: 50 * time.Millisecond})
	var timeout *ApplyTimeoutError
	if errors.As(err, &timeout) && !timeout.Started {
		t.Fatalf("shardgate never started the apply on merge: %v\n%s", err, out.String())
	}
	require.NoError(t, err, out.String())

	require.Len(t, res.Steps, 4)
	wantChecks := []string{"failure", "failure", "success", "success"}
	for i, s := range res.Steps {
		require.Equal(t, wantChecks[i], s.Check, "step %d: %s", i+1, s.Title)
	}
	require.Contains(t, res.Steps[0].Comment, "❌ **Denied")
	require.Contains(t, res.Steps[0].Comment, "(`shard_delta`)")
	require.Contains(t, res.Steps[1].Comment, "`policy-exception/shard_delta` by alice waives `shard_delta`")
	require.Contains(t, res.Steps[1].Comment, "(`quiesce_attestation`)")
	require.Contains(t, res.Steps[2].Comment, "✅ **Allowed")
	require.Contains(t, res.Steps[3].Comment, "### Apply")
	require.Contains(t, applyRow(res.Steps[3].Comment), "✅ applied", "the comment's final Apply row")
	require.Equal(t, "success", res.ApplyCheck)
	require.Len(t, res.MergeSHA, 40)

	var got []string
	for _, g := range res.Groups {
		got = append(got, fmt.Sprintf("%s/%s=%d %s %t", g.StreamPrefix, g.ConsumerGroup, g.ShardCount, g.State, g.ActiveMigration != nil))
	}
	require.Equal(t, []string{
		"create-order/audit=16 " + string(coord.GroupStable) + " false",
		"create-order/billing=16 " + string(coord.GroupStable) + " false",
		"payments/ledger=2 " + string(coord.GroupStable) + " false",
	}, got)

	var scales []coordsim.AuditEvent
	for _, e := range res.ScaleEvents {
		if e.Action == coordsim.ActionScaleStream && e.Outcome == "SUCCESS" {
			scales = append(scales, e)
		}
	}
	require.Len(t, scales, 1, "one stream-wide scale of create-order after the merge")
	require.Equal(t, "create-order", scales[0].StreamPrefix)
	require.NotEmpty(t, scales[0].RequestID)

	text := out.String()
	for _, want := range []string{"Step 1/6", "Step 3/6", "Step 5/6", "Step 6/6", `check run "shardgate/apply: streams"`,
		"the coordinator's audit log since the merge", "SCALE_STREAM"} {
		require.Contains(t, text, want)
	}
	for _, s := range secrets {
		require.NotContains(t, text, s)
	}
	require.NotContains(t, text, "PRIVATE KEY")
}

// --until allowed stops after the attestation, before any merge. It commits
// the module from a directory (--module).
func TestUntilAllowed(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(t.Context(), Options{Terraform: tftest.Binary(t), ModuleDir: filepath.Join("..", "..", "..", "examples", "modules", "stream-group"),
		Out: &out, Until: UntilAllowed, Quiet: true})
	require.NoError(t, err, out.String())
	require.Len(t, res.Steps, 3)
	require.Empty(t, res.MergeSHA)
	require.Empty(t, res.Groups)
	text := out.String()
	require.Contains(t, text, "Step 3/3")
	require.Contains(t, text, "Stopped once allowed")
	require.NotContains(t, text, "│ <!-- shardgate -->", "quiet prints headlines, not whole comments")
	require.Equal(t, 3, strings.Count(text, "**Status:**"))
}
