package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/testing/notifytest"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// Through the service: an apply on merge succeeds; the receiver answers 500
// twice, then accepts. It gets exactly one apply_succeeded, the same
// delivery id on all three attempts, each signed with its secret.
func TestAReceiverThatAnswers500TwiceGetsOneSignedApplySucceeded(t *testing.T) {
	if testing.Short() {
		t.Skip("terraform")
	}
	const secret = "notify-secret-for-the-test"
	rcv, _ := notifytest.New(t, http.StatusInternalServerError, http.StatusInternalServerError)
	h := newHarnessBase(t)
	h.cfg.Notifications = []serverconfig.NotificationReceiver{{URL: rcv.URL + "/shardgate", Secret: serverconfig.NewSecret(secret),
		Events: serverconfig.NotificationEvents, Format: serverconfig.NotifyFormatJSON, InsecureHTTP: true}}
	h.tune = func(s *Server) { s.notifier.Poll = 50 * time.Millisecond }
	h.start()
	pr := allowedScale(h, "scale-up")
	mergeSHA := h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)

	// The retries come due on the service's clock, which the test moves.
	require.Eventually(t, func() bool {
		h.clock.Advance(15 * time.Second)
		return len(rcv.Requests()) >= 3
	}, time.Minute, 100*time.Millisecond, "the receiver got %d requests", len(rcv.Requests()))
	// A day later nothing is due any more.
	h.clock.Advance(25 * time.Hour)
	require.Zero(t, h.srv.notifier.SendDue(context.Background()))
	got := rcv.Requests()
	require.Len(t, got, 3, "two refusals and one delivery")
	var accepted []notifytest.Request
	for _, r := range got {
		require.Equal(t, got[0].Delivery, r.Delivery, "one delivery id across the retries")
		require.Equal(t, "apply_succeeded", r.Event)
		require.True(t, notify.Verify(secret, r.Body, r.Signature), "signature %q verifies", r.Signature)
		if r.Code == http.StatusOK {
			accepted = append(accepted, r)
		}
	}
	require.Len(t, accepted, 1)
	var ev map[string]any
	require.NoError(t, json.Unmarshal(accepted[0].Body, &ev))
	require.Equal(t, "apply_succeeded", ev["event"])
	require.Equal(t, owner+"/"+repoName, ev["repository"])
	require.Equal(t, float64(pr.Number), ev["pull_request"])
	require.Equal(t, "streams", ev["project"])
	require.Equal(t, mergeSHA, ev["sha"])
	require.Contains(t, ev["summary"], "converged")
	require.Equal(t, strings.TrimSuffix(h.gh.URL(), "/")+fmt.Sprintf("/%s/%s/pull/%d", owner, repoName, pr.Number), ev["url"])
	require.NotEmpty(t, ev["at"])
	require.NotContains(t, string(accepted[0].Body), "password", "no coordinator credential")

	metrics := h.scrape()
	require.Contains(t, metrics, `shardgate_notification_deliveries{state="pending"} 0`)
	require.Contains(t, metrics, `shardgate_notification_deliveries{state="failed"} 0`)
	require.Contains(t, metrics, `shardgate_notification_attempts_total{outcome="retried"} 2`)
	require.Contains(t, metrics, `shardgate_notification_attempts_total{outcome="sent"} 1`)
}
