package plan

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Declared is what a project of another repository asks of streams, as
// shardgate's last record of it says.
type Declared struct {
	Repo, Project string
	// Source names the record: "last drift check".
	Source  string
	At      time.Time
	Desired []planparse.Desired
}

// DeclaredCounts lists what the projects of the repositories shardgate
// governs ask of streams, as its last records of them say.
type DeclaredCounts func(ctx context.Context) ([]Declared, error)

// maxPeerProjects bounds the projects planned at one commit only to compare
// their counts with the change's.
const maxPeerProjects = 20

// repoProjects are the projects a repository declares, all of them: the
// ones a commit's change does not touch included.
func repoProjects(cfg *repoconfig.Config) []repoconfig.Project { return cfg.Projects }

// streamOf is a desired count's stream key.
func streamOf(d *planparse.Desired) string {
	if d.Stream != "" {
		return d.Stream
	}
	return planparse.StreamKey(d.Coordinator, d.StreamPrefix)
}

// changedStreams are the streams a plan changes (noops left out).
func changedStreams(cs *planparse.ChangeSet) map[string]bool {
	out := map[string]bool{}
	if cs == nil {
		return out
	}
	for i := range cs.Changes {
		if c := &cs.Changes[i]; c.Action != planparse.ActionNoop {
			out[cmp.Or(c.Stream, planparse.StreamKey(c.Coordinator, c.StreamPrefix))] = true
		}
	}
	return out
}

// awaitsPeers reports whether judgeTogether may judge rec again: it changes
// streams another project may ask counts of. Its check run waits for that
// verdict.
func awaitsPeers(rec *records.Plan) bool {
	return rec.ChangeSet != nil && slices.ContainsFunc(rec.ChangeSet.Changes, func(c planparse.Change) bool { return c.Action != planparse.ActionNoop })
}

// judgeTogether sets each plan's Peers: the shard counts the commit's other
// projects ask of the streams the plan changes, so that conflicting_shard_count
// sees one stream's counts across projects. The other projects are the
// planned ones, every other project of the repository, planned at the same
// commit in checkout for this only (never reported, never applied), and the
// projects of other repositories as their last drift check recorded them. It
// returns the plans whose peers changed: they are judged again.
func (s *Planner) judgeTogether(ctx context.Context, ref pullreq.Ref, sha, checkout string, cfg *repoconfig.Config, plans []*records.Plan) ([]*records.Plan, error) {
	affected := map[string]bool{}
	for _, rec := range plans {
		for st := range changedStreams(rec.ChangeSet) {
			affected[st] = true
		}
	}
	if len(affected) == 0 {
		return nil, nil
	}
	elsewhere, err := s.declaredElsewhere(ctx, ref)
	if err != nil {
		return nil, err
	}
	sets := map[string]*planparse.ChangeSet{}
	var names []string
	for _, rec := range plans {
		if rec.ChangeSet != nil {
			sets[rec.Project] = rec.ChangeSet
			names = append(names, rec.Project)
		}
	}
	var others []repoconfig.Project
	for _, p := range repoProjects(cfg) {
		if _, done := sets[p.Name]; done || slices.ContainsFunc(plans, func(r *records.Plan) bool { return r.Project == p.Name }) {
			continue
		}
		if len(others) == maxPeerProjects {
			logctx.Logger(ctx).WithField("limit", maxPeerProjects).Warn("judged together: more projects than planned for comparison")
			break
		}
		others = append(others, p)
	}
	// The comparison's plans are terraform runs like the job's own: they
	// take the server's plan slots, never more than queue.workers at once.
	peerPlans := make([]*records.Plan, len(others))
	err = s.spread(ctx, others, func(ctx context.Context, i int) error {
		peerPlans[i] = &records.Plan{Project: others[i].Name, HeadSHA: sha}
		return s.planInSlot(ctx, ref, peerPlans[i], checkout, others[i], func(runner.LockWait) {})
	})
	if err != nil {
		return nil, err
	}
	for i, p := range others {
		peer := peerPlans[i]
		if peer.ChangeSet == nil {
			logctx.Logger(ctx).WithField("project", p.Name).WithField("error", peer.Error).Warn("judged together: a project could not be planned; its counts are not compared")
			continue
		}
		sets[p.Name] = peer.ChangeSet
		names = append(names, p.Name)
	}
	var changed []*records.Plan
	for _, rec := range plans {
		if rec.ChangeSet == nil {
			continue
		}
		mine := changedStreams(rec.ChangeSet)
		var peers []planparse.Desired
		for _, name := range names {
			if name == rec.Project {
				continue
			}
			for _, d := range sets[name].Desired {
				if mine[streamOf(&d)] {
					d.Address = "project " + name + ": " + d.Address
					peers = append(peers, d)
				}
			}
		}
		for _, d := range elsewhere {
			if mine[streamOf(&d)] {
				peers = append(peers, d)
			}
		}
		if !slices.Equal(peers, rec.Peers) {
			rec.Peers = peers
			changed = append(changed, rec)
		}
	}
	return changed, nil
}

// declaredElsewhere are the counts other repositories' projects ask, each
// addressed by where it comes from.
func (s *Planner) declaredElsewhere(ctx context.Context, ref pullreq.Ref) ([]planparse.Desired, error) {
	if s.Declared == nil {
		return nil, nil
	}
	all, err := s.Declared(ctx)
	if err != nil {
		return nil, fmt.Errorf("read what other repositories declare: %w", err)
	}
	var out []planparse.Desired
	for _, dc := range all {
		if strings.EqualFold(dc.Repo, ref.FullName()) {
			continue
		}
		for _, d := range dc.Desired {
			d.Address = fmt.Sprintf("%s project %s, as its %s of %s recorded: %s", dc.Repo, dc.Project, dc.Source, dc.At.UTC().Format("2006-01-02 15:04 MST"), d.Address)
			out = append(out, d)
		}
	}
	return out, nil
}
