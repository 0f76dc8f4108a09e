package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The claim's indexes. They are derived from the queued, delayed and running
// indexes (and rebuilt from them at every open, so a file written by another
// version is indexed as it is), and kept in the transactions that change
// those, so that a claim finds the fairest job in O(installations · log n):
// no walk of the queue, the delayed or the running jobs under bbolt's single
// write lock, which webhook intake needs too.
var (
	// bucketCandidates holds the jobs a claim may take now: every queued
	// job without a lane, and of each lane with a queued job the oldest,
	// while the lane runs nothing and has no older job waiting for a retry.
	// Key: installation (8 bytes) + inverted priority (8) + id, so the first
	// key of an installation is its best job (highest priority, oldest).
	bucketCandidates = []byte("sched_candidates")
	// bucketLaneCandidate: lane → its key in bucketCandidates, if it has one.
	bucketLaneCandidate = []byte("sched_lane_candidate")
	// bucketLaneQueued, bucketLaneDelayed and bucketLaneRunning: laneKey +
	// id → empty, per lane its queued, delayed and running jobs in id order.
	bucketLaneQueued  = []byte("sched_lane_queued")
	bucketLaneDelayed = []byte("sched_lane_delayed")
	bucketLaneRunning = []byte("sched_lane_running")
	// bucketBusy: installation (8 bytes) → how many of its jobs run.
	bucketBusy = []byte("sched_busy")
	// bucketCoalesce: laneKey(coalesce key) + id → empty, the queued jobs
	// that have one.
	bucketCoalesce = []byte("sched_coalesce")

	indexBuckets = [][]byte{bucketCandidates, bucketLaneCandidate, bucketLaneQueued,
		bucketLaneDelayed, bucketLaneRunning, bucketBusy, bucketCoalesce}
)

// index is the claim's indexes in one transaction.
type index struct {
	candidates, laneCandidate, laneQueued, laneDelayed, laneRunning, busy, coalesce *bolt.Bucket
	// jobsQueued is the queued index, where a candidate's schedule is read.
	jobsQueued *bolt.Bucket
}

func indexOf(tx *bolt.Tx) index {
	return index{
		candidates:    tx.Bucket(bucketCandidates),
		laneCandidate: tx.Bucket(bucketLaneCandidate),
		laneQueued:    tx.Bucket(bucketLaneQueued),
		laneDelayed:   tx.Bucket(bucketLaneDelayed),
		laneRunning:   tx.Bucket(bucketLaneRunning),
		busy:          tx.Bucket(bucketBusy),
		coalesce:      tx.Bucket(bucketCoalesce),
		jobsQueued:    tx.Bucket(bucketQueued),
	}
}

// laneKey is the prefix of a lane's (or coalesce key's) entries: its length
// first, so that no lane's prefix is another's ("o/r#1" and "o/r#10").
func laneKey(lane string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(lane))), lane...)
}

func installationKey(installation int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(installation))
}

// candidateKey orders an installation's candidates by priority (highest
// first), then id.
func candidateKey(s schedule, id []byte) []byte {
	k := installationKey(s.installation)
	k = binary.BigEndian.AppendUint64(k, ^uint64(max(s.priority, 0)))
	return append(k, id...)
}

// first returns the first key of b that starts with prefix, without it.
func first(b *bolt.Bucket, prefix []byte) []byte {
	k, _ := b.Cursor().Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return nil
	}
	return clone(k[len(prefix):])
}

func putEmpty(b *bolt.Bucket, k []byte) error {
	if err := b.Put(k, []byte{}); err != nil {
		return fmt.Errorf("write claim index: %w", err)
	}
	return nil
}

func del(b *bolt.Bucket, k []byte) error {
	if err := b.Delete(k); err != nil {
		return fmt.Errorf("write claim index: %w", err)
	}
	return nil
}

// queued indexes a job entering the queued index.
func (x index) queued(id []byte, s schedule) error {
	if s.key != "" {
		if err := putEmpty(x.coalesce, append(laneKey(s.key), id...)); err != nil {
			return err
		}
	}
	if s.lane == "" {
		return putEmpty(x.candidates, candidateKey(s, id))
	}
	if err := putEmpty(x.laneQueued, append(laneKey(s.lane), id...)); err != nil {
		return err
	}
	if c := x.laneCandidate.Get([]byte(s.lane)); len(c) > 16 && bytes.Compare(c[16:], id) < 0 {
		return nil // an older job is the lane's candidate, and stays it: nothing to write
	}
	return x.refresh(s.lane)
}

// unqueued is queued undone, for a job leaving the queued index.
func (x index) unqueued(id []byte, s schedule) error {
	if s.key != "" {
		if err := del(x.coalesce, append(laneKey(s.key), id...)); err != nil {
			return err
		}
	}
	if s.lane == "" {
		return del(x.candidates, candidateKey(s, id))
	}
	if err := del(x.laneQueued, append(laneKey(s.lane), id...)); err != nil {
		return err
	}
	return x.refresh(s.lane)
}

// delayed indexes a job waiting for its retry (in), or no more (!in).
func (x index) delayed(id []byte, s schedule, in bool) error {
	if s.lane == "" {
		return nil
	}
	k := append(laneKey(s.lane), id...)
	var err error
	if in {
		err = putEmpty(x.laneDelayed, k)
	} else {
		err = del(x.laneDelayed, k)
	}
	if err != nil {
		return err
	}
	return x.refresh(s.lane)
}

// running indexes a job that starts (in) or stops (!in) running.
func (x index) running(id []byte, s schedule, in bool) error {
	if s.installation != 0 {
		ik := installationKey(s.installation)
		n := 0
		if v := x.busy.Get(ik); len(v) == 8 {
			n = int(binary.BigEndian.Uint64(v))
		}
		if in {
			n++
		} else {
			n--
		}
		var err error
		if n <= 0 {
			err = del(x.busy, ik)
		} else {
			err = x.busy.Put(ik, binary.BigEndian.AppendUint64(nil, uint64(n)))
		}
		if err != nil {
			return fmt.Errorf("write claim index: %w", err)
		}
	}
	if s.lane == "" {
		return nil
	}
	k := append(laneKey(s.lane), id...)
	var err error
	if in {
		err = putEmpty(x.laneRunning, k)
	} else {
		err = del(x.laneRunning, k)
	}
	if err != nil {
		return err
	}
	return x.refresh(s.lane)
}

// refresh makes a lane's candidate what its queued, delayed and running
// jobs say now: its oldest queued job, while none of its jobs runs and none
// older waits for a retry.
func (x index) refresh(lane string) error {
	if old := x.laneCandidate.Get([]byte(lane)); old != nil {
		if err := del(x.candidates, clone(old)); err != nil {
			return err
		}
		if err := del(x.laneCandidate, []byte(lane)); err != nil {
			return err
		}
	}
	lk := laneKey(lane)
	if first(x.laneRunning, lk) != nil {
		return nil
	}
	head := first(x.laneQueued, lk)
	if head == nil {
		return nil
	}
	if d := first(x.laneDelayed, lk); d != nil && bytes.Compare(d, head) < 0 {
		return nil
	}
	return x.putCandidate(lane, head)
}

// putCandidate makes a lane's queued job its candidate, with the schedule
// (installation, priority) the queued index keeps for it.
func (x index) putCandidate(lane string, id []byte) error {
	k := candidateKey(decodeSchedule(x.jobsQueued.Get(id)), id)
	if err := putEmpty(x.candidates, k); err != nil {
		return err
	}
	if err := x.laneCandidate.Put([]byte(lane), k); err != nil {
		return fmt.Errorf("write claim index: %w", err)
	}
	return nil
}

// fairest picks the job to claim (see Store.Claim): of each installation
// its best candidate, then the one of the highest priority, then of the
// installation with the fewest running jobs (none for installation 0), then
// the oldest.
func (x index) fairest() string {
	var best []byte
	bestPriority, bestLoad := uint64(0), 0
	c := x.candidates.Cursor()
	for k, _ := c.First(); k != nil && len(k) > 16; {
		inst := k[:8]
		inverted := binary.BigEndian.Uint64(k[8:16])
		load := 0
		if v := x.busy.Get(inst); len(v) == 8 && binary.BigEndian.Uint64(inst) != 0 {
			load = int(binary.BigEndian.Uint64(v))
		}
		id := k[16:]
		if best == nil || inverted < bestPriority ||
			inverted == bestPriority && (load < bestLoad || load == bestLoad && bytes.Compare(id, best) < 0) {
			best, bestPriority, bestLoad = clone(id), inverted, load
		}
		next := binary.BigEndian.Uint64(inst) + 1
		if next == 0 {
			break
		}
		k, _ = c.Seek(binary.BigEndian.AppendUint64(nil, next))
	}
	return string(best)
}

// twins are the queued jobs of a coalesce key, oldest first.
func (x index) twins(key string) []string {
	var ids []string
	lk := laneKey(key)
	c := x.coalesce.Cursor()
	for k, _ := c.Seek(lk); k != nil && bytes.HasPrefix(k, lk); k, _ = c.Next() {
		ids = append(ids, string(k[len(lk):]))
	}
	return ids
}

// rebuildIndex derives the claim's indexes afresh from the queued, delayed
// and running indexes (at open).
func rebuildIndex(tx *bolt.Tx) error {
	for _, name := range indexBuckets {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return fmt.Errorf("reset bucket %s: %w", name, err)
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	x := indexOf(tx)
	if err := tx.Bucket(bucketRunning).ForEach(func(k, v []byte) error {
		return x.running(clone(k), decodeSchedule(v), true)
	}); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDelayed).ForEach(func(k, v []byte) error {
		if len(k) <= 8 {
			return nil
		}
		return x.delayed(clone(k[8:]), decodeSchedule(v), true)
	}); err != nil {
		return err
	}
	return tx.Bucket(bucketQueued).ForEach(func(k, v []byte) error {
		return x.queued(clone(k), decodeSchedule(v))
	})
}
