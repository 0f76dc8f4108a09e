package plan

import (
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/store/records"
)

// folds says whether a plan of this many projects (a pull request's, a
// merge group's) is above report.max_project_checks: then their results are
// rows of the aggregate check run and none has a check run of its own (each
// is a write GitHub paces, about 80 a minute).
func (s *Planner) folds(projects int) bool {
	return projects > s.Config.ProjectChecksLimit()
}

// folded says whether the pull request's projects fold (folds).
func (s *Planner) folded(st *records.PRState) bool { return s.folds(len(st.Projects)) }

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

// gateOutput is the conclusion and output of the aggregate check run of a
// plan of this many projects.
func (s *Planner) gateOutput(projects int, g prreport.Gate) (string, *ghapp.CheckOutput) {
	if s.folds(projects) {
		return s.Render.FoldedGateOutput(g)
	}
	return prreport.GateOutput(g)
}
