package bot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// Each delivery gets the installation and pull request it is about; only
// comments of one command that may run once for many get a coalesce key,
// which names the author.
func TestIdentifyReadsTheSchedulingIdentity(t *testing.T) {
	comment := func(user, body, action string) []byte {
		return githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 3, Owner: "acme", Repo: "streams",
			RepoID: 9, Number: 7, Author: "octo-dev", CommentID: 11, Body: body, User: user, Action: action})
	}
	lane := "acme/streams#7"
	for _, tt := range []struct {
		name, user, body, action, key string
	}{
		{"help", "alice", "/shardgate help", "", lane + " @alice /shardgate help"},
		{"plan, spelled otherwise", "Alice", "please:\n\n/shardgate   PLAN\n", "", lane + " @alice /shardgate plan"},
		{"drift", "bob", "/shardgate drift", "", lane + " @bob /shardgate drift"},
		{"apply never", "alice", "/shardgate apply streams", "", ""},
		{"attest never", "alice", "/shardgate attest quiesce orders", "", ""},
		{"two commands", "alice", "/shardgate help\n/shardgate plan", "", ""},
		{"malformed", "alice", "/shardgate help me", "", ""},
		{"no command", "alice", "looks good", "", ""},
		{"edited", "alice", "/shardgate help", "edited", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := identify("issue_comment", comment(tt.user, tt.body, tt.action))
			require.Equal(t, webhook.Identity{Installation: 3, Lane: lane, CoalesceKey: tt.key}, got)
		})
	}

	// A cancel stops the lane's running plan: queued in the lane, it would
	// wait for that plan to end. A comment that also plans stays in it.
	for _, body := range []string{"/shardgate cancel", "stop it\n\n/shardgate cancel\n/shardgate CANCEL"} {
		require.Equal(t, webhook.Identity{Installation: 3, Priority: cancelPriority}, identify("issue_comment", comment("alice", body, "")), body)
	}
	require.Equal(t, webhook.Identity{Installation: 3, Lane: lane}, identify("issue_comment", comment("alice", "/shardgate cancel\n/shardgate plan", "")))

	pr := githubtest.PullRequestOpened(t, githubtest.PRPayload{InstallationID: 3, Owner: "acme", Repo: "ledger", RepoID: 4, Number: 2,
		HeadRef: "b", HeadSHA: "0123456789012345678901234567890123456789", BaseRef: "main", Author: "octo-dev"})
	require.Equal(t, webhook.Identity{Installation: 3, Lane: "acme/ledger#2"}, identify("pull_request", pr))
	require.Equal(t, webhook.Identity{}, identify("pull_request", []byte(`not json`)))
	require.Equal(t, webhook.Identity{Installation: 5}, identify("installation", []byte(`{"installation":{"id":5}}`)))
}

// BenchmarkIdentify is what intake adds to each delivery to read its
// scheduling identity: a real 28 KB pull_request payload.
func BenchmarkIdentify(b *testing.B) {
	payload, err := os.ReadFile(filepath.Join("..", "testdata", "github", "webhooks", "pull_request", "opened.payload.json"))
	require.NoError(b, err)
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		identify("pull_request", payload)
	}
}
