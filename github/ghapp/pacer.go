package ghapp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shardgate/shardgate/internal/retry"
)

// Defaults of Pace: under GitHub's secondary limits of about 80
// content-creating requests a minute and 500 an hour per installation, and
// 100 concurrent requests.
const (
	DefaultContentPerMinute = 80
	DefaultContentPerHour   = 500
	DefaultContentBurst     = 10
	DefaultMaxConcurrent    = 50
)

// Pace is how one installation's requests are paced: content-creating ones
// (POST, PATCH, PUT, DELETE; not the installation-token exchange) at most
// ContentPerMinute in any minute and ContentPerHour in any hour, the first
// ContentBurst at once and the rest spaced evenly; and at most MaxConcurrent
// requests of any kind in flight. A zero field is not enforced.
type Pace struct {
	ContentPerMinute int
	ContentPerHour   int
	ContentBurst     int
	MaxConcurrent    int
}

// DefaultPace is GitHub's documented secondary limits.
func DefaultPace() Pace {
	return Pace{ContentPerMinute: DefaultContentPerMinute, ContentPerHour: DefaultContentPerHour,
		ContentBurst: DefaultContentBurst, MaxConcurrent: DefaultMaxConcurrent}
}

// MaxPaceWait is the longest a request waits in its pacer. A request that
// would wait longer is not sent and fails at once with a LimitError
// (LimitSecondary, until its time): the service postpones its job rather
// than hold a worker (githubWait), and the place is not kept.
const MaxPaceWait = time.Minute

// Which wait a pacer counts (PacedWaits).
const (
	PaceContent     = "content"     // a content-creating request spaced out
	PaceConcurrency = "concurrency" // a request waiting for a free slot
)

// pacer paces one installation's requests. The minute limit is a token
// bucket (GCRA): ContentBurst at once, then one every minute/(perMinute -
// burst), so that no minute holds more than perMinute. The hour limit keeps
// the times of the last perHour content requests: the next goes an hour
// after the oldest of them. A request waiting is given its time when it
// arrives, so waiters go in order; one that gives up (its context ended)
// keeps its place spent, which errs on the slow side.
type pacer struct {
	pace  Pace
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	waits func(kind string, d time.Duration)

	mu       sync.Mutex
	tat      time.Time   // when the minute bucket is full again at the current rate
	sent     []time.Time // ring of the last perHour content requests' times
	sentNext int
	slots    chan struct{} // nil: concurrency not capped
}

func newPacer(p Pace, now func() time.Time, sleep func(context.Context, time.Duration) error,
	waits func(string, time.Duration)) *pacer {
	if sleep == nil {
		sleep = retry.Sleep
	}
	pc := &pacer{pace: p, now: now, sleep: sleep, waits: waits}
	if p.MaxConcurrent > 0 {
		pc.slots = make(chan struct{}, p.MaxConcurrent)
	}
	return pc
}

// contentCreating is a request GitHub counts against its content-creation
// limit; the token exchange is the App's, not the installation's.
func contentCreating(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return !strings.HasSuffix(req.URL.Path, "/access_tokens")
	}
	return false
}

// reserve gives a content request its time to go, and says how long from
// now that is; a time more than maxWait away is not given (ok false).
func (pc *pacer) reserve(maxWait time.Duration) (wait time.Duration, ok bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	now := pc.now()
	at := now
	perMinute, perHour := pc.pace.ContentPerMinute, pc.pace.ContentPerHour
	var interval time.Duration
	if perMinute > 0 {
		burst := min(max(pc.pace.ContentBurst, 1), max(perMinute-1, 1))
		interval = time.Minute / time.Duration(max(perMinute-burst, 1))
		at = maxTime(at, pc.tat.Add(-interval*time.Duration(burst-1)))
	}
	if perHour > 0 && len(pc.sent) == perHour {
		at = maxTime(at, pc.sent[pc.sentNext].Add(time.Hour))
	}
	if maxWait > 0 && at.Sub(now) > maxWait {
		return at.Sub(now), false
	}
	if perMinute > 0 {
		pc.tat = maxTime(pc.tat, at).Add(interval)
	}
	if perHour > 0 {
		if len(pc.sent) < perHour {
			pc.sent = append(pc.sent, at)
		} else {
			pc.sent[pc.sentNext] = at
		}
		pc.sentNext = (pc.sentNext + 1) % perHour
	}
	return at.Sub(now), true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// acquire takes a concurrency slot, waiting for one while ctx lasts; the
// returned func gives it back.
func (pc *pacer) acquire(ctx context.Context) (func(), error) {
	if pc.slots == nil {
		return func() {}, nil
	}
	select {
	case pc.slots <- struct{}{}:
	default:
		start := pc.now()
		select {
		case pc.slots <- struct{}{}:
		case <-ctx.Done():
			pc.waited(PaceConcurrency, pc.now().Sub(start))
			return nil, ctx.Err()
		}
		pc.waited(PaceConcurrency, pc.now().Sub(start))
	}
	var once sync.Once
	return func() { once.Do(func() { <-pc.slots }) }, nil
}

func (pc *pacer) waited(kind string, d time.Duration) {
	if pc.waits != nil {
		pc.waits(kind, d)
	}
}

// paceTransport paces one installation's requests (pacer) before they are
// sent; a wait ends early, with the context's error, when the request's
// context does.
type paceTransport struct {
	next           http.RoundTripper
	pacer          *pacer
	installationID int64
}

func (t *paceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if contentCreating(req) {
		d, ok := t.pacer.reserve(MaxPaceWait)
		if !ok {
			t.pacer.waited(PaceContent, 0)
			return fail(&LimitError{InstallationID: t.installationID, Limit: LimitSecondary, Until: t.pacer.now().Add(d)})
		}
		if d > 0 {
			t.pacer.waited(PaceContent, d)
			if err := t.pacer.sleep(req.Context(), d); err != nil {
				return fail(err)
			}
		}
	}
	release, err := t.pacer.acquire(req.Context())
	if err != nil {
		return fail(err)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// releaseBody gives the concurrency slot back when the answer is read to
// its end or closed, whichever comes first.
type releaseBody struct {
	io.ReadCloser
	release func()
}

func (b *releaseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.release()
	}
	return n, err
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}
