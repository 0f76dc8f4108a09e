package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/report"
)

// judgeLabels decides which of the PR's labels count. An exception label counts
// only when it was added on the current head commit by an approver who is not
// the PR author; other labels are passed through for user policies.
func (s *Server) judgeLabels(ctx context.Context, gh *github.Client, st *PRState) ([]policy.Label, error) {
	names, err := currentLabels(ctx, gh, st.Ref)
	if err != nil {
		return nil, err
	}
	var out []policy.Label
	for _, name := range names {
		if !strings.HasPrefix(name, policy.ExceptionLabelPrefix) {
			out = append(out, policy.Label{Name: name, Counted: true})
			continue
		}
		rec, err := s.labelOrigin(ctx, gh, st, name)
		if err != nil {
			return nil, err
		}
		l := policy.Label{Name: name}
		switch {
		case rec == nil:
			l.Reason = "shardgate cannot tell who added it; remove it and have an approver add it again"
		default:
			l.Actor = rec.Actor
			counted, reason, err := s.labelCounts(ctx, gh, st, rec)
			if err != nil {
				return nil, err
			}
			l.Counted, l.Reason = counted, reason
		}
		out = append(out, l)
	}
	return out, nil
}

func (s *Server) labelCounts(ctx context.Context, gh *github.Client, st *PRState, rec *LabelRecord) (bool, string, error) {
	switch {
	case rec.HeadSHA == "":
		return false, fmt.Sprintf("added before the current head %s: a push voids exception labels", shortSHA(st.HeadSHA)), nil
	case rec.HeadSHA != st.HeadSHA:
		return false, fmt.Sprintf("added for commit %s, but the head is now %s: a push voids exception labels", shortSHA(rec.HeadSHA), shortSHA(st.HeadSHA)), nil
	case strings.EqualFold(rec.Actor, st.Author):
		return false, "added by the pull request's author; an approver other than the author must add it", nil
	}
	ok, err := s.isApprover(ctx, gh, rec.Actor)
	if err != nil {
		return false, "", err
	}
	if !ok {
		return false, fmt.Sprintf("@%s is not an approver (%s)", rec.Actor, strings.TrimPrefix(s.approversText(), "an approver ")), nil
	}
	return true, "", nil
}

func currentLabels(ctx context.Context, gh *github.Client, ref PRRef) ([]string, error) {
	var names []string
	opts := &github.ListOptions{PerPage: 100}
	for page := 0; page < 10; page++ {
		labels, resp, err := gh.Issues.ListLabelsByIssue(ctx, ref.Owner, ref.Repo, ref.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list labels of %s: %w", ref, err)
		}
		for _, l := range labels {
			names = append(names, l.GetName())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return names, nil
}

// labelOrigin returns who added an exception label and on which head. It comes
// from the labeled event shardgate received, or, when that was missed (a
// restart, a redelivery lost), from the issue events API: a label added after
// shardgate first saw the current head belongs to that head.
func (s *Server) labelOrigin(ctx context.Context, gh *github.Client, st *PRState, name string) (*LabelRecord, error) {
	rec, err := s.rec.label(ctx, st.Ref, name)
	if err != nil || rec != nil {
		return rec, err
	}
	var last *github.IssueEvent
	opts := &github.ListOptions{PerPage: 100}
	for page := 0; page < 20; page++ {
		events, resp, err := gh.Issues.ListIssueEvents(ctx, st.Ref.Owner, st.Ref.Repo, st.Ref.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list issue events of %s: %w", st.Ref, err)
		}
		for _, e := range events {
			if e.GetEvent() == "labeled" && e.GetLabel().GetName() == name {
				last = e
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if last == nil {
		return nil, nil
	}
	rec = &LabelRecord{Label: name, Actor: last.GetActor().GetLogin(), AddedAt: last.GetCreatedAt().Time}
	// GitHub's timestamps have whole seconds: compare at that precision. A label
	// from before the current head gets no head (it counts for none).
	if !rec.AddedAt.Before(st.HeadSeenAt.Truncate(time.Second)) {
		rec.HeadSHA = st.HeadSHA
	}
	return rec, s.rec.putLabel(ctx, st.Ref, rec)
}

// recordLabel remembers who added an exception label on which head commit.
func (s *Server) recordLabel(ctx context.Context, ref PRRef, name, actor, headSHA string) error {
	return s.rec.putLabel(ctx, ref, &LabelRecord{Label: name, Actor: actor, HeadSHA: headSHA, AddedAt: s.now().UTC()})
}

// voidExceptionLabels removes the exception labels added for an older head and
// says so in the comment: an exception is for the commit it was given on.
func (s *Server) voidExceptionLabels(ctx context.Context, gh *github.Client, st *PRState, oldHead string) error {
	kvs, err := s.store.List(ctx, bucketLabels, st.Ref.Key()+"/")
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		var rec LabelRecord
		if err := json.Unmarshal(kv.Value, &rec); err != nil || rec.HeadSHA == st.HeadSHA {
			continue
		}
		// go-github does not escape the name, and exception labels hold a "/".
		resp, err := gh.Issues.RemoveLabelForIssue(ctx, st.Ref.Owner, st.Ref.Repo, st.Ref.Number, url.PathEscape(rec.Label))
		if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
			return fmt.Errorf("remove label %s from %s: %w", rec.Label, st.Ref, err)
		}
		if err := s.rec.deleteLabel(ctx, st.Ref, rec.Label); err != nil {
			return err
		}
		given := "an earlier head"
		if rec.HeadSHA != "" {
			given = shortSHA(rec.HeadSHA)
		}
		// Notes are rendered as written: what a PR controls goes in through report.
		st.Notes = append(st.Notes, fmt.Sprintf("Removed %s (added by %s for %s): a push voids exception labels. An approver can add it again for %s.",
			report.Code(rec.Label), report.Escape(rec.Actor), report.Escape(given), shortSHA(st.HeadSHA)))
	}
	return nil
}

// isApprover says whether login is an approver: listed by name, or an active
// member of an approver team. Team answers are cached for a few minutes.
func (s *Server) isApprover(ctx context.Context, gh *github.Client, login string) (bool, error) {
	if login == "" {
		return false, nil
	}
	if s.cfg.IsApproverUser(login) {
		return true, nil
	}
	for _, team := range s.cfg.ApproverTeams {
		org, slug, _ := strings.Cut(team, "/")
		key := strings.ToLower(team + "|" + login)
		if v, ok := s.teamCache.get(key, s.now()); ok {
			if v {
				return true, nil
			}
			continue
		}
		m, resp, err := gh.Teams.GetTeamMembershipBySlug(ctx, org, slug, login)
		member := false
		switch {
		case err == nil:
			member = m.GetState() == "active"
		case resp != nil && resp.StatusCode == http.StatusNotFound:
		default:
			return false, fmt.Errorf("check membership of @%s in %s: %w", login, team, err)
		}
		s.teamCache.put(key, member, s.now())
		if member {
			return true, nil
		}
	}
	return false, nil
}

// ttlCache remembers yes/no answers for a short time.
type ttlCache struct {
	mu sync.Mutex
	m  map[string]ttlEntry
}

type ttlEntry struct {
	v  bool
	at time.Time
}

const teamCacheTTL = 5 * time.Minute

func (c *ttlCache) get(k string, now time.Time) (bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.Sub(e.at) > teamCacheTTL {
		return false, false
	}
	return e.v, true
}

func (c *ttlCache) put(k string, v bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]ttlEntry{}
	}
	c.m[k] = ttlEntry{v: v, at: now}
}
