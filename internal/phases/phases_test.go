package phases

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPhasesAddUp(t *testing.T) {
	Add(context.Background(), Terraform, time.Second) // no Timings: nothing, no panic

	ctx, timings := With(context.Background())
	Add(ctx, Terraform, 2*time.Millisecond)
	Add(ctx, Terraform, 3*time.Millisecond)
	// Within the checkout, GitHub's time is the checkout's.
	Add(Within(ctx, Checkout), GitHub, 7*time.Millisecond)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	hc := &http.Client{Transport: Transport(GitHub, http.DefaultTransport)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()

	got := timings.Get()
	require.Equal(t, 5*time.Millisecond, got[Terraform])
	require.Equal(t, 7*time.Millisecond, got[Checkout])
	require.Greater(t, got[GitHub], time.Duration(0), "the request, timed by the client")
	require.NotContains(t, got, Policy)
	require.Equal(t, int64(5), timings.Millis()["terraform_ms"])
}
