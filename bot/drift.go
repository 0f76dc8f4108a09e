package bot

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/shardgate/shardgate/drift"
	"github.com/shardgate/shardgate/livestate"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/statuspage"
)

// driftLive gives drift checks the live state the plan flow reads, through the
// same coordinator clients (configured URL prefixes and credentials only).
type driftLive struct{ c *livestate.Coordinators }

var _ drift.LiveReader = driftLive{}

// LiveState implements drift.LiveReader.
func (l driftLive) LiveState(ctx context.Context, cs *planparse.ChangeSet) (policy.Coordinator, map[string]policy.LiveStream) {
	return l.c.Read(ctx, cs)
}

// driftRows shows the drift checks' records on the status page, each with
// the link of its issue built from the configured GitHub and the repository.
type driftRows struct {
	store drift.Store
	web   string // GitHub's web address; "" leaves issues unlinked
}

var _ statuspage.DriftSource = driftRows{}

// Drift implements statuspage.DriftSource.
func (d driftRows) Drift(ctx context.Context) ([]statuspage.DriftRow, error) {
	recs, err := d.store.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]statuspage.DriftRow, 0, len(recs))
	for _, r := range recs {
		row := statuspage.DriftRow{Repo: r.Repo, Project: r.Project, Status: string(r.Status), Since: r.Since, CheckedAt: r.CheckedAt}
		if r.Status == drift.StatusError && r.Error != "" {
			row.Status += ": " + r.Error
		}
		for _, g := range r.Groups {
			row.Groups = append(row.Groups, statuspage.DriftGroup{Prefix: g.StreamPrefix, Group: g.ConsumerGroup, Desired: g.Desired, Live: g.Live})
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
