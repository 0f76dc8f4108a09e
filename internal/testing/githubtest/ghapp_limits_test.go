package githubtest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/fakeclock"
)

// appClients is shardgate's client creator against the fake, on the fake's
// clock (real time, for the App's JWTs, shifted by what was advanced); the
// pacer's waits move that clock instead of sleeping, and are counted.
func appClients(t *testing.T, gh *Server, clock *fakeclock.Clock, pace ghapp.Pace, slept *int) *ghapp.CachingClientCreator {
	t.Helper()
	cc, err := ghapp.NewClientCreator(gh.URL(), gh.AppID(), gh.AppPrivateKeyPEM(), http.DefaultTransport)
	require.NoError(t, err)
	cc.Budgets().SetClock(clock.Now)
	cc.SetPace(pace)
	cc.SetSleep(func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		clock.Advance(d)
		if slept != nil {
			*slept++
		}
		return nil
	})
	return cc
}

func limited(gh *Server, limit string) int {
	n := 0
	for _, r := range gh.Requests() {
		if r.Limited == limit {
			n++
		}
	}
	return n
}

// TestInstallationClientRereadsCostNoBudget: a read repeated through an
// installation client is a conditional request, answered 304 by the fake,
// which costs no budget, here or in shardgate's own account of it; callers
// get the same answer; a changed resource is read again.
func TestInstallationClientRereadsCostNoBudget(t *testing.T) {
	clock := fakeclock.Following()
	gh := New(t, WithClock(clock.Now), WithRateLimits(RateLimits{Primary: 100}))
	_, pr := newRepoWithPR(t, gh)
	gh.AddComment("acme", "infra", pr.Number, "bob", "/shardgate plan")
	cc := appClients(t, gh, clock, ghapp.DefaultPace(), nil)
	client, err := cc.NewInstallationClient(DefaultInstallationID)
	require.NoError(t, err)
	ctx := context.Background()

	first, _, err := client.PullRequests.Get(ctx, "acme", "infra", pr.Number)
	require.NoError(t, err)
	comments, _, err := client.Issues.ListComments(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	before, ok := cc.Budgets().Get(DefaultInstallationID)
	require.True(t, ok)
	for range 5 {
		again, resp, err := client.PullRequests.Get(ctx, "acme", "infra", pr.Number)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, first, again)
		list, _, err := client.Issues.ListComments(ctx, "acme", "infra", pr.Number, nil)
		require.NoError(t, err)
		require.Equal(t, comments, list)
	}
	after, _ := cc.Budgets().Get(DefaultInstallationID)
	require.Equal(t, before.Remaining, after.Remaining, "ten re-reads cost nothing")
	require.Equal(t, 10, gh.countStatus(http.StatusNotModified))

	gh.AddComment("acme", "infra", pr.Number, "carol", "/shardgate apply")
	list, _, err := client.Issues.ListComments(ctx, "acme", "infra", pr.Number, nil)
	require.NoError(t, err)
	require.Len(t, list, 2, "a changed resource is read again")
	changed, _ := cc.Budgets().Get(DefaultInstallationID)
	require.Equal(t, before.Remaining-1, changed.Remaining)
}

func (s *Server) countStatus(status int) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Status == status {
			n++
		}
	}
	return n
}

// TestInstallationClientPacesAStorm: 120 comments posted as fast as one
// installation client can, against the fake's content limit of 20 a
// minute: paced, none meets the secondary limit; the first few go at once.
func TestInstallationClientPacesAStorm(t *testing.T) {
	clock := fakeclock.Following()
	gh := New(t, WithClock(clock.Now))
	_, pr := newRepoWithPR(t, gh)
	gh.SetRateLimits(RateLimits{Primary: 5000, Content: 20})
	var slept int
	cc := appClients(t, gh, clock, ghapp.Pace{ContentPerMinute: 20, ContentPerHour: 500, ContentBurst: 5, MaxConcurrent: 10}, &slept)
	client, err := cc.NewInstallationClient(DefaultInstallationID)
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 120 {
		_, _, err := client.Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String(fmt.Sprint("reply ", i))})
		require.NoError(t, err, "comment %d", i)
		if i < 5 {
			require.Zero(t, slept, "a normal job's few writes are not paced")
		}
	}
	require.Zero(t, limited(gh, "secondary"), "paced under the content limit")
	require.Len(t, gh.Comments("acme", "infra", pr.Number), 120)
	bu, _ := cc.Budgets().Get(DefaultInstallationID)
	require.GreaterOrEqual(t, slept, 110, "the rest were spaced")
	require.Equal(t, int64(slept), bu.Paced[ghapp.PaceContent], "and counted")
}
