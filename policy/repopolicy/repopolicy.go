// Package repopolicy is the policy a repository's plans are judged by: its
// .shardgate.yaml and policy settings read from the base branch — never from
// the pull request, so a pull request cannot loosen its own gate — and the
// policy engine with the policy dirs that configuration adds, compiled once
// per repository and base commit and kept in a bounded cache.
package repopolicy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
)

// MaxEngines bounds the compiled engines of repository policy dirs kept.
const MaxEngines = 64

// Policy is what judges a repository's plans: its base-branch configuration
// and the policy engine with any policy dirs that configuration adds.
type Policy struct {
	Repo   *repoconfig.Config
	Config policy.Config
	Engine *policy.Engine
}

// CheckoutFunc fetches a commit's tree into a fresh directory; cleanup
// removes it.
type CheckoutFunc func(ctx context.Context, ref pullreq.Ref, sha string) (dir string, cleanup func(), err error)

// Loader reads repositories' policies for a server.
type Loader struct {
	server        policy.Config
	allowOverride bool
	engine        *policy.Engine
	checkout      CheckoutFunc
	engines       *lru.Cache[string, *policy.Engine]
}

// NewLoader judges with the server's policy settings and builtin engine;
// allowOverride lets a repository's configuration change the settings;
// checkout fetches the base commit's policy dirs.
func NewLoader(server policy.Config, allowOverride bool, engine *policy.Engine, checkout CheckoutFunc) *Loader {
	engines, err := lru.New[string, *policy.Engine](MaxEngines)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Loader{server: server, allowOverride: allowOverride, engine: engine, checkout: checkout, engines: engines}
}

// For reads .shardgate.yaml and the policy settings from the base commit
// (baseSHA, else the branch baseRef). A configuration problem is a
// *repoconfig.Error; other errors are GitHub's or the checkout's.
func (l *Loader) For(ctx context.Context, gh ghapp.Contents, ref pullreq.Ref, baseRef, baseSHA string) (*Policy, error) {
	at := baseSHA
	if at == "" {
		at = baseRef
	}
	cfg, err := Config(ctx, gh, ref, baseRef, baseSHA)
	if err != nil {
		return nil, err
	}
	rp := &Policy{Repo: cfg, Config: l.server, Engine: l.engine}
	if l.allowOverride {
		rp.Config = cfg.PolicyOver(l.server)
	}
	if len(cfg.PolicyDirs) > 0 {
		if rp.Engine, err = l.repoEngine(ctx, ref, at, cfg.PolicyDirs); err != nil {
			return nil, err
		}
	}
	return rp, nil
}

// Config reads .shardgate.yaml alone from the base commit (baseSHA, else the
// branch baseRef): the defaults when there is none. A configuration problem
// is a *repoconfig.Error; other errors are GitHub's.
func Config(ctx context.Context, gh ghapp.Contents, ref pullreq.Ref, baseRef, baseSHA string) (*repoconfig.Config, error) {
	at := baseSHA
	if at == "" {
		at = baseRef
	}
	text, err := gh.GetFile(ctx, ref.Owner, ref.Repo, repoconfig.FileName, at)
	var undecodable *ghapp.UndecodableError
	switch {
	case errors.Is(err, ghapp.ErrNotFound):
		return repoconfig.Default(), nil
	case errors.As(err, &undecodable):
		return nil, &repoconfig.Error{Source: repoconfig.FileName, Problems: []string{undecodable.Error()}}
	case err != nil:
		return nil, fmt.Errorf("read %s from %s: %w", repoconfig.FileName, baseRef, err)
	}
	return repoconfig.Parse(repoconfig.FileName+" on "+baseRef, text)
}

// repoEngine compiles the builtin policies plus the repository's policy dirs
// as they are on the base commit.
func (l *Loader) repoEngine(ctx context.Context, ref pullreq.Ref, baseSHA string, dirs []string) (*policy.Engine, error) {
	key := ref.FullName() + "@" + baseSHA
	if e, ok := l.engines.Get(key); ok {
		return e, nil
	}
	checkout, cleanup, err := l.checkout(ctx, ref, baseSHA)
	defer cleanup()
	if err != nil {
		return nil, fmt.Errorf("fetch the base branch's policy dirs: %w", err)
	}
	var abs []string
	for _, d := range dirs {
		p := filepath.Join(checkout, filepath.FromSlash(d))
		if _, err := os.Stat(p); err != nil {
			return nil, &repoconfig.Error{Source: repoconfig.FileName, Problems: []string{fmt.Sprintf("policy.policy_dirs: %s does not exist on the base branch", d)}}
		}
		abs = append(abs, p)
	}
	e, err := policy.New(policy.WithPolicyDirs(abs...))
	if err != nil {
		return nil, &repoconfig.Error{Source: repoconfig.FileName, Problems: []string{"policy.policy_dirs: " + err.Error()}}
	}
	l.engines.Add(key, e)
	return e, nil
}
