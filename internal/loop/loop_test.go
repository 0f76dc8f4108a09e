package loop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// In synctest's bubble time.Sleep moves the fake clock: the loops below see
// exactly the ticks that fit in it.

func TestEveryCallsOnEachTickSkipsWhilePausedAndStopsOnFalse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var paused atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(t.Context(), time.Minute, paused.Load, func(context.Context) bool { return calls.Add(1) < 5 })
		}()
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		require.Zero(t, calls.Load(), "the first call is one interval after the start")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		require.EqualValues(t, 2, calls.Load())
		paused.Store(true)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		require.EqualValues(t, 2, calls.Load(), "no call while paused")
		paused.Store(false)
		time.Sleep(10 * time.Minute)
		<-done
		require.EqualValues(t, 5, calls.Load(), "f returning false ends the loop")
	})
}

func TestStartRunsUntilStopWhateverItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var calls atomic.Int32
		b := Start(ctx, time.Second, nil, func(context.Context) { calls.Add(1) })
		cancel() // the caller's context ending does not stop it: Stop does
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 3, calls.Load())
		b.Stop()
		time.Sleep(time.Hour)
		require.EqualValues(t, 3, calls.Load(), "no call after Stop")
		(*Background)(nil).Stop()
	})
}

var errGone, errDown = errors.New("lease taken over"), errors.New("store unreachable")

func TestLeaseKeep(t *testing.T) {
	tests := []struct {
		name string
		// fail is Renew's answer at the given renewal (1 for the first); nil: success
		fail     func(n int32) error
		wantErr  error
		wantText string
		// wantAt is when Keep returns (0: when ctx ends)
		wantAt   time.Duration
		retrying int
	}{
		{name: "renewed every third of the lease until ctx ends", fail: func(int32) error { return nil }},
		{name: "a lease taken over ends it at once", fail: func(n int32) error {
			if n == 2 {
				return errGone
			}
			return nil
		}, wantErr: errGone, wantAt: 20 * time.Second},
		{name: "failures for less than a lease are tried again", fail: func(n int32) error {
			if n == 2 || n == 3 {
				return errDown
			}
			return nil
		}, retrying: 2},
		{name: "no renewal for a whole lease ends it", fail: func(n int32) error {
			if n >= 2 {
				return errDown
			}
			return nil
		}, wantErr: errDown, wantText: "no renewal for 30s, a whole lease", wantAt: 40 * time.Second, retrying: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), time.Hour+5*time.Second)
				defer cancel()
				var renewals atomic.Int32
				retrying := 0
				start := time.Now()
				err := Lease{Length: 30 * time.Second,
					Renew:    func(context.Context) error { return tt.fail(renewals.Add(1)) },
					Gone:     func(err error) bool { return errors.Is(err, errGone) },
					Retrying: func(error) { retrying++ },
				}.Keep(ctx)
				took := time.Since(start)
				require.Equal(t, tt.retrying, retrying)
				if tt.wantErr == nil {
					require.NoError(t, err)
					require.Equal(t, time.Hour+5*time.Second, took)
					require.EqualValues(t, 360, renewals.Load(), "every 10s")
					return
				}
				require.ErrorIs(t, err, tt.wantErr)
				require.ErrorContains(t, err, tt.wantText)
				require.Equal(t, tt.wantAt, took)
			})
		})
	}
}

// A lease is counted on the clock the store keeps it on: when that clock
// has passed a whole lease since the last renewal, the lease is given up at
// once, however little real time went by.
func TestLeaseKeepCountsTheLeaseOnItsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := time.Date(2101, 3, 4, 13, 30, 0, 0, time.UTC)
		var renewals atomic.Int32
		start := time.Now()
		err := Lease{Length: 30 * time.Second,
			Now: func() time.Time { return clock },
			Renew: func(context.Context) error {
				if renewals.Add(1) == 1 {
					return nil
				}
				clock = clock.Add(31 * time.Second) // the store's clock ran ahead
				return errDown
			},
			Gone: func(err error) bool { return errors.Is(err, errGone) },
		}.Keep(t.Context())
		require.ErrorIs(t, err, errDown)
		require.ErrorContains(t, err, "no renewal for 31s, a whole lease")
		require.Equal(t, 20*time.Second, time.Since(start), "given up at the first failed renewal, not after 30s of real time")
	})
}
