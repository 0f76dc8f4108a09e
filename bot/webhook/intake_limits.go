package webhook

import (
	"errors"
	"hash"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Limits that keep unauthenticated traffic from exhausting the intake. A
// signature can only be checked once the whole body is in, so until then a body
// is a stranger's claim: these bound what such a claim may cost in time,
// connections and memory.
const (
	// DefaultReadHeaderTimeout cuts connections that trickle their headers.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds a whole request. GitHub records a delivery as
	// failed when it has no answer within 10 s, so a body still arriving after
	// that is of use to no one.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout counts from the end of the headers (net/http), so it
	// covers reading the body, enqueueing (an fsync) and the answer.
	DefaultWriteTimeout = 15 * time.Second
	// DefaultIdleTimeout closes kept-alive connections nobody uses.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxHeaderBytes: GitHub's headers are a few hundred bytes; net/http's
	// default of 1 MiB would let each trickling connection grow a 1 MiB buffer.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxBodiesInFlight bounds the bodies being read at once; beyond it
	// a delivery gets 503 at once. A trickled body holds one 8 KiB chunk.
	DefaultMaxBodiesInFlight = 1024
	// DefaultBodyAllowance is what every body in flight may hold on its own:
	// GitHub's pull_request and issue_comment payloads fit in it.
	DefaultBodyAllowance = 64 << 10
	// DefaultLargeBodyBudget is shared by the bytes of all unverified bodies
	// past their allowance: one 25 MiB delivery, or several of a few MiB. A body
	// that finds it spent gets 503 at once. Unverified memory is thus bounded by
	// DefaultMaxBodiesInFlight x DefaultBodyAllowance + DefaultLargeBodyBudget.
	// It is kept at a third of issue 10's 100 MB because Go's collector lets
	// the heap grow to twice what is live before it runs (GOGC=100).
	DefaultLargeBodyBudget = 32 << 20
	// DefaultMinBodyRate and DefaultBodyGrace: after the grace, a body must keep
	// arriving at this many bytes per second, so holding a slot costs the
	// sender bandwidth. GitHub sends from its data centres, far faster.
	DefaultMinBodyRate = 32 << 10
	DefaultBodyGrace   = 2 * time.Second
)

// NewHTTPServer is the http.Server `shardgate serve` listens with: every
// timeout set, so slow connections are cut rather than held.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		WriteTimeout:      DefaultWriteTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
	}
}

const chunkSize = 8 << 10

// chunkCache keeps returned chunks for reuse, so waves of unverified bodies
// reuse memory instead of leaving garbage. A sync.Pool would not do: it drops
// its contents at every collection, and the next wave allocates afresh while
// the last is still garbage. It holds the budget's chunks and one per slot, the
// most a wave of large or of trickled bodies needs: at most 40 MiB stay
// allocated after an attack.
var chunkCache = make(chan *[]byte, DefaultLargeBodyBudget/chunkSize+DefaultMaxBodiesInFlight)

func getChunk() *[]byte {
	select {
	case c := <-chunkCache:
		return c
	default:
		b := make([]byte, chunkSize)
		return &b
	}
}

func putChunk(c *[]byte) {
	select {
	case chunkCache <- c:
	default: // the cache is full: this one goes to the collector
	}
}

var (
	errBodyTooLarge = errors.New("body over the size limit")
	errBudgetSpent  = errors.New("large-body budget spent")
)

// bodyGate admits unverified bodies: a bounded number at a time, each within
// its allowance plus what the shared budget has left, arriving fast enough.
type bodyGate struct {
	slots     chan struct{}
	allowance int64
	budget    byteBudget
	minRate   int64
	grace     time.Duration
	timeout   time.Duration
}

func newBodyGate() *bodyGate {
	return &bodyGate{slots: make(chan struct{}, DefaultMaxBodiesInFlight), allowance: DefaultBodyAllowance,
		budget: byteBudget{limit: DefaultLargeBodyBudget}, minRate: DefaultMinBodyRate,
		grace: DefaultBodyGrace, timeout: DefaultReadTimeout}
}

// enter takes a slot without waiting; release gives it back.
func (g *bodyGate) enter() (release func(), ok bool) {
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, true
	default:
		return nil, false
	}
}

// byteBudget is a lock-free counter of bytes held against a limit.
type byteBudget struct {
	used  atomic.Int64
	limit int64
}

func (b *byteBudget) acquire(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *byteBudget) release(n int64) { b.used.Add(-n) }

// heldBody is a body read into pooled chunks; every chunk is full but the last.
type heldBody struct {
	gate    *bodyGate
	chunks  []*[]byte
	n       int64
	charged int64
}

// bytes copies the body into one slice. Call it only once the signature
// matched: this is the first allocation sized by the sender.
func (h *heldBody) bytes() []byte {
	out := make([]byte, 0, h.n)
	for _, c := range h.chunks {
		out = append(out, (*c)[:min(int64(chunkSize), h.n-int64(len(out)))]...)
	}
	return out
}

// release returns the chunks and the budget; it may be called twice.
func (h *heldBody) release() {
	for _, c := range h.chunks {
		putChunk(c)
	}
	h.chunks = nil
	h.gate.budget.release(h.charged)
	h.charged = 0
}

// read streams r through mac. With keep it holds the bytes (the allowance
// free, the rest charged to the budget); without, it reuses one chunk and
// holds nothing. Each read has a deadline that only the minimum rate pushes
// forward, so a trickled body is cut after the grace.
func (g *bodyGate) read(w http.ResponseWriter, r io.Reader, mac hash.Hash, maxBytes int64, keep bool) (*heldBody, error) {
	rc := http.NewResponseController(w)
	start := time.Now()
	// Errors are ignored: a ResponseWriter without deadlines (a recorder) is read
	// without the rate check; the server's ReadTimeout still holds.
	defer func() { _ = rc.SetReadDeadline(start.Add(g.timeout)) }()
	h := &heldBody{gate: g}
	filled := chunkSize
	for {
		if filled == chunkSize {
			if err := h.grow(keep); err != nil {
				return h, err
			}
			filled = 0
		}
		_ = rc.SetReadDeadline(g.deadline(start, h.n))
		buf := (*h.chunks[len(h.chunks)-1])[filled:min(chunkSize, int64(filled)+maxBytes+1-h.n)]
		nr, err := r.Read(buf)
		mac.Write(buf[:nr])
		filled += nr
		h.n += int64(nr)
		switch {
		case h.n > maxBytes:
			return h, errBodyTooLarge
		case errors.Is(err, io.EOF):
			return h, nil
		case err != nil:
			return h, err
		}
	}
}

// grow makes room for the next chunk of the body.
func (h *heldBody) grow(keep bool) error {
	if !keep && len(h.chunks) > 0 {
		return nil // the one chunk is reused: the bytes were hashed
	}
	if keep && h.n >= h.gate.allowance {
		if !h.gate.budget.acquire(chunkSize) {
			return errBudgetSpent
		}
		h.charged += chunkSize
	}
	h.chunks = append(h.chunks, getChunk())
	return nil
}

// deadline is when the next byte must have arrived: the grace plus the time
// the bytes so far buy at the minimum rate, never past the request timeout.
func (g *bodyGate) deadline(start time.Time, n int64) time.Time {
	limit := start.Add(g.timeout)
	if g.minRate <= 0 {
		return limit
	}
	d := start.Add(g.grace + time.Duration(n*int64(time.Second)/g.minRate))
	if d.After(limit) {
		return limit
	}
	return d
}
