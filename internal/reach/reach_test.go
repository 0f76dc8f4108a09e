package reach

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

func TestTrackerKeepsTheLastRequestPerService(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
	tr := New(clk.Now, func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") })
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	hc := &http.Client{Transport: tr.Transport("GitHub", nil, nil)}
	get := func() {
		t.Helper()
		resp, err := hc.Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
	}

	get()
	start := clk.Now()
	require.Equal(t, []Seen{{Service: "GitHub", OK: true, At: start, Since: start}}, tr.All())

	clk.Advance(time.Minute)
	status = http.StatusBadGateway
	get()
	clk.Advance(time.Minute)
	get()
	down := start.Add(time.Minute)
	require.Equal(t, []Seen{{Service: "GitHub", OK: false, At: clk.Now(), Since: down, Error: "answered 502 Bad Gateway"}}, tr.All(),
		"a server error is not reachable; Since is when it went down")

	clk.Advance(time.Minute)
	status = http.StatusNotFound
	get()
	require.True(t, tr.All()[0].OK, "a 4xx is an answer")

	tr.Observe("coordinator db.example", nil, errors.New("dial tcp: connection refused (password s3cret)"))
	all := tr.All()
	require.Len(t, all, 2)
	require.Equal(t, "coordinator db.example", all[1].Service)
	require.False(t, all[1].OK)
	require.Equal(t, "dial tcp: connection refused (password [redacted])", all[1].Error)
}
