package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FailingJobs implements Store: the delayed (waiting for a retry) and
// running jobs that carry an error, and the failed jobs of the finished
// index from since on. Retried jobs already due and back in the queued index
// are not walked for (the queue can be long); a worker claims them next.
func (b *Bolt) FailingJobs(ctx context.Context, since time.Time, n int) ([]*Job, error) {
	var out []*Job
	err := b.view(ctx, "list failing jobs", func(tx *bolt.Tx) error {
		q := queueOf(tx)
		add := func(id string, keep func(*Job) bool) error {
			j, err := q.getWithPayload(id)
			if err != nil {
				return err
			}
			if keep(j) {
				out = append(out, j)
			}
			return nil
		}
		retrying := func(j *Job) bool { return j.LastError != "" && (j.State == JobQueued || j.State == JobRunning) }
		if err := q.delayed.ForEach(func(k, _ []byte) error {
			if len(k) <= 8 {
				return nil
			}
			return add(string(k[8:]), retrying)
		}); err != nil {
			return err
		}
		if err := q.running.ForEach(func(k, _ []byte) error { return add(string(k), retrying) }); err != nil {
			return err
		}
		from := binary.BigEndian.AppendUint64(nil, uint64(max(since.UnixNano(), 0)))
		c := q.finished.Cursor()
		for k, _ := c.Last(); k != nil && len(k) > 8 && bytes.Compare(k[:8], from) >= 0; k, _ = c.Prev() {
			if err := add(string(k[8:]), func(j *Job) bool { return j.State == JobFailed }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
