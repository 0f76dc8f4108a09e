package demo

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

const (
	branch  = "scale-create-order"
	prTitle = "Scale create-order from 4 to 16 shards"
)

// scaled is the pull request's configuration: create-order's two groups
// move together because a scale is stream-wide.
var scaled = map[string]int{"create-order/billing": 16, "create-order/audit": 16, "payments/ledger": 2}

// expect is what a step must leave behind for the story to go on.
type expect struct {
	conclusion string   // of the plan check on the head
	contains   []string // in shardgate's comment
}

func (w *world) play(ctx context.Context, res *Result) error {
	p := printer{out: w.opts.Out, quiet: w.opts.Quiet, redact: w.redact}
	total := 6
	if w.opts.Until == UntilAllowed {
		total = 3
	}
	p.banner("shardgate demo · one pull request from denied to applied, on loopback, no GitHub account")
	if err := w.startSimulator(ctx); err != nil {
		return err
	}
	p.setting("coordinator simulator", fmt.Sprintf("%s (2 live members per group, event loop every %s)", w.simURL, w.opts.Tick))
	if err := w.buildRepo(); err != nil {
		return err
	}
	p.setting("fake GitHub", fmt.Sprintf("%s (%s/%s: author @%s, approver @%s)", w.gh.URL(), owner, repoName, author, approver))
	p.setting("git repository", w.repo.Dir()+" (streams/ and modules/stream-group)")
	p.setting("terraform", fmt.Sprintf("%s (v%s)", w.tf, w.tfVer))
	start := time.Now()
	if err := w.applyMain(ctx); err != nil {
		return err
	}
	p.setting("main applied", fmt.Sprintf("%s in %s", strings.Join(groupList(mainGroups), " "), since(start)))
	if err := w.startService(ctx); err != nil {
		return err
	}
	p.setting("shardgate service", w.webURL+"/webhook")

	// a. The pull request scales create-order four times over.
	w.repo.Checkout("main")
	w.repo.Branch(branch)
	w.writeRoot(scaled)
	head := w.repo.Commit(prTitle)
	pr := w.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author, Title: prTitle})
	if err := w.deliver(ctx, "pull_request", githubtest.PullRequestOpened(w.tb, w.gh.PRPayload(owner, repoName, pr.Number))); err != nil {
		return err
	}
	if err := w.report(p, res, 1, total, fmt.Sprintf("@%s opens #%d %q", author, pr.Number, prTitle), pr.Number, head,
		expect{conclusion: "failure", contains: []string{"(`shard_delta`)", "(`quiesce_attestation`)"}}); err != nil {
		return err
	}

	// b. An approver waives the shard delta.
	label := "policy-exception/shard_delta"
	w.clock.Advance(time.Second) // the person reads the plan first
	w.gh.AddLabel(owner, repoName, pr.Number, label, approver)
	payload := w.gh.PRPayload(owner, repoName, pr.Number)
	payload.Sender = approver
	if err := w.deliver(ctx, "pull_request", githubtest.PullRequestLabeled(w.tb, payload, label)); err != nil {
		return err
	}
	if err := w.report(p, res, 2, total, fmt.Sprintf("approver @%s adds the label %s", approver, label), pr.Number, head,
		expect{conclusion: "failure", contains: []string{"Exceptions applied", "(`quiesce_attestation`)"}}); err != nil {
		return err
	}

	// c. The approver attests that create-order's producers are quiesced.
	body := "Producers of create-order are paused and their retries drained.\n/shardgate attest quiesce create-order"
	w.clock.Advance(time.Second) // the person reads the plan first
	c := w.gh.AddComment(owner, repoName, pr.Number, approver, body)
	if err := w.deliver(ctx, "issue_comment", githubtest.IssueCommentOnPR(w.tb, githubtest.CommentPayload{
		InstallationID: githubtest.DefaultInstallationID, Owner: owner, Repo: repoName, RepoID: w.gh.RepoID(owner, repoName),
		Number: pr.Number, Author: author, CommentID: c.ID, Body: body, User: approver})); err != nil {
		return err
	}
	if err := w.report(p, res, 3, total, fmt.Sprintf("@%s comments /shardgate attest quiesce create-order (reaction %s)",
		approver, strings.Join(w.reactions(c.ID), " ")), pr.Number, head,
		expect{conclusion: "success", contains: []string{"Allowed"}}); err != nil {
		return err
	}
	if w.opts.Until == UntilAllowed {
		p.printf("\nStopped once allowed (--until %s).\n", UntilAllowed)
		return nil
	}
	return w.mergeAndApply(ctx, p, res, pr.Number, total)
}

// report prints the step's comment and check and holds them to exp.
func (w *world) report(p printer, res *Result, n, total int, title string, number int, head string, exp expect) error {
	p.step(n, total, title)
	step := Step{Title: title, Comment: w.comment(number)}
	name := prreport.CheckPlanPrefix + project
	check, ok := w.checkRun(name, head)
	if ok {
		step.Check = check.Conclusion
		p.note("check run %q on %s: %s, %s", name, short(head), check.Status, dash(check.Conclusion))
	} else {
		p.note("check run %q on %s: none", name, short(head))
	}
	p.comment("shardgate's comment", step.Comment)
	res.Steps = append(res.Steps, step)
	if step.Check != exp.conclusion {
		return fmt.Errorf("%w: step %d: the plan check concluded %q, the story expects %q", ErrUnexpected, n, dash(step.Check), exp.conclusion)
	}
	for _, s := range exp.contains {
		if !strings.Contains(step.Comment, s) {
			return fmt.Errorf("%w: step %d: shardgate's comment lacks %q", ErrUnexpected, n, s)
		}
	}
	if k := w.shardgateComments(number); k != 1 {
		return fmt.Errorf("%w: step %d: %d shardgate comments on the pull request, the story expects one edited in place", ErrUnexpected, n, k)
	}
	return nil
}

// final prints the coordinator's groups and the audit of what the apply did.
func (w *world) final(ctx context.Context, p printer, res *Result, auditMark int) error {
	client, err := coord.New(w.simURL, coord.WithBasicAuth(simUser, w.simPW))
	if err != nil {
		return fmt.Errorf("coordinator client: %w", err)
	}
	groups, err := client.Groups(ctx)
	if err != nil {
		return fmt.Errorf("read the coordinator's groups: %w", err)
	}
	res.Groups = groups
	p.note("GET %s/coord/v1/monitoring/groups:", w.simURL)
	p.groups(groups)
	audit := w.sim.Audit()
	if auditMark < len(audit) {
		res.ScaleEvents = audit[auditMark:]
	}
	p.note("")
	p.note("the coordinator's audit log since the merge:")
	p.audit(res.ScaleEvents)
	for _, e := range res.ScaleEvents {
		if e.Action == coordsim.ActionCreateGroup && e.Status == http.StatusConflict {
			p.note("(a 409 on CREATE_GROUP is the module creating its group only when missing: the group exists)")
			break
		}
	}
	// Terraform held only a placeholder credential: every mutation the
	// coordinator accepted passed shardgate's broker, which names the PR.
	for _, e := range res.ScaleEvents {
		if !strings.HasPrefix(e.RequestID, "shardgate-") || !strings.HasPrefix(e.RequestedBy, "shardgate:") {
			return fmt.Errorf("%w: the coordinator audited %s with request id %q and requestedBy %q, not through shardgate's broker",
				ErrUnexpected, e.Action, e.RequestID, e.RequestedBy)
		}
	}
	p.note("(terraform held no coordinator credential: each call above went through shardgate's coordinator broker, which")
	p.note(" added the credentials, passed only the judged create and scale, and set the request id and requestedBy)")
	for _, g := range groups {
		if g.StreamPrefix == "create-order" && (g.ShardCount != scaled["create-order/"+g.ConsumerGroup] || g.ActiveMigration != nil) {
			return fmt.Errorf("%w: the coordinator shows create-order/%s at %d shards (migration active: %t), the story expects 16 and converged",
				ErrUnexpected, g.ConsumerGroup, g.ShardCount, g.ActiveMigration != nil)
		}
	}
	return nil
}

func groupList(groups map[string]int) []string {
	out := make([]string, 0, len(groups))
	for k, n := range groups {
		out = append(out, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(out)
	return out
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
