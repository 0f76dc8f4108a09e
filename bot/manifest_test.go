package bot

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
)

func TestManifestCoversEveryHandledEvent(t *testing.T) {
	for _, h := range (&Server{}).handlers() {
		for _, e := range h.Handles() {
			if slices.Contains(internalEvents, e) {
				continue // queued by shardgate itself, never delivered by GitHub
			}
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
	require.Contains(t, m.DefaultEvents, "merge_group", "the merge queue waits for shardgate's check on its groups")
	require.Equal(t, "read", m.DefaultPermissions["merge_queues"], "GitHub sends merge_group only to an App that may read merge queues")
}

// docs/operating.md's permission table and event list are the manifest's:
// a person creating the App by hand gets what app-manifest and app-create
// ask GitHub for.
func TestOperatingDocMatchesManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "operating.md"))
	require.NoError(t, err)
	doc := string(raw)
	m := NewManifest("shardgate", "https://shardgate.example.test")

	permNames := map[string]string{
		"Contents": "contents", "Pull requests": "pull_requests", "Issues": "issues",
		"Checks": "checks", "Members (organization)": "members", "Metadata": "metadata",
		"Merge queues": "merge_queues",
	}
	table := doc[strings.Index(doc, "| permission | access | why |"):]
	table = table[:strings.Index(table, "\n\n")]
	documented := map[string]string{}
	for _, row := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(row, "|")
		require.GreaterOrEqual(t, len(cells), 4, row)
		name, access := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		key, known := permNames[name]
		require.True(t, known, "docs/operating.md names a permission the test does not know: %q", name)
		documented[key] = map[string]string{"read": "read", "read & write": "write"}[access]
	}
	require.Equal(t, m.DefaultPermissions, documented, "docs/operating.md's permission table")

	sentence := doc[strings.Index(doc, "Subscribe to the events"):]
	sentence = sentence[:strings.Index(sentence, "(")]
	var events []string
	for _, bold := range regexp.MustCompile(`\*\*([^*]+)\*\*`).FindAllStringSubmatch(sentence, -1) {
		events = append(events, strings.ReplaceAll(strings.ToLower(bold[1]), " ", "_"))
	}
	require.ElementsMatch(t, m.DefaultEvents, events, "docs/operating.md's event list")
}
