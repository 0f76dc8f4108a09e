package webhook

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
)

// The intake stores the identity Identify reads from each delivery.
func TestIntakeStoresTheIdentity(t *testing.T) {
	st := storeopen.Bolt(t, "")
	in := newTestIntake(t, st, 10)
	in.Identify = func(event string, payload []byte) Identity {
		return Identity{Installation: 9, Lane: "o/r#" + string(payload[len(payload)-2]), CoalesceKey: event}
	}
	body := []byte(`{"n":3}`)
	rec := deliver(in, "POST", "issue_comment", "d-1", sign(testSecret, body), body)
	require.Equal(t, 202, rec.Code, rec.Body.String())
	j, err := st.Claim(context.Background(), "w")
	require.NoError(t, err)
	require.Equal(t, int64(9), j.Installation)
	require.Equal(t, "o/r#3", j.Lane)
	require.Equal(t, "issue_comment", j.CoalesceKey)
}

// coalescedHandler records the duplicates each run was handed.
type coalescedHandler struct {
	mu   sync.Mutex
	runs map[string][]string
}

func (h *coalescedHandler) Handles() []string { return []string{"issue_comment"} }

func (h *coalescedHandler) Handle(ctx context.Context, _, deliveryID string, _ []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var dups []string
	for _, d := range Coalesced(ctx) {
		dups = append(dups, d.DeliveryID+"="+string(d.Payload))
	}
	h.runs[deliveryID] = dups
	return nil
}

// Identical queued commands run once; the handler is handed the others.
func TestDispatcherHandsCoalescedDeliveriesToTheHandler(t *testing.T) {
	st := storeopen.Bolt(t, "")
	for _, d := range []string{"a", "b", "c"} {
		j := &store.Job{DeliveryID: d, Kind: JobKindEvent, Event: "issue_comment", Payload: []byte(d),
			Installation: 1, Lane: "o/r#1", CoalesceKey: "o/r#1 help"}
		require.NoError(t, st.Enqueue(context.Background(), j, 0))
	}
	h := &coalescedHandler{runs: map[string][]string{}}
	d, err := NewDispatcher(st, []EventHandler{h}, 2, "test", logctx.Logger(context.Background()))
	require.NoError(t, err)
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.runs) == 1
	}, 5*time.Second, 10*time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Equal(t, map[string][]string{"a": {"b=b", "c=c"}}, h.runs)
}
