package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// queue is the job buckets of one transaction. Every change to the queued
// index goes through enqueueIndex/dequeueIndex so the counter beside it is
// always written in the same transaction.
type queue struct {
	meta, jobs, payloads, queued, running, finished, delayed, deliveries *bolt.Bucket
	// idx is the claim's indexes, derived from queued, running and delayed:
	// every change to those goes through a method here that keeps it.
	idx index
}

func queueOf(tx *bolt.Tx) queue {
	return queue{
		meta:       tx.Bucket(bucketMeta),
		jobs:       tx.Bucket(bucketJobs),
		payloads:   tx.Bucket(bucketPayloads),
		queued:     tx.Bucket(bucketQueued),
		running:    tx.Bucket(bucketRunning),
		finished:   tx.Bucket(bucketFinished),
		delayed:    tx.Bucket(bucketDelayed),
		deliveries: tx.Bucket(bucketDeliveries),
		idx:        indexOf(tx),
	}
}

// delivery is the value of a deliveries record.
type delivery struct {
	JobID string    `json:"job_id"`
	At    time.Time `json:"at"`
}

// jobKey renders a sequence number so that byte order is numeric order, which
// makes the first key of the queued index the oldest job.
func jobKey(seq uint64) string { return fmt.Sprintf("%020d", seq) }

// count is the number of queued jobs, delayed ones included. A counter rather than
// Bucket.Stats().KeyN: Stats walks every page of the bucket, and Enqueue
// needs the count on every call to enforce maxQueued.
func (q queue) count() int {
	v := q.meta.Get(keyQueuedCount)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

func putCount(meta *bolt.Bucket, n int) error { return putCounter(meta, keyQueuedCount, n) }

func putCounter(meta *bolt.Bucket, key []byte, n int) error {
	if n < 0 {
		n = 0
	}
	if err := meta.Put(key, binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// indexQueued puts a job's entry into the queued index and the claim's.
func (q queue) indexQueued(id, value []byte) error {
	if err := q.queued.Put(id, value); err != nil {
		return fmt.Errorf("index queued job: %w", err)
	}
	return q.idx.queued(id, decodeSchedule(value))
}

// enqueueIndex indexes a queued job with its scheduling identity.
func (q queue) enqueueIndex(j *Job) error {
	if err := q.indexQueued([]byte(j.ID), scheduleValue(j)); err != nil {
		return err
	}
	return putCount(q.meta, q.count()+1)
}

func (q queue) dequeueIndex(id []byte) error {
	v := clone(q.queued.Get(id))
	if err := q.queued.Delete(id); err != nil {
		return fmt.Errorf("unindex queued job: %w", err)
	}
	if v != nil {
		if err := q.idx.unqueued(id, decodeSchedule(v)); err != nil {
			return err
		}
	}
	return putCount(q.meta, q.count()-1)
}

// run indexes a claimed job as running.
func (q queue) run(j *Job) error {
	v := scheduleValue(j)
	if err := q.running.Put([]byte(j.ID), v); err != nil {
		return fmt.Errorf("index running job: %w", err)
	}
	return q.idx.running([]byte(j.ID), decodeSchedule(v), true)
}

// unrun takes a job out of the running index.
func (q queue) unrun(id string) error {
	v := clone(q.running.Get([]byte(id)))
	if err := q.running.Delete([]byte(id)); err != nil {
		return fmt.Errorf("unindex running job: %w", err)
	}
	if v == nil {
		return nil
	}
	return q.idx.running([]byte(id), decodeSchedule(v), false)
}

// admit refuses a job that Enqueue must not store.
func (q queue) admit(deliveryID string, maxQueued int) error {
	if deliveryID != "" && q.deliveries.Get([]byte(deliveryID)) != nil {
		return ErrDuplicate
	}
	if maxQueued > 0 && q.count() >= maxQueued {
		return ErrQueueFull
	}
	return nil
}

// get loads a job without its payload.
func (q queue) get(id string) (*Job, error) {
	if id == "" {
		return nil, fmt.Errorf("job %q: %w", id, ErrNotFound)
	}
	v := q.jobs.Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	var rec boltJob
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", id, err)
	}
	rec.Job.merged = rec.Merged
	return &rec.Job, nil
}

// getWithPayload loads a job and copies its payload out of the transaction.
func (q queue) getWithPayload(id string) (*Job, error) {
	j, err := q.get(id)
	if err != nil {
		return nil, err
	}
	if p := q.payloads.Get([]byte(id)); len(p) > 0 {
		j.Payload = clone(p)
	}
	return j, nil
}

// put writes a job's metadata. The payload is kept in its own bucket and
// written once by Enqueue: every state change rewrites the job record, and
// rewriting (and base64-encoding) a 25 MiB body each time would be waste.
func (q queue) put(j *Job) error {
	meta := *j
	meta.Payload, meta.Coalesced = nil, nil
	v, err := json.Marshal(&boltJob{Job: meta, Merged: j.merged})
	if err != nil {
		return fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	if err := q.jobs.Put([]byte(j.ID), v); err != nil {
		return fmt.Errorf("write job %s: %w", j.ID, err)
	}
	return nil
}

// insert stores a new queued job with its delivery record, in the caller's
// transaction, so a crash can never leave one without the other.
func (q queue) insert(j *Job) error {
	if err := q.put(j); err != nil {
		return err
	}
	if len(j.Payload) > 0 {
		if err := q.payloads.Put([]byte(j.ID), j.Payload); err != nil {
			return fmt.Errorf("write payload of job %s: %w", j.ID, err)
		}
	}
	if err := q.enqueueIndex(j); err != nil {
		return err
	}
	if j.DeliveryID == "" {
		return nil
	}
	d, err := json.Marshal(delivery{JobID: j.ID, At: j.CreatedAt})
	if err != nil {
		return fmt.Errorf("encode delivery: %w", err)
	}
	if err := q.deliveries.Put([]byte(j.DeliveryID), d); err != nil {
		return fmt.Errorf("write delivery of job %s: %w", j.ID, err)
	}
	return nil
}

// promoteDue moves the retried jobs whose time has come back into the queued
// index, where their ids put them ahead of younger jobs.
func (q queue) promoteDue(now time.Time) error {
	c := q.delayed.Cursor()
	var due, values [][]byte
	for k, v := c.First(); k != nil && len(k) > 8 && int64(binary.BigEndian.Uint64(k[:8])) <= now.UnixNano(); k, v = c.Next() {
		due, values = append(due, clone(k)), append(values, clone(v))
	}
	for i, k := range due {
		if err := q.delayed.Delete(k); err != nil {
			return fmt.Errorf("unindex delayed job: %w", err)
		}
		if err := q.idx.delayed(k[8:], decodeSchedule(values[i]), false); err != nil {
			return err
		}
		// Not enqueueIndex: a delayed job was counted as queued by delay.
		if err := q.indexQueued(k[8:], values[i]); err != nil {
			return err
		}
	}
	return nil
}

// delay hands a running job back to be claimed at notBefore.
func (q queue) delay(j *Job, jobErr error, notBefore, now time.Time) error {
	j.State, j.Owner, j.UpdatedAt, j.NotBefore = JobQueued, "", now, notBefore
	if jobErr != nil {
		j.LastError = jobErr.Error()
	}
	if err := q.unrun(j.ID); err != nil {
		return err
	}
	v := scheduleValue(j)
	if err := q.delayed.Put(finishedKey(notBefore, j.ID), v); err != nil {
		return fmt.Errorf("index delayed job: %w", err)
	}
	if err := q.idx.delayed([]byte(j.ID), decodeSchedule(v), true); err != nil {
		return err
	}
	// A job waiting for its retry is still queued: it counts toward the
	// queue depth and maxQueued from now, not from when it is due.
	if err := putCount(q.meta, q.count()+1); err != nil {
		return err
	}
	return q.put(j)
}

// running loads a job that must be running, for Complete and Release.
func (q queue) runningJob(id string) (*Job, error) {
	j, err := q.get(id)
	if err != nil {
		return nil, err
	}
	if j.State != JobRunning {
		return nil, fmt.Errorf("job %s is %s: %w", id, j.State, ErrNotRunning)
	}
	return j, nil
}

// ownedJob loads a job that must be running for owner, for Complete,
// Release and Retry.
func (q queue) ownedJob(id, owner string) (*Job, error) {
	j, err := q.runningJob(id)
	if err != nil {
		return nil, err
	}
	if j.Owner != owner {
		return nil, fmt.Errorf("job %s is running for %q: %w", id, j.Owner, ErrLeaseLost)
	}
	return j, nil
}

// requeue hands a running job back; it keeps its id and so its place at the
// head of the queue, and it is not refused by maxQueued: it was admitted once.
func (q queue) requeue(j *Job, now time.Time) error {
	j.State, j.Owner, j.UpdatedAt = JobQueued, "", now
	if err := q.unrun(j.ID); err != nil {
		return err
	}
	if err := q.enqueueIndex(j); err != nil {
		return err
	}
	return q.put(j)
}

// finish records the end of a running job.
func (q queue) finish(j *Job, jobErr error, now time.Time) error {
	j.State, j.LastError, j.UpdatedAt = JobDone, "", now
	if jobErr != nil {
		j.State, j.LastError = JobFailed, jobErr.Error()
	}
	if err := q.unrun(j.ID); err != nil {
		return err
	}
	if err := q.finished.Put(finishedKey(now, j.ID), []byte{}); err != nil {
		return fmt.Errorf("index finished job: %w", err)
	}
	return q.put(j)
}

// finishedKey orders finished jobs by the time they ended, for PruneDone.
func finishedKey(at time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))
	return append(k, id...)
}
