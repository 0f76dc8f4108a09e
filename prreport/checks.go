package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/records"
	"github.com/shardgate/shardgate/report"
	"github.com/shardgate/shardgate/webhook"
)

// bucketChecks holds the check runs shardgate started and has not completed
// yet (openCheck), so that a start after a crash can finish them.
const bucketChecks = "check_runs"

// openCheck is a check run shardgate is creating or has created and not
// completed. It is written before the creation (ID 0 until GitHub answers),
// so no check run can be left in progress without a trace.
type openCheck struct {
	Ref  pullreq.Ref `json:"ref"`
	Name string      `json:"name"`
	SHA  string      `json:"sha"`
	ID   int64       `json:"id,omitempty"`
	// Job is the webhook job that started it; a start leaves the check to that
	// job while the job is queued or running.
	Job     string    `json:"job,omitempty"`
	Started time.Time `json:"started"`
}

func openCheckKey(ref pullreq.Ref, sha, name string) string {
	return ref.Key() + "@" + sha + "/" + name
}

var plainProject = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,64}$`)

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
	}
	if !plainProject.MatchString(project) {
		sum := sha256.Sum256([]byte(project))
		project = "sha256-" + hex.EncodeToString(sum[:16])
	}
	return "shardgate/" + kind + "/" + project + "/" + sha
}

// startCheck opens an in-progress check run on sha. A run of this check that
// is still in progress (created by an attempt whose answer was lost, or by a
// process that died) is taken over rather than a second one created.
func (s *Planner) startCheck(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string) (int64, error) {
	if strings.HasPrefix(name, CheckPlanPrefix) {
		s.supersedeChecks(ctx, gh, ref, name, sha)
	}
	ext := checkExternalID(name, sha)
	open := openCheck{Ref: ref, Name: name, SHA: sha, Job: webhook.JobID(ctx), Started: s.now().UTC()}
	key := openCheckKey(ref, sha, name)
	if err := records.PutJSON(ctx, s.store, bucketChecks, key, open); err != nil {
		return 0, err
	}
	id, err := s.findCheck(ctx, gh, ref, name, sha, true)
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
	return id, records.PutJSON(ctx, s.store, bucketChecks, key, open)
}

// finishCheck completes a check run, creating it when id is 0 and none of its
// runs exists yet. Title, summary and text are redacted.
func (s *Planner) finishCheck(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, id int64, name, sha, conclusion string, out *ghapp.CheckOutput) (int64, error) {
	run := ghapp.CheckRunUpdate{Name: name, Status: "completed", Conclusion: conclusion, CompletedAt: s.now(),
		Output: s.redactOutput(out), ExternalID: checkExternalID(name, sha)}
	if id == 0 {
		var err error
		if id, err = s.findCheck(ctx, gh, ref, name, sha, false); err != nil {
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
	return id, s.store.Delete(ctx, bucketChecks, openCheckKey(ref, sha, name))
}

// findCheck returns the newest run of this check on sha that shardgate made
// (by external_id), only among runs still in progress when openOnly; 0 if none.
func (s *Planner) findCheck(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string, openOnly bool) (int64, error) {
	ext := checkExternalID(name, sha)
	var found int64
	page := 0
	for read := 0; read < 10; read++ {
		runs, err := gh.ListCheckRuns(ctx, ref.Owner, ref.Repo, sha, name, s.cfg.AppID, page)
		if err != nil {
			return 0, fmt.Errorf("list check runs %q of %s on %s: %w", name, ref, shortSHA(sha), err)
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

// supersedeChecks completes the runs of this plan check that are still open
// on other commits of the pull request (a job retried after a push plans the
// new head): nothing else would ever finish them.
func (s *Planner) supersedeChecks(ctx context.Context, gh ghapp.Checks, ref pullreq.Ref, name, sha string) {
	kvs, err := s.store.List(ctx, bucketChecks, ref.Key()+"@")
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("list open check runs")
		return
	}
	for _, kv := range kvs {
		oc, err := decodeOpenCheck(kv.Value)
		if err != nil || oc.Name != name || oc.SHA == sha || oc.Ref != ref {
			continue
		}
		title := "Superseded by " + shortSHA(sha)
		summary := "shardgate stopped planning this commit: the pull request's head is now " + report.Code(shortSHA(sha)) + "."
		if oc.ID == 0 {
			if oc.ID, err = s.findCheck(ctx, gh, ref, name, oc.SHA, true); err != nil || oc.ID == 0 {
				_ = s.store.Delete(ctx, bucketChecks, kv.Key)
				continue
			}
		}
		if _, err := s.finishCheck(ctx, gh, ref, oc.ID, name, oc.SHA, "cancelled", &ghapp.CheckOutput{Title: title, Summary: summary}); err != nil {
			logctx.Logger(ctx).WithError(err).Warn("complete a superseded check run")
		}
	}
}

// redactOutput is a copy of out with every text redacted.
func (s *Planner) redactOutput(out *ghapp.CheckOutput) *ghapp.CheckOutput {
	if out == nil {
		return nil
	}
	return &ghapp.CheckOutput{Title: s.redact.Redact(out.Title), Summary: s.redact.Redact(out.Summary), Text: s.redact.Redact(out.Text)}
}

// applyCheckOutput is the apply check run's conclusion and output for an outcome.
func applyCheckOutput(state applyqueue.State, reason string) (string, *ghapp.CheckOutput) {
	conclusion, title := "success", "Applied"
	if state != applyqueue.Applied {
		conclusion, title = "failure", "Not applied"
	}
	return conclusion, &ghapp.CheckOutput{Title: title, Summary: truncate(report.CodeBlock(reason), maxCheckText)}
}
