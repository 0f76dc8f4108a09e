package bot

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/webhook"
)

// The listener the internet reaches serves the webhook and health only:
// /metrics (which names installations, repositories and projects) is on the
// admin listener; signed deliveries of made-up events add no series (they
// count as "other"); and unsigned requests with a 60 KB X-GitHub-Delivery
// put a few hundred bytes each in the log, at most webhook.RefusalsLogged
// of them a minute, the next line saying how many were left out.
func TestPublicListenerServesWebhookAndHealthOnly(t *testing.T) {
	h := newHarness(t)
	resp, err := http.Get(h.web.URL + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "/metrics on the webhook listener")

	for i := 0; i < 3; i++ {
		code, r := h.deliver(fmt.Sprintf("made-up-%d", i), []byte(`{}`))
		require.Equal(t, http.StatusAccepted, code)
		require.Equal(t, "ignored", r.Status)
	}
	code, r := h.deliver(strings.Repeat("e", 60<<10), []byte(`{}`))
	require.Equal(t, http.StatusAccepted, code)
	require.Less(t, len(r.Reason), 300, "the answer does not echo the header whole")
	metrics := h.scrape()
	require.NotContains(t, metrics, "made-up")
	require.NotContains(t, metrics, "eeee")
	require.Contains(t, metrics, `shardgate_webhook_deliveries_total{event="other",outcome="ignored"} 4`)

	huge := strings.Repeat("d", 60<<10)
	before := len(h.logs.String())
	for i := 0; i < 100; i++ {
		req, err := http.NewRequest(http.MethodPost, h.web.URL+"/webhook", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", huge)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	added := h.logs.String()[before:]
	lines := strings.Split(strings.TrimSpace(added), "\n")
	require.Len(t, lines, webhook.RefusalsLogged, "refusals logged in a minute")
	for _, l := range lines {
		require.Contains(t, l, "webhook signature missing or wrong")
		require.Less(t, len(l), 500, "one refusal's line: %s", l)
	}

	h.clock.Advance(time.Minute)
	before = len(h.logs.String())
	req, err := http.NewRequest(http.MethodPost, h.web.URL+"/webhook", strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("X-GitHub-Delivery", huge)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Contains(t, h.logs.String()[before:], fmt.Sprintf(`"refusals_not_logged":%d`, 100-webhook.RefusalsLogged))
}
