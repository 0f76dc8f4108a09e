package notify

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storetest"
)

// Replicas sharing a PostgreSQL store send side by side: every event
// emitted (by both, twice over) reaches the receiver exactly once, and
// what one replica left claimed when it died the other sends.
func TestReplicasOnPostgresDeliverEachEventOnce(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	clk := fakeclock.New(fakeclock.Date(2026, 3, 1, 12, 0, 0))
	rcv := newReceiver(t)
	var senders []*Notifier
	for i := range 2 {
		st, err := store.OpenPostgres(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		n, err := New([]serverconfig.NotificationReceiver{rcv.config()}, st, fmt.Sprintf("replica-%d", i), nil, nil, logrus.NewEntry(logrus.New()))
		require.NoError(t, err)
		n.Now = clk.Now
		senders = append(senders, n)
	}
	const events = 30
	for i := range events {
		for _, n := range senders {
			n.Emit(ctx, fmt.Sprintf("apply %d", i), applied(clk.Now()))
		}
	}
	// The first replica dies holding one delivery.
	held, err := senders[0].outbox.ClaimNotification(ctx, "replica-0", clk.Now(), DefaultLease)
	require.NoError(t, err)
	require.NotNil(t, held)

	var wg sync.WaitGroup
	for _, n := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.SendDue(ctx)
		}()
	}
	wg.Wait()
	require.Len(t, rcv.Requests(), events-1, "the held one waits for its lease")
	clk.Advance(DefaultLease + time.Second)
	require.Equal(t, 1, senders[1].SendDue(ctx))

	seen := map[string]int{}
	for _, r := range rcv.Requests() {
		seen[r.Delivery]++
	}
	require.Len(t, seen, events)
	for id, n := range seen {
		require.Equal(t, 1, n, "delivery %s sent once", id)
	}
	require.Equal(t, 1, seen[held.ID])
}
