package bot

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store"
)

// fakeHandler records what it handled; block makes it wait for its context.
type fakeHandler struct {
	mu      sync.Mutex
	handled []string
	err     error
	panicOn string
	block   chan struct{}
	started chan string
}

func (h *fakeHandler) Handles() []string { return []string{"pull_request"} }

func (h *fakeHandler) Handle(ctx context.Context, _, deliveryID string, _ []byte) error {
	if h.started != nil {
		h.started <- deliveryID
	}
	if deliveryID == h.panicOn {
		panic("boom")
	}
	if h.block != nil {
		select {
		case <-h.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled = append(h.handled, deliveryID)
	return h.err
}

func (h *fakeHandler) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.handled...)
}

func enqueue(t *testing.T, st store.Store, ids ...string) []string {
	var jobIDs []string
	for _, id := range ids {
		j := &store.Job{DeliveryID: id, Kind: JobKindEvent, Event: "pull_request", Payload: []byte(`{}`)}
		require.NoError(t, st.Enqueue(context.Background(), j, 0))
		jobIDs = append(jobIDs, j.ID)
	}
	return jobIDs
}

func TestDispatcherRunsJobsInOrder(t *testing.T) {
	st := openStore(t)
	h := &fakeHandler{}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", Logger(context.Background()))
	require.NoError(t, err)
	enqueue(t, st, "a", "b", "c")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool { return len(h.seen()) == 3 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{"a", "b", "c"}, h.seen())
}

func TestDispatcherPanicFailsTheJobNotTheProcess(t *testing.T) {
	st := openStore(t)
	h := &fakeHandler{panicOn: "bad"}
	d, err := NewDispatcher(st, []EventHandler{h}, 2, "test", Logger(context.Background()))
	require.NoError(t, err)
	ids := enqueue(t, st, "bad", "good")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && j.State == store.JobFailed
	}, 5*time.Second, 10*time.Millisecond)
	j, _ := st.GetJob(context.Background(), ids[0])
	require.Contains(t, j.LastError, "handler panic: boom")
	require.Contains(t, j.LastError, "goroutine", "the stack is kept")
	require.Eventually(t, func() bool { return len(h.seen()) == 1 }, 5*time.Second, 10*time.Millisecond)
}

func TestDispatcherRecordsHandlerErrors(t *testing.T) {
	st := openStore(t)
	h := &fakeHandler{err: errors.New("github said no")}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", Logger(context.Background()))
	require.NoError(t, err)
	ids := enqueue(t, st, "x")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool {
		j, err := st.GetJob(context.Background(), ids[0])
		return err == nil && j.State == store.JobFailed && j.LastError == "github said no"
	}, 5*time.Second, 10*time.Millisecond)
}

// A job still running at shutdown is handed back, and the next process runs it.
func TestDispatcherHandsBackRunningJobsAndResumes(t *testing.T) {
	st := openStore(t)
	h := &fakeHandler{block: make(chan struct{}), started: make(chan string, 1)}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "first", Logger(context.Background()))
	require.NoError(t, err)
	ids := enqueue(t, st, "slow")
	require.NoError(t, d.Start(context.Background()))
	<-h.started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	d.Close(ctx)
	j, err := st.GetJob(context.Background(), ids[0])
	require.NoError(t, err)
	require.Equal(t, store.JobQueued, j.State, "handed back, not failed")

	h2 := &fakeHandler{}
	d2, err := NewDispatcher(st, []EventHandler{h2}, 1, "second", Logger(context.Background()))
	require.NoError(t, err)
	require.NoError(t, d2.Start(context.Background()))
	defer d2.Close(context.Background())
	require.Eventually(t, func() bool { return len(h2.seen()) == 1 }, 5*time.Second, 10*time.Millisecond)
}

func TestNewDispatcherRefusesTwoHandlersForOneEvent(t *testing.T) {
	_, err := NewDispatcher(openStore(t), []EventHandler{&fakeHandler{}, &fakeHandler{}}, 1, "x", Logger(context.Background()))
	require.ErrorContains(t, err, "two handlers")
}
