package records

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
)

func TestRecentPlansNewestFirstOncePerPlanBounded(t *testing.T) {
	ctx := context.Background()
	r := New(openStore(t), nil)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range RecentPlanSlots + 10 {
		ref := pullreq.Ref{Owner: "acme", Repo: "streams", Number: i}
		require.NoError(t, r.PutPlan(ctx, ref, &Plan{Project: "p", HeadSHA: "sha", PlannedAt: t0.Add(time.Duration(i) * time.Minute)}))
	}
	// Judged again (a label): listed once, with its latest record.
	again := pullreq.Ref{Owner: "acme", Repo: "streams", Number: RecentPlanSlots + 9}
	require.NoError(t, r.PutPlan(ctx, again, &Plan{Project: "p", HeadSHA: "sha", Error: "judged again",
		PlannedAt: t0.Add(time.Duration(RecentPlanSlots+20) * time.Minute)}))

	got, err := r.RecentPlans(ctx, 5)
	require.NoError(t, err)
	require.Len(t, got, 5)
	require.Equal(t, again, got[0].Ref)
	require.Equal(t, "judged again", got[0].Error)
	require.Equal(t, RecentPlanSlots+8, got[1].Ref.Number)

	all, err := r.RecentPlans(ctx, 1000)
	require.NoError(t, err)
	require.Len(t, all, RecentPlanSlots-1, "the ring keeps the last writes only")
	// The record itself stays where it was.
	p, err := r.Plan(ctx, pullreq.Ref{Owner: "acme", Repo: "streams", Number: 0}, "sha", "p")
	require.NoError(t, err)
	require.NotNil(t, p)
}

func TestRecentAuditsReadTheLastJobsOnly(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	r := New(st, nil)
	stored := 0
	for seq := 95; seq <= 205; seq++ {
		if seq == 150 {
			continue // still running: no audit record
		}
		for attempt := 1; attempt <= 1+seq%2; attempt++ {
			s := fmt.Sprintf("%012d", seq)
			require.NoError(t, PutJSON(ctx, st, BucketAudit, AuditKey(s, attempt), Audit{Seq: s, Attempt: attempt, Outcome: "applied"}))
			stored++
		}
	}
	got, err := r.RecentAudits(ctx, fmt.Sprintf("%012d", 206), 4)
	require.NoError(t, err)
	var keys []string
	for _, a := range got {
		keys = append(keys, AuditKey(a.Seq, a.Attempt))
	}
	require.Equal(t, []string{"000000000205#2", "000000000205#1", "000000000204#1", "000000000203#2"}, keys)

	got, err = r.RecentAudits(ctx, fmt.Sprintf("%012d", 206), 300)
	require.NoError(t, err)
	require.Equal(t, stored, len(got), "across the hundreds, down to the first job")
	require.Equal(t, "000000000095", got[len(got)-1].Seq)

	none, err := r.RecentAudits(ctx, "", 4)
	require.NoError(t, err)
	require.Empty(t, none, "no apply job yet")
}
