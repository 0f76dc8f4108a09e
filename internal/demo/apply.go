package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/shardgate/shardgate/bot/githubtest"
	"github.com/shardgate/shardgate/prreport"
	"github.com/shardgate/shardgate/store"
)

// startGrace is how long the apply's check run may take to appear after the
// merge: the apply creates it first thing, so its absence means no apply
// is coming rather than a slow one.
const startGrace = 30 * time.Second

// settleFor bounds the wait for the comment's last edit after the apply's
// check run completed; settleQuiet is how long it must stay unchanged.
const (
	settleFor   = 10 * time.Second
	settleQuiet = time.Second
)

// pollEvery is how often the apply's progress is read from the fake GitHub.
const pollEvery = 250 * time.Millisecond

// mergeAndApply merges the pull request and follows shardgate's apply on
// merge until its check run completes.
func (w *world) mergeAndApply(ctx context.Context, p printer, res *Result, number, total int) error {
	p.step(4, total, fmt.Sprintf("@%s merges #%d into main", approver, number))
	auditMark := len(w.sim.Audit())
	w.repo.Checkout("main")
	sha := w.repo.Merge(branch, fmt.Sprintf("Merge pull request #%d from %s/%s", number, owner, branch))
	res.MergeSHA = sha
	w.gh.MergePR(owner, repoName, number, approver, sha)
	payload := w.gh.PRPayload(owner, repoName, number)
	payload.Sender = approver
	p.note("merge commit %s on main (git merge --no-ff %s); pull_request closed, merged: true", short(sha), branch)
	jobID, err := w.send("pull_request", githubtest.PullRequestClosedMergedSynthetic(w.tb, payload, approver, sha, w.clock.Now()))
	if err != nil {
		return err
	}

	p.step(5, total, "shardgate applies the merge commit and waits for the coordinator to converge")
	conclusion, err := w.followApply(ctx, p, number, sha, jobID, res.Steps[len(res.Steps)-1].Comment)
	res.ApplyCheck = conclusion
	res.Steps = append(res.Steps, Step{Title: "apply on merge", Comment: w.comment(number), Check: conclusion})
	if err != nil {
		return err
	}
	if conclusion != "success" {
		run, _ := w.checkRun(prreport.CheckApplyPrefix+project, sha)
		return fmt.Errorf("%w: the apply check concluded %q: %s", ErrUnexpected, conclusion, run.Title)
	}
	if row := applyRow(res.Steps[len(res.Steps)-1].Comment); !strings.Contains(row, "applied") || strings.Contains(row, "not applied") {
		return fmt.Errorf("%w: the apply check run succeeded but shardgate's comment does not say applied; its Apply row: %s", ErrUnexpected, dash(row))
	}

	p.step(6, total, "the coordinator after the apply")
	return w.final(ctx, p, res, auditMark)
}

// intakeReply is the body of shardgate's answer to a webhook.
type intakeReply struct {
	Status string `json:"status"`
	JobID  string `json:"job_id"`
	Reason string `json:"reason"`
}

// send delivers a webhook and returns the id of shardgate's job for it,
// without waiting for the job.
func (w *world) send(event string, body []byte) (string, error) {
	resp, err := githubtest.Deliver(w.webURL+"/webhook", event, body, w.secret)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r intakeReply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", fmt.Errorf("read shardgate's answer to the %s webhook: %w", event, err)
	}
	if resp.StatusCode != http.StatusAccepted || r.Status != "queued" {
		return "", fmt.Errorf("%w: shardgate answered the %s webhook with %d %s: %s", ErrUnexpected, event, resp.StatusCode, r.Status, r.Reason)
	}
	return r.JobID, nil
}

// followApply prints each new version of the comment and each state of the
// apply's check run until the run completes, and returns its conclusion.
func (w *world) followApply(ctx context.Context, p printer, number int, sha, jobID, lastComment string) (string, error) {
	name := prreport.CheckApplyPrefix + project
	start := time.Now()
	deadline := time.NewTimer(w.opts.ApplyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	lastStatus, lastNote, version := "", start, 0
	for {
		if body := w.comment(number); body != lastComment {
			lastComment, lastNote = body, time.Now()
			version++
			p.comment(fmt.Sprintf("after %s, shardgate's comment (edit %d since the merge)", since(start), version), body)
		}
		run, ok := w.checkRun(name, sha)
		if ok && run.Status != lastStatus {
			lastStatus, lastNote = run.Status, time.Now()
			p.note("after %s, check run %q on %s: %s %s", since(start), name, short(sha), run.Status, run.Conclusion)
		}
		if ok && run.Status == "completed" {
			p.note("check run %q: %s", name, run.Title)
			if run.Summary != "" {
				p.block("its summary", run.Summary)
			}
			w.settle(ctx, p, number, lastComment, version, start)
			return run.Conclusion, nil
		}
		if job, err := w.st.GetJob(ctx, jobID); err == nil && job.State == store.JobFailed {
			return "", fmt.Errorf("%w: shardgate's job for the merged pull request failed: %s", ErrUnexpected, job.LastError)
		}
		if !ok && time.Since(start) > min(startGrace, w.opts.ApplyTimeout) {
			return "", &ApplyTimeoutError{After: since(start), Reason: fmt.Sprintf("no check run %q appeared on the merge commit %s", name, short(sha))}
		}
		if time.Since(lastNote) >= 15*time.Second {
			lastNote = time.Now()
			p.note("… still waiting after %s (at most %s)", since(start), w.opts.ApplyTimeout)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("follow the apply: %w", ctx.Err())
		case <-deadline.C:
			return "", &ApplyTimeoutError{After: w.opts.ApplyTimeout, Started: ok,
				Reason: fmt.Sprintf("check run %q on %s is still %s", name, short(sha), dash(lastStatus))}
		case <-tick.C:
		}
	}
}

// settle prints the comment's last edits: shardgate may complete the check
// run a moment before it writes the comment's final Apply row.
func (w *world) settle(ctx context.Context, p printer, number int, last string, version int, start time.Time) {
	deadline := time.Now().Add(settleFor)
	quietSince := time.Now()
	for time.Now().Before(deadline) && time.Since(quietSince) < settleQuiet {
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollEvery):
		}
		if body := w.comment(number); body != last {
			last, quietSince = body, time.Now()
			version++
			p.comment(fmt.Sprintf("after %s, shardgate's comment (edit %d since the merge)", since(start), version), body)
		}
	}
	p.note("shardgate's comment is final at edit %d since the merge", version)
}

// applyRow is the project's row of the comment's Apply table.
func applyRow(body string) string {
	for _, line := range strings.Split(headlines(body), "\n") {
		if strings.HasPrefix(line, "| `"+project+"`") {
			return line
		}
	}
	return ""
}
