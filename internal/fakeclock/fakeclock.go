// Package fakeclock is the one settable clock of shardgate's tests and demo.
// A Clock either stands still where it was set (New, Set) and moves only when
// advanced, or follows the real time shifted by what was advanced
// (Following): the second lets a story "take a while" without sleeping. It is
// safe for concurrent use; pass its Now method wherever a func() time.Time is
// taken.
//
// Every fake clock is moved by the environment variable
// SHARDGATE_FAKECLOCK_SHIFT (EnvShift): years as "+3y" or "-3y", or any Go
// duration such as "-26280h"; empty or unset is no shift. New(t) then stands
// at t shifted and Following follows the real time shifted, so running tests
// with the shift set proves they hold on any day, not only on the one they
// were written: a test must take the times it compares with a clock's from
// that clock (clock.Now(), clock.Now().Add(d)) or from Date, never from
// time.Now or a literal time.Date. Set takes an absolute moment and is not
// shifted. An unparsable shift panics: a run that meant to move the clocks
// must not silently run unshifted.
package fakeclock

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EnvShift names the environment variable that moves every fake clock.
const EnvShift = "SHARDGATE_FAKECLOCK_SHIFT"

// shift is a parsed EnvShift: whole calendar years, or a duration.
type shift struct {
	years int
	d     time.Duration
}

func (s shift) apply(t time.Time) time.Time {
	if s.years != 0 {
		t = t.AddDate(s.years, 0, 0)
	}
	return t.Add(s.d)
}

// parseShift reads "+3y", "-3y", "3y" or a Go duration ("-26280h"); "" is no
// shift.
func parseShift(v string) (shift, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return shift{}, nil
	}
	if n, ok := strings.CutSuffix(v, "y"); ok {
		years, err := strconv.Atoi(n)
		if err != nil {
			return shift{}, fmt.Errorf("%s=%q: years must be a whole number such as +3y or -3y", EnvShift, v)
		}
		return shift{years: years}, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return shift{}, fmt.Errorf("%s=%q: neither years (+3y, -3y) nor a Go duration (-26280h): %w", EnvShift, v, err)
	}
	return shift{d: d}, nil
}

// envShift is EnvShift read once per process.
var envShift = sync.OnceValue(func() shift {
	s, err := parseShift(os.Getenv(EnvShift))
	if err != nil {
		panic("fakeclock: " + err.Error())
	}
	return s
})

// Shift returns t moved by SHARDGATE_FAKECLOCK_SHIFT (t itself when it is
// unset). It panics when the variable cannot be parsed.
func Shift(t time.Time) time.Time { return envShift().apply(t) }

// Date is time.Date in UTC moved by SHARDGATE_FAKECLOCK_SHIFT: where New
// stands for New(time.Date(...)), so a test may name the moments around it
// by the calendar and still hold under any shift.
func Date(year int, month time.Month, day, hour, min, sec int) time.Time {
	return Shift(time.Date(year, month, day, hour, min, sec, 0, time.UTC))
}

// Clock is a settable time source.
type Clock struct {
	mu     sync.Mutex
	now    time.Time // zero: follow time.Now
	offset time.Duration
}

// New returns a clock standing still at t (in UTC) moved by
// SHARDGATE_FAKECLOCK_SHIFT.
func New(t time.Time) *Clock { return &Clock{now: Shift(t).UTC()} }

// Following returns a clock that reads the real time moved by
// SHARDGATE_FAKECLOCK_SHIFT and by what Advance added.
func Following() *Clock {
	// The shift is taken as a duration once, so that Now keeps time.Now's
	// monotonic reading (AddDate would drop it).
	now := time.Now()
	return &Clock{offset: Shift(now).Sub(now)}
}

// Wall returns a clock that reads the real time moved only by what Advance
// added, never by SHARDGATE_FAKECLOCK_SHIFT: for a test whose clock must agree
// with the wall clock of another process it starts (a shardgate serve reads
// its own), which no shift reaches.
func Wall() *Clock { return &Clock{} }

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

// Set makes the clock stand still at t, as given: t is not shifted (take it
// from the clock, or from Date).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
