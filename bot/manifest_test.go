package bot

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/ghapp"
)

func TestManifestCoversEveryHandledEvent(t *testing.T) {
	for _, h := range (&Server{}).handlers() {
		for _, e := range h.Handles() {
			require.True(t, ghapp.ManifestEventKnown(e), "event %q is handled but the manifest does not know it", e)
		}
	}
	m := NewManifest("shardgate", "https://shardgate.example.test")
	require.Equal(t, "https://shardgate.example.test/webhook", m.HookAttributes.URL)
	require.Contains(t, m.DefaultEvents, "pull_request")
	require.Contains(t, m.DefaultEvents, "issue_comment")
	require.Equal(t, "write", m.DefaultPermissions["checks"])
	require.Equal(t, "read", m.DefaultPermissions["contents"], "least privilege: contents are only read")
	require.Equal(t, "read", m.DefaultPermissions["members"])
}
