package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	// enqueueCommitters is how many batches of enqueues one replica has in
	// flight at once (half the default pool): while some wait for their
	// commit, which PostgreSQL flushes together with other commits, the
	// next gathers what arrived meanwhile.
	enqueueCommitters = 8
	// maxEnqueueBatch bounds a batch by jobs and by payload bytes.
	maxEnqueueBatch      = 256
	maxEnqueueBatchBytes = 16 << 20
	// enqueueBatchTimeout bounds one batch's transaction: a database that
	// does not answer fails the enqueues in it (intake answers 503) rather
	// than holding them.
	enqueueBatchTimeout = 10 * time.Second
)

// enqueueRequest is one Enqueue waiting for its batch to commit.
type enqueueRequest struct {
	ctx         context.Context
	delivery    *string
	kind, event string
	payload     []byte
	sched       schedule
	max         int
	done        chan enqueueResult
}

type enqueueResult struct {
	id  int64
	at  time.Time
	err error
}

// startCommitters starts the goroutines that commit batches of enqueues.
func (p *Postgres) startCommitters() {
	p.enqueues = make(chan *enqueueRequest, maxEnqueueBatch)
	p.quit = make(chan struct{})
	for range enqueueCommitters {
		p.committers.Add(1)
		go p.commitLoop()
	}
}

// stopCommitters ends the committers once the batches in flight are done.
func (p *Postgres) stopCommitters() {
	close(p.quit)
	p.committers.Wait()
}

// submit hands a job to the committers and waits for its batch's commit.
// A caller whose ctx ends first gets ctx's error; its job may still be
// stored (a redelivery then finds it a duplicate).
func (p *Postgres) submit(ctx context.Context, r *enqueueRequest) (enqueueResult, error) {
	r.ctx, r.done = ctx, make(chan enqueueResult, 1)
	closed := errors.New("store is closed")
	select {
	case <-p.quit:
		return enqueueResult{}, closed
	default:
	}
	select {
	case p.enqueues <- r:
	case <-p.quit:
		return enqueueResult{}, closed
	case <-ctx.Done():
		return enqueueResult{}, ctx.Err()
	}
	select {
	case res := <-r.done:
		return res, res.err
	case <-p.quit:
		// Close lets the batches in flight finish; this one may be among them.
		p.committers.Wait()
		select {
		case res := <-r.done:
			return res, res.err
		default:
			return enqueueResult{}, closed
		}
	case <-ctx.Done():
		return enqueueResult{}, ctx.Err()
	}
}

// commitLoop takes the first waiting enqueue, then every other one already
// waiting (no pause to wait for more: under load, the enqueues that arrive
// while a batch commits make the next batch), and commits them together.
func (p *Postgres) commitLoop() {
	defer p.committers.Done()
	for {
		var first *enqueueRequest
		select {
		case <-p.quit:
			return
		case first = <-p.enqueues:
		}
		batch, bytes := []*enqueueRequest{first}, len(first.payload)
	gather:
		for len(batch) < maxEnqueueBatch && bytes < maxEnqueueBatchBytes {
			select {
			case r := <-p.enqueues:
				batch, bytes = append(batch, r), bytes+len(r.payload)
			default:
				break gather
			}
		}
		p.commitBatch(batch)
	}
}

// commitBatch stores the batch's jobs in one transaction and answers each.
func (p *Postgres) commitBatch(batch []*enqueueRequest) {
	batch = slices.DeleteFunc(batch, func(r *enqueueRequest) bool {
		if err := r.ctx.Err(); err != nil {
			r.done <- enqueueResult{err: err}
			return true
		}
		return false
	})
	if len(batch) == 0 {
		return
	}
	// Rows in delivery id order: two batches sharing deliveries wait for
	// each other in one direction only.
	slices.SortStableFunc(batch, func(a, b *enqueueRequest) int {
		return cmp.Compare(deref(a.delivery), deref(b.delivery))
	})
	now := p.nowUTC()
	ids, err := p.insertBatch(batch, now)
	// The queued-jobs counter (queue_depth) is one row per backend slot, and
	// two backends can share a slot: a batch holding its slot's row while it
	// waits for another batch's uncommitted delivery id can close a cycle,
	// which PostgreSQL breaks by aborting one. Nothing of an aborted batch
	// was stored (its reservations are given back), so it is run again.
	for attempt := 1; attempt < maxBatchAttempts && isTxConflict(err); attempt++ {
		ids, err = p.insertBatch(batch, now)
	}
	for i, r := range batch {
		switch {
		case err != nil:
			r.done <- enqueueResult{err: err}
		case ids[i] == -1:
			r.done <- enqueueResult{err: ErrDuplicate}
		case ids[i] == -2:
			r.done <- enqueueResult{err: ErrQueueFull}
		default:
			r.done <- enqueueResult{id: ids[i], at: now}
		}
	}
}

// insertBatch reserves room for the batch's limited jobs, then stores the
// jobs in one transaction: one round trip each (a pipeline runs as one
// implicit transaction), the first committed asynchronously under the
// enqueue lock, the second durably without it.
func (p *Postgres) insertBatch(batch []*enqueueRequest, now time.Time) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), enqueueBatchTimeout)
	defer cancel()
	limit, limited := 0, 0
	for _, r := range batch {
		if r.max > 0 {
			// One limit per batch: intake passes the same one to every
			// enqueue; the smallest binds when callers differ.
			limited++
			if limit == 0 || r.max < limit {
				limit = r.max
			}
		}
	}
	token := ""
	if limited > 0 {
		token = newBatchToken()
		var granted int
		err := p.pool.QueryRow(ctx, `SELECT reserve_batch($1, $2, $3, $4, $5)`,
			token, limited, now, limit, enqueueReservationTTL).Scan(&granted)
		if err != nil {
			return nil, err
		}
	}
	b := &pgx.Batch{}
	ids := make([]int64, len(batch))
	for i, r := range batch {
		b.Queue(`SELECT enqueue_reserved($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::smallint)`,
			token, r.max > 0, r.delivery, r.kind, r.event, r.payload, now,
			r.sched.installation, r.sched.lane, r.sched.key, int16(r.sched.priority)).
			QueryRow(func(row pgx.Row) error { return row.Scan(&ids[i]) })
	}
	if token != "" {
		b.Queue(`DELETE FROM queue_reservations WHERE token = $1`, token)
	}
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		if token != "" {
			// Give the room back now rather than when it expires; if this
			// fails too, expiry does it.
			gctx, gcancel := context.WithTimeout(context.Background(), enqueueBatchTimeout)
			_, _ = p.pool.Exec(gctx, `DELETE FROM queue_reservations WHERE token = $1`, token)
			gcancel()
		}
		return nil, err
	}
	return ids, nil
}

// maxBatchAttempts bounds how often a batch aborted by a deadlock or a
// serialization failure is run again.
const maxBatchAttempts = 4

// isTxConflict reports a transaction PostgreSQL aborted to break a deadlock
// or a serialization conflict: run again, it can succeed.
func isTxConflict(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// enqueueReservationTTL is how long room reserved by a batch that died
// before storing its jobs stays taken.
const enqueueReservationTTL = time.Minute

// newBatchToken names one batch's reservations.
func newBatchToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Enqueue persists a queued job (see Store). Enqueues that arrive together
// share one transaction and one commit (migrations/0003_enqueue_batch.sql);
// each returns once its batch has committed.
func (p *Postgres) Enqueue(ctx context.Context, job *Job, maxQueued int) error {
	if job == nil {
		return errors.New("enqueue job: job is nil")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("enqueue job: %w", err)
	}
	var payload []byte
	if len(job.Payload) > 0 {
		payload = job.Payload
	}
	delivery, kind, event := pgText(job.DeliveryID), pgText(job.Kind), pgText(job.Event)
	sched := schedule{installation: job.Installation, lane: pgText(job.Lane), key: pgText(job.CoalesceKey),
		priority: min(max(job.Priority, 0), math.MaxInt16)}
	res, err := p.submit(ctx, &enqueueRequest{delivery: nullable(delivery), kind: kind, event: event,
		payload: payload, max: maxQueued, sched: sched})
	if err != nil {
		return fmt.Errorf("enqueue job: %w", err)
	}
	// Filled in only once committed: a refused job stays as the caller made it.
	job.ID, job.DeliveryID, job.Kind, job.Event = jobKey(uint64(res.id)), delivery, kind, event
	job.Lane, job.CoalesceKey, job.CoalescedInto, job.Coalesced = sched.lane, sched.key, "", nil
	job.Priority = sched.priority
	job.State, job.Attempts, job.Owner, job.LastError = JobQueued, 0, "", ""
	job.NotBefore, job.LeaseUntil = time.Time{}, time.Time{}
	job.CreatedAt, job.UpdatedAt = res.at, res.at
	return nil
}
