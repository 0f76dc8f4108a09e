package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/storeopen"
)

// fakeHandler records what it handled; block makes it wait for its context.
type fakeHandler struct {
	mu      sync.Mutex
	handled []string
	err     error
	panicOn string
	block   chan struct{}
	started chan string
	// cancelled counts the runs that ended on their context while blocked.
	cancelled atomic.Int32
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
			h.cancelled.Add(1)
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
	st := storeopen.Bolt(t, "")
	h := &fakeHandler{}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", logctx.Logger(context.Background()))
	require.NoError(t, err)
	enqueue(t, st, "a", "b", "c")
	require.NoError(t, d.Start(context.Background()))
	defer d.Close(context.Background())
	require.Eventually(t, func() bool { return len(h.seen()) == 3 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{"a", "b", "c"}, h.seen())
}

func TestDispatcherPanicFailsTheJobNotTheProcess(t *testing.T) {
	st := storeopen.Bolt(t, "")
	h := &fakeHandler{panicOn: "bad"}
	d, err := NewDispatcher(st, []EventHandler{h}, 2, "test", logctx.Logger(context.Background()))
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
	st := storeopen.Bolt(t, "")
	h := &fakeHandler{err: errors.New("github said no")}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", logctx.Logger(context.Background()))
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
	st := storeopen.Bolt(t, "")
	h := &fakeHandler{block: make(chan struct{}), started: make(chan string, 1)}
	d, err := NewDispatcher(st, []EventHandler{h}, 1, "first", logctx.Logger(context.Background()))
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
	d2, err := NewDispatcher(st, []EventHandler{h2}, 1, "second", logctx.Logger(context.Background()))
	require.NoError(t, err)
	require.NoError(t, d2.Start(context.Background()))
	defer d2.Close(context.Background())
	require.Eventually(t, func() bool { return len(h2.seen()) == 1 }, 5*time.Second, 10*time.Millisecond)
}

func TestNewDispatcherRefusesTwoHandlersForOneEvent(t *testing.T) {
	_, err := NewDispatcher(storeopen.Bolt(t, ""), []EventHandler{&fakeHandler{}, &fakeHandler{}}, 1, "x", logctx.Logger(context.Background()))
	require.ErrorContains(t, err, "two handlers")
}

var errFlaky = errors.New("flaky")

// flakyHandler fails with its errors in turn, then succeeds.
type flakyHandler struct {
	mu    sync.Mutex
	errs  []error
	calls int
}

func (h *flakyHandler) Handles() []string { return []string{"pull_request"} }

func (h *flakyHandler) Handle(context.Context, string, string, []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	if h.calls <= len(h.errs) {
		return h.errs[h.calls-1]
	}
	return nil
}

func TestDispatcherRetriesTransientFailures(t *testing.T) {
	// What counts as transient is the caller's (bot's transient); here an
	// error wrapping errFlaky is.
	badGateway := fmt.Errorf("502 Bad Gateway: %w", errFlaky)
	notFound := errors.New("404 Not Found")
	tests := []struct {
		name      string
		errs      []error
		wantState store.JobState
		wantCalls int
		reported  bool
	}{
		{"502s then success", []error{badGateway, fmt.Errorf("get pull request: %w", badGateway)}, store.JobDone, 3, false},
		{"another transient error then success", []error{fmt.Errorf("list comments: %w", errFlaky)}, store.JobDone, 2, false},
		{"not transient: failed at once and reported", []error{notFound}, store.JobFailed, 1, true},
		{"transient to the bound: failed and reported", []error{badGateway, badGateway, badGateway, badGateway}, store.JobFailed, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storeopen.Bolt(t, "")
			h := &flakyHandler{errs: tt.errs}
			d, err := NewDispatcher(st, []EventHandler{h}, 1, "test", logctx.Logger(context.Background()))
			require.NoError(t, err)
			d.Attempts, d.RetryBase, d.RetryMax, d.Poll = 3, time.Millisecond, 5*time.Millisecond, 5*time.Millisecond
			d.Transient = func(err error) bool { return errors.Is(err, errFlaky) }
			var reported, retried atomic.Int32
			d.Failed = func(context.Context, *store.Job, error) { reported.Add(1) }
			d.Retried = func(*store.Job, error) { retried.Add(1) }
			ids := enqueue(t, st, "d1")
			require.NoError(t, d.Start(context.Background()))
			defer d.Close(context.Background())
			require.Eventually(t, func() bool {
				j, err := st.GetJob(context.Background(), ids[0])
				return err == nil && (j.State == store.JobDone || j.State == store.JobFailed)
			}, 10*time.Second, 5*time.Millisecond)
			j, err := st.GetJob(context.Background(), ids[0])
			require.NoError(t, err)
			require.Equal(t, tt.wantState, j.State, j.LastError)
			require.Equal(t, tt.wantCalls, j.Attempts)
			if tt.reported {
				// The failure is recorded, then reported: wait for the report.
				require.Eventually(t, func() bool { return reported.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
			}
			require.Equal(t, tt.reported, reported.Load() == 1)
			require.EqualValues(t, tt.wantCalls-1, retried.Load(), "every attempt but the last was handed back for a retry")
		})
	}
}
