package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

func openBolt(t testing.TB, path string, opts ...BoltOption) *Bolt {
	t.Helper()
	b, err := OpenBolt(path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestBolt(t *testing.T) {
	testStore(t, func(t *testing.T, clk *fakeclock.Clock) Store {
		return openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"), WithClock(clk.Now))
	})
}

func TestBoltPersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	s := openBolt(t, path)
	a := enqueue(t, s, "d-a", "event", []byte("payload a"))
	b := enqueue(t, s, "d-b", "event", []byte("payload b"))
	require.Equal(t, a.ID, claim(t, s, "w").ID)
	require.NoError(t, s.Complete(ctx, a.ID, "w", nil))
	require.NoError(t, s.Put(ctx, "plans", "acme/infra#1", []byte("result")))
	require.NoError(t, s.Close())

	s = openBolt(t, path)
	require.Equal(t, JobDone, getJob(t, s, a.ID).State)
	require.Equal(t, b, getJob(t, s, b.ID))
	require.Equal(t, 1, countQueued(t, s))
	got, err := s.Get(ctx, "plans", "acme/infra#1")
	require.NoError(t, err)
	require.Equal(t, []byte("result"), got)

	require.ErrorIs(t, s.Enqueue(ctx, &Job{DeliveryID: "d-a"}, 0), ErrDuplicate, "deliveries survive a restart")
	c := enqueue(t, s, "d-c", "event", nil)
	require.Greater(t, c.ID, b.ID, "the id sequence survives a restart")
	require.Equal(t, b.ID, claim(t, s, "w").ID)
}

func TestBoltRecoversJobsOfACrashedProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	s := openBolt(t, path)
	j := enqueue(t, s, "d1", "event", []byte("body"))
	enqueue(t, s, "d2", "event", nil)
	require.Equal(t, j.ID, claim(t, s, "w").ID)
	require.NoError(t, s.Close()) // the process dies without Complete or Release

	s = openBolt(t, path)
	require.Equal(t, JobRunning, getJob(t, s, j.ID).State)
	n, err := s.RecoverRunning(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 2, countQueued(t, s))
	again := claim(t, s, "w2")
	require.Equal(t, j.ID, again.ID)
	require.Equal(t, 2, again.Attempts)
	require.Equal(t, []byte("body"), again.Payload)
}

func TestBoltRefusesASecondOpener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardgate.db")
	openBolt(t, path)

	start := time.Now()
	_, err := OpenBolt(path, WithLockTimeout(200*time.Millisecond))
	require.ErrorIs(t, err, ErrInUse)
	require.Contains(t, err.Error(), path)
	require.Contains(t, err.Error(), "in use by another shardgate process")
	require.Less(t, time.Since(start), 2*time.Second, "a second opener fails fast instead of hanging")
}

func TestBoltRefusesFilesItDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	otherBolt := filepath.Join(dir, "other.db")
	db, err := bolt.Open(otherBolt, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket([]byte("vault"))
		if err != nil {
			return err
		}
		return bk.Put([]byte("k"), []byte("v"))
	}))
	require.NoError(t, db.Close())

	// A store whose pages after the two meta pages were overwritten: the meta
	// checksums still match, and bbolt panics on the freelist they point to.
	corrupt := filepath.Join(dir, "corrupt.db")
	s, err := OpenBolt(corrupt)
	require.NoError(t, err)
	enqueue(t, s, "d", "x", []byte("p"))
	require.NoError(t, s.Close())
	data, err := os.ReadFile(corrupt)
	require.NoError(t, err)
	for i := 2 * os.Getpagesize(); i < len(data); i++ {
		data[i] = 0xff
	}
	require.NoError(t, os.WriteFile(corrupt, data, 0o600))

	tests := []struct {
		name     string
		content  []byte // nil: use path as is
		path     string
		wantText string
	}{
		{name: "text file", content: []byte(strings.Repeat("not a database\n", 2000)), wantText: "not a valid shardgate store"},
		{name: "short garbage", content: []byte("hello"), wantText: "not a valid shardgate store"},
		{name: "page of zeros", content: make([]byte, 4096*4), wantText: "not a valid shardgate store"},
		{name: "another program's bbolt file", path: otherBolt, wantText: "holds other data"},
		{name: "store with corrupt pages", path: corrupt, wantText: "the file is corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if tt.content != nil {
				path = filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
				require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			}
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			_, err = OpenBolt(path)
			require.ErrorIs(t, err, ErrNotStore)
			require.Contains(t, err.Error(), path)
			require.Contains(t, err.Error(), tt.wantText)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, before, after, "a refused file is left as it was")
			_, err = OpenBolt(path, WithLockTimeout(50*time.Millisecond))
			require.NotErrorIs(t, err, ErrInUse, "a refused open lets go of the file lock")
		})
	}

	t.Run("missing directory", func(t *testing.T) {
		_, err := OpenBolt(filepath.Join(dir, "no", "such", "dir", "s.db"))
		require.ErrorIs(t, err, os.ErrNotExist)
		require.NotErrorIs(t, err, ErrNotStore)
	})
	t.Run("a directory", func(t *testing.T) {
		_, err := OpenBolt(dir)
		require.ErrorContains(t, err, "is a directory")
		require.NotErrorIs(t, err, ErrNotStore)
	})
}

func TestBoltCloseIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s, err := OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())

	// After Close every call fails instead of touching freed memory.
	require.ErrorContains(t, s.Ping(ctx), "store is closed")
	require.ErrorContains(t, s.Enqueue(ctx, &Job{Kind: "x"}, 0), "store is closed")
	_, err = s.Claim(ctx, "w")
	require.Error(t, err)
	require.Error(t, s.Put(ctx, "b", "k", nil))
	_, err = s.List(ctx, "b", "")
	require.Error(t, err)
}

func TestBoltStoresLargePayloads(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	big := []byte(strings.Repeat("0123456789abcdef", 25<<20/16)) // 25 MiB, intake's limit
	j := enqueue(t, s, "d1", "event", big)
	got := claim(t, s, "w")
	require.Equal(t, j.ID, got.ID)
	require.Equal(t, len(big), len(got.Payload))
	require.Equal(t, big, got.Payload)
	require.NoError(t, s.Complete(context.Background(), j.ID, "w", nil))
	require.Equal(t, big, getJob(t, s, j.ID).Payload)
}

// The indexes and the counter are written in the same transactions as the
// jobs, so these states need a bug or a hand-edited file; the store must
// still start and keep working rather than trip on them forever.
func TestBoltRepairsInconsistentIndexes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	s := openBolt(t, path)
	lostQueued := enqueue(t, s, "d1", "x", nil)
	lostRunning := enqueue(t, s, "d2", "x", nil)
	kept := enqueue(t, s, "d3", "x", nil)
	claim(t, s, "w") // lostQueued
	claim(t, s, "w") // lostRunning
	require.NoError(t, s.Release(ctx, lostQueued.ID, "w"))
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
		q := queueOf(tx)
		for _, id := range []string{lostQueued.ID, lostRunning.ID} {
			if err := q.jobs.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return putCount(q.meta, 40) // a drifted counter
	}))
	require.Equal(t, 40, countQueued(t, s))
	require.NoError(t, s.Close())

	s = openBolt(t, path)
	require.Equal(t, 2, countQueued(t, s), "the counter is recounted at open")
	n, err := s.RecoverRunning(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a running entry without its job is dropped, not recovered")
	got := claim(t, s, "w")
	require.Equal(t, kept.ID, got.ID, "a queued entry without its job is skipped")
	require.Nil(t, claim(t, s, "w"))
	require.Zero(t, countQueued(t, s))
}
