package approval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// The label judgement talks to GitHub through ghapp's narrow interfaces,
// answered by ghapptest's in-memory GitHub: no HTTP, no sleeps; time is a
// fakeclock.Clock both sides read.

const (
	firstHead  = "1111111111111111111111111111111111111111"
	pushedHead = "2222222222222222222222222222222222222222"
	exception  = policy.ExceptionLabelPrefix + "shard_delta"
)

var seamRef = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}

// labelWorld is a pull request by bob whose head was firstHead and, from an
// hour later, pushedHead (the clock stands at the push); alice is an approver
// by name, carol an active member of the approver team, dave a pending one.
func labelWorld(t *testing.T) (*Labels, *ghapptest.GitHub, *fakeclock.Clock, *records.PRState) {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "shardgate.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	cfg := &serverconfig.Config{ApproverUsers: []string{"alice"}, ApproverTeams: []string{"acme/approvers"}}
	s := NewLabels(records.New(st, redact.New()), NewApprovers(cfg, clock.Now))
	gh := ghapptest.New(clock.Now)
	gh.PerPage = 2 // the newest events are on the last page
	gh.SetMember("acme", "approvers", "carol", "active")
	gh.SetMember("acme", "approvers", "dave", "pending")
	pr := &records.PRState{Ref: seamRef, Author: "bob", HeadSHA: firstHead, Heads: []records.HeadSighting{{SHA: firstHead, Since: clock.Now()}}}
	return s, gh, clock, pr
}

// push moves the head at the clock's time.
func push(clock *fakeclock.Clock, st *records.PRState, sha string) {
	clock.Advance(time.Minute)
	st.HeadSHA = sha
	st.Heads = append(st.Heads, records.HeadSighting{SHA: sha, Since: clock.Now()})
	clock.Advance(time.Minute)
}

func judgeAll(t *testing.T, s *Labels, gh *ghapptest.GitHub, st *records.PRState) map[string]policy.Label {
	t.Helper()
	labels, err := s.Judge(context.Background(), gh, st)
	require.NoError(t, err)
	out := map[string]policy.Label{}
	for _, l := range labels {
		out[l.Name] = l
	}
	return out
}

// An exception label counts only when the issue events say an approver who
// is not the author added it while the current head was the head.
func TestJudgeLabelsApproverNotAuthorForTheHead(t *testing.T) {
	s, gh, clock, st := labelWorld(t)
	add := func(label, actor string) {
		clock.Advance(time.Second)
		gh.AddLabel(seamRef.Owner, seamRef.Repo, seamRef.Number, label, actor)
	}
	add(exception+"-before-push", "alice")
	push(clock, st, pushedHead)
	for range 5 { // other events push the labels off the first page
		gh.AddEvent(seamRef.Owner, seamRef.Repo, seamRef.Number, "commented", "reviewer")
	}
	add(exception, "alice")
	add(exception+"-by-author", "bob")
	add(exception+"-by-team", "carol")
	add(exception+"-by-pending", "dave")
	add(exception+"-by-stranger", "mallory")
	add("needs-review", "mallory")

	got := judgeAll(t, s, gh, st)
	require.True(t, got[exception].Counted, got[exception].Reason)
	require.Equal(t, "alice", got[exception].Actor, "the actor comes from the issue events")
	require.True(t, got[exception+"-by-team"].Counted, "an active member of an approver team")
	require.True(t, got["needs-review"].Counted, "other labels pass through for user policies")

	for name, reason := range map[string]string{
		exception + "-before-push": "added for commit 1111111, but the head is now 2222222",
		exception + "-by-author":   "added by the pull request's author",
		exception + "-by-pending":  "dave is not an approver",
		exception + "-by-stranger": "mallory is not an approver",
	} {
		require.False(t, got[name].Counted, name)
		require.Contains(t, got[name].Reason, reason, name)
	}
}

// Who added a label is the last "labeled" event: removed and added again by
// the author, an approver's earlier labelling no longer counts; a label
// without any labeled event has no known origin and does not count.
func TestJudgeLabelsReadsTheLatestLabeledEvent(t *testing.T) {
	s, gh, clock, st := labelWorld(t)
	clock.Advance(time.Second)
	gh.AddLabel(seamRef.Owner, seamRef.Repo, seamRef.Number, exception, "alice")
	require.True(t, judgeAll(t, s, gh, st)[exception].Counted)

	clock.Advance(time.Second)
	require.NoError(t, gh.RemoveLabel(context.Background(), seamRef.Owner, seamRef.Repo, seamRef.Number, exception))
	clock.Advance(time.Second)
	gh.AddLabel(seamRef.Owner, seamRef.Repo, seamRef.Number, exception, "bob")
	l := judgeAll(t, s, gh, st)[exception]
	require.False(t, l.Counted)
	require.Equal(t, "bob", l.Actor)

	// The events API knows nothing of this label (its event lies beyond what
	// is read, or was never written).
	other := &records.PRState{Ref: pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 8}, Author: "bob", HeadSHA: firstHead,
		Heads: st.Heads[:1]}
	gh.AddLabel(other.Ref.Owner, other.Ref.Repo, other.Ref.Number, exception, "alice")
	judgedOther, err := s.Judge(context.Background(), labelsWithoutEvents{gh}, other)
	require.NoError(t, err)
	require.Len(t, judgedOther, 1)
	require.False(t, judgedOther[0].Counted)
	require.True(t, strings.HasPrefix(judgedOther[0].Reason, "shardgate cannot tell who added it"), judgedOther[0].Reason)
}

// labelsWithoutEvents is a GitHub whose issue events hold no labeled event.
type labelsWithoutEvents struct{ *ghapptest.GitHub }

func (l labelsWithoutEvents) ListIssueEvents(ctx context.Context, owner, repo string, number, page int) (ghapp.Page[ghapp.IssueEvent], error) {
	return ghapp.Page[ghapp.IssueEvent]{}, nil
}

// A push voids the exception labels not added for the new head: they are
// removed on GitHub and the comment says so.
func TestVoidExceptionLabelsOnPush(t *testing.T) {
	s, gh, clock, st := labelWorld(t)
	clock.Advance(time.Second)
	gh.AddLabel(seamRef.Owner, seamRef.Repo, seamRef.Number, exception, "alice")
	push(clock, st, pushedHead)
	gh.AddLabel(seamRef.Owner, seamRef.Repo, seamRef.Number, exception+"-fresh", "alice")

	require.NoError(t, s.VoidExceptions(context.Background(), gh, st))
	require.Equal(t, []string{exception + "-fresh"}, gh.Labels(seamRef.Owner, seamRef.Repo, seamRef.Number))
	require.Len(t, st.Notes, 1)
	require.Contains(t, st.Notes[0], "a push voids exception labels")
	require.Contains(t, st.Notes[0], "alice")
}
