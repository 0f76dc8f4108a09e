package drift

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/store"
)

// A drift issue's opening and closing are each one event: editing an open
// issue at the next check, or a failed check, is none.
func TestDriftIssueOpeningAndClosingAreNotified(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			gh := ghapptest.New(clock.Now)
			outbox := st.(store.Outbox)
			rc := serverconfig.NotificationReceiver{URL: "https://hooks.example.com/x", Secret: serverconfig.NewSecret("notify-secret-01"),
				Events: serverconfig.NotificationEvents, Format: serverconfig.NotifyFormatJSON}
			n, err := notify.New([]serverconfig.NotificationReceiver{rc}, outbox, "a", nil, nil, logrus.NewEntry(logrus.New()))
			require.NoError(t, err)
			n.Now = clock.Now
			r := &Reporter{Issues: gh, Comments: gh, Store: NewStore(st), Notifier: n, GitHubAPIURL: "https://api.github.com/"}

			report := func(res Result) {
				t.Helper()
				_, err := r.Report(ctx, owner, repoName, res)
				require.NoError(t, err)
			}
			report(stamped(drifted(7), clock.Now()))
			clock.Advance(time.Hour)
			report(stamped(drifted(9), clock.Now())) // edited in place
			clock.Advance(time.Hour)
			report(Failed(owner+"/"+repoName, "streams", "main", "abc", clock.Now(), "terraform plan: exit status 1", ""))
			clock.Advance(time.Hour)
			report(stamped(drifted(4), clock.Now())) // clean: closed

			events := pendingEvents(t, outbox)
			require.Len(t, events, 2)
			opened, closed := events[1], events[0] // newest first
			require.Equal(t, "drift_opened", opened.Event)
			require.Equal(t, "acme/infra", opened.Repository)
			require.Nil(t, opened.PullRequest)
			require.Equal(t, "streams", opened.Project)
			require.Equal(t, "1 coordinator group(s) differ from the code at the head of main: orders/billing: code 4, live 7", opened.Summary)
			require.Equal(t, "https://github.com/acme/infra/issues/1", opened.URL)
			require.Equal(t, "drift_closed", closed.Event)
			require.Equal(t, opened.URL, closed.URL)

			clock.Advance(time.Hour)
			report(stamped(drifted(6), clock.Now())) // drifted again: the issue reopens
			events = pendingEvents(t, outbox)
			require.Len(t, events, 3)
			require.Equal(t, "drift_opened", events[0].Event)
		})
	}
}

func pendingEvents(t *testing.T, o store.Outbox) []notify.Event {
	t.Helper()
	ns, err := o.Notifications(context.Background(), 10, store.NotificationPending)
	require.NoError(t, err)
	var out []notify.Event
	for _, n := range ns {
		var ev notify.Event
		require.NoError(t, json.Unmarshal(n.Body, &ev))
		out = append(out, ev)
	}
	return out
}
