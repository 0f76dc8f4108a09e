package coord

import (
	"context"
	"fmt"
	"sort"
)

// Stream is the live state of every coordinator group under one stream prefix.
type Stream struct {
	Prefix string
	// Groups are sorted by name, the order the coordinator scales them in.
	Groups []StreamGroup
}

// StreamGroup is one group of a Stream.
type StreamGroup struct {
	ConsumerGroup   string
	ShardCount      int
	State           GroupState
	MetadataVersion int64
	// HighestSeenMetadataVersion is what VersionMemory held before this read
	// (0 with SeenBefore false on first sight).
	HighestSeenMetadataVersion int64
	SeenBefore                 bool
	ActiveMigration            *Migration
	LiveMembers                int
	Members                    []Member
}

// MetadataRegressed reports a metadataVersion lower than one seen earlier.
func (g StreamGroup) MetadataRegressed() bool {
	return g.SeenBefore && g.MetadataVersion < g.HighestSeenMetadataVersion
}

// ShardCounts returns the distinct shard counts of the groups, ascending.
func (s *Stream) ShardCounts() []int {
	seen := map[int]bool{}
	var out []int
	for _, g := range s.Groups {
		if !seen[g.ShardCount] {
			seen[g.ShardCount] = true
			out = append(out, g.ShardCount)
		}
	}
	sort.Ints(out)
	return out
}

// Stream reads every group of prefix (GET /monitoring/groups filtered on
// streamPrefix, then each group's members) and records each metadataVersion in
// the client's VersionMemory. A prefix with no groups gives an empty Stream.
func (c *Client) Stream(ctx context.Context, prefix string) (*Stream, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list coordinator groups: %w", err)
	}
	s := &Stream{Prefix: prefix}
	for _, g := range all {
		if g.StreamPrefix != prefix {
			continue
		}
		members, err := c.Members(ctx, prefix, g.ConsumerGroup)
		if err != nil {
			return nil, fmt.Errorf("list members of %s/%s: %w", prefix, g.ConsumerGroup, err)
		}
		sg := StreamGroup{
			ConsumerGroup:   g.ConsumerGroup,
			ShardCount:      g.ShardCount,
			State:           g.State,
			MetadataVersion: g.MetadataVersion,
			ActiveMigration: g.ActiveMigration,
			Members:         members,
		}
		for _, m := range members {
			if m.State.Live() {
				sg.LiveMembers++
			}
		}
		prev, seen, err := c.versions.HighestMetadataVersion(ctx, prefix, g.ConsumerGroup)
		if err != nil {
			return nil, fmt.Errorf("read remembered metadataVersion of %s/%s: %w", prefix, g.ConsumerGroup, err)
		}
		sg.HighestSeenMetadataVersion, sg.SeenBefore = prev, seen
		if err := c.versions.RecordMetadataVersion(ctx, prefix, g.ConsumerGroup, g.MetadataVersion); err != nil {
			return nil, fmt.Errorf("record metadataVersion of %s/%s: %w", prefix, g.ConsumerGroup, err)
		}
		s.Groups = append(s.Groups, sg)
	}
	sort.Slice(s.Groups, func(i, j int) bool { return s.Groups[i].ConsumerGroup < s.Groups[j].ConsumerGroup })
	return s, nil
}
