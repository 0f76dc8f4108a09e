package bot

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/coord"
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
