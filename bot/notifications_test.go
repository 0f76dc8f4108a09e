package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// A job that failed for good is one job_failed event, emitted before
// GitHub is told (GitHub may be what failed), its error redacted.
func TestAJobThatFailedForGoodIsNotified(t *testing.T) {
	const password = "coordinator-write-password"
	g := newGitHubServer(t, password)
	g.cfg.Notifications = []serverconfig.NotificationReceiver{{URL: "https://hooks.example.com/x", Secret: serverconfig.NewSecret("notify-secret-01"),
		Events: []string{serverconfig.EventJobFailed}, Format: serverconfig.NotifyFormatJSON}}
	require.NoError(t, g.srv.wireNotifier("test"))
	ctx := logctx.WithLogger(context.Background(), g.srv.log)
	// GitHub is down: the report on the pull request fails, the event does not.
	g.gh.Inject(githubtest.Fault{Times: 1000})
	payload := githubtest.PullRequestOpened(t, g.gh.PRPayload(owner, repoName, g.pr.Number))
	job := &store.Job{ID: "7", Event: "pull_request", Attempts: 3, Payload: payload}
	jobErr := fmt.Errorf("terraform show: auth %s refused", password) // not redacted yet
	g.srv.reportJobFailure(ctx, job, jobErr)
	g.srv.reportJobFailure(ctx, job, jobErr) // reported twice: one event

	ns, err := g.st.Notifications(ctx, 10, store.NotificationPending)
	require.NoError(t, err)
	require.Len(t, ns, 1)
	require.NotContains(t, string(ns[0].Body), password)
	var ev notify.Event
	require.NoError(t, json.Unmarshal(ns[0].Body, &ev))
	require.Equal(t, "job_failed", ev.Event)
	require.Equal(t, owner+"/"+repoName, ev.Repository)
	require.Equal(t, g.pr.Number, *ev.PullRequest)
	require.Equal(t, "shardgate could not finish handling a pull_request event (tried 3 times): terraform show: auth "+redact.Redacted+" refused", ev.Summary)
	require.Contains(t, ev.URL, fmt.Sprintf("/%s/%s/pull/%d", owner, repoName, g.pr.Number))
}
