package webhook

import (
	"time"

	"github.com/shardgate/shardgate/internal/retry"
)

// Job retry defaults: a job failing on a transient error (GitHub 5xx, a reset,
// a timeout, a coordinator 503) is tried again after a pause that doubles from
// DefaultJobRetryBase up to DefaultJobRetryMaxWait, up to DefaultJobAttempts
// tries in all (about four minutes), then reported on the PR.
const (
	DefaultJobAttempts     = 8
	DefaultJobRetryBase    = 2 * time.Second
	DefaultJobRetryMaxWait = 3 * time.Minute
)

// jobRetryJitter spreads each pause over half to one and a half of its
// length, so jobs failing together are not retried in lockstep.
const jobRetryJitter = 1.0

// jobBackoff is the pause before attempt+1 of a job.
func (d *Dispatcher) jobBackoff(attempt int) time.Duration {
	return retry.Backoff{Initial: d.RetryBase, Max: d.RetryMax, Jitter: jobRetryJitter}.Delay(max(attempt, 1))
}
