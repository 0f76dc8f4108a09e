package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// writeBackup backs s up into a new file and returns its path.
func writeBackup(t *testing.T, s *Bolt) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	var announced int64 = -1
	n, err := s.BackupSized(f, func(size int64) { announced = size })
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), n, "Backup returns the bytes it wrote")
	require.Equal(t, announced, n, "the announced size is the size written")
	return path
}

// restore puts a backup where a store file goes, as an operator would: the
// server is stopped, the file copied into place, the server started.
func restore(t *testing.T, backup string) *Bolt {
	t.Helper()
	data, err := os.ReadFile(backup)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "shardgate.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return openBolt(t, path)
}

func TestBoltBackupRestoresTheStateOfItsMoment(t *testing.T) {
	ctx := context.Background()
	s := openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	running := enqueue(t, s, "d-run", "event", []byte("running payload"))
	require.Equal(t, running.ID, claim(t, s, "w").ID)
	done := enqueue(t, s, "d-done", "event", nil)
	require.Equal(t, done.ID, claim(t, s, "w").ID)
	require.NoError(t, s.Complete(ctx, done.ID, "w", nil))
	queued := enqueue(t, s, "d-queued", "event", []byte("queued payload"))
	require.NoError(t, s.Put(ctx, "plans", "acme/streams#1", []byte("plan record")))
	require.NoError(t, s.Put(ctx, "attestations", "acme/streams#1/create-order", []byte("alice")))

	backup := writeBackup(t, s)

	// What happens after the backup is not in it.
	require.NoError(t, s.Put(ctx, "plans", "acme/streams#2", []byte("later")))
	enqueue(t, s, "d-later", "event", nil)
	require.NoError(t, s.Close())

	info, err := VerifyBackup(backup)
	require.NoError(t, err)
	require.Equal(t, BackupInfo{Schema: schemaVersion, QueuedJobs: 1, Jobs: 3, RecordBuckets: 2}, info)

	r := restore(t, backup)
	require.Equal(t, JobRunning, getJob(t, r, running.ID).State, "a job running at backup time is requeued by the next start")
	n, err := r.RecoverRunning(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 2, countQueued(t, r))
	require.Equal(t, JobDone, getJob(t, r, done.ID).State)
	first := claim(t, r, "w")
	require.Equal(t, running.ID, first.ID, "the queue keeps its order")
	require.Equal(t, []byte("running payload"), first.Payload)
	require.Equal(t, queued.ID, claim(t, r, "w").ID)
	got, err := r.Get(ctx, "plans", "acme/streams#1")
	require.NoError(t, err)
	require.Equal(t, []byte("plan record"), got)
	_, err = r.Get(ctx, "plans", "acme/streams#2")
	require.ErrorIs(t, err, ErrNotFound, "a record written after the backup is not restored")
	require.ErrorIs(t, r.Enqueue(ctx, &Job{DeliveryID: "d-queued"}, 0), ErrDuplicate,
		"delivery ids are restored: a redelivery after a restore does not run twice")
	require.NoError(t, r.Enqueue(ctx, &Job{DeliveryID: "d-later", Kind: "event"}, 0),
		"a delivery first seen after the backup is new to the restored store")
}

// A backup taken while writers commit is one moment of the store: the jobs in
// it are exactly the first k enqueued, each whole.
func TestBoltBackupIsConsistentUnderWrites(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"), WithoutSync())
	stop, progress, done := make(chan struct{}), make(chan int, 1000), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			j := &Job{DeliveryID: fmt.Sprintf("d-%05d", i), Kind: "event", Payload: bytes.Repeat([]byte{byte(i)}, 2000)}
			if err := s.Enqueue(context.Background(), j, 0); err != nil {
				done <- err
				return
			}
			select {
			case progress <- i:
			default:
			}
		}
	}()
	for i := range progress {
		if i >= 50 {
			break
		}
	}
	backup := writeBackup(t, s)
	close(stop)
	require.NoError(t, <-done)
	require.NoError(t, s.Close())

	info, err := VerifyBackup(backup)
	require.NoError(t, err)
	require.GreaterOrEqual(t, info.Jobs, 50)
	r := restore(t, backup)
	require.Equal(t, info.Jobs, countQueued(t, r))
	for i := 0; i < info.Jobs; i++ {
		j := claim(t, r, "w")
		require.NotNil(t, j, "job %d", i)
		require.Equal(t, fmt.Sprintf("d-%05d", i), j.DeliveryID, "no gap in the queue")
		require.Equal(t, bytes.Repeat([]byte{byte(i)}, 2000), j.Payload)
	}
	require.Nil(t, claim(t, r, "w"))
}

func TestBackupFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shardgate.db")
	s := openBolt(t, path)
	enqueue(t, s, "d1", "event", []byte("x"))
	require.NoError(t, s.Put(ctx, "plans", "k", []byte("v")))

	var buf bytes.Buffer
	_, err := BackupFile(path, &buf, 50*time.Millisecond)
	require.ErrorIs(t, err, ErrInUse, "a running shardgate holds the file; back it up through its admin listener")
	require.Zero(t, buf.Len())

	require.NoError(t, s.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	n, err := BackupFile(path, &buf, 0)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "backing up never writes to the store")

	out := filepath.Join(t.TempDir(), "copy.db")
	require.NoError(t, os.WriteFile(out, buf.Bytes(), 0o600))
	r := restore(t, out)
	require.Equal(t, 1, countQueued(t, r))

	missing := filepath.Join(t.TempDir(), "missing.db")
	_, err = BackupFile(missing, &buf, 0)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoFileExists(t, missing, "a mistyped path is not created")
}

func TestVerifyBackupRefusesWhatIsNotAWholeStore(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"))
	for i := 0; i < 200; i++ {
		enqueue(t, s, fmt.Sprintf("d%d", i), "event", bytes.Repeat([]byte("p"), 1000))
	}
	good := writeBackup(t, s)
	data, err := os.ReadFile(good)
	require.NoError(t, err)

	foreign := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(foreign, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("theirs")); return err }))
	require.NoError(t, db.Close())

	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	for name, path := range map[string]string{
		"truncated":   write("truncated.db", data[:len(data)/2]),
		"garbage":     write("garbage.db", bytes.Repeat([]byte("not a store "), 2000)),
		"empty":       write("empty.db", nil),
		"other bbolt": foreign,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := VerifyBackup(path)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrNotStore)
		})
	}
}
