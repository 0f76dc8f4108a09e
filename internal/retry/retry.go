package retry

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Repeatable is the one rule of when a failed attempt may be sent again: when
// the request is idempotent (sending it twice does what sending it once does),
// or when the server said it did not act on it (a rate limit, a refusal
// before the call ran). Anything else — a creation cut off by a 5xx or a
// reset — may have been done: it is not repeated blind; the caller looks for
// what it created (a comment by its marker, a check run by its external id)
// when its job runs again.
func Repeatable(idempotent, notActedOn bool) bool { return idempotent || notActedOn }

// Backoff is the pause before each next attempt: Initial, doubled for each
// attempt after the first, at most Max (0: no bound), spread by ±Jitter/2 of
// its length so that clients failing together do not retry in lockstep.
type Backoff struct {
	Initial, Max time.Duration
	// Jitter is the fraction (0..1) of each pause that is randomised.
	Jitter float64
	// Rand returns a number in [0, 1) (nil: math/rand/v2); tests fix it.
	Rand func() float64
}

// Delay is the pause after the given failed attempt (1 for the first). The
// growth is cenkalti/backoff's exponential backoff without its own
// randomisation, which draws from a source tests cannot fix; the jitter is
// applied here from Rand.
func (b Backoff) Delay(attempt int) time.Duration {
	limit := b.Max
	if limit <= 0 {
		limit = math.MaxInt64
	}
	exp := &backoff.ExponentialBackOff{InitialInterval: b.Initial, Multiplier: 2, MaxInterval: limit}
	d := exp.NextBackOff()
	for i := 1; i < attempt && d < limit; i++ {
		d = exp.NextBackOff()
	}
	if b.Jitter <= 0 {
		return d
	}
	r := b.Rand
	if r == nil {
		r = rand.Float64
	}
	spread := float64(d) * min(b.Jitter, 1)
	return time.Duration(float64(d) - spread/2 + spread*r())
}

// ParseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (a date in the past is no wait). ok is false when v is empty or neither.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
