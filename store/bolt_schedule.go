package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// boltJob is a job record as Bolt stores it: the job, and the ids of the
// jobs coalesced into it (Job.Coalesced, loaded again at each claim).
type boltJob struct {
	Job
	Merged []string `json:"merged,omitempty"`
}

// schedule is a job's scheduling identity as the queued, delayed and
// running indexes keep it beside the id, so that a claim weighs the queue
// from the indexes alone, without decoding a job record per entry.
type schedule struct {
	installation int64
	lane, key    string
	priority     int
}

// scheduleValue encodes a job's identity for an index value: empty for a job
// without one (and so for every entry an older version wrote), else the
// installation (8 bytes), the lane's length (uvarint), the lane and the
// coalesce key; a job of a priority above 0 has that before it:
// priorityMark and the priority (uvarint). An installation id is positive,
// so its first byte never is the mark.
func scheduleValue(j *Job) []byte {
	if j.Installation == 0 && j.Lane == "" && j.CoalesceKey == "" && j.Priority <= 0 {
		return []byte{}
	}
	var v []byte
	if j.Priority > 0 {
		v = binary.AppendUvarint([]byte{priorityMark}, uint64(j.Priority))
	}
	v = binary.BigEndian.AppendUint64(v, uint64(j.Installation))
	v = binary.AppendUvarint(v, uint64(len(j.Lane)))
	v = append(v, j.Lane...)
	return append(v, j.CoalesceKey...)
}

// priorityMark starts a schedule value that carries a priority.
const priorityMark = 0xff

// decodeSchedule reads scheduleValue; a value it cannot read is no identity.
func decodeSchedule(v []byte) schedule {
	if len(v) > 0 && v[0] == priorityMark {
		n, w := binary.Uvarint(v[1:])
		if w <= 0 {
			return schedule{}
		}
		s := decodeSchedule(v[1+w:])
		s.priority = int(n)
		return s
	}
	if len(v) < 9 {
		return schedule{}
	}
	s := schedule{installation: int64(binary.BigEndian.Uint64(v[:8]))}
	n, w := binary.Uvarint(v[8:])
	rest := v[8+max(w, 0):]
	if w <= 0 || n > uint64(len(rest)) {
		return schedule{}
	}
	s.lane, s.key = string(rest[:n]), string(rest[n:])
	return s
}

// claimFair moves the fairest due queued job to running (see Store.Claim)
// and coalesces its duplicates into it.
func (q queue) claimFair(owner string, now time.Time) (*Job, error) {
	if err := q.promoteDue(now); err != nil {
		return nil, err
	}
	id := q.idx.fairest()
	if id == "" {
		return nil, nil
	}
	j, err := q.getWithPayload(id)
	if errors.Is(err, ErrNotFound) {
		// An index entry without its job cannot be run; drop it rather than
		// let every later Claim stumble on it.
		if derr := q.dequeueIndex([]byte(id)); derr != nil {
			return nil, derr
		}
		return q.claimFair(owner, now)
	}
	if err != nil {
		return nil, err
	}
	if j.State != JobQueued {
		return nil, fmt.Errorf("job %s is in the queued index but %s", id, j.State)
	}
	j.State, j.Owner, j.UpdatedAt = JobRunning, owner, now
	j.Attempts++
	// Running first: the lane is then busy, so taking the job out of the
	// queue makes no next job its candidate only to unmake it.
	if err := q.run(j); err != nil {
		return nil, err
	}
	if err := q.dequeueIndex([]byte(id)); err != nil {
		return nil, err
	}
	if err := q.coalesce(j, now); err != nil {
		return nil, err
	}
	if err := q.put(j); err != nil {
		return nil, err
	}
	for _, m := range j.merged {
		d, err := q.getWithPayload(m)
		if errors.Is(err, ErrNotFound) {
			continue // pruned: nothing left to name
		}
		if err != nil {
			return nil, err
		}
		j.Coalesced = append(j.Coalesced, d)
	}
	return j, nil
}

// coalesce finishes the queued jobs that share j's coalesce key and never
// ran, as coalesced into j, and records them in j.merged.
func (q queue) coalesce(j *Job, now time.Time) error {
	if j.CoalesceKey == "" {
		return nil
	}
	for _, id := range q.idx.twins(j.CoalesceKey) {
		if id == j.ID {
			continue
		}
		d, err := q.get(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if d.State != JobQueued || d.Attempts > 0 {
			continue // one that already ran answers for itself
		}
		d.State, d.UpdatedAt, d.CoalescedInto, d.LastError = JobDone, now, j.ID, ""
		if err := q.dequeueIndex([]byte(id)); err != nil {
			return err
		}
		if err := q.finished.Put(finishedKey(now, id), []byte{}); err != nil {
			return fmt.Errorf("index finished job: %w", err)
		}
		if err := q.put(d); err != nil {
			return err
		}
		j.merged = append(j.merged, id)
	}
	return nil
}

// endCoalesced gives the jobs coalesced into j (finished at its claim) j's
// final state and error: a comment whose command failed failed.
func (q queue) endCoalesced(j *Job, now time.Time) error {
	for _, id := range j.merged {
		d, err := q.get(id)
		if errors.Is(err, ErrNotFound) {
			continue // pruned
		}
		if err != nil {
			return err
		}
		d.State, d.LastError, d.UpdatedAt = j.State, j.LastError, now
		if err := q.put(d); err != nil {
			return err
		}
	}
	return nil
}
