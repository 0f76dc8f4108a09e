package bot

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/coord"
)

// Job retry defaults: a job failing on a transient error (GitHub 5xx, a reset,
// a timeout, a coordinator 503) is tried again after a growing pause, up to
// DefaultJobAttempts in all (about ten minutes), then reported on the PR.
const (
	DefaultJobAttempts     = 8
	DefaultJobRetryBase    = 2 * time.Second
	DefaultJobRetryMaxWait = 3 * time.Minute
)

// transient says whether err is worth trying the job again for: the failure is
// the network's or an overloaded service's, not the job's.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ghErr *github.ErrorResponse
	if errors.As(err, &ghErr) && ghErr.Response != nil {
		return retryableStatus(ghErr.Response.StatusCode)
	}
	var rateErr *github.RateLimitError
	var abuseErr *github.AbuseRateLimitError
	if errors.As(err, &rateErr) || errors.As(err, &abuseErr) {
		return true
	}
	var apiErr *coord.APIError
	if errors.As(err, &apiErr) {
		return retryableStatus(apiErr.HTTPStatus)
	}
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &netErr)
}

func retryableStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout
}

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
