package drift

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A check that failed for the whole repository is kept on the repository's
// record until one succeeds; seeing the repository again keeps it.
func TestRepoCheckedKeepsTheLastFailure(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ds := NewStore(st)
			require.NoError(t, ds.RepoChecked(ctx, "acme", "unknown", "boom", t0), "an unknown repository is not made known")
			r, err := ds.Repo(ctx, "acme", "unknown")
			require.NoError(t, err)
			require.Nil(t, r)

			require.NoError(t, ds.SawRepo(ctx, Repo{Installation: 1, Owner: "acme", Name: "streams", DefaultBranch: "main"}))
			require.NoError(t, ds.RepoChecked(ctx, "acme", "streams", "read the head of main on acme/streams: 500", t0))
			require.NoError(t, ds.SawRepo(ctx, Repo{Installation: 1, Owner: "acme", Name: "streams", DefaultBranch: "trunk"}))
			r, err = ds.Repo(ctx, "acme", "streams")
			require.NoError(t, err)
			require.Equal(t, "trunk", r.DefaultBranch)
			require.Equal(t, "read the head of main on acme/streams: 500", r.LastError)
			require.Equal(t, t0, r.FailedAt)

			require.NoError(t, ds.RepoChecked(ctx, "acme", "streams", "", t0.Add(time.Hour)))
			r, err = ds.Repo(ctx, "acme", "streams")
			require.NoError(t, err)
			require.Empty(t, r.LastError)
			require.Zero(t, r.FailedAt)
		})
	}
}
