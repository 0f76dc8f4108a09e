package coordsim

import "time"

// Clock is the simulator's time source: timestamps, token expiry, audit.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now().UTC() }
