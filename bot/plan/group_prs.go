package plan

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store/records"
)

// compareGroup lists the files the group's head changes relative to base,
// and the commits between them.
func compareGroup(ctx context.Context, gh ghapp.MergeGroups, g Group, base string) (files, commits []string, err error) {
	page := 0
	for read := 0; read < 10; read++ {
		res, err := gh.Compare(ctx, g.Owner, g.Repo, base, g.HeadSHA, page)
		if err != nil {
			return nil, nil, fmt.Errorf("compare the merge group %s with %s: %w", pullreq.ShortSHA(g.HeadSHA), pullreq.ShortSHA(base), err)
		}
		for _, c := range res.Items {
			files = append(files, c.Files...)
			if commits == nil {
				commits = c.Commits
			}
		}
		if res.Next == 0 {
			break
		}
		page = res.Next
	}
	return files, commits, nil
}

// groupPRs are the pull requests whose changes the group's head lands: the
// one its head ref names, and the open ones into its base branch that GitHub
// associates with the commits (those of this group and of the groups ahead).
func (s *Planner) groupPRs(ctx context.Context, gh ghapp.MergeGroups, g Group, commits []string) ([]pullreq.Ref, error) {
	var numbers []int
	if m := queuePR.FindStringSubmatch(g.HeadRef); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			numbers = append(numbers, n)
		}
	}
	for i, sha := range commits {
		if i == maxGroupCommits {
			logctx.Logger(ctx).WithField("commits", len(commits)).Warn("merge group: pull requests looked up for its first commits only")
			break
		}
		prs, err := gh.PullRequestsOfCommit(ctx, g.Owner, g.Repo, sha, 0)
		if err != nil {
			return nil, fmt.Errorf("pull requests of %s: %w", pullreq.ShortSHA(sha), err)
		}
		for _, pr := range prs.Items {
			if pr.State == "open" && (pr.BaseRef == "" || pr.BaseRef == g.branch()) && !slices.Contains(numbers, pr.Number) {
				numbers = append(numbers, pr.Number)
			}
		}
	}
	slices.Sort(numbers)
	refs := make([]pullreq.Ref, 0, len(numbers))
	for _, n := range numbers {
		ref := g.ref()
		ref.Number = n
		refs = append(refs, ref)
	}
	return refs, nil
}

// groupApprovals are the exception labels and attestations valid on the
// pull requests in the group: each counted as on its own pull request (given
// by an approver who is not its author, on its current head).
func (s *Planner) groupApprovals(ctx context.Context, gh ghapp.API, prs []pullreq.Ref) ([]policy.Label, []policy.Attestation, error) {
	labels, atts := []policy.Label{}, []policy.Attestation{}
	for _, ref := range prs {
		st, err := s.Records.PR(ctx, ref)
		if err != nil {
			return nil, nil, err
		}
		if st == nil || st.HeadSHA == "" {
			continue // never planned: nothing given on it counts
		}
		ls, err := s.Labels.Judge(ctx, gh, st)
		if err != nil {
			return nil, nil, err
		}
		labels = append(labels, ls...)
		as, err := s.Records.Attestations(ctx, ref, st.HeadSHA)
		if err != nil {
			return nil, nil, err
		}
		atts = append(atts, as...)
	}
	return labels, atts, nil
}

// noteQueueVerdict adds to each pull request's comment how the group's
// commit was judged, replacing the line of an earlier group.
func (s *Planner) noteQueueVerdict(ctx context.Context, gh ghapp.API, g Group, prs []pullreq.Ref, gate prreport.Gate) error {
	mark := "✅"
	if !gate.Allowed() {
		mark = "❌"
	}
	note := queueNotePrefix + mark + " on `" + pullreq.ShortSHA(g.HeadSHA) + "`"
	for _, ref := range prs {
		if err := s.noteOn(ctx, gh, ref, note); err != nil {
			return err
		}
	}
	return nil
}

func (s *Planner) noteOn(ctx context.Context, gh ghapp.API, ref pullreq.Ref, note string) error {
	unlock := s.PRLocks.Lock(ref.Key())
	defer unlock()
	st, err := s.Records.PR(ctx, ref)
	if err != nil || st == nil || st.CommentID == 0 {
		return err
	}
	st.Notes = append(slices.DeleteFunc(st.Notes, func(n string) bool { return strings.HasPrefix(n, queueNotePrefix) }), note)
	plans, err := s.Records.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		return err
	}
	return s.Publish(ctx, gh, st, records.OrderPlans(plans, st.Projects))
}
