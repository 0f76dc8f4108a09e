package coord

import (
	"net/http"
	"testing"
	"time"
)

// The pause before a retry is drawn from [d/2, d] of baseDelay doubled per
// attempt and capped at maxDelay, and never shorter than Retry-After.
func TestBackoffStaysInItsBounds(t *testing.T) {
	c := &Client{baseDelay: 100 * time.Millisecond, maxDelay: time.Second}
	for attempt, d := range map[int]time.Duration{1: 100 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 40: time.Second} {
		for range 200 {
			if got := c.backoff(attempt, 0); got < d/2 || got > d {
				t.Fatalf("attempt %d: pause %s outside [%s, %s]", attempt, got, d/2, d)
			}
		}
	}
	if got := c.backoff(1, 5*time.Second); got != 5*time.Second {
		t.Fatalf("Retry-After 5s gave %s", got)
	}
}

// A Retry-After date is read against the client's clock, not the wall clock.
func TestRetryAfterDateIsReadOnTheClientsClock(t *testing.T) {
	now := time.Date(2101, 3, 4, 13, 30, 0, 0, time.UTC)
	c, err := New("http://coord.example:8080", WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.retryAfter(now.Add(90 * time.Second).Format(http.TimeFormat)); got != 90*time.Second {
		t.Fatalf("Retry-After 90s after the client's now gave %s", got)
	}
}
