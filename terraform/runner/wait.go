package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shardgate/shardgate/internal/retry"
)

// Defaults of DefaultWaitPolicy.
const (
	DefaultLockTimeout    = 5 * time.Minute
	DefaultInitialBackoff = 2 * time.Second
	DefaultMaxBackoff     = 30 * time.Second
	DefaultJitter         = 0.2
	DefaultOrphanAge      = time.Hour
)

// WaitPolicy says how long and how patiently a job waits for a state lock
// held by someone else. The runner never breaks a lock: it waits, then gives up.
type WaitPolicy struct {
	// Timeout bounds the whole wait; zero or less gives up at the first conflict.
	Timeout time.Duration
	// InitialBackoff is the first pause between attempts, doubled up to MaxBackoff.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// Jitter is the fraction (0..1) of each pause that is randomised, so
	// waiters released by the same unlock do not retry in lockstep.
	Jitter float64
	// OrphanAge is the lock age past which a lock is reported as looking
	// orphaned (its holder may have died without unlocking).
	OrphanAge time.Duration
}

// DefaultWaitPolicy is the policy of a Runner built without WithWaitPolicy.
func DefaultWaitPolicy() WaitPolicy {
	return WaitPolicy{
		Timeout:        DefaultLockTimeout,
		InitialBackoff: DefaultInitialBackoff,
		MaxBackoff:     DefaultMaxBackoff,
		Jitter:         DefaultJitter,
		OrphanAge:      DefaultOrphanAge,
	}
}

// withDefaults fills unset pauses; Timeout is left alone because zero means
// "do not wait".
func (p WaitPolicy) withDefaults() WaitPolicy {
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultInitialBackoff
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = max(DefaultMaxBackoff, p.InitialBackoff)
	}
	p.Jitter = math.Min(math.Max(p.Jitter, 0), 1)
	if p.OrphanAge <= 0 {
		p.OrphanAge = DefaultOrphanAge
	}
	return p
}

// LockWait is reported through OnLockWait each time a job finds the state
// locked and is about to wait for it.
type LockWait struct {
	Lock     StateLockError
	Attempt  int           // 1 for the first refusal
	Waited   time.Duration // since the job first found the state locked
	Orphaned bool          // Lock.Created is older than WaitPolicy.OrphanAge
}

// LockWaitRecord is one lock a job waited on, in the shape
// `shardgate plan --format json` prints under "state_lock_waits".
// ID, Who and Operation are empty and Created is zero when the backend does
// not name the holder (pg).
type LockWaitRecord struct {
	ID            string    `json:"id"`
	Who           string    `json:"who"`
	Operation     string    `json:"operation"`
	Created       time.Time `json:"created"`
	WaitedSeconds float64   `json:"waited_seconds"`
}

// LockWaitTimeoutError is returned when the lock was still held when the wait
// bound ran out. errors.As finds the *StateLockError naming the last holder.
type LockWaitTimeoutError struct {
	Lock     *StateLockError
	Waited   time.Duration
	Attempts int
}

func (e *LockWaitTimeoutError) Error() string {
	return fmt.Sprintf("gave up waiting for the state lock after %s (%d attempts): %v",
		e.Waited.Round(time.Millisecond), e.Attempts, e.Lock)
}

func (e *LockWaitTimeoutError) Unwrap() error { return e.Lock }

// lockAttempt runs one terraform command; lockTimeout is what to pass as its
// -lock-timeout.
type lockAttempt func(ctx context.Context, lockTimeout time.Duration) error

// waitForLock runs attempt until it does not fail on the state lock or the
// policy's bound is reached.
//
// The pauses are spent inside terraform, as its -lock-timeout, rather than in
// a sleep here: terraform then takes the lock the moment it is released
// instead of at our next retry. The first attempt uses 0s so that the holder
// is reported at once, and every later refusal re-reads the holder (it may
// have changed). Each attempt's -lock-timeout is clipped to the time left, so
// the bound holds.
func (j *Job) waitForLock(ctx context.Context, attempt lockAttempt) error {
	p := j.policy
	start := j.r.now()
	pause := retry.Backoff{Initial: p.InitialBackoff, Max: p.MaxBackoff, Jitter: p.Jitter, Rand: j.r.rand}
	var rec *lockRecorder
	sink := j.lockWaitSink()
	defer func() {
		j.finishLock(rec, j.r.now())
		if rec != nil && sink != nil {
			sink.StateLockWait(nil)
		}
	}()
	for n := 1; ; n++ {
		lockTimeout := time.Duration(0)
		if n > 1 {
			remaining := p.Timeout - j.r.now().Sub(start)
			lockTimeout = max(min(pause.Delay(n-1), remaining), 0).Round(time.Millisecond)
		}
		err := attempt(ctx, lockTimeout)
		var lockErr *StateLockError
		if !errors.As(err, &lockErr) {
			return err
		}
		now := j.r.now()
		waited := now.Sub(start)
		rec = j.recordLock(rec, lockErr, now)
		if waited >= p.Timeout || ctx.Err() != nil {
			return &LockWaitTimeoutError{Lock: lockErr, Waited: waited, Attempts: n}
		}
		w := LockWait{
			Lock:     *lockErr,
			Attempt:  n,
			Waited:   waited,
			Orphaned: lockErr.HolderKnown && lockErr.Age(now) > p.OrphanAge,
		}
		if sink != nil {
			sink.StateLockWait(&w)
		}
		if j.onLockWait != nil {
			j.onLockWait(w)
		}
	}
}

// lockRecorder tracks the record of the lock currently waited on.
type lockRecorder struct {
	rec       *LockWaitRecord
	firstSeen time.Time
}

// finish sets the waited time; callers hold waitsMu.
func (l *lockRecorder) finish(now time.Time) {
	if l == nil {
		return
	}
	l.rec.WaitedSeconds = math.Round(now.Sub(l.firstSeen).Seconds()*1000) / 1000
}

func (j *Job) finishLock(l *lockRecorder, now time.Time) {
	j.waitsMu.Lock()
	defer j.waitsMu.Unlock()
	l.finish(now)
}

// recordLock starts a new record when the holder changed, so a wait behind
// two successive holders lists both.
func (j *Job) recordLock(cur *lockRecorder, e *StateLockError, now time.Time) *lockRecorder {
	j.waitsMu.Lock()
	defer j.waitsMu.Unlock()
	if cur != nil && cur.rec.ID == e.ID {
		cur.finish(now)
		return cur
	}
	cur.finish(now)
	j.lockWaits = append(j.lockWaits, &LockWaitRecord{
		ID:        e.ID,
		Who:       e.Who,
		Operation: e.Operation,
		Created:   e.Created,
	})
	return &lockRecorder{rec: j.lockWaits[len(j.lockWaits)-1], firstSeen: now}
}

// LockWaits lists every state lock the job waited on, in order.
func (j *Job) LockWaits() []LockWaitRecord {
	j.waitsMu.Lock()
	defer j.waitsMu.Unlock()
	out := make([]LockWaitRecord, 0, len(j.lockWaits))
	for _, r := range j.lockWaits {
		out = append(out, *r)
	}
	return out
}
