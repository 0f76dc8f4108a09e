package approval

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/internal/fakeclock"
)

// Approvers are named users and active members of approver teams; a team's
// answer is kept at most a minute, and dropped at once when GitHub says a
// membership or a team changed.
func TestApproversTeamAnswers(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	cfg := &serverconfig.Config{ApproverUsers: []string{"alice"}, ApproverTeams: []string{"acme/approvers"}}
	a := NewApprovers(cfg, clock.Now)
	gh := ghapptest.New(clock.Now)
	gh.SetMember("acme", "approvers", "carol", "active")
	gh.SetMember("acme", "approvers", "dave", "pending")
	is := func(login string) bool {
		ok, err := a.IsApprover(ctx, gh, login)
		require.NoError(t, err)
		return ok
	}

	require.True(t, is("alice"))
	require.Zero(t, gh.Calls("TeamMembershipState"), "a named approver needs no team")
	require.False(t, is(""))
	require.False(t, is("dave"), "a pending membership is not one")
	require.False(t, is("mallory"))

	require.True(t, is("carol"))
	calls := gh.Calls("TeamMembershipState")
	gh.SetMember("acme", "approvers", "carol", "")
	clock.Advance(59 * time.Second)
	require.True(t, is("carol"), "answered from the cache")
	require.Equal(t, calls, gh.Calls("TeamMembershipState"))
	clock.Advance(time.Second)
	require.False(t, is("carol"), "a minute later GitHub is asked again")

	gh.SetMember("acme", "approvers", "carol", "active")
	require.False(t, is("carol"), "the removal is cached now")
	a.ForgetLogin("CAROL")
	require.True(t, is("carol"), "a membership event drops the login's answers")
	gh.SetMember("acme", "approvers", "carol", "")
	a.ForgetAll()
	require.False(t, is("carol"), "a team event drops every answer")

	require.Equal(t, "an approver (alice, a member of acme/approvers) who is not the PR author", a.Text())
}
