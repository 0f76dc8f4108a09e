package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/redact"
	"github.com/shardgate/shardgate/report"
	"github.com/shardgate/shardgate/store"
)

// Store buckets of the bot's records.
const (
	bucketPRs          = "prs"
	bucketPlans        = "plans"
	bucketLabels       = "labels"
	bucketAttestations = "attestations"
	bucketVersions     = "metadata_versions"
	bucketCommands     = "commands"
)

// PRState is what shardgate remembers of a pull request between events.
type PRState struct {
	Ref     pullreq.Ref `json:"ref"`
	Author  string      `json:"author"`
	HeadSHA string      `json:"head_sha"`
	// HeadSeenAt is GitHub's time (whole seconds) when shardgate first saw
	// HeadSHA; Heads are the heads seen so far, oldest first (see headAt).
	HeadSeenAt time.Time      `json:"head_seen_at"`
	Heads      []HeadSighting `json:"heads,omitempty"`
	BaseRef    string         `json:"base_ref"`
	Draft      bool           `json:"draft"`
	CommentID  int64          `json:"comment_id,omitempty"`
	// Status is the line at the top of the comment (queued, planning, done…).
	Status string `json:"status"`
	// Notes are shown under the status until the head changes (labels removed…).
	Notes []string `json:"notes,omitempty"`
	// Projects are the project names planned for HeadSHA, in order.
	Projects []string `json:"projects,omitempty"`
	// ConfigError is a bad .shardgate.yaml on the base branch, shown instead of plans.
	ConfigError string `json:"config_error,omitempty"`
}

// PlanRecord is one project's plan of one head commit, with its last judgement.
type PlanRecord struct {
	Project     string               `json:"project"`
	Dir         string               `json:"dir"`
	Workspace   string               `json:"workspace"`
	VarFiles    []string             `json:"var_files,omitempty"`
	HeadSHA     string               `json:"head_sha"`
	ChangeSet   *planparse.ChangeSet `json:"change_set,omitempty"`
	Fingerprint string               `json:"fingerprint,omitempty"`
	Error       string               `json:"error,omitempty"`
	// Diagnostics are terraform's errors and warnings when Error is a failed
	// terraform command: summary, detail, file and line, redacted.
	Diagnostics []report.Diagnostic          `json:"diagnostics,omitempty"`
	Coordinator policy.Coordinator           `json:"coordinator"`
	Live        map[string]policy.LiveStream `json:"live,omitempty"`
	LockWaits   []report.LockWait            `json:"lock_waits"`
	Decision    policy.Decision              `json:"decision"`
	PlannedAt   time.Time                    `json:"planned_at"`
	CheckRunID  int64                        `json:"check_run_id,omitempty"`
	// TraceVarsMissing are the trace variables (traceability.go) the project's
	// root module does not declare; the report warns about them.
	TraceVarsMissing []string `json:"trace_vars_missing,omitempty"`
}

// LabelRecord is who added an exception label, and on which head commit, as
// the issue event EventID says (never a webhook's sender).
type LabelRecord struct {
	Label   string    `json:"label"`
	Actor   string    `json:"actor"`
	HeadSHA string    `json:"head_sha"`
	AddedAt time.Time `json:"added_at"`
	EventID int64     `json:"event_id,omitempty"`
}

// HeadSighting is a head commit and GitHub's time when shardgate first saw it.
// The push happened at or before Since, never after.
type HeadSighting struct {
	SHA   string    `json:"sha"`
	Since time.Time `json:"since"`
}

// maxHeadSightings bounds PRState.Heads: an approval older than the oldest
// kept head binds to no head, which only ever withholds it.
const maxHeadSightings = 50

// sawHead records that sha is the head, as GitHub said at time at.
func (st *PRState) sawHead(sha string, at time.Time) {
	at = at.UTC().Truncate(time.Second)
	if len(st.Heads) == 0 && st.HeadSHA != "" {
		// A record from before head sightings were kept.
		st.Heads = []HeadSighting{{SHA: st.HeadSHA, Since: st.HeadSeenAt.UTC().Truncate(time.Second)}}
	}
	st.HeadSHA, st.HeadSeenAt = sha, at
	st.Heads = append(st.Heads, HeadSighting{SHA: sha, Since: at})
	if n := len(st.Heads); n > maxHeadSightings {
		st.Heads = append([]HeadSighting(nil), st.Heads[n-maxHeadSightings:]...)
	}
}

// headAt is the head an approval made at GitHub time t counts for: the newest
// head shardgate saw strictly before t (whole seconds). Sightings follow
// pushes, so that head had been pushed when the approval was made; in the
// second of a sighting the order cannot be told, and the older head is taken.
// "" when t precedes every head shardgate knows.
func (st *PRState) headAt(t time.Time) string {
	t = t.UTC().Truncate(time.Second)
	heads := st.Heads
	if len(heads) == 0 && st.HeadSHA != "" {
		heads = []HeadSighting{{SHA: st.HeadSHA, Since: st.HeadSeenAt.UTC().Truncate(time.Second)}}
	}
	for i := len(heads) - 1; i >= 0; i-- {
		if t.After(heads[i].Since) {
			return heads[i].SHA
		}
	}
	return ""
}

// Fingerprint identifies a change set by what it would do to the coordinator:
// every non-noop change and every desired shard count, in a canonical order.
func Fingerprint(cs *planparse.ChangeSet) string {
	if cs == nil {
		return ""
	}
	var lines []string
	for _, c := range cs.Changes {
		if c.Action == planparse.ActionNoop {
			continue
		}
		lines = append(lines, fmt.Sprintf("change %s %s/%s %s %s %s %s %s", c.Address, c.StreamPrefix, c.ConsumerGroup,
			c.CoordinatorURL, c.Action, intText(c.ShardsBefore), intText(c.ShardsAfter), strings.Join(c.Unknown, ",")))
	}
	for _, d := range cs.Desired {
		lines = append(lines, fmt.Sprintf("desired %s %s/%s %d", d.Address, d.StreamPrefix, d.ConsumerGroup, d.ShardCount))
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

func intText(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// records wraps the store with the bot's typed records. Pull request states
// and plan records are scrubbed of secrets before they are stored (redact
// may be nil in tests).
type records struct {
	st     store.Store
	redact *redact.Redactor
}

func getJSON[T any](ctx context.Context, st store.Store, bucket, key string) (*T, error) {
	b, err := st.Get(ctx, bucket, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("decode %s record %s: %w", bucket, key, err)
	}
	return &v, nil
}

func putJSON(ctx context.Context, st store.Store, bucket, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s record %s: %w", bucket, key, err)
	}
	return st.Put(ctx, bucket, key, b)
}

func (r records) pr(ctx context.Context, ref pullreq.Ref) (*PRState, error) {
	return getJSON[PRState](ctx, r.st, bucketPRs, ref.Key())
}

func (r records) putPR(ctx context.Context, s *PRState) error {
	r.redact.Scrub(s)
	return putJSON(ctx, r.st, bucketPRs, s.Ref.Key(), s)
}

func planKey(ref pullreq.Ref, sha, project string) string {
	return ref.Key() + "@" + sha + "/" + project
}

func (r records) plan(ctx context.Context, ref pullreq.Ref, sha, project string) (*PlanRecord, error) {
	return getJSON[PlanRecord](ctx, r.st, bucketPlans, planKey(ref, sha, project))
}

func (r records) putPlan(ctx context.Context, ref pullreq.Ref, p *PlanRecord) error {
	r.redact.Scrub(p)
	return putJSON(ctx, r.st, bucketPlans, planKey(ref, p.HeadSHA, p.Project), p)
}

// plans returns the plan records of one head commit, by project name.
func (r records) plans(ctx context.Context, ref pullreq.Ref, sha string) ([]*PlanRecord, error) {
	kvs, err := r.st.List(ctx, bucketPlans, ref.Key()+"@"+sha+"/")
	if err != nil {
		return nil, err
	}
	out := make([]*PlanRecord, 0, len(kvs))
	for _, kv := range kvs {
		var p PlanRecord
		if err := json.Unmarshal(kv.Value, &p); err != nil {
			return nil, fmt.Errorf("decode plan record %s: %w", kv.Key, err)
		}
		out = append(out, &p)
	}
	return out, nil
}

func labelKey(ref pullreq.Ref, label string) string { return ref.Key() + "/" + label }

func (r records) label(ctx context.Context, ref pullreq.Ref, label string) (*LabelRecord, error) {
	return getJSON[LabelRecord](ctx, r.st, bucketLabels, labelKey(ref, label))
}

func (r records) putLabel(ctx context.Context, ref pullreq.Ref, l *LabelRecord) error {
	return putJSON(ctx, r.st, bucketLabels, labelKey(ref, l.Label), l)
}

func (r records) deleteLabel(ctx context.Context, ref pullreq.Ref, label string) error {
	return r.st.Delete(ctx, bucketLabels, labelKey(ref, label))
}

// attestationKey keeps one attestation per head and stream, so a late
// attestation of an older head never replaces one of the current head.
func attestationKey(ref pullreq.Ref, sha, prefix string) string {
	return ref.Key() + "/" + sha + "/" + prefix
}

// putAttestation keeps the latest attestation of a head and stream.
func (r records) putAttestation(ctx context.Context, ref pullreq.Ref, a policy.Attestation) error {
	return r.st.Update(ctx, bucketAttestations, attestationKey(ref, a.HeadSHA, a.StreamPrefix), func(old []byte) ([]byte, error) {
		var prev policy.Attestation
		if old != nil && json.Unmarshal(old, &prev) == nil && prev.CreatedAt.After(a.CreatedAt) {
			return old, nil
		}
		return json.Marshal(a)
	})
}

// commandKey names one version of a comment: its id and last edit. Its
// commands run once, however often its delivery comes.
func commandKey(ref pullreq.Ref, commentID int64, edited time.Time) string {
	return fmt.Sprintf("%s/comment/%d@%d", ref.Key(), commentID, edited.Unix())
}

// labelEventKey names one labeled issue event: it is judged once.
func labelEventKey(ref pullreq.Ref, eventID int64) string {
	return fmt.Sprintf("%s/label-event/%d", ref.Key(), eventID)
}

// handled says whether the comment version or event of key was handled.
func (r records) handled(ctx context.Context, key string) (bool, error) {
	_, err := r.st.Get(ctx, bucketCommands, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// markHandled records that key was handled, at the server's time.
func (r records) markHandled(ctx context.Context, key string, at time.Time) error {
	return putJSON(ctx, r.st, bucketCommands, key, at.UTC())
}

// attestations returns the pull request's attestations made on head sha.
func (r records) attestations(ctx context.Context, ref pullreq.Ref, sha string) ([]policy.Attestation, error) {
	kvs, err := r.st.List(ctx, bucketAttestations, ref.Key()+"/")
	if err != nil {
		return nil, err
	}
	var out []policy.Attestation
	for _, kv := range kvs {
		var a policy.Attestation
		if err := json.Unmarshal(kv.Value, &a); err != nil {
			return nil, fmt.Errorf("decode attestation %s: %w", kv.Key, err)
		}
		if a.HeadSHA == sha {
			out = append(out, a)
		}
	}
	return out, nil
}

// storeVersions keeps the highest metadataVersion seen per coordinator group
// in the store, so a restored Redis is noticed across restarts.
type storeVersions struct {
	st  store.Store
	url string
}

var _ coord.VersionMemory = storeVersions{}

func (v storeVersions) key(prefix, group string) string { return v.url + "|" + prefix + "/" + group }

// HighestMetadataVersion implements coord.VersionMemory.
func (v storeVersions) HighestMetadataVersion(ctx context.Context, prefix, group string) (int64, bool, error) {
	p, err := getJSON[int64](ctx, v.st, bucketVersions, v.key(prefix, group))
	if err != nil || p == nil {
		return 0, false, err
	}
	return *p, true, nil
}

// RecordMetadataVersion implements coord.VersionMemory.
func (v storeVersions) RecordMetadataVersion(ctx context.Context, prefix, group string, version int64) error {
	return v.st.Update(ctx, bucketVersions, v.key(prefix, group), func(old []byte) ([]byte, error) {
		var before int64
		if old != nil {
			if err := json.Unmarshal(old, &before); err != nil {
				return nil, err
			}
		}
		return json.Marshal(max(before, version))
	})
}
