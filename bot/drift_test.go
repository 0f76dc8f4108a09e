package bot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store/storeopen"
)

// The App removed from a repository, or uninstalled: its drift checks stop and
// its records go.
func TestInstallationEventsForgetDriftRepositories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardgate.db")
	st := storeopen.Bolt(t, path)
	srv := newOpsServer(t, st, path, serverconfig.AdminConfig{})
	ctx := context.Background()
	ds := srv.drift.store
	for _, r := range []drift.Repo{{Installation: 2, Owner: "octocat", Name: "Hello-World"}, {Installation: 2, Owner: "octocat", Name: "other"},
		{Installation: 3, Owner: "acme", Name: "infra"}} {
		require.NoError(t, ds.SawRepo(ctx, r))
		require.NoError(t, ds.Put(ctx, &drift.Record{Repo: r.FullName(), Project: "streams", Status: drift.StatusDrifted}))
	}
	payload := func(path string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "github", "webhooks", path))
		require.NoError(t, err)
		return b
	}
	h := &Installation{Base: srv.base()}
	require.NoError(t, h.Handle(ctx, "installation_repositories", "d1", payload("installation_repositories/removed.payload.json")))
	names := func() []string {
		repos, err := ds.Repos(ctx)
		require.NoError(t, err)
		recs, err := ds.List(ctx)
		require.NoError(t, err)
		var out []string
		for _, r := range repos {
			out = append(out, r.FullName())
		}
		for _, r := range recs {
			out = append(out, "record "+r.Repo)
		}
		return out
	}
	require.Equal(t, []string{"acme/infra", "octocat/other", "record acme/infra", "record octocat/other"}, names())

	require.NoError(t, h.Handle(ctx, "installation", "d2", payload("installation/deleted.payload.json")))
	require.Equal(t, []string{"acme/infra", "record acme/infra"}, names())
}
