package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Errors OpenBolt returns that callers may branch on.
var (
	// ErrInUse: another process (or another Bolt in this one) holds the file.
	ErrInUse = errors.New("store: in use by another shardgate process")
	// ErrNotStore: the file exists but is not a shardgate bbolt store, or is
	// one that is corrupt.
	ErrNotStore = errors.New("store: not a valid shardgate store")
)

const (
	// DefaultLockTimeout is how long OpenBolt waits for the file lock. It is
	// short on purpose: a second shardgate on the same file must fail at start,
	// not hang until the first one exits.
	DefaultLockTimeout = time.Second
	// DefaultBatchDelay bounds how long an Enqueue waits for others to share
	// its fsync. bbolt's 10ms default is longer than the fsync it saves (about
	// 4ms here) and doubled the latency of a lone delivery; writers that arrive
	// while a batch commits join the next one anyway, so a short delay loses
	// little coalescing (BenchmarkEnqueueParallel: ~650/s at 10ms, ~1000/s at
	// 2ms, on 2 shared cores).
	DefaultBatchDelay = 2 * time.Millisecond
	// DeliveryRetention is how long GitHub may redeliver a webhook. Delivery
	// records must outlive it, so PruneDone must be given a time at least this
	// far in the past or a late redelivery would run a second time.
	DeliveryRetention = 7 * 24 * time.Hour

	schemaVersion = "1"
)

// Top-level buckets. Records live in nested buckets under bucketRecords so
// that no caller-chosen name can collide with the queue's own buckets.
var (
	bucketMeta       = []byte("meta")
	bucketJobs       = []byte("jobs")     // id → job JSON without payload
	bucketPayloads   = []byte("payloads") // id → raw payload
	bucketQueued     = []byte("queued")   // id → scheduleValue: the queue in arrival order
	bucketRunning    = []byte("running")  // id → scheduleValue
	bucketFinished   = []byte("finished") // finish time (8 bytes BE ns) + id → empty
	bucketDelayed    = []byte("delayed")  // not-before time (8 bytes BE ns) + id → scheduleValue
	bucketDeliveries = []byte("deliveries")
	bucketRecords    = []byte("records")

	keySchema      = []byte("schema")
	keyQueuedCount = []byte("queued_count")
	// keyQueuedPriority was a count an older version kept; it is removed.
	keyQueuedPriority = []byte("queued_priority")
)

// Bolt is the embedded Store: one bbolt file, one process. A claim lasts as
// long as the process, so Heartbeat only checks the owner and ReclaimExpired
// has nothing to do; RecoverRunning at the next start takes a dead process's
// jobs over.
type Bolt struct {
	db         *bolt.DB
	path       string
	now        func() time.Time
	closeOnce  sync.Once
	closeErr   error
	lockWait   time.Duration
	batchDelay time.Duration
	noSync     bool
}

var _ Store = (*Bolt)(nil)

// BoltOption tunes OpenBolt.
type BoltOption func(*Bolt)

// WithLockTimeout sets how long OpenBolt waits for another process to let go
// of the file (DefaultLockTimeout). Zero is replaced by the default, since
// bbolt would otherwise wait forever.
func WithLockTimeout(d time.Duration) BoltOption {
	return func(b *Bolt) {
		if d > 0 {
			b.lockWait = d
		}
	}
}

// WithClock replaces time.Now for job times (tests of PruneDone).
func WithClock(now func() time.Time) BoltOption {
	return func(b *Bolt) { b.now = now }
}

// WithoutSync skips fsync on commit: a crash may lose the last commits. For
// tests and benchmarks only; intake acknowledges a webhook only once it is
// durable.
func WithoutSync() BoltOption {
	return func(b *Bolt) { b.noSync = true }
}

// OpenBolt opens (or creates) the store file at path.
func OpenBolt(path string, opts ...BoltOption) (*Bolt, error) {
	b := &Bolt{path: path, now: time.Now, lockWait: DefaultLockTimeout, batchDelay: DefaultBatchDelay}
	for _, o := range opts {
		o(b)
	}
	db, err := openDB(path, b.lockWait, false)
	if err != nil {
		return nil, err
	}
	db.MaxBatchDelay = b.batchDelay
	db.NoSync = b.noSync
	b.db = db
	if err := b.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return b, nil
}

// openDB turns bbolt's terse open errors into ones an operator can act on;
// readOnly opens under a shared lock, writing nothing.
func openDB(path string, lockWait time.Duration, readOnly bool) (db *bolt.DB, err error) {
	// bbolt trusts a file whose meta pages check out and may panic on what
	// they point to; a bad file must be an error, not a crash at start.
	// bbolt does not close the file when it panics, so keep it to release
	// the lock: a caller that reports the error may try again in-process.
	var file *os.File
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				unlockFile(file)
				_ = file.Close()
			}
			db, err = nil, fmt.Errorf("open store %s: %w: the file is corrupt (%v)", path, ErrNotStore, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: readOnly, Timeout: lockWait, OpenFile: openFile})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("open store %s: %w (file lock still held after %s)", path, ErrInUse, lockWait)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch),
		errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrInvalidMapping):
		return nil, fmt.Errorf("open store %s: %w: the file is not a bbolt database or is corrupt (%v)", path, ErrNotStore, err)
	default:
		// A missing directory, a permission, a directory given as the file:
		// the OS error already says what is wrong.
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
}

// init creates the buckets of a new file, and refuses a bbolt file that some
// other program wrote: writing our buckets into it would damage its data.
func (b *Bolt) init() (err error) {
	defer func() { // see openDB
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the file is corrupt (%v)", ErrNotStore, r)
		}
	}()
	return b.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			empty := true
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return fmt.Errorf("%w: the bbolt file holds other data", ErrNotStore)
			}
			var err error
			if meta, err = tx.CreateBucket(bucketMeta); err != nil {
				return fmt.Errorf("create bucket: %w", err)
			}
			if err := meta.Put(keySchema, []byte(schemaVersion)); err != nil {
				return fmt.Errorf("write schema: %w", err)
			}
		}
		if v := meta.Get(keySchema); string(v) != schemaVersion {
			return fmt.Errorf("%w: schema version %q, this shardgate reads %q", ErrNotStore, v, schemaVersion)
		}
		for _, name := range [][]byte{bucketJobs, bucketPayloads, bucketQueued, bucketRunning,
			bucketFinished, bucketDelayed, bucketDeliveries, bucketRecords} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		// The counter is kept in the same transactions as the queued index, so
		// it cannot drift; recounting once at open costs one walk of two
		// buckets of bare ids and repairs a file written by a buggy version.
		if err := putCount(meta, tx.Bucket(bucketQueued).Stats().KeyN+tx.Bucket(bucketDelayed).Stats().KeyN); err != nil {
			return err
		}
		// The claim's indexes are derived from the queued, delayed and
		// running ones, afresh at each open: a file another version wrote
		// (which did not keep them) is indexed as it is.
		_ = meta.Delete(keyQueuedPriority) // an older version's counter, unused now
		return rebuildIndex(tx)
	})
}

// Close releases the file. Calling it again returns the first result.
func (b *Bolt) Close() error {
	b.closeOnce.Do(func() {
		if err := b.db.Close(); err != nil {
			b.closeErr = fmt.Errorf("close store %s: %w", b.path, err)
		}
	})
	return b.closeErr
}

// Kind names the store in what an operator reads (/readyz).
func (b *Bolt) Kind() string { return "bbolt" }

// Ping checks that the store can be read (for /readyz).
func (b *Bolt) Ping(ctx context.Context) error {
	return b.view(ctx, "ping store", func(tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs) == nil {
			return errors.New("jobs bucket is missing")
		}
		return nil
	})
}

// view runs fn in a read transaction after checking ctx; bbolt cannot
// interrupt a transaction, so that is the only point where ctx counts.
func (b *Bolt) view(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := b.db.View(fn); err != nil {
		return txError(what, err)
	}
	return nil
}

// update is view for a write transaction.
// batch is update through bbolt's Batch: concurrent writers share one
// transaction and one fsync. fn may run more than once (bbolt re-runs a batch
// without the call that failed), so it must only write through tx.
func (b *Bolt) batch(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := b.db.Batch(fn); err != nil {
		return txError(what, err)
	}
	return nil
}

func (b *Bolt) update(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := b.db.Update(fn); err != nil {
		return txError(what, err)
	}
	return nil
}

func txError(what string, err error) error {
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("%s: store is closed: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// clone copies a value out of a transaction: bbolt's slices point into the
// memory map and are only valid until the transaction ends.
func clone(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append([]byte{}, v...)
}
