package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
)

// Store wraps the store with the typed records. Pull request states and plan
// records are scrubbed of secrets before they are stored (redact may be nil in
// tests).
type Store struct {
	st     store.Store
	redact *redact.Redactor
}

// New keeps the records in st, scrubbed by r.
func New(st store.Store, r *redact.Redactor) Store { return Store{st: st, redact: r} }

// GetJSON reads the JSON record of key in bucket; nil when there is none.
func GetJSON[T any](ctx context.Context, st store.Store, bucket, key string) (*T, error) {
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

// PutJSON stores v as the JSON record of key in bucket.
func PutJSON(ctx context.Context, st store.Store, bucket, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s record %s: %w", bucket, key, err)
	}
	return st.Put(ctx, bucket, key, b)
}

// PR is the state of the pull request ref; nil when shardgate has none.
func (r Store) PR(ctx context.Context, ref pullreq.Ref) (*PRState, error) {
	return GetJSON[PRState](ctx, r.st, bucketPRs, ref.Key())
}

// PutPR stores the state of a pull request, scrubbed of secrets.
func (r Store) PutPR(ctx context.Context, s *PRState) error {
	r.redact.Scrub(s)
	return PutJSON(ctx, r.st, bucketPRs, s.Ref.Key(), s)
}

func planKey(ref pullreq.Ref, sha, project string) string {
	return ref.Key() + "@" + sha + "/" + project
}

// Plan is the plan record of project on head sha; nil when there is none.
func (r Store) Plan(ctx context.Context, ref pullreq.Ref, sha, project string) (*Plan, error) {
	return GetJSON[Plan](ctx, r.st, bucketPlans, planKey(ref, sha, project))
}

// PutPlan stores a plan record, scrubbed of secrets.
func (r Store) PutPlan(ctx context.Context, ref pullreq.Ref, p *Plan) error {
	r.redact.Scrub(p)
	return putPlanTx(ctx, r.st, ref, p)
}

// Plans returns the plan records of one head commit, by project name.
func (r Store) Plans(ctx context.Context, ref pullreq.Ref, sha string) ([]*Plan, error) {
	kvs, err := r.st.List(ctx, bucketPlans, ref.Key()+"@"+sha+"/")
	if err != nil {
		return nil, err
	}
	out := make([]*Plan, 0, len(kvs))
	for _, kv := range kvs {
		var p Plan
		if err := json.Unmarshal(kv.Value, &p); err != nil {
			return nil, fmt.Errorf("decode plan record %s: %w", kv.Key, err)
		}
		out = append(out, &p)
	}
	return out, nil
}

func labelKey(ref pullreq.Ref, label string) string { return ref.Key() + "/" + label }

// Label is the record of who added label; nil when there is none.
func (r Store) Label(ctx context.Context, ref pullreq.Ref, label string) (*Label, error) {
	return GetJSON[Label](ctx, r.st, bucketLabels, labelKey(ref, label))
}

// PutLabel stores who added a label.
func (r Store) PutLabel(ctx context.Context, ref pullreq.Ref, l *Label) error {
	return PutJSON(ctx, r.st, bucketLabels, labelKey(ref, l.Label), l)
}

// DeleteLabel forgets who added label (it was removed).
func (r Store) DeleteLabel(ctx context.Context, ref pullreq.Ref, label string) error {
	return r.st.Delete(ctx, bucketLabels, labelKey(ref, label))
}

// attestationKey keeps one attestation per head and stream, so a late
// attestation of an older head never replaces one of the current head.
func attestationKey(ref pullreq.Ref, sha, prefix string) string {
	return ref.Key() + "/" + sha + "/" + prefix
}

// PutAttestation keeps the latest attestation of a head and stream.
func (r Store) PutAttestation(ctx context.Context, ref pullreq.Ref, a policy.Attestation) error {
	return r.st.Update(ctx, bucketAttestations, attestationKey(ref, a.HeadSHA, a.StreamPrefix), func(old []byte) ([]byte, error) {
		var prev policy.Attestation
		if old != nil && json.Unmarshal(old, &prev) == nil && prev.CreatedAt.After(a.CreatedAt) {
			return old, nil
		}
		return json.Marshal(a)
	})
}

// RevokeCommentAttestations deletes every attestation of the pull request
// that comment commentID gave, whatever its head, and returns them.
func (r Store) RevokeCommentAttestations(ctx context.Context, ref pullreq.Ref, commentID int64) ([]policy.Attestation, error) {
	kvs, err := r.st.List(ctx, bucketAttestations, ref.Key()+"/")
	if err != nil {
		return nil, err
	}
	var revoked []policy.Attestation
	for _, kv := range kvs {
		var a policy.Attestation
		if json.Unmarshal(kv.Value, &a) != nil || a.CommentID != commentID || commentID == 0 {
			continue
		}
		if err := r.st.Delete(ctx, bucketAttestations, kv.Key); err != nil {
			return nil, err
		}
		revoked = append(revoked, a)
	}
	return revoked, nil
}

// CommandKey names one version of a comment: its id and last edit. Its
// commands run once, however often its delivery comes.
func CommandKey(ref pullreq.Ref, commentID int64, edited time.Time) string {
	return fmt.Sprintf("%s/comment/%d@%d", ref.Key(), commentID, edited.Unix())
}

// LabelEventKey names one labeled issue event: it is judged once.
func LabelEventKey(ref pullreq.Ref, eventID int64) string {
	return fmt.Sprintf("%s/label-event/%d", ref.Key(), eventID)
}

// Handled says whether the comment version or event of key was handled.
func (r Store) Handled(ctx context.Context, key string) (bool, error) {
	_, err := r.st.Get(ctx, bucketCommands, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// MarkHandled records that key was handled, at the server's time.
func (r Store) MarkHandled(ctx context.Context, key string, at time.Time) error {
	return PutJSON(ctx, r.st, bucketCommands, key, at.UTC())
}

// Attestations returns the pull request's attestations made on head sha.
func (r Store) Attestations(ctx context.Context, ref pullreq.Ref, sha string) ([]policy.Attestation, error) {
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

// PRWithHead finds the pull request of repository owner/repo whose head
// shardgate last saw at sha; 0 when there is none.
func (r Store) PRWithHead(ctx context.Context, owner, repo, sha string) (int, error) {
	kvs, err := r.st.List(ctx, bucketPRs, owner+"/"+repo+"#")
	if err != nil {
		return 0, err
	}
	for _, kv := range kvs {
		var st PRState
		if json.Unmarshal(kv.Value, &st) == nil && st.HeadSHA == sha {
			return st.Ref.Number, nil
		}
	}
	return 0, nil
}

// bucketGroups holds how each merge group's head was judged
// (GroupJudgement), by repository and head commit.
const bucketGroups = "merge_groups"

// GroupJudgement is how shardgate judged a merge group's head commit: the
// aggregate verdict and each project's plan. An apply of a pull request
// whose merge commit is that head is compared with it.
type GroupJudgement struct {
	HeadSHA string `json:"head_sha"`
	// Allowed is the `shardgate` check's verdict on the head.
	Allowed bool `json:"allowed"`
	// Plans are the projects the group changes, as planned and judged on
	// its head.
	Plans []*Plan `json:"plans"`
}

// Plan is the judged plan of project, nil when the group did not plan it.
func (j *GroupJudgement) Plan(project string) *Plan {
	for _, p := range j.Plans {
		if p.Project == project {
			return p
		}
	}
	return nil
}

func groupKey(repo pullreq.Ref, sha string) string { return repo.Owner + "/" + repo.Repo + "@" + sha }

// GroupJudgement is how the merge group whose head is sha, in repo's
// repository, was judged; nil when no group with that head was.
func (r Store) GroupJudgement(ctx context.Context, repo pullreq.Ref, sha string) (*GroupJudgement, error) {
	return GetJSON[GroupJudgement](ctx, r.st, bucketGroups, groupKey(repo, sha))
}

// PutGroupJudgement stores how a merge group's head was judged, scrubbed of
// secrets.
func (r Store) PutGroupJudgement(ctx context.Context, repo pullreq.Ref, j *GroupJudgement) error {
	r.redact.Scrub(j)
	return PutJSON(ctx, r.st, bucketGroups, groupKey(repo, j.HeadSHA), j)
}
