package coord

import (
	"context"
	"fmt"
	"strings"
)

// FindingKind names one preflight problem.
type FindingKind string

// Preflight findings.
const (
	// FindingActiveMigration: a group of the prefix has an active migration, so a
	// stream scale would get 409 ACTIVE_MIGRATION_EXISTS.
	FindingActiveMigration FindingKind = "ACTIVE_MIGRATION"
	// FindingNoLiveMembers: a scale-out on a group without live members never
	// leaves ACTIVE and blocks every later scale of the stream (coordinator.md §6.7).
	FindingNoLiveMembers FindingKind = "NO_LIVE_MEMBERS"
	// FindingMetadataRegressed: metadataVersion is lower than seen before, a sign
	// Redis was restored to older data (coordinator.md §6.12).
	FindingMetadataRegressed FindingKind = "METADATA_VERSION_REGRESSED"
	// FindingShardCountMismatch: the groups of the prefix publish different counts.
	// Not blocking: the next stream scale brings them all to the target.
	FindingShardCountMismatch FindingKind = "SHARD_COUNT_MISMATCH"
)

// Finding is one preflight result line.
type Finding struct {
	Kind          FindingKind
	ConsumerGroup string // empty for stream-wide findings
	Blocking      bool
	Message       string
}

// PreflightResult is what Preflight found about scaling a prefix to a target.
type PreflightResult struct {
	Stream       *Stream
	TargetShards int
	Findings     []Finding
}

// OK reports that no blocking finding was made.
func (r *PreflightResult) OK() bool {
	for _, f := range r.Findings {
		if f.Blocking {
			return false
		}
	}
	return true
}

// Blocking returns the blocking findings.
func (r *PreflightResult) Blocking() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Blocking {
			out = append(out, f)
		}
	}
	return out
}

// Summary is a one-line description of the blocking findings ("" when OK).
func (r *PreflightResult) Summary() string {
	var parts []string
	for _, f := range r.Blocking() {
		parts = append(parts, f.Message)
	}
	return strings.Join(parts, "; ")
}

// Preflight reads the prefix's live state and reports what would make scaling it
// to targetShards fail or hang. It errors only when the coordinator cannot be read.
func (c *Client) Preflight(ctx context.Context, prefix string, targetShards int) (*PreflightResult, error) {
	s, err := c.Stream(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("preflight %s: %w", prefix, err)
	}
	r := &PreflightResult{Stream: s, TargetShards: targetShards}
	for _, g := range s.Groups {
		if m := g.ActiveMigration; m != nil {
			r.Findings = append(r.Findings, Finding{
				Kind: FindingActiveMigration, ConsumerGroup: g.ConsumerGroup, Blocking: true,
				Message: fmt.Sprintf("%s/%s has active migration %s (%s, %d -> %d shards)",
					prefix, g.ConsumerGroup, m.ReshardingID, m.State, m.FromShardCount, m.ToShardCount),
			})
		}
		if targetShards > g.ShardCount && g.LiveMembers == 0 {
			r.Findings = append(r.Findings, Finding{
				Kind: FindingNoLiveMembers, ConsumerGroup: g.ConsumerGroup, Blocking: true,
				Message: fmt.Sprintf("%s/%s has no live members: a scale-out %d -> %d would never leave ACTIVE",
					prefix, g.ConsumerGroup, g.ShardCount, targetShards),
			})
		}
		if g.MetadataRegressed() {
			r.Findings = append(r.Findings, Finding{
				Kind: FindingMetadataRegressed, ConsumerGroup: g.ConsumerGroup, Blocking: true,
				Message: fmt.Sprintf("%s/%s metadataVersion went back from %d to %d (Redis restored?)",
					prefix, g.ConsumerGroup, g.HighestSeenMetadataVersion, g.MetadataVersion),
			})
		}
	}
	if counts := s.ShardCounts(); len(counts) > 1 {
		r.Findings = append(r.Findings, Finding{
			Kind:    FindingShardCountMismatch,
			Message: fmt.Sprintf("groups of %s publish different shard counts %v", prefix, counts),
		})
	}
	return r, nil
}
