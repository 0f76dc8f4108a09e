package ghapp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// pacerStart is where every clock here starts; t0 is where it then stands, moved
// by SHARDGATE_FAKECLOCK_SHIFT.
var (
	pacerStart = time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	t0         = fakeclock.Shift(pacerStart)
)

// paceTimes reserves n content requests one after another, each waiting on
// the clock for its time, and returns when each went and how long it waited.
func paceTimes(p Pace, n int) (sent []time.Time, waits []time.Duration) {
	clock := fakeclock.New(pacerStart)
	pc := newPacer(p, clock.Now, nil, nil)
	for range n {
		d, ok := pc.reserve(0)
		if !ok {
			panic("no wait limit given")
		}
		clock.Advance(d)
		sent, waits = append(sent, clock.Now()), append(waits, d)
	}
	return sent, waits
}

// mostIn is the most requests of sent within any window of length w.
func mostIn(sent []time.Time, w time.Duration) int {
	most := 0
	for i := range sent {
		n := 0
		for _, t := range sent[i:] {
			if t.Sub(sent[i]) < w {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func TestPacerKeepsUnderTheMinuteLimit(t *testing.T) {
	sent, waits := paceTimes(Pace{ContentPerMinute: 20, ContentBurst: 5}, 200)
	for i := range 5 {
		require.Zero(t, waits[i], "a burst of %d goes at once", 5)
	}
	require.Positive(t, waits[5], "then they are spaced")
	require.Equal(t, 4*time.Second, sent[6].Sub(sent[5]), "a minute / (20 - 5)")
	require.LessOrEqual(t, mostIn(sent, time.Minute), 20)
	require.GreaterOrEqual(t, mostIn(sent, time.Minute), 15, "no slower than needed")
}

func TestPacerKeepsUnderTheHourLimit(t *testing.T) {
	sent, waits := paceTimes(Pace{ContentPerMinute: 80, ContentPerHour: 30, ContentBurst: 10}, 100)
	require.Zero(t, waits[0])
	require.LessOrEqual(t, mostIn(sent, time.Hour), 30)
	require.LessOrEqual(t, mostIn(sent, time.Minute), 80)
	require.Equal(t, 30, mostIn(sent, time.Hour))
}

func TestPacerUnlimitedByDefaultFields(t *testing.T) {
	_, waits := paceTimes(Pace{}, 1000)
	for _, w := range waits {
		require.Zero(t, w)
	}
}

// stubTransport answers every request 200 at once and logs it; the bodies
// are left for the caller to read or close.
type stubTransport struct {
	mu   sync.Mutex
	sent []string
}

func (s *stubTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, req.Method+" "+req.URL.Path)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func (s *stubTransport) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

func do(t *testing.T, rt http.RoundTripper, ctx context.Context, method, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "https://api.github.com"+path, nil)
	require.NoError(t, err)
	return rt.RoundTrip(req)
}

// TestPaceTransportPacesWritesOnly: writes beyond the burst wait on the
// clock, reads and the token exchange never do, and a wait ends with the
// request's context (nothing sent).
func TestPaceTransportPacesWritesOnly(t *testing.T) {
	clock := fakeclock.New(pacerStart)
	var slept []time.Duration
	budgets := NewBudgets(clock.Now)
	pc := newPacer(Pace{ContentPerMinute: 3, ContentBurst: 2}, clock.Now, func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		slept = append(slept, d)
		clock.Advance(d)
		return nil
	}, func(kind string, d time.Duration) { budgets.paced(7, kind, d) })
	stub := &stubTransport{}
	rt := &paceTransport{next: stub, pacer: pc}
	ctx := context.Background()
	for _, m := range []string{http.MethodPost, http.MethodPatch} {
		resp, err := do(t, rt, ctx, m, "/repos/acme/infra/issues/1/comments")
		require.NoError(t, err)
		resp.Body.Close()
	}
	for range 5 {
		resp, err := do(t, rt, ctx, http.MethodGet, "/repos/acme/infra/pulls/1")
		require.NoError(t, err)
		resp.Body.Close()
		resp, err = do(t, rt, ctx, http.MethodPost, "/app/installations/7/access_tokens")
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.Empty(t, slept, "the burst, reads and token exchanges are not paced")
	resp, err := do(t, rt, ctx, http.MethodDelete, "/repos/acme/infra/issues/1/labels/x")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, []time.Duration{time.Minute}, slept, "the third write in a minute waits for the window")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	before := stub.count()
	_, err = do(t, rt, cancelled, http.MethodPut, "/repos/acme/infra/issues/1/labels")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, before, stub.count(), "a request that gave up waiting is not sent")

	bu, ok := budgets.Get(7)
	require.True(t, ok)
	require.Equal(t, int64(2), bu.Paced[PaceContent])
	require.Equal(t, time.Minute+time.Minute, bu.PacedFor[PaceContent])
}

// TestPaceTransportCapsConcurrency: a request waits while MaxConcurrent
// answers are unread; reading one to its end or closing it frees a slot.
func TestPaceTransportCapsConcurrency(t *testing.T) {
	clock := fakeclock.New(pacerStart)
	budgets := NewBudgets(clock.Now)
	pc := newPacer(Pace{MaxConcurrent: 2}, clock.Now, nil, func(kind string, d time.Duration) { budgets.paced(7, kind, d) })
	stub := &stubTransport{}
	rt := &paceTransport{next: stub, pacer: pc}
	ctx := context.Background()
	first, err := do(t, rt, ctx, http.MethodGet, "/a")
	require.NoError(t, err)
	second, err := do(t, rt, ctx, http.MethodGet, "/b")
	require.NoError(t, err)

	waiting, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := do(t, rt, waiting, http.MethodGet, "/c")
		done <- err
	}()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Equal(t, 2, stub.count(), "the third was not sent while two were in flight")

	_, err = io.ReadAll(first.Body) // to its end: the slot is free
	require.NoError(t, err)
	third, err := do(t, rt, ctx, http.MethodGet, "/d")
	require.NoError(t, err)
	require.NoError(t, second.Body.Close())
	fourth, err := do(t, rt, ctx, http.MethodGet, "/e")
	require.NoError(t, err)
	require.NoError(t, first.Body.Close(), "closing after the end gives nothing back twice")
	third.Body.Close()
	fourth.Body.Close()
	require.Equal(t, 4, stub.count())
	bu, _ := budgets.Get(7)
	require.Equal(t, int64(1), bu.Paced[PaceConcurrency])

	failing := &paceTransport{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("reset")
	}), pacer: newPacer(Pace{MaxConcurrent: 1}, clock.Now, nil, nil)}
	for range 3 {
		_, err := do(t, failing, ctx, http.MethodGet, "/f")
		require.EqualError(t, err, "reset", "a failed request gives its slot back")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPaceTransportPostponesLongWaits: a write that would wait more than
// MaxPaceWait is not sent and fails with a LimitError until its time, which
// the service's jobs wait for postponed; its place is not kept.
func TestPaceTransportPostponesLongWaits(t *testing.T) {
	clock := fakeclock.New(pacerStart)
	pc := newPacer(Pace{ContentPerMinute: 2, ContentBurst: 1}, clock.Now, func(context.Context, time.Duration) error {
		return nil // requests arriving together: the clock does not move
	}, nil)
	stub := &stubTransport{}
	rt := &paceTransport{next: stub, pacer: pc, installationID: 7}
	ctx := context.Background()
	for range 2 { // at once, then a minute later
		resp, err := do(t, rt, ctx, http.MethodPost, "/repos/acme/infra/issues/1/comments")
		require.NoError(t, err)
		resp.Body.Close()
	}
	for range 2 {
		_, err := do(t, rt, ctx, http.MethodPost, "/repos/acme/infra/issues/1/comments")
		var le *LimitError
		require.ErrorAs(t, err, &le)
		require.Equal(t, LimitError{InstallationID: 7, Limit: LimitSecondary, Until: t0.Add(2 * time.Minute)}, *le)
		until, limit, ok := LimitWait(err, clock.Now())
		require.True(t, ok)
		require.Equal(t, LimitSecondary, limit)
		require.Equal(t, t0.Add(2*time.Minute), until)
	}
	require.Equal(t, 2, stub.count())
	clock.Advance(time.Minute)
	resp, err := do(t, rt, ctx, http.MethodPost, "/repos/acme/infra/issues/1/comments")
	require.NoError(t, err, "the places refused were not kept")
	resp.Body.Close()
}
