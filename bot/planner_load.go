package bot

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-github/v60/github"
	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/records"
)

// checkout fetches the head tree into a fresh directory; cleanup removes it.
func (s *Planner) checkout(ctx context.Context, ref pullreq.Ref, sha string) (string, func(), error) {
	hc, err := s.clients.InstallationHTTPClient(ref.Installation)
	if err != nil {
		return "", func() {}, err
	}
	dir, err := os.MkdirTemp(s.workDir, "checkout-")
	if err != nil {
		return "", func() {}, fmt.Errorf("make checkout dir: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := ghapp.DownloadTarball(ctx, hc, s.cfg.GitHubAPIURL, ref.Owner, ref.Repo, sha, dir); err != nil {
		return "", cleanup, err
	}
	return dir, cleanup, nil
}

// loadPR reads the pull request from GitHub and the state shardgate kept of it,
// voiding what an earlier head commit earned.
func (s *Planner) loadPR(ctx context.Context, ref pullreq.Ref) (*github.Client, *github.PullRequest, *records.PRState, error) {
	gh, err := s.clients.NewInstallationClient(ref.Installation)
	if err != nil {
		return nil, nil, nil, err
	}
	pr, resp, err := gh.PullRequests.Get(ctx, ref.Owner, ref.Repo, ref.Number)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("get pull request %s: %w", ref, err)
	}
	st, err := s.rec.PR(ctx, ref)
	if err != nil {
		return nil, nil, nil, err
	}
	if st == nil {
		st = &records.PRState{Ref: ref}
	}
	st.Ref.Installation = ref.Installation
	st.Author = pr.GetUser().GetLogin()
	st.BaseRef = pr.GetBase().GetRef()
	st.Draft = pr.GetDraft()
	if head := pr.GetHead().GetSHA(); head != st.HeadSHA {
		old := st.HeadSHA
		st.SawHead(head, githubTime(resp, pr, s.now()))
		st.Notes = nil
		if old != "" {
			if err := s.voidExceptionLabels(ctx, ghapp.FromClient(gh), st, old); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return gh, pr, st, nil
}

func isFork(pr *github.PullRequest) bool {
	head, base := pr.GetHead().GetRepo(), pr.GetBase().GetRepo()
	return head == nil || !strings.EqualFold(head.GetFullName(), base.GetFullName())
}
