package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// apply is an apply record (records.Audit) as the API shows it.
type apply struct {
	ID          string `json:"id"`
	Repository  string `json:"repository"`
	PullRequest int    `json:"pull_request"`
	Project     string `json:"project"`
	// SHA is the merge commit applied; ReviewedSHA the head judged.
	SHA         string `json:"sha"`
	ReviewedSHA string `json:"reviewed_sha"`
	Outcome     string `json:"outcome"`
	Reason      string `json:"reason,omitempty"`
	// AppliedBy is who started the apply: the approver whose
	// `/shardgate apply` queued it, else who merged.
	AppliedBy        string                    `json:"applied_by"`
	MergedBy         string                    `json:"merged_by"`
	Attempt          int                       `json:"attempt"`
	Exceptions       []string                  `json:"exceptions"`
	TerraformOutcome string                    `json:"terraform_outcome,omitempty"`
	RequestIDs       []string                  `json:"request_ids"`
	CoordinatorCalls []records.CoordinatorCall `json:"coordinator_calls"`
	FinishedAt       time.Time                 `json:"finished_at"`
}

// applies answers GET /api/v1/applies?since=RFC3339: the apply records of
// the applies that finished at or after since, in the order of the apply
// queue (merge order), each attempt its own record.
func (h *Handler) applies(w http.ResponseWriter, r *http.Request) (int, any, error) {
	s := r.URL.Query().Get("since")
	since, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, nil, fail(http.StatusBadRequest, fmt.Sprintf("since must be an RFC 3339 time (2026-01-02T15:04:05Z), got %q", s))
	}
	limit, after, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	kvs, err := h.o.Audits.List(r.Context(), records.BucketAudit, "")
	if err != nil {
		return 0, nil, err
	}
	// Keys are "Seq#attempt" with Seq zero-padded: their order is the
	// queue's, the attempts of one job together.
	slices.SortFunc(kvs, func(a, b store.KV) int { return compareAuditKeys(a.Key, b.Key) })
	p := page[apply]{}
	last, more := "", false
	for _, kv := range kvs {
		if after != "" && compareAuditKeys(kv.Key, after) <= 0 {
			continue
		}
		var a records.Audit
		if err := json.Unmarshal(kv.Value, &a); err != nil {
			return 0, nil, fmt.Errorf("decode apply record %s: %w", kv.Key, err)
		}
		if a.FinishedAt.Before(since) {
			continue
		}
		if len(p.Items) == limit {
			more = true
			break
		}
		p.Items = append(p.Items, applyView(kv.Key, a))
		last = kv.Key
	}
	finish(w, r, &p, more, last)
	return http.StatusOK, p, nil
}

func applyView(key string, a records.Audit) apply {
	by := a.AppliedBy
	if by == "" {
		by = a.MergedBy
	}
	v := apply{ID: key, Repository: a.Ref.FullName(), PullRequest: a.Ref.Number, Project: a.Project, SHA: a.MergeSHA,
		ReviewedSHA: a.ReviewedSHA, Outcome: a.Outcome, Reason: a.Reason, AppliedBy: by, MergedBy: a.MergedBy,
		Attempt: a.Attempt, Exceptions: a.Exceptions, TerraformOutcome: a.TerraformOutcome, RequestIDs: a.RequestIDs,
		CoordinatorCalls: a.CoordinatorCalls, FinishedAt: a.FinishedAt}
	if v.Exceptions == nil {
		v.Exceptions = []string{}
	}
	if v.RequestIDs == nil {
		v.RequestIDs = []string{}
	}
	if v.CoordinatorCalls == nil {
		v.CoordinatorCalls = []records.CoordinatorCall{}
	}
	return v
}

// compareAuditKeys orders "Seq#attempt" keys by Seq, then by attempt as a
// number (attempt 10 after attempt 9).
func compareAuditKeys(a, b string) int {
	as, an, _ := strings.Cut(a, "#")
	bs, bn, _ := strings.Cut(b, "#")
	if c := strings.Compare(as, bs); c != 0 {
		return c
	}
	ai, _ := strconv.Atoi(an)
	bi, _ := strconv.Atoi(bn)
	return ai - bi
}
