package coord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

type requestIDKey struct{}

// WithRequestID makes every call made with ctx send this X-Request-Id, so one
// bot operation shows as one id in the coordinator's audit.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the id set by WithRequestID.
func RequestIDFrom(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(requestIDKey{}).(string)
	return id, ok && id != ""
}

// NewRequestID returns a random id like "shardgate-1a2b3c4d5e6f7a8b".
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "shardgate-" + hex.EncodeToString(b[:])
}
