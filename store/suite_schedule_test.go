package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// enqueueFor stores a job with a scheduling identity.
func enqueueFor(t *testing.T, s Store, delivery string, installation int64, lane, coalesceKey string) *Job {
	t.Helper()
	j := &Job{DeliveryID: delivery, Kind: "event", Event: "issue_comment", Payload: []byte(`{"d":"` + delivery + `"}`),
		Installation: installation, Lane: lane, CoalesceKey: coalesceKey}
	require.NoError(t, s.Enqueue(context.Background(), j, 0))
	return j
}

func claimedDelivery(t *testing.T, s Store, owner string) string {
	t.Helper()
	j := claim(t, s, owner)
	if j == nil {
		return ""
	}
	return j.DeliveryID
}

func deliveries(jobs []*Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.DeliveryID)
	}
	return out
}

func testScheduling(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("identity is kept", func(t *testing.T) {
		s := open.fresh(t)
		j := enqueueFor(t, s, "a", 7, "o/r#1", "k")
		got := getJob(t, s, j.ID)
		require.Equal(t, int64(7), got.Installation)
		require.Equal(t, "o/r#1", got.Lane)
		require.Equal(t, "k", got.CoalesceKey)
		c := claim(t, s, "w")
		require.Equal(t, int64(7), c.Installation)
		require.Equal(t, "o/r#1", c.Lane)
	})

	t.Run("a pull request never runs two jobs at once, and keeps its order", func(t *testing.T) {
		s := open.fresh(t)
		enqueueFor(t, s, "x1", 1, "o/a#1", "")
		enqueueFor(t, s, "x2", 1, "o/a#1", "")
		enqueueFor(t, s, "y1", 1, "o/a#2", "")
		x1 := claim(t, s, "w1")
		require.Equal(t, "x1", x1.DeliveryID)
		require.Equal(t, "y1", claimedDelivery(t, s, "w2"), "the other PR's job, not x2 beside x1")
		require.Empty(t, claimedDelivery(t, s, "w3"), "x2 waits for x1")
		require.NoError(t, s.Complete(ctx, x1.ID, x1.Owner, nil))
		require.Equal(t, "x2", claimedDelivery(t, s, "w3"))
	})

	t.Run("an older job of a pull request waiting for a retry holds back the younger", func(t *testing.T) {
		clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		s := open(t, clk)
		enqueueFor(t, s, "x1", 1, "o/a#1", "")
		enqueueFor(t, s, "x2", 1, "o/a#1", "")
		x1 := claim(t, s, "w1")
		require.NoError(t, s.Postpone(ctx, x1.ID, x1.Owner, errors.New("rate limit"), clk.Now().Add(time.Minute)))
		require.Empty(t, claimedDelivery(t, s, "w2"), "x2 must not overtake x1")
		clk.Advance(time.Minute)
		require.Equal(t, "x1", claimedDelivery(t, s, "w2"))
	})

	t.Run("a released job keeps its pull request's turn", func(t *testing.T) {
		s := open.fresh(t)
		enqueueFor(t, s, "x1", 1, "o/a#1", "")
		enqueueFor(t, s, "x2", 1, "o/a#1", "")
		x1 := claim(t, s, "w1")
		require.NoError(t, s.Release(ctx, x1.ID, x1.Owner))
		require.Equal(t, "x1", claimedDelivery(t, s, "w1"))
		require.Empty(t, claimedDelivery(t, s, "w2"))
	})

	t.Run("a lane's head cancelled or failed passes the turn, and requeued takes it back", func(t *testing.T) {
		s := open.fresh(t)
		admin, ok := s.(JobAdmin)
		require.True(t, ok)
		x1 := enqueueFor(t, s, "x1", 1, "o/a#1", "")
		enqueueFor(t, s, "x2", 1, "o/a#1", "")
		enqueueFor(t, s, "x3", 1, "o/a#1", "")
		_, err := admin.CancelQueued(ctx, x1.ID, "test")
		require.NoError(t, err)
		x2 := claim(t, s, "w1")
		require.Equal(t, "x2", x2.DeliveryID, "the cancelled head passed the turn")
		require.NoError(t, s.Complete(ctx, x2.ID, x2.Owner, errors.New("failed")))
		_, err = admin.RequeueFailed(ctx, x2.ID)
		require.NoError(t, err)
		require.Equal(t, "x2", claimedDelivery(t, s, "w2"), "requeued at its place: before x3")
		require.Empty(t, claimedDelivery(t, s, "w3"), "x3 waits for x2")
	})

	t.Run("the installation with the fewest running jobs goes first", func(t *testing.T) {
		s := open.fresh(t)
		// A storm on installation 1 (many PRs), then one job of installation 2.
		for _, d := range []string{"s1", "s2", "s3", "s4"} {
			enqueueFor(t, s, d, 1, "o/storm#"+d, "")
		}
		enqueueFor(t, s, "other", 2, "p/other#1", "")
		require.Equal(t, "s1", claimedDelivery(t, s, "w1"), "both idle: the oldest")
		require.Equal(t, "other", claimedDelivery(t, s, "w2"), "installation 2 runs nothing yet")
		require.Equal(t, "s2", claimedDelivery(t, s, "w3"), "one each: the oldest")
		require.Equal(t, "s3", claimedDelivery(t, s, "w4"))
	})

	t.Run("jobs without an identity are taken oldest first beside the others", func(t *testing.T) {
		s := open.fresh(t)
		enqueueFor(t, s, "s1", 1, "o/storm#1", "")
		enqueueFor(t, s, "s2", 1, "o/storm#2", "")
		enqueue(t, s, "plain1", "event", nil)
		enqueue(t, s, "plain2", "event", nil)
		require.Equal(t, "s1", claimedDelivery(t, s, "w1"))
		require.Equal(t, "plain1", claimedDelivery(t, s, "w2"), "an installation with a running job waits behind jobs of none")
		require.Equal(t, "plain2", claimedDelivery(t, s, "w3"), "jobs without identity run side by side")
		require.Equal(t, "s2", claimedDelivery(t, s, "w4"))
	})

	t.Run("a job of a higher priority goes ahead of older ones, even with nothing running", func(t *testing.T) {
		s := open.fresh(t)
		enqueueFor(t, s, "p1", 1, "o/a#1", "")
		enqueueFor(t, s, "p2", 1, "o/a#2", "")
		enqueue(t, s, "plain", "event", nil)
		group := &Job{DeliveryID: "group", Kind: "event", Event: "merge_group", Installation: 1, Priority: 1}
		require.NoError(t, s.Enqueue(ctx, group, 0))
		require.Equal(t, 1, getJob(t, s, group.ID).Priority)
		c := claim(t, s, "w1")
		require.Equal(t, "group", c.DeliveryID, "one worker, nothing running: the prioritized job first")
		require.Equal(t, 1, c.Priority)
		require.NoError(t, s.Complete(ctx, c.ID, c.Owner, nil))
		require.Equal(t, "p1", claimedDelivery(t, s, "w2"), "then the oldest, as before")
		later := &Job{DeliveryID: "later", Kind: "event", Installation: 2, Lane: "o/a#2", Priority: 1}
		require.NoError(t, s.Enqueue(ctx, later, 0))
		require.Equal(t, "plain", claimedDelivery(t, s, "w3"), "a prioritized job still waits for the older job of its lane")
		require.Equal(t, "p2", claimedDelivery(t, s, "w4"))
		require.Empty(t, claimedDelivery(t, s, "w5"), "the later job waits for p2 to finish")
	})

	t.Run("identical queued jobs are coalesced into the claimed one", func(t *testing.T) {
		s := open.fresh(t)
		h1 := enqueueFor(t, s, "h1", 1, "o/a#1", "o/a#1 help")
		h2 := enqueueFor(t, s, "h2", 1, "o/a#1", "o/a#1 help")
		enqueueFor(t, s, "p1", 1, "o/a#1", "o/a#1 plan")
		h3 := enqueueFor(t, s, "h3", 1, "o/a#1", "o/a#1 help")
		enqueueFor(t, s, "other", 1, "o/a#2", "o/a#2 help")
		require.Equal(t, 5, countQueued(t, s))
		c := claim(t, s, "w1")
		require.Equal(t, h1.ID, c.ID)
		require.Equal(t, []string{"h2", "h3"}, deliveries(c.Coalesced))
		require.Equal(t, []byte(`{"d":"h2"}`), c.Coalesced[0].Payload, "the claimer gets the duplicates' payloads")
		require.Equal(t, 2, countQueued(t, s), "p1 and the other PR's help are left")
		for _, d := range []*Job{h2, h3} {
			got := getJob(t, s, d.ID)
			require.Equal(t, JobDone, got.State)
			require.Equal(t, h1.ID, got.CoalescedInto)
		}
		require.Equal(t, "other", claimedDelivery(t, s, "w2"), "p1 waits for h1")
	})

	t.Run("coalesced jobs end as the job they were coalesced into", func(t *testing.T) {
		s := open.fresh(t)
		f1 := enqueueFor(t, s, "f1", 1, "o/a#1", "o/a#1 plan")
		f2 := enqueueFor(t, s, "f2", 1, "o/a#1", "o/a#1 plan")
		o1 := enqueueFor(t, s, "o1", 1, "o/a#2", "o/a#2 plan")
		o2 := enqueueFor(t, s, "o2", 1, "o/a#2", "o/a#2 plan")
		failing := claim(t, s, "w1")
		require.Equal(t, f1.ID, failing.ID)
		ok := claim(t, s, "w2")
		require.Equal(t, o1.ID, ok.ID)
		require.NoError(t, s.Complete(ctx, failing.ID, failing.Owner, errors.New("terraform plan failed")))
		require.NoError(t, s.Complete(ctx, ok.ID, ok.Owner, nil))
		got := getJob(t, s, f2.ID)
		require.Equal(t, JobFailed, got.State, "its plan failed: so did the comment coalesced into it")
		require.Equal(t, "terraform plan failed", got.LastError)
		require.Equal(t, f1.ID, got.CoalescedInto)
		got = getJob(t, s, o2.ID)
		require.Equal(t, JobDone, got.State)
		require.Empty(t, got.LastError)
		failed, err := s.FailingJobs(ctx, time.Time{}, 10)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"f1", "f2"}, deliveries(failed), "the status page lists both as failed")
	})

	t.Run("a claim cut short still names its duplicates, and takes new ones", func(t *testing.T) {
		s := open.fresh(t)
		enqueueFor(t, s, "h1", 1, "o/a#1", "k")
		enqueueFor(t, s, "h2", 1, "o/a#1", "k")
		c := claim(t, s, "w1")
		require.Len(t, c.Coalesced, 1)
		n, err := s.RecoverRunning(ctx) // as after a crash
		require.NoError(t, err)
		if n == 0 { // a shared store: the lease must expire first
			require.NoError(t, s.Release(ctx, c.ID, c.Owner))
		}
		enqueueFor(t, s, "h3", 1, "o/a#1", "k")
		again := claim(t, s, "w2")
		require.Equal(t, c.ID, again.ID)
		require.Equal(t, []string{"h2", "h3"}, deliveries(again.Coalesced))
		require.Equal(t, 0, countQueued(t, s))
	})
}
