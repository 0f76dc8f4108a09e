package bot

import (
	"context"
	"errors"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/phases"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/store/records"
)

// evaluate judges one project's stored plan with the PR's current labels and
// attestations. Evaluation errors deny (the decision says so); only GitHub or
// store failures are returned.
func (s *Planner) evaluate(ctx context.Context, gh ghapp.API, st *records.PRState, rec *records.Plan, pol *repopolicy.Policy) error {
	labels, err := s.labels.Judge(ctx, gh, st)
	if err != nil {
		return err
	}
	atts, err := s.rec.Attestations(ctx, st.Ref, st.HeadSHA)
	if err != nil {
		return err
	}
	req := policy.Request{ChangeSet: rec.ChangeSet, Coordinator: rec.Coordinator, Live: rec.Live, Labels: labels,
		Attestations: atts, Config: pol.Config, Now: s.now()}
	stop := phases.Start(ctx, phases.Policy)
	dec, err := pol.Engine.Evaluate(ctx, req)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		logctx.Logger(ctx).WithError(err).Error("policy evaluation failed; denying")
	}
	if len(rec.SkippedLinks) > 0 {
		dec.Warnings = append(dec.Warnings, linksWarning(rec.SkippedLinks))
	}
	rec.Decision = dec
	s.metrics.ObserveDecision("review", dec)
	return nil
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
