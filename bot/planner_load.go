package bot

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

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
			if err := s.labels.VoidExceptions(ctx, ghapp.FromClient(gh), st); err != nil {
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

// headWhen is the head commit an approval made at GitHub time t counts for,
// and the current head. It first updates the PR's head sightings from GitHub,
// so a push shardgate has not processed yet is known to follow t.
func (s *Planner) headWhen(ctx context.Context, ref pullreq.Ref, t time.Time) (head, current string, err error) {
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	_, _, st, err := s.loadPR(ctx, ref)
	if err != nil {
		return "", "", err
	}
	if err := s.rec.PutPR(ctx, st); err != nil {
		return "", "", err
	}
	return st.HeadAt(t), st.HeadSHA, nil
}

// githubTime is GitHub's clock when it answered: the later of the answer's
// Date and the pull request's updated_at, whole seconds, or fallback when
// GitHub gave neither. A head first seen in that answer was pushed by then.
func githubTime(resp *github.Response, pr *github.PullRequest, fallback time.Time) time.Time {
	var t time.Time
	if resp != nil && resp.Response != nil {
		if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			t = d
		}
	}
	if u := pr.GetUpdatedAt().Time; u.After(t) {
		t = u
	}
	if t.IsZero() {
		t = fallback
	}
	return t.UTC().Truncate(time.Second)
}
