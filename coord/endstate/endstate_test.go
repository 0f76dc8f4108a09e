package endstate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func ch(action planparse.Action, stream, group string, before, after *int) planparse.Change {
	return planparse.Change{Address: "module.m[\"" + stream + "/" + group + "\"]", StreamPrefix: stream, ConsumerGroup: group,
		Action: action, ShardsBefore: before, ShardsAfter: after}
}

func cs(changes ...planparse.Change) *planparse.ChangeSet {
	return &planparse.ChangeSet{Changes: changes}
}

func TestComparePlans(t *testing.T) {
	n := func(i int) *int { return &i }
	reviewed := cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(16)), ch(planparse.ActionNoop, "payments", "ledger", n(2), n(2)))
	tests := []struct {
		name     string
		current  *planparse.ChangeSet
		resuming bool
		equal    bool
		want     string
	}{
		{"same plan", cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(16)), ch(planparse.ActionNoop, "payments", "ledger", n(2), n(2))), false, true, ""},
		{"another stream moved by another merge", cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(16)), ch(planparse.ActionNoop, "payments", "ledger", n(6), n(6))), false, true, ""},
		{"different target", cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(12))), false, false, "reviewed end state managed at 16 shards, merge commit's managed at 12 shards"},
		{"main moved the start", cs(ch(planparse.ActionScale, "orders", "billing", n(8), n(16))), false, false, "reviewed from managed at 4 shards, but it is now managed at 8 shards"},
		{"extra change on main", cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(16)), ch(planparse.ActionUnmanage, "payments", "ledger", n(2), nil)), false, false, "payments/ledger: reviewed end state managed at 2 shards, merge commit's kept by the coordinator"},
		{"new group only on main", cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(16)), ch(planparse.ActionCreate, "clicks", "etl", nil, n(3))), false, false, "clicks/etl: not in the reviewed plan"},
		{"reviewed change gone", cs(ch(planparse.ActionNoop, "payments", "ledger", n(2), n(2))), false, false, "orders/billing: the reviewed plan leaves it managed at 16 shards; the merge commit's plan does not mention it"},
		{"replace cut short, not resuming", cs(ch(planparse.ActionCreate, "orders", "billing", nil, n(16))), false, false, "reviewed from managed at 4 shards, but it is now absent"},
		{"replace cut short, resuming", cs(ch(planparse.ActionCreate, "orders", "billing", nil, n(16))), true, true, ""},
		{"already applied, resuming", cs(ch(planparse.ActionNoop, "orders", "billing", n(16), n(16))), true, true, ""},
		{"resuming does not accept another target", cs(ch(planparse.ActionCreate, "orders", "billing", nil, n(12))), true, false, "merge commit's managed at 12 shards"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(reviewed, tt.current, tt.resuming)
			require.Equal(t, tt.equal, got.Equal, got.Differences)
			if tt.want != "" {
				require.Contains(t, got.Differences[0], tt.want)
			}
		})
	}
}

func TestEndStateFingerprint(t *testing.T) {
	n := func(i int) *int { return &i }
	a := cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(16)))
	b := cs(ch(planparse.ActionCreate, "orders", "billing", nil, n(16)))
	c := cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(12)))
	require.Equal(t, Fingerprint(a), Fingerprint(b), "same end state, different actions")
	require.NotEqual(t, Fingerprint(a), Fingerprint(c))
	require.Equal(t, []string{"orders"}, Streams(a))
	require.Equal(t, map[string]int{"orders": 16}, ScaleTargets(b.Changes))
}

func TestComparePlansByIdentity(t *testing.T) {
	n := func(i int) *int { return &i }
	at := func(c planparse.Change, url string) planparse.Change {
		c.CoordinatorURL = url
		c.Coordinator = planparse.NormalizeURL(url)
		c.Stream = planparse.StreamKey(c.Coordinator, c.StreamPrefix)
		return c
	}
	reviewed := cs(at(ch(planparse.ActionScale, "orders", "billing", n(4), n(8)), "http://coord-a:8080/coord/v1"))
	t.Run("same identity spelled differently", func(t *testing.T) {
		current := cs(at(ch(planparse.ActionScale, "orders", "billing", n(4), n(8)), "HTTP://Coord-A:8080/coord/v1/"))
		require.True(t, Compare(reviewed, current, false).Equal)
	})
	t.Run("same prefix and group on another coordinator", func(t *testing.T) {
		current := cs(at(ch(planparse.ActionScale, "orders", "billing", n(4), n(8)), "http://coord-b:8080/coord/v1"))
		g := Compare(reviewed, current, false)
		require.False(t, g.Equal)
		require.Contains(t, g.Differences[0], "orders/billing at http://coord-a:8080/coord/v1")
	})
	t.Run("streams are keyed by coordinator", func(t *testing.T) {
		two := cs(at(ch(planparse.ActionScale, "orders", "billing", n(4), n(8)), "http://coord-a:8080/coord/v1"),
			at(ch(planparse.ActionScale, "orders", "billing", n(2), n(3)), "http://coord-b/coord/v1"))
		require.Equal(t, []string{"http://coord-a:8080/coord/v1 orders", "http://coord-b/coord/v1 orders"}, Streams(two))
		require.Equal(t, map[string]int{"http://coord-a:8080/coord/v1 orders": 8, "http://coord-b/coord/v1 orders": 3}, ScaleTargets(two.Changes))
	})
}

func TestCompareOtherChanges(t *testing.T) {
	n := func(i int) *int { return &i }
	bucket := planparse.OtherChange{Address: "aws_s3_bucket.logs", Type: "aws_s3_bucket", Actions: []string{"update"}, Fingerprint: "f1"}
	with := func(others ...planparse.OtherChange) *planparse.ChangeSet {
		c := cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(8)))
		c.OtherChanges = others
		return c
	}
	reviewed := with(bucket)
	destroy := planparse.OtherChange{Address: "aws_iam_policy.p", Type: "aws_iam_policy", Actions: []string{"delete"}, Fingerprint: "f2"}
	changed := bucket
	changed.Fingerprint = "f3"
	replaced := bucket
	replaced.Actions = []string{"delete", "create"}
	tests := []struct {
		name     string
		current  *planparse.ChangeSet
		resuming bool
		want     string // "" when equal
	}{
		{"same other change", with(bucket), false, ""},
		{"a destroy the review did not show", with(bucket, destroy), false, "aws_iam_policy.p (aws_iam_policy): destroy is not in the reviewed plan"},
		{"same address, other values", with(changed), false, "changes it differently from the reviewed plan"},
		{"same values, other actions", with(replaced), false, "reviewed update, merge commit's replace"},
		{"reviewed change missing", with(), false, "the reviewed plan would update it"},
		{"resuming: reviewed change done already", with(), true, ""},
		{"resuming: still refuses an unreviewed one", with(destroy), true, "destroy is not in the reviewed plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Compare(reviewed, tt.current, tt.resuming)
			if tt.want == "" {
				require.True(t, g.Equal, g.Differences)
				return
			}
			require.False(t, g.Equal)
			require.Contains(t, g.Differences[0], tt.want)
		})
	}
	require.NotEqual(t, Fingerprint(with(bucket)), Fingerprint(with(changed)), "the audit fingerprint covers other changes")
}

func TestComparePlansTaintedRetry(t *testing.T) {
	n := func(i int) *int { return &i }
	reviewed := cs(ch(planparse.ActionScale, "orders", "billing", n(4), n(6)))
	tainted := ch(planparse.ActionScale, "orders", "billing", nil, n(6))
	tainted.Tainted, tainted.PriorShards = true, n(6)
	require.True(t, Compare(reviewed, cs(tainted), true).Equal, "a retry of our own failed apply resumes it")
	g := Compare(reviewed, cs(tainted), false)
	require.False(t, g.Equal, "not resuming, the state moved from the reviewed start")
	other := tainted
	other.PriorShards = n(9)
	require.False(t, Compare(reviewed, cs(other), true).Equal, "someone else's failed apply is not ours to resume")
}
