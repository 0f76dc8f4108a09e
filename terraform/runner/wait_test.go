package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// fakeClockJob is a Job whose clock only moves when an attempt "runs":
// terraform spends the whole -lock-timeout waiting, plus one second of work.
func fakeClockJob(p WaitPolicy) (*Job, *fakeclock.Clock, *[]LockWait) {
	clock := fakeclock.New(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	var waits []LockWait
	j := &Job{
		r:          &Runner{now: clock.Now, rand: func() float64 { return 0.5 }},
		policy:     p.withDefaults(),
		onLockWait: func(w LockWait) { waits = append(waits, w) },
	}
	return j, clock, &waits
}

func lockBy(id string, created time.Time) *StateLockError {
	return &StateLockError{ID: id, Who: id + "@host", Operation: "OperationTypeApply", Created: created, HolderKnown: true}
}

func TestWaitForLock(t *testing.T) {
	policy := WaitPolicy{Timeout: time.Minute, InitialBackoff: 2 * time.Second, MaxBackoff: 8 * time.Second, Jitter: 0.5, OrphanAge: time.Hour}
	t0 := fakeclock.Date(2026, 1, 1, 11, 59, 0) // a minute before fakeClockJob's clock
	tests := []struct {
		name          string
		policy        WaitPolicy
		results       []error // one per attempt; the last repeats
		wantErr       string
		wantAttempts  int
		wantTimeouts  []time.Duration
		wantCallbacks []int // Attempt of each OnLockWait
		wantRecords   []LockWaitRecord
	}{
		{
			name:          "waits then succeeds",
			policy:        policy,
			results:       []error{lockBy("A", t0), lockBy("A", t0), nil},
			wantAttempts:  3,
			wantTimeouts:  []time.Duration{0, 2 * time.Second, 4 * time.Second},
			wantCallbacks: []int{1, 2},
			wantRecords:   []LockWaitRecord{{ID: "A", Who: "A@host", Operation: "OperationTypeApply", Created: t0, WaitedSeconds: 8}},
		},
		{
			name:          "a new holder gets its own record",
			policy:        policy,
			results:       []error{lockBy("A", t0), lockBy("B", t0), nil},
			wantAttempts:  3,
			wantTimeouts:  []time.Duration{0, 2 * time.Second, 4 * time.Second},
			wantCallbacks: []int{1, 2},
			wantRecords: []LockWaitRecord{
				{ID: "A", Who: "A@host", Operation: "OperationTypeApply", Created: t0, WaitedSeconds: 3},
				{ID: "B", Who: "B@host", Operation: "OperationTypeApply", Created: t0, WaitedSeconds: 5},
			},
		},
		{
			name:          "gives up at the bound naming the holder",
			policy:        WaitPolicy{Timeout: 20 * time.Second, InitialBackoff: 4 * time.Second, MaxBackoff: 8 * time.Second},
			results:       []error{lockBy("A", t0)},
			wantErr:       "gave up waiting for the state lock after 21s (4 attempts): state lock A is held by A@host running apply since " + t0.Format(time.RFC3339),
			wantAttempts:  4,
			wantTimeouts:  []time.Duration{0, 4 * time.Second, 8 * time.Second, 5 * time.Second},
			wantCallbacks: []int{1, 2, 3},
			wantRecords:   []LockWaitRecord{{ID: "A", Who: "A@host", Operation: "OperationTypeApply", Created: t0, WaitedSeconds: 20}},
		},
		{
			name:         "zero timeout does not wait",
			policy:       WaitPolicy{},
			results:      []error{lockBy("A", t0)},
			wantErr:      "gave up waiting for the state lock after 1s (1 attempts)",
			wantAttempts: 1,
			wantTimeouts: []time.Duration{0},
			wantRecords:  []LockWaitRecord{{ID: "A", Who: "A@host", Operation: "OperationTypeApply", Created: t0}},
		},
		{
			name:         "other errors pass through",
			policy:       policy,
			results:      []error{&PlanError{Failure{Command: "plan", ExitCode: 1}}},
			wantErr:      "terraform plan failed (exit 1)",
			wantAttempts: 1,
			wantTimeouts: []time.Duration{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, clock, waits := fakeClockJob(tt.policy)
			j.policy.Jitter = 0
			var timeouts []time.Duration
			err := j.waitForLock(context.Background(), func(_ context.Context, lt time.Duration) error {
				timeouts = append(timeouts, lt)
				clock.Advance(lt + time.Second)
				return tt.results[min(len(timeouts), len(tt.results))-1]
			})
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			require.Len(t, timeouts, tt.wantAttempts)
			require.Equal(t, tt.wantTimeouts, timeouts)
			var attempts []int
			for _, w := range *waits {
				attempts = append(attempts, w.Attempt)
			}
			require.Equal(t, tt.wantCallbacks, attempts)
			if tt.wantRecords == nil {
				tt.wantRecords = []LockWaitRecord{}
			}
			require.Equal(t, tt.wantRecords, j.LockWaits())
		})
	}
}

func TestWaitForLockTimeoutIsAStateLockError(t *testing.T) {
	j, clock, _ := fakeClockJob(WaitPolicy{Timeout: 2 * time.Second})
	err := j.waitForLock(context.Background(), func(_ context.Context, lt time.Duration) error {
		clock.Advance(lt + time.Second)
		return lockBy("A", clock.Now())
	})
	var lockErr *StateLockError
	require.True(t, errors.As(err, &lockErr))
	require.Equal(t, "A", lockErr.ID)
	var timeoutErr *LockWaitTimeoutError
	require.True(t, errors.As(err, &timeoutErr))
	require.Equal(t, 2, timeoutErr.Attempts)
}

func TestWaitForLockOrphanedAndJitter(t *testing.T) {
	j, clock, waits := fakeClockJob(WaitPolicy{Timeout: time.Minute, InitialBackoff: 10 * time.Second, Jitter: 0.4, OrphanAge: 30 * time.Minute})
	old := clock.Now().Add(-2 * time.Hour)
	fresh := clock.Now().Add(-time.Minute)
	results := []error{lockBy("old", old), lockBy("fresh", fresh), &StateLockError{Message: "Workspace is already locked: default"}, nil}
	var timeouts []time.Duration
	rands := []float64{0, 1, 0.5}
	j.r.rand = func() float64 { r := rands[0]; rands = rands[1:]; return r }
	err := j.waitForLock(context.Background(), func(_ context.Context, lt time.Duration) error {
		timeouts = append(timeouts, lt)
		clock.Advance(lt)
		return results[len(timeouts)-1]
	})
	require.NoError(t, err)
	// ±20% of 10s, then of 20s, then 30s (the default max) clipped to the 28s left.
	require.Equal(t, []time.Duration{0, 8 * time.Second, 24 * time.Second, 28 * time.Second}, timeouts)
	require.Len(t, *waits, 3)
	require.True(t, (*waits)[0].Orphaned, "a two-hour-old lock looks orphaned")
	require.False(t, (*waits)[1].Orphaned)
	require.False(t, (*waits)[2].Orphaned, "an unknown holder is never called orphaned")
}

func TestWaitPolicyDefaults(t *testing.T) {
	p := WaitPolicy{Jitter: 3}.withDefaults()
	require.Equal(t, WaitPolicy{InitialBackoff: DefaultInitialBackoff, MaxBackoff: DefaultMaxBackoff, Jitter: 1, OrphanAge: DefaultOrphanAge}, p)
	require.Equal(t, DefaultLockTimeout, DefaultWaitPolicy().Timeout)
}
