package coord

import (
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
