package webhook

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/redact"
)

// handlerFunc is a handler of pull_request events running f.
type handlerFunc func() error

func (handlerFunc) Handles() []string { return []string{"pull_request"} }

func (f handlerFunc) Handle(context.Context, string, string, []byte) error { return f() }

func TestGuardCountsRedactsAndRecovers(t *testing.T) {
	const secret = "the-webhook-secret"
	running := 0
	started := func() func() { running++; return func() { running-- } }
	r := redact.New(secret)

	var during int
	hs := Guard([]EventHandler{handlerFunc(func() error { during = running; return errors.New("bad " + secret) })}, r, started)
	require.Equal(t, []string{"pull_request"}, hs[0].Handles())
	err := hs[0].Handle(context.Background(), "pull_request", "d", nil)
	require.Equal(t, 1, during, "counted while it runs")
	require.Zero(t, running, "and no longer after")
	require.Error(t, err)
	require.NotContains(t, err.Error(), secret)

	hs = Guard([]EventHandler{handlerFunc(func() error { panic("boom " + secret) })}, r, started)
	err = hs[0].Handle(context.Background(), "pull_request", "d", nil)
	require.ErrorContains(t, err, "handler panic: boom")
	require.NotContains(t, err.Error(), secret, "a panic's value is redacted too")
	require.Zero(t, running)

	hs = Guard([]EventHandler{handlerFunc(func() error { return nil })}, r, nil)
	require.NoError(t, hs[0].Handle(context.Background(), "pull_request", "d", nil))
}
