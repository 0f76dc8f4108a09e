package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/records"
	"github.com/shardgate/shardgate/repoconfig"
	"github.com/shardgate/shardgate/traceability"
)

// repoPolicy is what judges a repository's plans: its base-branch configuration
// and the policy engine with any policy dirs that configuration adds.
type repoPolicy struct {
	repo   *repoconfig.Config
	config policy.Config
	engine *policy.Engine
}

// engineCache keeps compiled engines of repository policy dirs per base commit.
type engineCache struct {
	mu sync.Mutex
	m  map[string]*policy.Engine
}

// policyFor reads .shardgate.yaml and the policy settings from the base branch,
// never from the pull request, so a pull request cannot loosen its own gate.
func (s *Planner) policyFor(ctx context.Context, gh *github.Client, ref pullreq.Ref, baseRef, baseSHA string) (*repoPolicy, error) {
	at := baseSHA
	if at == "" {
		at = baseRef
	}
	content, _, resp, err := gh.Repositories.GetContents(ctx, ref.Owner, ref.Repo, repoconfig.FileName, &github.RepositoryContentGetOptions{Ref: at})
	cfg := repoconfig.Default()
	switch {
	case err != nil && resp != nil && resp.StatusCode == http.StatusNotFound:
	case err != nil:
		return nil, fmt.Errorf("read %s from %s: %w", repoconfig.FileName, baseRef, err)
	default:
		text, err := content.GetContent()
		if err != nil {
			return nil, &repoconfig.Error{Source: repoconfig.FileName, Problems: []string{"cannot decode the file: " + err.Error()}}
		}
		if cfg, err = repoconfig.Parse(repoconfig.FileName+" on "+baseRef, []byte(text)); err != nil {
			return nil, err
		}
	}
	rp := &repoPolicy{repo: cfg, config: s.cfg.Policy, engine: s.engine}
	if s.cfg.AllowRepoOverride {
		rp.config = cfg.PolicyOver(s.cfg.Policy)
	}
	if len(cfg.PolicyDirs) > 0 {
		if rp.engine, err = s.repoEngine(ctx, ref, at, cfg.PolicyDirs); err != nil {
			return nil, err
		}
	}
	return rp, nil
}

// repoEngine compiles the builtin policies plus the repository's policy dirs as
// they are on the base commit.
func (s *Planner) repoEngine(ctx context.Context, ref pullreq.Ref, baseSHA string, dirs []string) (*policy.Engine, error) {
	key := ref.FullName() + "@" + baseSHA
	s.engines.mu.Lock()
	e, ok := s.engines.m[key]
	s.engines.mu.Unlock()
	if ok {
		return e, nil
	}
	checkout, cleanup, err := s.checkout(ctx, ref, baseSHA)
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
	e, err = policy.New(policy.WithPolicyDirs(abs...))
	if err != nil {
		return nil, &repoconfig.Error{Source: repoconfig.FileName, Problems: []string{"policy.policy_dirs: " + err.Error()}}
	}
	s.engines.mu.Lock()
	if s.engines.m == nil {
		s.engines.m = map[string]*policy.Engine{}
	}
	s.engines.m[key] = e
	s.engines.mu.Unlock()
	return e, nil
}

// evaluate judges one project's stored plan with the PR's current labels and
// attestations. Evaluation errors deny (the decision says so); only GitHub or
// store failures are returned.
func (s *Planner) evaluate(ctx context.Context, gh *github.Client, st *records.PRState, rec *records.Plan, pol *repoPolicy) error {
	labels, err := s.labels.Judge(ctx, ghapp.FromClient(gh), st)
	if err != nil {
		return err
	}
	atts, err := s.rec.Attestations(ctx, st.Ref, st.HeadSHA)
	if err != nil {
		return err
	}
	req := policy.Request{ChangeSet: rec.ChangeSet, Coordinator: rec.Coordinator, Live: rec.Live, Labels: labels,
		Attestations: atts, Config: pol.config, Now: s.now()}
	dec, err := pol.engine.Evaluate(ctx, req)
	if err != nil && !errors.Is(err, context.Canceled) {
		logctx.Logger(ctx).WithError(err).Error("policy evaluation failed; denying")
	}
	if len(rec.TraceVarsMissing) > 0 {
		dec.Warnings = append(dec.Warnings, traceability.Warning(rec.TraceVarsMissing))
	}
	rec.Decision = dec
	s.metrics.ObserveDecision("review", dec)
	return nil
}

// reevaluate judges the stored plans of the head commit again (labels or
// attestations changed), planning first when there are none.
func (s *Planner) reevaluate(ctx context.Context, ref pullreq.Ref) error {
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	gh, pr, st, err := s.loadPR(ctx, ref)
	if err != nil {
		return err
	}
	plans, err := s.rec.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		if pr.GetState() != "open" || (pr.GetDraft() && st.Projects == nil) {
			return s.rec.PutPR(ctx, st)
		}
		return s.planPRLocked(ctx, planRequest{ref: ref, trigger: "re-evaluation"})
	}
	pol, err := s.policyFor(ctx, gh, ref, pr.GetBase().GetRef(), pr.GetBase().GetSHA())
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		return s.reportConfigError(ctx, gh, st, err)
	}
	if err != nil {
		return err
	}
	for _, rec := range plans {
		if rec.ChangeSet == nil {
			continue
		}
		if err := s.evaluate(ctx, gh, st, rec, pol); err != nil {
			return err
		}
		if err := s.finishPlan(ctx, gh, st, rec); err != nil {
			return err
		}
	}
	return s.publish(ctx, gh, st, orderPlans(plans, st.Projects))
}

// orderPlans puts plan records in the order of the PR's project list.
func orderPlans(plans []*records.Plan, order []string) []*records.Plan {
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	out := append([]*records.Plan(nil), plans...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && pos[out[j].Project] < pos[out[j-1].Project]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
