package plan

import (
	"context"
	"fmt"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/store/records"
)

// commentLink is the web address of the pull request's comment, "" when
// shardgate has none yet or GitHub's web address is not known.
func (s *Planner) commentLink(st *records.PRState) string {
	web := statuspage.WebURL(s.Config.GitHubAPIURL)
	if web == "" || st.CommentID == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/%s/pull/%d#issuecomment-%d", web, st.Ref.Owner, st.Ref.Repo, st.Ref.Number, st.CommentID)
}

// startGate opens the aggregate check on the pull request's head.
func (s *Planner) startGate(ctx context.Context, gh ghapp.API, st *records.PRState) (int64, error) {
	return s.Checks.Start(ctx, gh, st.Ref, prreport.CheckGateName, st.HeadSHA)
}

// finishGate completes the aggregate check on the pull request's head (id 0:
// found, or created): the plans' verdicts, or refused when the head was not
// planned and must not pass.
func (s *Planner) finishGate(ctx context.Context, gh ghapp.API, st *records.PRState, id int64, plans []*records.Plan, refused string) error {
	conclusion, out := s.gateOutput(len(st.Projects), prreport.Gate{Plans: plans, Link: s.commentLink(st), Refused: refused, Subject: "this pull request"})
	_, err := s.Checks.Finish(ctx, gh, st.Ref, id, prreport.CheckGateName, st.HeadSHA, conclusion, out)
	return err
}
