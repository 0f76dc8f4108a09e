package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// LabelAPI is what judging labels asks GitHub: the labels, who added them,
// and whether that someone is in an approver team.
type LabelAPI interface {
	ghapp.Labels
	ghapp.Teams
}

// Labels judges a pull request's exception labels, remembering in rec who
// added each and for which head.
type Labels struct {
	rec       records.Store
	approvers *Approvers
}

// NewLabels judges labels with the approvers a, keeping origins in rec.
func NewLabels(rec records.Store, a *Approvers) *Labels { return &Labels{rec: rec, approvers: a} }

// Judge decides which of the PR's labels count. An exception label counts
// only when GitHub's issue events say an approver who is not the PR author
// added it while the current head was the head; other labels are passed
// through for user policies.
func (s *Labels) Judge(ctx context.Context, gh LabelAPI, st *records.PRState) ([]policy.Label, error) {
	names, err := currentLabels(ctx, gh, st.Ref)
	if err != nil {
		return nil, err
	}
	events, err := LatestLabelEvents(ctx, gh, st.Ref, exceptionLabels(names))
	if err != nil {
		return nil, err
	}
	var out []policy.Label
	for _, name := range names {
		if !strings.HasPrefix(name, policy.ExceptionLabelPrefix) {
			out = append(out, policy.Label{Name: name, Counted: true})
			continue
		}
		rec, err := s.origin(ctx, st, name, events[name])
		if err != nil {
			return nil, err
		}
		l := policy.Label{Name: name}
		switch {
		case rec == nil:
			l.Reason = "shardgate cannot tell who added it; remove it and have an approver add it again"
		default:
			l.Actor = rec.Actor
			counted, reason, err := s.counts(ctx, gh, st, rec)
			if err != nil {
				return nil, err
			}
			l.Counted, l.Reason = counted, reason
		}
		out = append(out, l)
	}
	return out, nil
}

func (s *Labels) counts(ctx context.Context, gh ghapp.Teams, st *records.PRState, rec *records.Label) (bool, string, error) {
	switch {
	case rec.HeadSHA == "":
		return false, fmt.Sprintf("added before the current head %s: a push voids exception labels", pullreq.ShortSHA(st.HeadSHA)), nil
	case rec.HeadSHA != st.HeadSHA:
		return false, fmt.Sprintf("added for commit %s, but the head is now %s: a push voids exception labels", pullreq.ShortSHA(rec.HeadSHA), pullreq.ShortSHA(st.HeadSHA)), nil
	case strings.EqualFold(rec.Actor, st.Author):
		return false, "added by the pull request's author; an approver other than the author must add it", nil
	}
	ok, err := s.approvers.IsApprover(ctx, gh, rec.Actor)
	if err != nil {
		return false, "", err
	}
	if !ok {
		return false, fmt.Sprintf("%s is not an approver (%s)", rec.Actor, strings.TrimPrefix(s.approvers.Text(), "an approver ")), nil
	}
	return true, "", nil
}

func exceptionLabels(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, policy.ExceptionLabelPrefix) {
			out = append(out, n)
		}
	}
	return out
}

func currentLabels(ctx context.Context, gh ghapp.Labels, ref pullreq.Ref) ([]string, error) {
	var names []string
	page := 0
	for read := 0; read < 10; read++ {
		labels, err := gh.ListLabels(ctx, ref.Owner, ref.Repo, ref.Number, page)
		if err != nil {
			return nil, fmt.Errorf("list labels of %s: %w", ref, err)
		}
		names = append(names, labels.Items...)
		if labels.Next == 0 {
			break
		}
		page = labels.Next
	}
	return names, nil
}

// maxEventPages bounds the issue-event pages read per judgement. A label whose
// labeled event lies further back has no known origin and does not count.
const maxEventPages = 20

// LatestLabelEvents finds, for each name, the issue event that last added the
// label. GitHub lists events oldest first, so the pages are read from the last.
func LatestLabelEvents(ctx context.Context, gh ghapp.Labels, ref pullreq.Ref, names []string) (map[string]*ghapp.IssueEvent, error) {
	found := map[string]*ghapp.IssueEvent{}
	if len(names) == 0 {
		return found, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	page, last := 1, 1
	for read := 0; read < maxEventPages && page >= 1 && len(found) < len(want); read++ {
		events, err := gh.ListIssueEvents(ctx, ref.Owner, ref.Repo, ref.Number, page)
		if err != nil {
			return nil, fmt.Errorf("list issue events of %s: %w", ref, err)
		}
		if read == 0 && events.Last > 1 {
			// The first answer only tells where the newest events are.
			last, page = events.Last, events.Last
			continue
		}
		for i := len(events.Items) - 1; i >= 0; i-- {
			e := &events.Items[i]
			if e.Event == "labeled" && want[e.Label] && found[e.Label] == nil {
				found[e.Label] = e
			}
		}
		if page == 1 && last == 1 {
			break
		}
		page--
	}
	return found, nil
}

// origin is who added an exception label and for which head, from the
// labeled event ev (nil: unknown). The head is the one current when the label
// was added, by GitHub's time, whenever shardgate gets to it.
func (s *Labels) origin(ctx context.Context, st *records.PRState, name string, ev *ghapp.IssueEvent) (*records.Label, error) {
	if ev == nil {
		return nil, nil
	}
	added := ev.CreatedAt.UTC().Truncate(time.Second)
	rec := &records.Label{Label: name, Actor: ev.Actor, AddedAt: added, EventID: ev.ID, HeadSHA: st.HeadAt(added)}
	stored, err := s.rec.Label(ctx, st.Ref, name)
	if err != nil {
		return nil, err
	}
	if stored == nil || *stored != *rec {
		if err := s.rec.PutLabel(ctx, st.Ref, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// VoidExceptions removes the exception labels not added for the new head
// and says so in the comment: an exception is for the commit it was given on.
// It reads the labels and their events from GitHub, so a label whose labeled
// event shardgate never processed is removed too.
func (s *Labels) VoidExceptions(ctx context.Context, gh ghapp.Labels, st *records.PRState) error {
	names, err := currentLabels(ctx, gh, st.Ref)
	if err != nil {
		return err
	}
	names = exceptionLabels(names)
	events, err := LatestLabelEvents(ctx, gh, st.Ref, names)
	if err != nil {
		return err
	}
	for _, name := range names {
		rec, err := s.origin(ctx, st, name, events[name])
		if err != nil {
			return err
		}
		if rec != nil && rec.HeadSHA == st.HeadSHA {
			continue
		}
		err = gh.RemoveLabel(ctx, st.Ref.Owner, st.Ref.Repo, st.Ref.Number, name)
		if err != nil && !errors.Is(err, ghapp.ErrNotFound) {
			return fmt.Errorf("remove label %s from %s: %w", name, st.Ref, err)
		}
		if err := s.rec.DeleteLabel(ctx, st.Ref, name); err != nil {
			return err
		}
		given, by := "an earlier head", "someone shardgate cannot tell"
		if rec != nil && rec.HeadSHA != "" {
			given = pullreq.ShortSHA(rec.HeadSHA)
		}
		if rec != nil {
			by = rec.Actor
		}
		// Notes are rendered as written: what a PR controls goes in through report.
		st.Notes = append(st.Notes, fmt.Sprintf("Removed %s (added by %s for %s): a push voids exception labels. An approver can add it again for %s.",
			report.Code(name), report.Escape(by), report.Escape(given), pullreq.ShortSHA(st.HeadSHA)))
	}
	return nil
}
