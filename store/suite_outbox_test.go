package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/store/storetest"
)

func TestBoltOutbox(t *testing.T) {
	testOutbox(t, func(t *testing.T, clk *fakeclock.Clock) Store {
		return openBolt(t, filepath.Join(t.TempDir(), "shardgate.db"), WithClock(clk.Now))
	})
}

func TestPostgresOutbox(t *testing.T) {
	storetest.SkipWithoutPostgres(t)
	t.Parallel()
	testOutbox(t, func(t *testing.T, clk *fakeclock.Clock) Store {
		return openPostgres(t, storetest.PostgresURL(t), WithPostgresClock(clk.Now))
	})
}

// testOutbox is the behaviour every Outbox must have.
func testOutbox(t *testing.T, open opener) {
	ctx := context.Background()
	const lease = time.Minute
	outbox := func(t *testing.T) (Outbox, *fakeclock.Clock) {
		s, clk := open.freshClock(t)
		return s.(Outbox), clk
	}
	add := func(t *testing.T, o Outbox, clk *fakeclock.Clock, id string) {
		t.Helper()
		require.NoError(t, o.AddNotification(ctx, &Notification{ID: id, Receiver: "r0", Event: "apply_succeeded", Body: []byte(`{"a":1}`)}, clk.Now()))
	}

	t.Run("an id is stored once", func(t *testing.T) {
		o, clk := outbox(t)
		add(t, o, clk, "d1")
		err := o.AddNotification(ctx, &Notification{ID: "d1", Receiver: "r0", Event: "apply_failed", Body: []byte(`{}`)}, clk.Now())
		require.ErrorIs(t, err, ErrDuplicate)
		n, err := o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.Equal(t, "apply_succeeded", n.Event, "the first one was kept")
		require.JSONEq(t, `{"a":1}`, string(n.Body))
		require.Equal(t, 1, n.Attempts)
	})

	t.Run("a claimed notification is not claimed again while its lease holds", func(t *testing.T) {
		o, clk := outbox(t)
		add(t, o, clk, "d1")
		n, err := o.ClaimNotification(ctx, "a", clk.Now(), lease)
		require.NoError(t, err)
		require.NotNil(t, n)
		again, err := o.ClaimNotification(ctx, "b", clk.Now(), lease)
		require.NoError(t, err)
		require.Nil(t, again)

		clk.Advance(lease + time.Second) // a died: b takes it over
		taken, err := o.ClaimNotification(ctx, "b", clk.Now(), lease)
		require.NoError(t, err)
		require.Equal(t, "d1", taken.ID)
		require.Equal(t, 2, taken.Attempts)
		require.ErrorIs(t, o.FinishNotification(ctx, "d1", "a", nil, time.Time{}, clk.Now()), ErrLeaseLost)
		require.NoError(t, o.FinishNotification(ctx, "d1", "b", nil, time.Time{}, clk.Now()))
		require.ErrorIs(t, o.FinishNotification(ctx, "nope", "b", nil, time.Time{}, clk.Now()), ErrNotFound)
	})

	t.Run("a retry waits until it is due, then is claimed with the same id", func(t *testing.T) {
		o, clk := outbox(t)
		add(t, o, clk, "d1")
		n, err := o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.NoError(t, o.FinishNotification(ctx, n.ID, "w", errors.New("receiver answered 500"), clk.Now().Add(10*time.Second), clk.Now()))
		none, err := o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.Nil(t, none, "not due yet")
		counts, err := o.CountNotifications(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts[NotificationPending])

		clk.Advance(11 * time.Second)
		n, err = o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.Equal(t, "d1", n.ID)
		require.Equal(t, "receiver answered 500", n.LastError)
		require.NoError(t, o.FinishNotification(ctx, n.ID, "w", errors.New("gave up"), time.Time{}, clk.Now()))
		failed, err := o.Notifications(ctx, 10, NotificationFailed)
		require.NoError(t, err)
		require.Len(t, failed, 1)
		require.Equal(t, "gave up", failed[0].LastError)
		none, err = o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.Nil(t, none, "a failed one is never sent again")
	})

	t.Run("counts, lists and prunes by state", func(t *testing.T) {
		o, clk := outbox(t)
		for _, id := range []string{"d1", "d2", "d3"} {
			add(t, o, clk, id)
		}
		n, err := o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.NoError(t, o.FinishNotification(ctx, n.ID, "w", nil, time.Time{}, clk.Now()))
		n, err = o.ClaimNotification(ctx, "w", clk.Now(), lease)
		require.NoError(t, err)
		require.NoError(t, o.FinishNotification(ctx, n.ID, "w", errors.New("refused"), time.Time{}, clk.Now()))
		counts, err := o.CountNotifications(ctx)
		require.NoError(t, err)
		require.Equal(t, map[NotificationState]int{NotificationSent: 1, NotificationFailed: 1, NotificationPending: 1}, counts)
		open, err := o.Notifications(ctx, 10, NotificationPending, NotificationSending)
		require.NoError(t, err)
		require.Len(t, open, 1)

		clk.Advance(time.Hour)
		pruned, err := o.PruneNotifications(ctx, clk.Now().Add(-time.Minute))
		require.NoError(t, err)
		require.Equal(t, 2, pruned)
		counts, err = o.CountNotifications(ctx)
		require.NoError(t, err)
		require.Equal(t, map[NotificationState]int{NotificationPending: 1}, counts, "pending ones are never pruned")
	})
}
