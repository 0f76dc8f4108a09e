package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/store"
)

// RecentPlanSlots is how many plan writes the recent-plans ring keeps: the
// status page lists the recent plans from it without reading the history.
const RecentPlanSlots = 64

const (
	bucketRecentPlans = "plans_recent" // slot (two digits) → recentPlan JSON; recentNextKey → next slot number
	recentNextKey     = "next"
)

// recentPlan is one slot of the ring: which plan record was written.
type recentPlan struct {
	Ref     pullreq.Ref `json:"ref"`
	HeadSHA string      `json:"head_sha"`
	Project string      `json:"project"`
}

// RecentPlan is a plan record with the pull request it belongs to.
type RecentPlan struct {
	Ref pullreq.Ref
	*Plan
}

// putPlanTx writes a plan record and its slot in the ring, in one transaction.
func putPlanTx(ctx context.Context, st store.Store, ref pullreq.Ref, p *Plan) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode plan record: %w", err)
	}
	slot, err := json.Marshal(recentPlan{Ref: ref, HeadSHA: p.HeadSHA, Project: p.Project})
	if err != nil {
		return fmt.Errorf("encode recent plan: %w", err)
	}
	return st.Tx(ctx, func(tx store.RecordTx) error {
		if err := tx.Put(bucketPlans, planKey(ref, p.HeadSHA, p.Project), raw); err != nil {
			return err
		}
		n := 0
		old, err := tx.Get(bucketRecentPlans, recentNextKey)
		switch {
		case err == nil:
			if n, err = strconv.Atoi(string(old)); err != nil {
				n = 0 // a damaged counter restarts the ring; nothing else depends on it
			}
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if err := tx.Put(bucketRecentPlans, recentNextKey, []byte(strconv.Itoa((n+1)%RecentPlanSlots))); err != nil {
			return err
		}
		return tx.Put(bucketRecentPlans, fmt.Sprintf("%02d", n%RecentPlanSlots), slot)
	})
}

// RecentPlans returns up to n of the plan records written last, newest
// first, one per pull request, head and project (a plan judged again is
// listed once). It reads the ring and the records it names, never the
// whole history.
func (r Store) RecentPlans(ctx context.Context, n int) ([]RecentPlan, error) {
	kvs, err := r.st.List(ctx, bucketRecentPlans, "")
	if err != nil {
		return nil, fmt.Errorf("list recent plans: %w", err)
	}
	seen := map[string]bool{}
	var out []RecentPlan
	for _, kv := range kvs {
		var rp recentPlan
		if kv.Key == recentNextKey || json.Unmarshal(kv.Value, &rp) != nil {
			continue
		}
		key := planKey(rp.Ref, rp.HeadSHA, rp.Project)
		if seen[key] {
			continue
		}
		seen[key] = true
		p, err := r.Plan(ctx, rp.Ref, rp.HeadSHA, rp.Project)
		if err != nil {
			return nil, fmt.Errorf("read recent plan %s: %w", key, err)
		}
		if p != nil {
			out = append(out, RecentPlan{Ref: rp.Ref, Plan: p})
		}
	}
	slices.SortStableFunc(out, func(a, b RecentPlan) int { return b.PlannedAt.Compare(a.PlannedAt) })
	return out[:min(n, len(out))], nil
}

// maxAuditBlocks bounds RecentAudits to the last thousand apply jobs.
const maxAuditBlocks = 10

// RecentAudits returns the audit records of up to n of the apply jobs
// numbered at or below lastSeq (the apply queue's last Seq), newest first,
// every attempt of a job listed. It lists the records by Seq prefix, a
// hundred jobs at a time and at most the last thousand jobs, never the
// whole history.
func (r Store) RecentAudits(ctx context.Context, lastSeq string, n int) ([]Audit, error) {
	last, err := strconv.ParseUint(lastSeq, 10, 64)
	if err != nil || n <= 0 {
		return nil, nil
	}
	width := len(lastSeq)
	if width < 3 {
		return nil, fmt.Errorf("list recent applies: %q is not an apply queue Seq", lastSeq)
	}
	var out []Audit
	for block, scanned := last/100, 0; len(out) < n && scanned < maxAuditBlocks; block, scanned = block-1, scanned+1 {
		prefix := fmt.Sprintf("%0*d", width-2, block)
		kvs, err := r.st.List(ctx, BucketAudit, prefix)
		if err != nil {
			return nil, fmt.Errorf("list recent applies: %w", err)
		}
		for i := len(kvs) - 1; i >= 0 && len(out) < n; i-- {
			var a Audit
			if err := json.Unmarshal(kvs[i].Value, &a); err != nil {
				return nil, fmt.Errorf("decode audit record %s: %w", kvs[i].Key, err)
			}
			if !strings.HasPrefix(kvs[i].Key, prefix) {
				continue
			}
			out = append(out, a)
		}
		if block == 0 {
			break
		}
	}
	return out, nil
}
