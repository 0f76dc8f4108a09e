package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// A file written by a version without the claim's indexes (or one whose
// indexes another version let go stale) is claimed from fairly once
// reopened: the indexes are derived again at open from the queued,
// delayed and running jobs.
func TestBoltClaimIndexesRebuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	s := openBolt(t, path)
	a1 := enqueueFor(t, s, "a1", 1, "o/a#1", "")
	enqueueFor(t, s, "a2", 1, "o/a#1", "")
	enqueueFor(t, s, "a3", 1, "o/a#2", "")
	enqueueFor(t, s, "b1", 2, "o/b#1", "")
	require.Equal(t, a1.ID, claim(t, s, "w1").ID)
	require.NoError(t, s.Close())

	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		for _, name := range indexBuckets {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())

	s = openBolt(t, path)
	// a1 was running when the process ended: RecoverRunning requeues it.
	n, err := s.RecoverRunning(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "a1", claimedDelivery(t, s, "w1"))
	require.Equal(t, "b1", claimedDelivery(t, s, "w2"), "installation 2 runs nothing")
	require.Equal(t, "a3", claimedDelivery(t, s, "w3"), "a2 waits for a1 in its lane")
	require.Empty(t, claimedDelivery(t, s, "w4"))
}
