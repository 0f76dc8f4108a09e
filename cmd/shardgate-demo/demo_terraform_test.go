package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// The tests run in cmd/shardgate-demo, where no examples/ directory is: the
// demo works from the module and fixtures built into it.
func demoArgs(t *testing.T, extra ...string) []string {
	t.Helper()
	return append([]string{"--terraform", tftest.Binary(t)}, extra...)
}

// Steps a to c: denied, an approver's exception, an attestation, allowed.
func TestDemoUntilAllowed(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runDemo(context.Background(), demoArgs(t, "--until", "allowed"), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String()+stdout.String())
	out := stdout.String()
	steps := []string{
		`Step 1/3 · @octo-dev opens #1 "Scale create-order from 4 to 16 shards"`,
		"❌ **Denied: 2 coordinator changes (2 scale); 3 violations**",
		"Step 2/3 · approver @alice adds the label policy-exception/shard_delta",
		"❌ **Denied: 2 coordinator changes (2 scale); 1 violation; 2 exceptions applied**",
		"Step 3/3 · @alice comments /shardgate attest quiesce create-order (reaction +1)",
		"✅ **Allowed: 2 coordinator changes (2 scale); 2 exceptions applied**",
		"Stopped once allowed (--until allowed).",
		"shardgate demo: done in",
	}
	at := 0
	for _, s := range steps {
		i := strings.Index(out[at:], s)
		require.GreaterOrEqual(t, i, 0, "%q missing or out of order in:\n%s", s, out)
		at += i + len(s)
	}
	require.Empty(t, stderr.String())
	require.NotContains(t, out, "merges")
}

// The whole story, merge and apply included, exits 0. shardgate applies on
// merge, so an apply that never starts fails this test like any other
// broken step (stderr says which).
func TestDemoWholeStory(t *testing.T) {
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := runDemo(context.Background(), demoArgs(t, "--quiet", "--apply-timeout", "1m"), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String()+stdout.String())
	require.Less(t, time.Since(start), time.Minute)
	out := stdout.String()
	for _, s := range []string{"Step 4/6 · @alice merges #1 into main", `check run "shardgate/apply: streams"`, "completed success",
		"Step 6/6 · the coordinator after the apply", "create-order  audit    16", "SCALE_STREAM"} {
		require.Contains(t, out, s)
	}
}
