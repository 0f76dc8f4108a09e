package githubtest

import (
	"fmt"
	"net/http"
	"strconv"
)

// handlers maps "METHOD /spec/path/template" to its implementation. Spec
// operations missing here fail the test when called.
var handlers = map[string]func(*Server, *call) reply{
	"POST /app-manifests/{code}/conversions":                                            createFromManifest,
	"POST /app/installations/{installation_id}/access_tokens":                           createInstallationToken,
	"GET /orgs/{org}/teams/{team_slug}/memberships/{username}":                          getTeamMembership,
	"POST /repos/{owner}/{repo}/check-runs":                                             createCheckRun,
	"GET /repos/{owner}/{repo}/commits/{ref}/check-runs":                                listCheckRunsForRef,
	"GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls":                              listPullsForCommit,
	"GET /repos/{owner}/{repo}/check-runs/{check_run_id}":                               getCheckRun,
	"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}":                             updateCheckRun,
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission":                     getPermission,
	"GET /repos/{owner}/{repo}/compare/{basehead}":                                      compareCommits,
	"GET /repos/{owner}/{repo}/contents/{path}":                                         getContent,
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}":                            getComment,
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}":                          editComment,
	"DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}":                         deleteComment,
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":                  listReactions,
	"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":                 createReaction,
	"DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions/{reaction_id}": deleteReaction,
	"GET /repos/{owner}/{repo}/issues":                                                  listRepoIssues,
	"POST /repos/{owner}/{repo}/issues":                                                 createRepoIssue,
	"GET /repos/{owner}/{repo}/issues/{issue_number}":                                   getRepoIssue,
	"PATCH /repos/{owner}/{repo}/issues/{issue_number}":                                 editRepoIssue,
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments":                          listComments,
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments":                         createComment,
	"GET /repos/{owner}/{repo}/issues/{issue_number}/events":                            listEvents,
	"GET /repos/{owner}/{repo}/issues/{issue_number}/timeline":                          listEvents,
	"GET /repos/{owner}/{repo}/issues/{issue_number}/labels":                            listLabels,
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels":                           addLabels,
	"PUT /repos/{owner}/{repo}/issues/{issue_number}/labels":                            setLabels,
	"DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels":                         clearLabels,
	"DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}":                  deleteLabel,
	"GET /repos/{owner}/{repo}/pulls/{pull_number}":                                     getPull,
	"PATCH /repos/{owner}/{repo}/pulls/{pull_number}":                                   updatePull,
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/files":                               listPullFiles,
	"POST /repos/{owner}/{repo}/statuses/{sha}":                                         createStatus,
	"GET /repos/{owner}/{repo}/tarball/{ref}":                                           tarballLink,
	"GET /user": getAuthenticatedUser,
}

// repoOf finds the repository of a call; one outside the token's
// installation is a 404, as on GitHub.
func (s *Server) repoOf(c *call) (*repo, bool) {
	r := s.repos[c.params["owner"]+"/"+c.params["repo"]]
	if r == nil || r.installationID != c.installationID {
		return nil, false
	}
	return r, true
}

func (s *Server) issueOf(c *call) (*repo, *PullRequest, bool) {
	r, found := s.repoOf(c)
	if !found {
		return nil, nil, false
	}
	key := c.params["issue_number"]
	if key == "" {
		key = c.params["pull_number"]
	}
	n, err := strconv.Atoi(key)
	if err != nil || r.pulls[n] == nil {
		return nil, nil, false
	}
	return r, r.pulls[n], true
}

func (s *Server) commentOf(c *call) (*repo, *Comment, bool) {
	r, found := s.repoOf(c)
	if !found {
		return nil, nil, false
	}
	id, err := strconv.ParseInt(c.params["comment_id"], 10, 64)
	if err != nil || r.comments[id] == nil {
		return nil, nil, false
	}
	return r, r.comments[id], true
}

const (
	defaultPerPage = 30
	maxPerPage     = 100
)

// paginate slices a list by per_page/page and sets GitHub's Link header,
// so clients that follow pages are exercised.
func paginate(c *call, items []any) reply {
	q := c.r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = defaultPerPage
	}
	per = min(per, maxPerPage)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(items)+per-1)/per, 1)
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	rep := ok(items[start:end])
	if page < last {
		link := func(p int, rel string) string {
			u := *c.r.URL
			v := u.Query()
			v.Set("page", strconv.Itoa(p))
			v.Set("per_page", strconv.Itoa(per))
			u.RawQuery = v.Encode()
			return fmt.Sprintf(`<http://%s%s>; rel="%s"`, c.r.Host, u.RequestURI(), rel)
		}
		rep.header = http.Header{"Link": {link(page+1, "next") + ", " + link(last, "last")}}
	}
	return rep
}
