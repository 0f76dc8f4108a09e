package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

// The errors the dispatcher retries a job for (webhook.Dispatcher.Transient):
// the network's and overloaded services', not the job's own.
func TestTransient(t *testing.T) {
	badGateway := &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusBadGateway}, Message: "Bad Gateway"}
	notFound := &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusNotFound}, Message: "Not Found"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a 502", badGateway, true},
		{"a wrapped 502", fmt.Errorf("get pull request: %w", badGateway), true},
		{"a reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"a timeout", fmt.Errorf("list comments: %w", context.DeadlineExceeded), true},
		{"a 404", notFound, false},
		{"a cancellation", context.Canceled, false},
		{"the job's own error", errors.New("decode pull_request event: bad"), false},
		{"no error", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, transient(tt.err))
		})
	}
}
