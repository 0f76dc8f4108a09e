package records

// Check-run conclusions of a project's plan check (shardgate/plan: <project>).
const (
	ConclusionSuccess = "success"
	ConclusionFailure = "failure"
)

// CheckConclusion is the conclusion the plan's check run finishes with: a
// failure when it was not planned or the policy denies it, a success when
// allowed; "" while it is not judged yet (the check is in progress). The
// check run and the automation API both read it here, so they agree.
func (p *Plan) CheckConclusion() string {
	switch {
	case p.Error != "":
		return ConclusionFailure
	case p.ChangeSet == nil:
		return ""
	case p.Decision.Allowed:
		return ConclusionSuccess
	}
	return ConclusionFailure
}
