package prreport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// Check run name prefixes; the project name follows.
const (
	CheckPlanPrefix  = "shardgate/plan: "
	CheckApplyPrefix = "shardgate/apply: "
	// CheckConfigName is the check of a bad .shardgate.yaml.
	CheckConfigName = "shardgate/plan: configuration"
	// maxCheckText is GitHub's limit on a check run's output summary and text.
	maxCheckText = 65535
)

// BucketChecks holds the check runs shardgate started and has not completed
// yet (OpenCheck), so that a start after a crash can finish them.
const BucketChecks = "check_runs"

// Checks creates, finds and finishes shardgate's check runs (of the App
// appID), remembering the open ones in the store.
type Checks struct {
	store  store.Store
	appID  int64
	redact *redact.Redactor
	now    func() time.Time
}

// NewChecks keeps the open check runs in st; outputs are redacted by r.
func NewChecks(st store.Store, appID int64, r *redact.Redactor, now func() time.Time) *Checks {
	return &Checks{store: st, appID: appID, redact: r, now: now}
}

// OpenCheck is a check run shardgate is creating or has created and not
// completed. It is written before the creation (ID 0 until GitHub answers),
// so no check run can be left in progress without a trace.
type OpenCheck struct {
	Ref  pullreq.Ref `json:"ref"`
	Name string      `json:"name"`
	SHA  string      `json:"sha"`
	ID   int64       `json:"id,omitempty"`
	// Job is the webhook job that started it; a start leaves the check to that
	// job while the job is queued or running.
	Job     string    `json:"job,omitempty"`
	Started time.Time `json:"started"`
	// Key is its key in BucketChecks.
	Key string `json:"-"`
}

func openCheckKey(ref pullreq.Ref, sha, name string) string {
	return ref.Key() + "@" + sha + "/" + name
}

var plainProject = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._/-]{1,64}$`) })

// checkExternalID names a check run on GitHub by what it is about:
// "shardgate/<kind>/<project>/<sha>", the project hashed when it is long or
// holds other characters. A creation whose answer was lost is found by it.
func checkExternalID(name, sha string) string {
	kind, project := "plan", strings.TrimPrefix(name, CheckPlanPrefix)
	switch {
	case strings.HasPrefix(name, CheckApplyPrefix):
		kind, project = "apply", strings.TrimPrefix(name, CheckApplyPrefix)
	case name == CheckConfigName:
		kind, project = "config", "-"
	case name == CheckGateName:
		kind, project = "gate", "-"
	}
	if !plainProject().MatchString(project) {
		sum := sha256.Sum256([]byte(project))
		project = "sha256-" + hex.EncodeToString(sum[:16])
	}
	return "shardgate/" + kind + "/" + project + "/" + sha
}

// Start opens an in-progress check run on sha. A run of this check that
// is still in progress (created by an attempt whose answer was lost, or by a
// process that died) is taken over rather than a second one created.
func (s *Checks) Start(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string) (int64, error) {
	if strings.HasPrefix(name, CheckPlanPrefix) || name == CheckGateName {
		s.supersede(ctx, gh, ref, name, sha)
	}
	return s.start(ctx, gh, ref, name, sha)
}

// StartPreview is Start for a commit that is no pull request's head (a merge
// group's): the runs of this check on other commits are left as they are.
func (s *Checks) StartPreview(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string) (int64, error) {
	return s.start(ctx, gh, ref, name, sha)
}

func (s *Checks) start(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string) (int64, error) {
	ext := checkExternalID(name, sha)
	open := OpenCheck{Ref: ref, Name: name, SHA: sha, Job: webhook.JobID(ctx), Started: s.now().UTC()}
	key := openCheckKey(ref, sha, name)
	if err := records.PutJSON(ctx, s.store, BucketChecks, key, open); err != nil {
		return 0, err
	}
	id, err := s.Find(ctx, gh, ref, name, sha, true)
	if err != nil {
		return 0, err
	}
	if id == 0 {
		id, err = gh.CreateCheckRun(ctx, ref.Owner, ref.Repo, ghapp.CheckRunUpdate{
			Name: name, HeadSHA: sha, Status: "in_progress", ExternalID: ext})
		if err != nil {
			return 0, fmt.Errorf("create check run %q on %s: %w", name, ref, err)
		}
	}
	open.ID = id
	return id, records.PutJSON(ctx, s.store, BucketChecks, key, open)
}

// Finish completes a check run, creating it when id is 0 and none of its
// runs exists yet. Title, summary and text are redacted.
func (s *Checks) Finish(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, id int64, name, sha, conclusion string, out *ghapp.CheckOutput) (int64, error) {
	run := ghapp.CheckRunUpdate{Name: name, Status: "completed", Conclusion: conclusion, CompletedAt: s.now(),
		Output: s.redactOutput(out), ExternalID: checkExternalID(name, sha)}
	if id == 0 {
		var err error
		if id, err = s.Find(ctx, gh, ref, name, sha, false); err != nil {
			return 0, err
		}
	}
	if id == 0 {
		created := run
		created.HeadSHA = sha
		var err error
		if id, err = gh.CreateCheckRun(ctx, ref.Owner, ref.Repo, created); err != nil {
			return 0, fmt.Errorf("create check run %q on %s: %w", name, ref, err)
		}
	} else if err := gh.UpdateCheckRun(ctx, ref.Owner, ref.Repo, id, run); err != nil {
		return id, fmt.Errorf("update check run %q on %s: %w", name, ref, err)
	}
	return id, s.store.Delete(ctx, BucketChecks, openCheckKey(ref, sha, name))
}

// Find returns the newest run of this check on sha that shardgate made
// (by external_id), only among runs still in progress when openOnly; 0 if none.
func (s *Checks) Find(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string, openOnly bool) (int64, error) {
	ext := checkExternalID(name, sha)
	var found int64
	page := 0
	for read := 0; read < 10; read++ {
		runs, err := gh.ListCheckRuns(ctx, ref.Owner, ref.Repo, sha, name, s.appID, page)
		if err != nil {
			return 0, fmt.Errorf("list check runs %q of %s on %s: %w", name, ref, pullreq.ShortSHA(sha), err)
		}
		for _, cr := range runs.Items {
			if cr.ExternalID == ext && (!openOnly || cr.Status != "completed") {
				found = max(found, cr.ID)
			}
		}
		if runs.Next == 0 {
			break
		}
		page = runs.Next
	}
	return found, nil
}

// supersede completes the runs of this plan check that are still open
// on other commits of the pull request (a job retried after a push plans the
// new head): nothing else would ever finish them.
func (s *Checks) supersede(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string) {
	open, _, err := s.ListOpen(ctx, &ref)
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("list open check runs")
		return
	}
	for _, oc := range open {
		if oc.Name != name || oc.SHA == sha {
			continue
		}
		title := "Superseded by " + pullreq.ShortSHA(sha)
		summary := "shardgate stopped planning this commit: the pull request's head is now " + report.Code(pullreq.ShortSHA(sha)) + "."
		if oc.ID == 0 {
			if oc.ID, err = s.Find(ctx, gh, ref, name, oc.SHA, true); err != nil || oc.ID == 0 {
				if err := s.Forget(ctx, oc.Key); err != nil {
					logctx.Logger(ctx).WithError(err).Warn("forget a superseded check run")
				}
				continue
			}
		}
		if _, err := s.Finish(ctx, gh, ref, oc.ID, name, oc.SHA, "cancelled", &ghapp.CheckOutput{Title: title, Summary: summary}); err != nil {
			logctx.Logger(ctx).WithError(err).Warn("complete a superseded check run")
		}
	}
}

// redactOutput is a copy of out with every text redacted.
func (s *Checks) redactOutput(out *ghapp.CheckOutput) *ghapp.CheckOutput {
	if out == nil {
		return nil
	}
	red := &ghapp.CheckOutput{Title: s.redact.Redact(out.Title), Summary: s.redact.Redact(out.Summary), Text: s.redact.Redact(out.Text)}
	for _, a := range out.Annotations {
		a.Title, a.Message = s.redact.Redact(a.Title), s.redact.Redact(a.Message)
		red.Annotations = append(red.Annotations, a)
	}
	return red
}

// ListOpen lists the open check runs, of ref only when it is not nil, and the
// keys of the records that cannot be read.
func (s *Checks) ListOpen(ctx context.Context, ref *pullreq.Ref) (open []OpenCheck, unreadable []string, err error) {
	prefix := ""
	if ref != nil {
		prefix = ref.Key() + "@"
	}
	kvs, err := s.store.List(ctx, BucketChecks, prefix)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range kvs {
		var oc OpenCheck
		if err := json.Unmarshal(kv.Value, &oc); err != nil {
			unreadable = append(unreadable, kv.Key)
			continue
		}
		if ref != nil && oc.Ref != *ref {
			continue
		}
		oc.Key = kv.Key
		open = append(open, oc)
	}
	return open, unreadable, nil
}

// Open reads the open check run of key again; nil when it was finished.
func (s *Checks) Open(ctx context.Context, key string) (*OpenCheck, error) {
	oc, err := records.GetJSON[OpenCheck](ctx, s.store, BucketChecks, key)
	if err != nil || oc == nil {
		return nil, err
	}
	oc.Key = key
	return oc, nil
}

// Forget drops the record of an open check run (one GitHub never got).
func (s *Checks) Forget(ctx context.Context, key string) error {
	return s.store.Delete(ctx, BucketChecks, key)
}
