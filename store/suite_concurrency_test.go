package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func testConcurrency(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("enqueue from many goroutines with repeated deliveries", func(t *testing.T) {
		s := open.fresh(t)
		const goroutines, each = 16, 50
		// Half of each goroutine's deliveries are its own, half are shared by
		// all goroutines, as when GitHub redelivers while the first is in flight.
		type result struct {
			delivery, id string
			err          error
		}
		results := make(chan result, goroutines*each)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					d := fmt.Sprintf("own-%d-%d", g, i)
					if i%2 == 1 {
						d = fmt.Sprintf("shared-%d", i)
					}
					j := &Job{DeliveryID: d, Kind: "event", Payload: []byte(d)}
					err := s.Enqueue(ctx, j, 0)
					results <- result{delivery: d, id: j.ID, err: err}
				}
			})
		}
		wg.Wait()
		close(results)

		stored := map[string]string{} // delivery → id
		ids := map[string]bool{}
		duplicates := 0
		for r := range results {
			if errors.Is(r.err, ErrDuplicate) {
				duplicates++
				require.Empty(t, r.id)
				continue
			}
			require.NoError(t, r.err)
			require.NotContains(t, stored, r.delivery, "delivery %s stored twice", r.delivery)
			require.NotContains(t, ids, r.id, "id %s given twice", r.id)
			stored[r.delivery], ids[r.id] = r.id, true
		}
		const unique = goroutines*each/2 + each/2
		require.Len(t, stored, unique)
		require.Equal(t, goroutines*each-unique, duplicates)
		require.Equal(t, unique, countQueued(t, s))

		prev := ""
		for range unique {
			j := claim(t, s, "w")
			require.NotNil(t, j)
			require.Greater(t, j.ID, prev)
			prev = j.ID
			require.Equal(t, stored[j.DeliveryID], j.ID)
			require.Equal(t, []byte(j.DeliveryID), j.Payload)
		}
		require.Nil(t, claim(t, s, "w"))
	})

	t.Run("concurrent enqueue never overfills the queue", func(t *testing.T) {
		s := open.fresh(t)
		const goroutines, each, limit = 16, 10, 50
		var mu sync.Mutex
		accepted, full := 0, 0
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					err := s.Enqueue(ctx, &Job{DeliveryID: fmt.Sprintf("%d-%d", g, i)}, limit)
					mu.Lock()
					switch {
					case err == nil:
						accepted++
					case errors.Is(err, ErrQueueFull):
						full++
					default:
						t.Errorf("enqueue: %v", err)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Equal(t, limit, accepted)
		require.Equal(t, goroutines*each-limit, full)
		require.Equal(t, limit, countQueued(t, s))
	})

	t.Run("concurrent workers claim each job once", func(t *testing.T) {
		s := open.fresh(t)
		const jobs, workers = 60, 6
		for i := range jobs {
			enqueue(t, s, fmt.Sprintf("d%d", i), "x", nil)
		}
		var mu sync.Mutex
		claimed := map[string]string{}
		var wg sync.WaitGroup
		for w := range workers {
			owner := fmt.Sprintf("w%d", w)
			wg.Go(func() {
				for {
					j, err := s.Claim(ctx, owner)
					if err != nil || j == nil {
						if err != nil {
							t.Errorf("claim: %v", err) // not require: this is not the test goroutine
						}
						return
					}
					mu.Lock()
					prevOwner, twice := claimed[j.ID]
					claimed[j.ID] = owner
					mu.Unlock()
					if twice {
						t.Errorf("job %s claimed by %s and %s", j.ID, prevOwner, owner)
					}
					if err := s.Complete(ctx, j.ID, j.Owner, nil); err != nil {
						t.Errorf("complete: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		require.Len(t, claimed, jobs)
		require.Zero(t, countQueued(t, s))
	})
}
