package bot

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/records"
)

// checkout fetches the tree of sha into a fresh directory; cleanup removes it.
// The symlinks it leaves out fail a plan that needs them (checkoutTree), and
// change any other plan that would, so a replan or drift check needs no list.
func (s *Planner) checkout(ctx context.Context, ref pullreq.Ref, sha string) (string, func(), error) {
	dir, _, cleanup, err := s.checkoutTree(ctx, ref, sha)
	return dir, cleanup, err
}

// checkoutTree is checkout saying which of the tree's symlinks were not made.
func (s *Planner) checkoutTree(ctx context.Context, ref pullreq.Ref, sha string) (string, []ghapp.SkippedLink, func(), error) {
	hc, err := s.clients.InstallationHTTPClient(ref.Installation)
	if err != nil {
		return "", nil, func() {}, err
	}
	dir, err := os.MkdirTemp(s.workDir, "checkout-")
	if err != nil {
		return "", nil, func() {}, fmt.Errorf("make checkout dir: %w", err)
	}
	cleanup := func() {
		// Left behind, it goes with the run dir at Close or the next start.
		if err := os.RemoveAll(dir); err != nil {
			logctx.Logger(ctx).WithError(err).Warn("remove a checkout")
		}
	}
	skipped, err := ghapp.DownloadTarball(ctx, hc, s.cfg.GitHubAPIURL, ref.Owner, ref.Repo, sha, dir, s.now)
	if err != nil {
		return "", nil, cleanup, err
	}
	return dir, skipped, cleanup, nil
}

// loadPR reads the pull request from GitHub and the state shardgate kept of it,
// voiding what an earlier head commit earned.
func (s *Planner) loadPR(ctx context.Context, ref pullreq.Ref) (ghapp.API, *ghapp.PullRequest, *records.PRState, error) {
	return s.loadPREvent(ctx, ref, nil)
}

// loadPREvent is loadPR for a job a pull_request event started: while the
// event is current, the pull request and its labels are the event's, not
// read again from GitHub (the API the job gets answers them). The head seen
// in it counts from the later of the event's updated_at and this moment, as
// an answer GitHub gave now would.
func (s *Planner) loadPREvent(ctx context.Context, ref pullreq.Ref, ev *prEvent) (ghapp.API, *ghapp.PullRequest, *records.PRState, error) {
	gh, err := ghapp.APIFor(s.clients, ref.Installation)
	if err != nil {
		return nil, nil, nil, err
	}
	if ev != nil {
		known, err := s.rec.PR(ctx, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		if ev.current(known) {
			ev.pr.AnsweredAt = s.now()
			gh = eventAPI{API: gh, ref: ref, ev: ev}
		}
	}
	pr, st, err := s.readPR(ctx, gh, ref)
	return gh, pr, st, err
}

// readPR reads the pull request through gh and the state shardgate kept of
// it; a new head voids the exception labels not given for it.
func (s *Planner) readPR(ctx context.Context, gh ghapp.API, ref pullreq.Ref) (*ghapp.PullRequest, *records.PRState, error) {
	pr, err := gh.GetPullRequest(ctx, ref.Owner, ref.Repo, ref.Number)
	if err != nil {
		return nil, nil, fmt.Errorf("get pull request %s: %w", ref, err)
	}
	st, err := s.rec.PR(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		st = &records.PRState{Ref: ref}
	}
	st.Ref.Installation = ref.Installation
	st.Author = pr.Author
	st.BaseRef = pr.BaseRef
	st.Draft = pr.Draft
	if head := pr.HeadSHA; head != st.HeadSHA {
		old := st.HeadSHA
		st.SawHead(head, githubTime(pr, s.now()))
		st.Notes = nil
		if old != "" {
			if err := s.labels.VoidExceptions(ctx, gh, st); err != nil {
				return nil, nil, err
			}
		}
	}
	return &pr, st, nil
}

// isFork says whether the head is in another repository than the base (or in
// one that is gone).
func isFork(pr *ghapp.PullRequest) bool {
	return pr.HeadRepo == "" || !strings.EqualFold(pr.HeadRepo, pr.BaseRepo)
}

// headWhen is the head commit an approval made at GitHub time t counts for,
// and the current head. It first updates the PR's head sightings from GitHub,
// so a push shardgate has not processed yet is known to follow t.
func (s *Planner) headWhen(ctx context.Context, gh ghapp.API, ref pullreq.Ref, t time.Time) (head, current string, err error) {
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	_, st, err := s.readPR(ctx, gh, ref)
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
func githubTime(pr ghapp.PullRequest, fallback time.Time) time.Time {
	t := pr.AnsweredAt
	if pr.UpdatedAt.After(t) {
		t = pr.UpdatedAt
	}
	if t.IsZero() {
		t = fallback
	}
	return t.UTC().Truncate(time.Second)
}
