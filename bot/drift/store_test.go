package drift

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
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

// A check records the shard counts the project asks (what other
// repositories' pull requests are judged with); a failed check keeps the
// last ones known.
func TestRecordKeepsTheDesiredCounts(t *testing.T) {
	desired := []planparse.Desired{{Address: "module.billing", StreamPrefix: "orders", ConsumerGroup: "billing", ShardCount: 4}}
	res := Check(&planparse.ChangeSet{Desired: desired}, policy.Coordinator{}, nil)
	require.Equal(t, desired, res.Desired)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	res.Repo, res.Project, res.CheckedAt = "acme/ledger", "core", at
	rec := record(res, nil, 0)
	require.Equal(t, desired, rec.Desired)
	failed := record(Failed("acme/ledger", "core", "main", "abc", at.Add(time.Hour), "terraform failed", ""), rec, 0)
	require.Equal(t, desired, failed.Desired, "a failed check keeps what was known")
}
