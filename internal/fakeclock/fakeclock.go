// Package fakeclock is the one settable clock of shardgate's tests and demo.
// A Clock either stands still where it was set (New, Set) and moves only when
// advanced, or follows the real time shifted by what was advanced
// (Following): the second keeps the times a test takes from time.Now
// comparable with the clock's, and lets a story "take a while" without
// sleeping. It is safe for concurrent use; pass its Now method wherever a
// func() time.Time is taken.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable time source.
type Clock struct {
	mu     sync.Mutex
	now    time.Time // zero: follow time.Now
	offset time.Duration
}

// New returns a clock standing still at t (in UTC).
func New(t time.Time) *Clock { return &Clock{now: t.UTC()} }

// Following returns a clock that reads the real time shifted by what Advance
// added.
func Following() *Clock { return &Clock{} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		return time.Now().Add(c.offset)
	}
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.offset += d
		return
	}
	c.now = c.now.Add(d)
}

// Set makes the clock stand still at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
