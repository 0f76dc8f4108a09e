// Package retry is shardgate's one way of trying a request again: which
// requests may be repeated (idempotent ones; a creation is looked up, never
// repeated blind), how long to wait between attempts (exponential backoff with
// jitter, github.com/cenkalti/backoff/v5, or what the server's Retry-After
// says), and waiting out that pause unless the caller gives up.
package retry

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever comes first; it returns ctx's
// error when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
