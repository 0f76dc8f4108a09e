package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store/records"
)

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
func (s *Planner) loadPREvent(ctx context.Context, ref pullreq.Ref, ev *Event) (ghapp.API, *ghapp.PullRequest, *records.PRState, error) {
	gh, err := ghapp.APIFor(s.Clients, ref.Installation)
	if err != nil {
		return nil, nil, nil, err
	}
	if ev != nil {
		known, err := s.Records.PR(ctx, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		if ev.current(known) {
			ev.pr.AnsweredAt = s.Now()
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
	st, err := s.Records.PR(ctx, ref)
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
		st.SawHead(head, githubTime(pr, s.Now()))
		st.Notes = nil
		if old != "" {
			if err := s.Labels.VoidExceptions(ctx, gh, st); err != nil {
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

// HeadWhen is the head commit an approval made at GitHub time t counts for,
// and the current head. It first updates the PR's head sightings from GitHub,
// so a push shardgate has not processed yet is known to follow t.
func (s *Planner) HeadWhen(ctx context.Context, gh ghapp.API, ref pullreq.Ref, t time.Time) (head, current string, err error) {
	unlock := s.PRLocks.Lock(ref.Key())
	defer unlock()
	_, st, err := s.readPR(ctx, gh, ref)
	if err != nil {
		return "", "", err
	}
	if err := s.Records.PutPR(ctx, st); err != nil {
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
