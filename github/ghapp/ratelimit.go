package ghapp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Which of GitHub's limits a wait is for, as logs and comments name it.
const (
	LimitPrimary   = "primary"   // the hourly request budget of the installation
	LimitSecondary = "secondary" // content creation, concurrency: Retry-After
)

// secondaryDefaultWait is GitHub's advice for a secondary limit answered
// without Retry-After or x-ratelimit-reset: wait at least a minute.
const secondaryDefaultWait = time.Minute

// Budget is what GitHub last said about one installation's limits.
type Budget struct {
	InstallationID int64
	// Resource is x-ratelimit-resource ("core" for the REST API).
	Resource         string
	Limit, Remaining int
	Used             int
	Reset            time.Time
	// SecondaryUntil is when a secondary limit's Retry-After ends; zero when
	// none holds.
	SecondaryUntil time.Time
	// Seen is when GitHub said it.
	Seen time.Time
	// Paced counts the requests shardgate held back itself (Pace), by
	// PaceContent and PaceConcurrency, and PacedFor how long they waited.
	Paced    map[string]int64
	PacedFor map[string]time.Duration
	// probing: the request that learns the budget after its reset is out.
	probing bool
}

// LimitError is a request shardgate did not send because GitHub said it
// would be refused until Until: the primary budget is spent until its reset,
// or a secondary limit's Retry-After has not passed.
type LimitError struct {
	InstallationID int64
	Limit          string // LimitPrimary or LimitSecondary
	Until          time.Time
}

func (e *LimitError) Error() string {
	of := "" // unknown where the answer was read apart from the client (a tarball)
	if e.InstallationID != 0 {
		of = fmt.Sprintf(" of installation %d", e.InstallationID)
	}
	return fmt.Sprintf("github %s rate limit%s: waiting until %s", e.Limit, of, e.Until.UTC().Format(time.RFC3339))
}

// Budgets keeps the latest Budget of each installation (the most recently
// used MaxInstallationClients of them). Safe for concurrent use.
type Budgets struct {
	now func() time.Time
	mu  sync.Mutex
	all *lru.Cache[int64, Budget]
}

// NewBudgets returns an empty registry reading time from now (nil: time.Now).
func NewBudgets(now func() time.Time) *Budgets {
	if now == nil {
		now = time.Now
	}
	all, _ := lru.New[int64, Budget](MaxInstallationClients) // a positive size cannot fail
	return &Budgets{now: now, all: all}
}

// SetClock makes the budgets read time from now; call it before the
// clients are used.
func (b *Budgets) SetClock(now func() time.Time) { b.now = now }

// All returns every installation's budget.
func (b *Budgets) All() []Budget {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.all.Values()
}

// Get returns an installation's budget, false before GitHub answered it once.
func (b *Budgets) Get(installationID int64) (Budget, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.all.Peek(installationID)
}

// probeWait is how long requests wait while the one request sent after a
// reset learns the new budget.
const probeWait = time.Second

// reserve takes one request from the installation's budget, or says until
// when a request would be refused: a secondary limit's Retry-After, or the
// reset of a spent primary budget. Requests in flight count against the
// budget before their answers arrive, so workers at once do not overspend
// it. Once the reset passes, one request goes out and learns the new budget;
// the others wait for its answer.
func (b *Budgets) reserve(installationID int64) *LimitError {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	bu, ok := b.all.Peek(installationID)
	switch {
	case !ok:
		return nil
	case bu.SecondaryUntil.After(now):
		return &LimitError{InstallationID: installationID, Limit: LimitSecondary, Until: bu.SecondaryUntil}
	case bu.Resource == "": // no primary budget heard of (a window may say limit 0)
		return nil
	case bu.Remaining > 0:
		bu.Remaining--
	case bu.Reset.After(now):
		return &LimitError{InstallationID: installationID, Limit: LimitPrimary, Until: bu.Reset}
	case bu.probing:
		return &LimitError{InstallationID: installationID, Limit: LimitPrimary, Until: now.Add(probeWait)}
	default:
		bu.probing = true
	}
	b.all.Add(installationID, bu)
	return nil
}

// observe records what an answer says about the installation's limits.
func (b *Budgets) observe(installationID int64, resp *http.Response) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	bu, _ := b.all.Peek(installationID)
	bu.InstallationID, bu.Seen = installationID, now
	if res := resp.Header.Get("X-Ratelimit-Resource"); res == "" || res == "core" {
		if limit, ok := headerInt(resp, "X-Ratelimit-Limit"); ok {
			remaining, _ := headerInt(resp, "X-Ratelimit-Remaining")
			used, _ := headerInt(resp, "X-Ratelimit-Used")
			reset := bu.Reset
			if r, ok := headerInt(resp, "X-Ratelimit-Reset"); ok {
				reset = time.Unix(int64(r), 0).UTC()
			}
			// Answers of one window arrive out of order, and requests still
			// in flight were reserved: within a window the lowest count holds.
			// A 304 Not Modified was reserved but is not counted: given back.
			if reset.Equal(bu.Reset) && bu.Limit > 0 {
				held := bu.Remaining
				if resp.StatusCode == http.StatusNotModified {
					held++
				}
				remaining, used = min(remaining, held), max(used, bu.Used)
			}
			bu.Resource, bu.Limit, bu.Remaining, bu.Used, bu.Reset = "core", limit, remaining, used, reset
		}
	}
	bu.probing = false
	// A secondary limit that says how long holds every request back; one
	// without (a 403 with GitHub's message only) is the refused request's
	// wait, not the installation's.
	if l, ok := limitOf(resp, now); ok && l.Limit == LimitSecondary {
		bu.SecondaryUntil = l.Until
	}
	b.all.Add(installationID, bu)
}

func headerInt(resp *http.Response, name string) (int, bool) {
	v, err := strconv.Atoi(resp.Header.Get(name))
	return v, err == nil
}

// limitOf reads a refusal for a rate limit from an answer: 403 or 429 with
// Retry-After (secondary), with x-ratelimit-remaining 0 (primary, until
// x-ratelimit-reset), or GitHub's secondary-limit error without either.
func limitOf(resp *http.Response, now time.Time) (LimitError, bool) {
	if resp == nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests) {
		return LimitError{}, false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil {
			return LimitError{Limit: LimitSecondary, Until: now.Add(time.Duration(secs) * time.Second)}, true
		}
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		until := now.Add(secondaryDefaultWait)
		if reset, ok := headerInt(resp, "X-Ratelimit-Reset"); ok {
			until = time.Unix(int64(reset), 0).UTC()
		}
		return LimitError{Limit: LimitPrimary, Until: until}, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return LimitError{Limit: LimitSecondary, Until: now.Add(secondaryDefaultWait)}, true
	}
	return LimitError{}, false
}

// limitAnswer is limitOf, or a 403 carrying GitHub's secondary-limit message
// without a header saying how long (a wait of secondaryDefaultWait).
func limitAnswer(resp *http.Response, now time.Time) (LimitError, bool) {
	if l, ok := limitOf(resp, now); ok {
		return l, true
	}
	if resp != nil && isRateLimited(resp) {
		return LimitError{Limit: LimitSecondary, Until: now.Add(secondaryDefaultWait)}, true
	}
	return LimitError{}, false
}

// LimitWait says whether err is GitHub refusing for a rate limit (or
// shardgate not asking because it would), until when, and which limit: the
// job waits for it rather than failing.
func LimitWait(err error, now time.Time) (until time.Time, limit string, ok bool) {
	var le *LimitError
	var rateErr *github.RateLimitError
	var abuseErr *github.AbuseRateLimitError
	var respErr *github.ErrorResponse
	switch {
	case errors.As(err, &le):
		return le.Until, le.Limit, true
	case errors.As(err, &rateErr):
		// go-github also answers this itself, unsent, while it knows the
		// budget is spent; its Rate is what GitHub last said.
		if rateErr.Rate.Reset.After(now) {
			return rateErr.Rate.Reset.Time, LimitPrimary, true
		}
		return now, LimitPrimary, true
	case errors.As(err, &abuseErr):
		wait := secondaryDefaultWait
		if abuseErr.RetryAfter != nil && *abuseErr.RetryAfter > 0 {
			wait = *abuseErr.RetryAfter
		}
		return now.Add(wait), LimitSecondary, true
	case errors.As(err, &respErr):
		if l, ok := limitOf(respErr.Response, now); ok {
			return l.Until, l.Limit, true
		}
		if respErr.Response != nil && respErr.Response.StatusCode == http.StatusForbidden &&
			strings.Contains(strings.ToLower(respErr.Message), "secondary rate limit") {
			return now.Add(secondaryDefaultWait), LimitSecondary, true
		}
	}
	return time.Time{}, "", false
}

// IsLimit says whether err is GitHub refusing for a rate limit (or shardgate
// not asking because it would), whenever that ends.
func IsLimit(err error) bool {
	_, _, ok := LimitWait(err, time.Time{})
	return ok
}

// budgetTransport is one installation's transport: it does not send while
// GitHub said the request would be refused for a limit, and records what
// every answer says about the installation's limits.
type budgetTransport struct {
	next           http.RoundTripper
	installationID int64
	budgets        *Budgets
}

func (t *budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if le := t.budgets.reserve(t.installationID); le != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, le
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		t.budgets.unprobe(t.installationID)
		return nil, err
	}
	t.budgets.observe(t.installationID, resp)
	// shardgate's clock decides, not go-github's: a refusal for a limit is
	// answered as the wait it is, read on the budgets' clock, and go-github
	// never learns a budget, so its own short-circuit (which reads the wall
	// clock) never holds a request back or lets one through.
	if l, ok := limitAnswer(resp, t.budgets.now()); ok {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		l.InstallationID = t.installationID
		return nil, &l
	}
	for _, h := range rateHeaders {
		resp.Header.Del(h)
	}
	return resp, nil
}

// rateHeaders are the headers go-github reads a rate budget from.
var rateHeaders = []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Used", "X-Ratelimit-Reset", "X-Ratelimit-Resource"}

// paced counts a request the installation's pacer held back for d.
func (b *Budgets) paced(installationID int64, kind string, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bu, _ := b.all.Peek(installationID)
	bu.InstallationID = installationID
	paced, pacedFor := make(map[string]int64, 2), make(map[string]time.Duration, 2)
	for k, v := range bu.Paced { // copied: All hands out the old maps
		paced[k] = v
	}
	for k, v := range bu.PacedFor {
		pacedFor[k] = v
	}
	paced[kind]++
	pacedFor[kind] += d
	bu.Paced, bu.PacedFor = paced, pacedFor
	b.all.Add(installationID, bu)
}

// unprobe lets another request learn the budget when the one sent for it
// got no answer.
func (b *Budgets) unprobe(installationID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bu, ok := b.all.Peek(installationID); ok && bu.probing {
		bu.probing = false
		b.all.Add(installationID, bu)
	}
}
