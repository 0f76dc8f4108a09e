package statuspage

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/shardgate/shardgate/bot/drift"
)

// driftRecords shows the drift checks' records (drift.Store) on the page, each with
// the link of its issue built from the configured GitHub and the repository.
type driftRecords struct {
	store drift.Store
	web   string // GitHub's web address; "" leaves issues unlinked
}

// DriftRecords is the DriftSource of the drift checks' records; web is
// GitHub's web address (WebURL), "" to leave issues unlinked.
func DriftRecords(st drift.Store, web string) DriftSource { return driftRecords{store: st, web: web} }

// Drift implements DriftSource.
func (d driftRecords) Drift(ctx context.Context) ([]DriftRow, error) {
	recs, err := d.store.List(ctx)
	if err != nil {
		return nil, err
	}
	repos, err := d.store.Repos(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]DriftRow, 0, len(recs)+len(repos))
	// A check that failed for the whole repository (GitHub, its
	// configuration) left no project record: the repository's row says so.
	for _, r := range repos {
		if r.LastError != "" {
			out = append(out, DriftRow{Repo: r.FullName(), Status: string(drift.StatusError) + ": " + r.LastError, CheckedAt: r.FailedAt})
		}
	}
	for _, r := range recs {
		row := DriftRow{Repo: r.Repo, Project: r.Project, Status: string(r.Status), Since: r.Since, CheckedAt: r.CheckedAt}
		if r.Status == drift.StatusError && r.Error != "" {
			row.Status += ": " + r.Error
		}
		for _, g := range r.Groups {
			row.Groups = append(row.Groups, DriftGroup{Prefix: g.StreamPrefix, Group: g.ConsumerGroup, Desired: g.Desired, Live: g.Live})
		}
		if owner, name, ok := strings.Cut(r.Repo, "/"); ok && r.Issue > 0 && d.web != "" {
			row.IssueURL = fmt.Sprintf("%s/%s/%s/issues/%d", d.web, url.PathEscape(owner), url.PathEscape(name), r.Issue)
		} else if r.Issue > 0 {
			row.IssueURL = fmt.Sprintf("#%d", r.Issue)
		}
		out = append(out, row)
	}
	return out, nil
}
