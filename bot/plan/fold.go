package plan

import (
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/store/records"
)

// folded says whether the pull request's projects are more than
// report.max_project_checks: then their results are rows of the aggregate
// check run and none has a check run of its own (each is a write GitHub
// paces, about 80 a minute).
func (s *Planner) folded(st *records.PRState) bool {
	return len(st.Projects) > s.Config.ProjectChecksLimit()
}

// commentNotice is the comment's notice: the sandbox's, and that the
// projects' results fold into the aggregate check run.
func (s *Planner) commentNotice(st *records.PRState) string {
	notice := s.SandboxNotice()
	if s.folded(st) {
		if notice != "" {
			notice += "\n\n"
		}
		notice += prreport.FoldNotice(len(st.Projects), s.Config.ProjectChecksLimit())
	}
	return notice
}

// gateOutput is the aggregate check run's conclusion and output.
func (s *Planner) gateOutput(st *records.PRState, g prreport.Gate) (string, *ghapp.CheckOutput) {
	if s.folded(st) {
		return s.Render.FoldedGateOutput(g)
	}
	return prreport.GateOutput(g)
}
