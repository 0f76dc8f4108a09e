package repopolicy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/ghapp/ghapptest"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
)

var ref = pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}

// checkouts is a base commit's tree holding the testdata policies under
// policies/; it counts the checkouts made.
type checkouts struct{ n int }

func (c *checkouts) checkout(t *testing.T) CheckoutFunc {
	return func(context.Context, pullreq.Ref, string) (string, func(), error) {
		c.n++
		dir := t.TempDir()
		b, err := os.ReadFile(filepath.Join("testdata", "policies", "max_shards.rego"))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "policies"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "policies", "max_shards.rego"), b, 0o600))
		return dir, func() {}, nil
	}
}

func builtin(t *testing.T) *policy.Engine {
	t.Helper()
	e, err := policy.New()
	require.NoError(t, err)
	return e
}

func rules(e *policy.Engine) []string {
	var ids []string
	for _, r := range e.Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

// A repository's policy dirs are compiled with the builtin policies, once per
// base commit; the repository's settings apply only when the server allows.
func TestPolicyDirsCompiledOncePerBaseCommit(t *testing.T) {
	ctx := context.Background()
	gh := ghapptest.New(time.Now)
	gh.SetFile(ref.Owner, ref.Repo, "base1", repoconfig.FileName, []byte("version: 1\npolicy:\n  policy_dirs: [policies]\n"))
	gh.SetFile(ref.Owner, ref.Repo, "base2", repoconfig.FileName, []byte("version: 1\npolicy:\n  policy_dirs: [policies]\n"))
	co := &checkouts{}
	base := builtin(t)
	l := NewLoader(policy.DefaultConfig(), false, base, co.checkout(t))

	p1, err := l.For(ctx, gh, ref, "main", "base1")
	require.NoError(t, err)
	require.Contains(t, rules(p1.Engine), "max_shards")
	require.NotContains(t, rules(base), "max_shards", "the server's engine is left alone")
	again, err := l.For(ctx, gh, ref, "main", "base1")
	require.NoError(t, err)
	require.Same(t, p1.Engine, again.Engine)
	require.Equal(t, 1, co.n, "compiled once for the commit")
	_, err = l.For(ctx, gh, ref, "main", "base2")
	require.NoError(t, err)
	require.Equal(t, 2, co.n, "another base commit, compiled again")
}

// The cache of compiled engines is bounded.
func TestEngineCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	gh := ghapptest.New(time.Now)
	co := &checkouts{}
	l := NewLoader(policy.DefaultConfig(), false, builtin(t), co.checkout(t))
	for i := range MaxEngines + 5 {
		sha := "base" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		gh.SetFile(ref.Owner, ref.Repo, sha, repoconfig.FileName, []byte("version: 1\npolicy:\n  policy_dirs: [policies]\n"))
		_, err := l.For(ctx, gh, ref, "main", sha)
		require.NoError(t, err)
	}
	require.Equal(t, MaxEngines, l.engines.Len())
}

// A policy dir the base commit does not hold is the repository's error.
func TestMissingPolicyDirIsAConfigError(t *testing.T) {
	gh := ghapptest.New(time.Now)
	gh.SetFile(ref.Owner, ref.Repo, "base1", repoconfig.FileName, []byte("version: 1\npolicy:\n  policy_dirs: [nowhere]\n"))
	l := NewLoader(policy.DefaultConfig(), false, builtin(t), (&checkouts{}).checkout(t))
	_, err := l.For(context.Background(), gh, ref, "main", "base1")
	var cfgErr *repoconfig.Error
	require.ErrorAs(t, err, &cfgErr)
	require.Contains(t, err.Error(), "nowhere does not exist on the base branch")
}
