package apply

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// An apply's outcome is one event per attempt; its summary shows neither
// the plan's sensitive values nor the server's secrets.
func TestApplyOutcomeNotificationHidesSensitiveValues(t *testing.T) {
	ctx := context.Background()
	clk := fakeclock.New(fakeclock.Date(2026, 3, 1, 12, 0, 0))
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	const sensitive, password = "db-pass-from-the-plan", "coordinator-password-9"
	cfg := &serverconfig.Config{GitHubAPIURL: "https://api.github.com/",
		Coordinators: []serverconfig.CoordinatorCredentials{{Password: serverconfig.NewSecret(password)}},
		Notifications: []serverconfig.NotificationReceiver{{URL: "https://hooks.example.com/x", Secret: serverconfig.NewSecret("notify-secret-01"),
			Events: serverconfig.NotificationEvents, Format: serverconfig.NotifyFormatJSON}}}
	n, err := notify.New(cfg.Notifications, st, "a", cfg.Redactor(), nil, logrus.NewEntry(logrus.New()))
	require.NoError(t, err)
	n.Now = clk.Now
	a := &Applier{Config: cfg, Notifier: n, Now: clk.Now}
	job := &applyqueue.Job{Seq: "000000000007", Attempt: 1, Ref: pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 12},
		Project: "streams", MergeSHA: "abcdef0123456789", Sensitive: []string{sensitive}}
	r := &applyRun{s: a, job: job}
	reason := "terraform apply: value " + sensitive + " refused by the database; coordinator said auth " + password + " invalid"
	r.notifyOutcome(ctx, applyqueue.Failed, reason)
	r.notifyOutcome(ctx, applyqueue.Failed, reason) // the same attempt again: one event

	ns, err := st.Notifications(ctx, 10, store.NotificationPending)
	require.NoError(t, err)
	require.Len(t, ns, 1)
	require.NotContains(t, string(ns[0].Body), sensitive)
	require.NotContains(t, string(ns[0].Body), password)
	var ev notify.Event
	require.NoError(t, json.Unmarshal(ns[0].Body, &ev))
	require.Equal(t, "apply_failed", ev.Event)
	require.Contains(t, ev.Summary, report.Sensitive)
	require.Equal(t, "https://github.com/acme/streams/pull/12", ev.URL)
	require.Equal(t, 12, *ev.PullRequest)

	job.Attempt = 2 // retried with /shardgate apply: a new attempt, a new event
	r.notifyOutcome(ctx, applyqueue.Applied, "applied")
	ns, err = st.Notifications(ctx, 10, store.NotificationPending)
	require.NoError(t, err)
	require.Len(t, ns, 2)
}
