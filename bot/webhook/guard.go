package webhook

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/shardgate/shardgate/internal/redact"
)

// Guard wraps each handler for the dispatcher: its errors reach the
// dispatcher redacted with r (they are stored as the job's last error,
// logged, and shown on the pull request when the job fails for good), a
// panic becomes such an error with its stack (its value may quote what a
// pull request wrote), and started, when set, is called as a job begins and
// the function it returns as the job ends (the running-jobs gauge).
func Guard(hs []EventHandler, r *redact.Redactor, started func() func()) []EventHandler {
	out := make([]EventHandler, len(hs))
	for i, h := range hs {
		out[i] = guarded{EventHandler: h, r: r, started: started}
	}
	return out
}

type guarded struct {
	EventHandler
	r       *redact.Redactor
	started func() func()
}

// Handle implements EventHandler.
func (h guarded) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) (err error) {
	if h.started != nil {
		defer h.started()()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v\n%s", p, debug.Stack())
		}
		err = h.r.Error(err)
	}()
	return h.EventHandler.Handle(ctx, eventType, deliveryID, payload)
}
