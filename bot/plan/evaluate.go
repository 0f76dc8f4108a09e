package plan

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
	labels, err := s.Labels.Judge(ctx, gh, st)
	if err != nil {
		return err
	}
	atts, err := s.Records.Attestations(ctx, st.Ref, st.HeadSHA)
	if err != nil {
		return err
	}
	s.judge(ctx, rec, pol, labels, atts)
	return nil
}

// judge judges one project's plan with the labels and attestations given.
// Evaluation errors deny (the decision says so).
func (s *Planner) judge(ctx context.Context, rec *records.Plan, pol *repopolicy.Policy, labels []policy.Label, atts []policy.Attestation) {
	req := policy.Request{ChangeSet: rec.ChangeSet, Coordinator: rec.Coordinator, Live: rec.Live, Labels: labels,
		Attestations: atts, Config: pol.Config, Now: s.Now(), Peers: rec.Peers}
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
	s.Metrics.ObserveDecision("review", dec)
}
