package webhook

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Job retry defaults: a job failing on a transient error (GitHub 5xx, a reset,
// a timeout, a coordinator 503) is tried again after a growing pause, up to
// DefaultJobAttempts in all (about ten minutes), then reported on the PR.
const (
	DefaultJobAttempts     = 8
	DefaultJobRetryBase    = 2 * time.Second
	DefaultJobRetryMaxWait = 3 * time.Minute
)

// jobBackoff is the pause before attempt+1 of a job.
func jobBackoff(attempt int, base, maxWait time.Duration) time.Duration {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = base, maxWait
	var d time.Duration
	for i := 0; i < max(attempt, 1); i++ {
		d = b.NextBackOff()
	}
	return d
}
