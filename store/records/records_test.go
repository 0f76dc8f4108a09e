package records

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "records.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var ref = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}

func TestHeadAt(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	st := &PRState{}
	st.SawHead("a", t0.Add(300*time.Millisecond)) // GitHub's times have whole seconds
	st.SawHead("b", t0.Add(time.Minute))
	st.SawHead("a", t0.Add(2*time.Minute)) // force-pushed back
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"before every sighting", t0.Add(-time.Second), ""},
		{"in the second of the first sighting", t0.Add(900 * time.Millisecond), ""},
		{"after the first sighting", t0.Add(time.Second), "a"},
		{"in the second of a push", t0.Add(time.Minute), "a"},
		{"after the push", t0.Add(time.Minute + time.Second), "b"},
		{"after the force-push back", t0.Add(3 * time.Minute), "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, st.HeadAt(tt.at))
		})
	}
	require.Equal(t, "a", st.HeadSHA)
	require.True(t, st.HeadSeenAt.Equal(t0.Add(2*time.Minute)))
}

func TestHeadSightingsAreBoundedAndKeepOldRecords(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	// A record written before sightings were kept has only HeadSHA/HeadSeenAt.
	st := &PRState{HeadSHA: "old", HeadSeenAt: t0}
	require.Equal(t, "old", st.HeadAt(t0.Add(time.Second)))
	st.SawHead("new", t0.Add(time.Minute))
	require.Equal(t, "old", st.HeadAt(t0.Add(time.Second)))
	for i := range 2 * maxHeadSightings {
		st.SawHead(fmt.Sprint(i), t0.Add(time.Hour+time.Duration(i)*time.Second))
	}
	require.Len(t, st.Heads, maxHeadSightings)
	require.Equal(t, "", st.HeadAt(t0.Add(time.Second)), "older than every kept head: no head")
}

func TestPRAndPlanRecordsAreScrubbedOfSecrets(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	recs := New(st, redact.New("hunter2-secret"))
	got, err := recs.PR(ctx, ref)
	require.NoError(t, err)
	require.Nil(t, got, "no record yet is nil, not an error")

	require.NoError(t, recs.PutPR(ctx, &PRState{Ref: ref, HeadSHA: "a", Status: "planning with hunter2-secret"}))
	raw, err := st.Get(ctx, bucketPRs, ref.Key())
	require.NoError(t, err)
	require.NotContains(t, string(raw), "hunter2-secret")
	got, err = recs.PR(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "a", got.HeadSHA)

	require.NoError(t, recs.PutPlan(ctx, ref, &Plan{Project: "p", HeadSHA: "a", Error: "denied: hunter2-secret"}))
	plan, err := recs.Plan(ctx, ref, "a", "p")
	require.NoError(t, err)
	require.NotContains(t, plan.Error, "hunter2-secret")
}

func TestPlansListsOneHeadOfOnePullRequest(t *testing.T) {
	ctx := context.Background()
	recs := New(openStore(t), nil)
	other := ref
	other.Number = 70
	for _, p := range []struct {
		ref     pullreq.Ref
		sha     string
		project string
	}{{ref, "a", "two"}, {ref, "a", "one"}, {ref, "ab", "three"}, {other, "a", "four"}} {
		require.NoError(t, recs.PutPlan(ctx, p.ref, &Plan{Project: p.project, HeadSHA: p.sha}))
	}
	plans, err := recs.Plans(ctx, ref, "a")
	require.NoError(t, err)
	var names []string
	for _, p := range plans {
		names = append(names, p.Project)
	}
	require.Equal(t, []string{"one", "two"}, names, "by project name, neither another head nor another pull request")
}

func TestAttestationsKeepTheLatestOfAHeadAndStream(t *testing.T) {
	ctx := context.Background()
	recs := New(openStore(t), nil)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	newer := policy.Attestation{StreamPrefix: "orders", Actor: "ann", HeadSHA: "a", CreatedAt: t0.Add(time.Minute)}
	older := policy.Attestation{StreamPrefix: "orders", Actor: "bob", HeadSHA: "a", CreatedAt: t0}
	require.NoError(t, recs.PutAttestation(ctx, ref, newer))
	require.NoError(t, recs.PutAttestation(ctx, ref, older), "a late delivery of an older attestation")
	require.NoError(t, recs.PutAttestation(ctx, ref, policy.Attestation{StreamPrefix: "orders", Actor: "cy", HeadSHA: "b", CreatedAt: t0}))
	got, err := recs.Attestations(ctx, ref, "a")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "ann", got[0].Actor)
}

func TestLabelsAndHandledEvents(t *testing.T) {
	ctx := context.Background()
	recs := New(openStore(t), nil)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	require.NoError(t, recs.PutLabel(ctx, ref, &Label{Label: "shardgate:exception", Actor: "ann", HeadSHA: "a", AddedAt: t0, EventID: 9}))
	l, err := recs.Label(ctx, ref, "shardgate:exception")
	require.NoError(t, err)
	require.Equal(t, "ann", l.Actor)
	require.NoError(t, recs.DeleteLabel(ctx, ref, "shardgate:exception"))
	l, err = recs.Label(ctx, ref, "shardgate:exception")
	require.NoError(t, err)
	require.Nil(t, l)

	key := CommandKey(ref, 5, t0)
	require.NotEqual(t, key, CommandKey(ref, 5, t0.Add(time.Second)), "an edit is another version")
	done, err := recs.Handled(ctx, key)
	require.NoError(t, err)
	require.False(t, done)
	require.NoError(t, recs.MarkHandled(ctx, key, t0))
	done, err = recs.Handled(ctx, key)
	require.NoError(t, err)
	require.True(t, done)
	done, err = recs.Handled(ctx, LabelEventKey(ref, 5))
	require.NoError(t, err)
	require.False(t, done, "a label event is not the comment of the same id")
}

func TestPRWithHead(t *testing.T) {
	ctx := context.Background()
	recs := New(openStore(t), nil)
	other := ref
	other.Repo = "other"
	require.NoError(t, recs.PutPR(ctx, &PRState{Ref: ref, HeadSHA: "a"}))
	require.NoError(t, recs.PutPR(ctx, &PRState{Ref: other, HeadSHA: "b"}))
	n, err := recs.PRWithHead(ctx, "acme", "streams", "a")
	require.NoError(t, err)
	require.Equal(t, 7, n)
	n, err = recs.PRWithHead(ctx, "acme", "streams", "b")
	require.NoError(t, err)
	require.Zero(t, n, "the head of another repository's pull request")
}

func TestMetadataVersionsKeepTheHighest(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	a, b := MetadataVersions(st, "http://coord-a/coord/v1"), MetadataVersions(st, "http://coord-b/coord/v1")
	_, ok, err := a.HighestMetadataVersion(ctx, "orders", "billing")
	require.NoError(t, err)
	require.False(t, ok)
	for _, v := range []int64{3, 7, 5} {
		require.NoError(t, a.RecordMetadataVersion(ctx, "orders", "billing", v))
	}
	v, ok, err := a.HighestMetadataVersion(ctx, "orders", "billing")
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 7, v)
	_, ok, err = b.HighestMetadataVersion(ctx, "orders", "billing")
	require.NoError(t, err)
	require.False(t, ok, "each coordinator's versions are its own")
}

func TestAuditKeyNamesTheAttempt(t *testing.T) {
	require.Equal(t, "00000042#2", AuditKey("00000042", 2))
}
