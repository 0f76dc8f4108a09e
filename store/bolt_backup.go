package store

import (
	"fmt"
	"io"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the whole store to w while it stays in
// use: one read transaction (bbolt's Tx.WriteTo), so writers carry on and the
// copy is the store as of the moment the transaction began. The copy is a
// complete bbolt file that OpenBolt opens as it is. It returns the bytes
// written.
func (b *Bolt) Backup(w io.Writer) (int64, error) { return b.BackupSized(w, nil) }

// BackupSized is Backup that first tells size the exact length of the copy
// (for an HTTP Content-Length, so that a cut download is an error on the
// client's side, not a short file that looks whole).
func (b *Bolt) BackupSized(w io.Writer, size func(int64)) (int64, error) {
	var n int64
	err := b.db.View(func(tx *bolt.Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, txError("back up store", err)
	}
	return n, nil
}

// BackupFile backs up the store file at path when no shardgate holds it: the
// file is opened read-only and shared, so a running shardgate (which holds it
// exclusively) makes this fail with ErrInUse after lockWait; back a running
// one up through its admin listener instead (GET /admin/backup).
func BackupFile(path string, w io.Writer, lockWait time.Duration) (int64, error) {
	db, err := openReadOnly(path, lockWait)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.View(func(tx *bolt.Tx) error {
		if err := checkSchema(tx); err != nil {
			return err
		}
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("back up store %s: %w", path, err)
	}
	return n, nil
}

// BackupInfo is what VerifyBackup read from a backup.
type BackupInfo struct {
	Schema     string
	QueuedJobs int
	Jobs       int
	// RecordBuckets counts the keyed-record buckets (plans, attestations, ...).
	RecordBuckets int
}

// VerifyBackup checks that the file at path is a whole shardgate store that
// this version reads: bbolt's consistency check passes, the schema is ours and
// every queue bucket is there. A truncated or foreign file fails with
// ErrNotStore. It never writes to the file.
func VerifyBackup(path string) (BackupInfo, error) {
	var info BackupInfo
	db, err := openReadOnly(path, DefaultLockTimeout)
	if err != nil {
		return info, err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) (err error) {
		defer func() { // a damaged page may panic bbolt; see openDB
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: the file is corrupt (%v)", ErrNotStore, r)
			}
		}()
		// Drain the whole channel: its goroutine reads the transaction's pages
		// and must be done before the transaction ends.
		var first error
		for cerr := range tx.Check() {
			if first == nil {
				first = cerr
			}
		}
		if first != nil {
			return fmt.Errorf("%w: consistency check: %v", ErrNotStore, first)
		}
		if err := checkSchema(tx); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketJobs, bucketPayloads, bucketQueued, bucketRunning,
			bucketFinished, bucketDelayed, bucketDeliveries, bucketRecords} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: bucket %s is missing", ErrNotStore, name)
			}
		}
		info.Schema = schemaVersion
		info.QueuedJobs = tx.Bucket(bucketQueued).Stats().KeyN
		info.Jobs = tx.Bucket(bucketJobs).Stats().KeyN
		return tx.Bucket(bucketRecords).ForEachBucket(func([]byte) error { info.RecordBuckets++; return nil })
	})
	if err != nil {
		return info, fmt.Errorf("verify backup %s: %w", path, err)
	}
	return info, nil
}

func checkSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return fmt.Errorf("%w: no meta bucket", ErrNotStore)
	}
	if v := meta.Get(keySchema); string(v) != schemaVersion {
		return fmt.Errorf("%w: schema version %q, this shardgate reads %q", ErrNotStore, v, schemaVersion)
	}
	return nil
}

// openReadOnly opens a store file without writing to it (no init, no
// recount) under a shared lock. Errors as for OpenBolt.
func openReadOnly(path string, lockWait time.Duration) (db *bolt.DB, err error) {
	// bbolt would create a missing file, and initialise an empty one (which
	// fails on a read-only handle with a confusing error).
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("open store %s: %w: the file is empty", path, ErrNotStore)
	}
	if lockWait <= 0 {
		lockWait = DefaultLockTimeout
	}
	return openDB(path, lockWait, true)
}
