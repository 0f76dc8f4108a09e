package coord

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// GroupConvergence is one group's progress towards a completed scale.
type GroupConvergence struct {
	ConsumerGroup       string
	RoutingShardCount   int
	MetadataVersion     int64 // the highest this poll read
	GroupState          GroupState
	LiveMembers         int
	MigrationID         string         // active migration, "" when none
	MigrationState      MigrationState // of the active migration
	RevokingMembers     []string
	InvariantViolations []string
	// Pending says what is still missing; empty means this group is done.
	Pending []string
}

// Done reports that the group meets every "complete and safe" condition.
func (g GroupConvergence) Done() bool { return len(g.Pending) == 0 }

// ConvergenceStatus is one poll of WaitConverged.
type ConvergenceStatus struct {
	Prefix string
	Target int
	Poll   int
	Groups []GroupConvergence
	// Converged is true on the last poll of a successful wait.
	Converged bool
}

// PendingSummary lists what is still missing, group by group.
func (s ConvergenceStatus) PendingSummary() string {
	if len(s.Groups) == 0 {
		return "no coordinator groups for the prefix"
	}
	var parts []string
	for _, g := range s.Groups {
		if !g.Done() {
			parts = append(parts, g.ConsumerGroup+": "+strings.Join(g.Pending, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// NotConvergedError is returned when the context ends before the stream converged.
type NotConvergedError struct {
	Last ConvergenceStatus
	Err  error
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("wait for %s to converge on %d shards: %v (still pending: %s)",
		e.Last.Prefix, e.Last.Target, e.Err, e.Last.PendingSummary())
}

func (e *NotConvergedError) Unwrap() error { return e.Err }

// WaitConverged polls until every group of prefix is "complete and safe" at
// target (coordinator.md §2): producer routing shows target, no active migration,
// state STABLE (EMPTY for a group without live members), no revoke in progress
// and no invariant violation. Routing alone is not enough: it flips at ACTIVE.
// progress (may be nil) gets every poll. A coordinator error ends the wait; the
// context ending gives a *NotConvergedError naming what was still pending.
// Every metadataVersion read is compared with the highest one seen (the
// client's VersionMemory, then this wait's reads) and recorded: a version that
// went down ends the wait at once with a *MetadataRegressedError.
func (c *Client) WaitConverged(ctx context.Context, prefix string, target int, progress func(ConvergenceStatus)) error {
	last := ConvergenceStatus{Prefix: prefix, Target: target}
	watch := newVersionWatch(c, prefix)
	for poll := 1; ; poll++ {
		st, err := c.convergence(ctx, prefix, target, watch)
		var reg *MetadataRegressedError
		if errors.As(err, &reg) {
			return fmt.Errorf("wait for %s to converge on %d shards: %w", prefix, target, err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return &NotConvergedError{Last: last, Err: ctx.Err()}
			}
			return fmt.Errorf("poll convergence of %s: %w", prefix, err)
		}
		st.Poll = poll
		last = st
		done := len(st.Groups) > 0
		for _, g := range st.Groups {
			done = done && g.Done()
		}
		st.Converged = done
		if progress != nil {
			progress(st)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return &NotConvergedError{Last: last, Err: ctx.Err()}
		case <-time.After(c.pollInterval):
		}
	}
}

func (c *Client) convergence(ctx context.Context, prefix string, target int, watch *versionWatch) (ConvergenceStatus, error) {
	st := ConvergenceStatus{Prefix: prefix, Target: target}
	all, err := c.Groups(ctx)
	if err != nil {
		return st, err
	}
	for _, g := range all {
		if g.StreamPrefix != prefix {
			continue
		}
		gc, err := c.groupConvergence(ctx, g, target, watch)
		if err != nil {
			return st, err
		}
		st.Groups = append(st.Groups, gc)
	}
	sort.Slice(st.Groups, func(i, j int) bool { return st.Groups[i].ConsumerGroup < st.Groups[j].ConsumerGroup })
	return st, nil
}

func (c *Client) groupConvergence(ctx context.Context, g Group, target int, watch *versionWatch) (GroupConvergence, error) {
	p, name := g.StreamPrefix, g.ConsumerGroup
	gc := GroupConvergence{ConsumerGroup: name, GroupState: g.State}
	if err := watch.observe(ctx, name, g.MetadataVersion); err != nil {
		return gc, err
	}
	routing, err := c.ProducerRouting(ctx, p, name)
	if err != nil {
		return gc, err
	}
	if err := watch.observe(ctx, name, routing.MetadataVersion); err != nil {
		return gc, err
	}
	gc.MetadataVersion = max(g.MetadataVersion, routing.MetadataVersion)
	asg, err := c.Assignments(ctx, p, name)
	if err != nil {
		return gc, err
	}
	members, err := c.Members(ctx, p, name)
	if err != nil {
		return gc, err
	}
	for _, m := range members {
		if m.State.Live() {
			gc.LiveMembers++
		}
	}
	gc.RoutingShardCount = routing.ShardCount
	if g.ActiveMigration != nil {
		gc.MigrationID, gc.MigrationState = g.ActiveMigration.ReshardingID, g.ActiveMigration.State
	}
	for member, shards := range asg.RevokeProgress {
		if len(shards) > 0 {
			gc.RevokingMembers = append(gc.RevokingMembers, member)
		}
	}
	sort.Strings(gc.RevokingMembers)
	gc.InvariantViolations = asg.InvariantViolations

	if routing.ShardCount != target {
		gc.Pending = append(gc.Pending, fmt.Sprintf("routing shows %d shards", routing.ShardCount))
	}
	if gc.MigrationID != "" {
		gc.Pending = append(gc.Pending, fmt.Sprintf("migration %s is %s", gc.MigrationID, gc.MigrationState))
	}
	wantState := GroupStable
	if gc.LiveMembers == 0 {
		wantState = GroupEmpty
	}
	if g.State != wantState {
		gc.Pending = append(gc.Pending, fmt.Sprintf("group state %s, want %s", g.State, wantState))
	}
	if len(gc.RevokingMembers) > 0 {
		gc.Pending = append(gc.Pending, "revoke in progress on "+strings.Join(gc.RevokingMembers, ","))
	}
	if len(gc.InvariantViolations) > 0 {
		gc.Pending = append(gc.Pending, "invariant violations: "+strings.Join(gc.InvariantViolations, "; "))
	}
	return gc, nil
}
