package bot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// projectsHarness is the harness with two more projects beside the streams:
// alarms (applied on merge) and queues (`apply: manual`), each a root of
// builtin terraform_data resources with a local state of its own, none of
// them a coordinator resource.
func projectsHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarnessBase(t)
	h.repo.Checkout("main")
	for _, p := range []string{"alarms", "queues"} {
		h.repo.WriteFile(p+"/main.tf", otherRoot(h, p))
	}
	h.repo.WriteFile(".shardgate.yaml", `version: 1
projects:
  - name: streams
    dir: streams
  - name: alarms
    dir: alarms
    apply: on_merge
  - name: queues
    dir: queues
    apply: manual
`)
	h.repo.Commit("alarms and queues beside the streams")
	h.start()
	return h
}

// otherRoot is the backend of a project without coordinator resources; its
// state sits beside the streams' (the directory the sandbox lets terraform write).
func otherRoot(h *harness, project string) string {
	return `terraform {
  backend "local" {
    path = "` + otherState(h, project) + `"
  }
}
`
}

func otherState(h *harness, project string) string {
	return filepath.Join(filepath.Dir(h.state), project+".tfstate")
}

// dataResource is a terraform_data resource: an alarm, a queue.
func dataResource(name, value string) string {
	return `resource "terraform_data" "` + name + `" {
  input = "` + value + `"
}
`
}

// stateResources lists the resources ("type.name") of a project's state file.
func stateResources(h *harness, project string) []string {
	h.t.Helper()
	raw, err := os.ReadFile(otherState(h, project))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(h.t, err)
	var st struct {
		Resources []struct{ Type, Name string }
	}
	require.NoError(h.t, json.Unmarshal(raw, &st))
	var out []string
	for _, r := range st.Resources {
		out = append(out, r.Type+"."+r.Name)
	}
	slices.Sort(out)
	return out
}

// auditsOf are the apply audit records, by project.
func auditsOf(h *harness) map[string][]records.Audit {
	h.t.Helper()
	kvs, err := h.st.List(context.Background(), records.BucketAudit, "")
	require.NoError(h.t, err)
	out := map[string][]records.Audit{}
	for _, kv := range kvs {
		var a records.Audit
		require.NoError(h.t, json.Unmarshal(kv.Value, &a))
		out[a.Project] = append(out[a.Project], a)
	}
	return out
}

// A pull request that changes only an alarm (no coordinator resource, another
// project) is applied on merge: through the guard, with its check run, its
// line in the comment and its audit record, holding no stream.
func TestApplyOnMergeOfAProjectWithoutCoordinatorChanges(t *testing.T) {
	h := projectsHarness(t)
	pr := h.openPRWith("cpu-alarm", baseGroups, map[string]string{"alarms/cpu.tf": dataResource("cpu", "cpu > 90%")})
	require.Contains(t, h.theComment(pr), "✅ **Allowed")
	mergeSHA := h.merge(pr, approver)

	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, "alarms", jobs[0].Project)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Empty(t, jobs[0].Streams, "no stream lock")
	require.NotEmpty(t, jobs[0].StateKey, "the project's state lock")
	require.Equal(t, []string{"terraform_data.cpu"}, stateResources(h, "alarms"))

	body := h.eventuallyComment(pr, "merged and applied (1 project).")
	require.Contains(t, body, "| `alarms` | ✅ applied |")
	require.Equal(t, "success", h.check(prreport.CheckApplyPrefix+"alarms", mergeSHA).Conclusion)
	audits := auditsOf(h)["alarms"]
	require.Len(t, audits, 1)
	require.Equal(t, "applied", audits[0].TerraformOutcome)
	require.Equal(t, audits[0].ReviewedFingerprint, audits[0].AppliedFingerprint)
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"), "the coordinator untouched")
	// Counted like every apply.
	require.EqualValues(t, 1, histCount(t, h.srv.registry, "shardgate_apply_duration_seconds", "applied"))
	require.Equal(t, 1.0, gauge(t, h.srv.registry, "shardgate_apply_jobs", "applied"))
}

// An `apply: manual` project is not applied on merge: the comment says it
// waits and for what; an approver's `/shardgate apply queues` applies it,
// once.
func TestManualProjectAppliedByCommand(t *testing.T) {
	h := projectsHarness(t)
	pr := h.openPRWith("orders-queue", baseGroups, map[string]string{"queues/orders.tf": dataResource("orders", "orders-dlq")})
	require.Contains(t, h.theComment(pr), "✅ **Allowed")
	c := h.comment(pr, approver, "/shardgate apply queues")
	require.Equal(t, []string{"confused"}, reactions(h, c.ID), "not merged yet")

	mergeSHA := h.merge(pr, approver)
	body := h.eventuallyComment(pr, "| `queues` | ⏸️ waits for a command |")
	require.Contains(t, body, "`apply: manual` in `.shardgate.yaml`")
	require.Contains(t, body, "`/shardgate apply queues`")
	require.Contains(t, body, "nothing applied on merge: 1 project waits for `/shardgate apply <project>`")
	jobs, err := h.srv.applies.ListForPR(context.Background(), prRefOf(pr))
	require.NoError(t, err)
	require.Empty(t, jobs, "nothing queued on merge")
	require.Empty(t, stateResources(h, "queues"))

	c = h.comment(pr, approver, "/shardgate apply")
	require.Equal(t, []string{"confused"}, reactions(h, c.ID), "no failed apply to retry")
	replies := h.replies(pr)
	require.Contains(t, replies[len(replies)-1], "no failed apply to retry. Waiting for a command: `/shardgate apply queues`.",
		"a plain retry points to the command the waiting project needs")

	c = h.comment(pr, author, "/shardgate apply queues")
	require.Equal(t, []string{"-1"}, reactions(h, c.ID), "the author is not an approver")
	c = h.comment(pr, approver, "/shardgate apply streams")
	require.Equal(t, []string{"confused"}, reactions(h, c.ID), "streams has no plan in this pull request")

	c = h.comment(pr, teamMate, "/shardgate apply queues")
	require.Equal(t, []string{"+1"}, reactions(h, c.ID))
	jobs = h.waitApplies(pr)
	require.Equal(t, approver, jobs[0].MergedBy, "who merged")
	require.Equal(t, teamMate, jobs[0].RequestedBy, "who asked")
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	require.Equal(t, []string{"terraform_data.orders"}, stateResources(h, "queues"))
	body = h.eventuallyComment(pr, "| `queues` | ✅ applied |")
	require.NotContains(t, body, "waits for a command")
	h.eventuallyComment(pr, "merged and applied (1 project).")
	require.Equal(t, "success", h.check(prreport.CheckApplyPrefix+"queues", mergeSHA).Conclusion)

	c = h.comment(pr, approver, "/shardgate apply queues")
	require.Equal(t, []string{"confused"}, reactions(h, c.ID), "applied already")
	jobs = h.waitApplies(pr)
	require.Len(t, jobs, 1, "applied once")
	audits := auditsOf(h)["queues"]
	require.Len(t, audits, 1)
	require.Equal(t, approver, audits[0].MergedBy)
	require.Equal(t, teamMate, audits[0].AppliedBy, "the approver who asked")
}

// A pull request changing the streams and an alarm applies both projects,
// each once; another alarm merged right after waits for the first apply of
// the alarms' state and then applies on top of it (merge order per state):
// had it run at once, its merge commit's plan would still create the first
// alarm, which its review never saw, and the guard would refuse it.
func TestMixedMergeAppliesEveryProjectOnceInMergeOrder(t *testing.T) {
	h := projectsHarness(t)
	mixed := h.openPRWith("scale-and-alarm", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}),
		map[string]string{"alarms/cpu.tf": dataResource("cpu", "cpu > 90%")})
	h.comment(mixed, approver, "/shardgate attest quiesce create-order")
	require.Contains(t, h.theComment(mixed), "✅ **Allowed")
	disk := h.openPRWith("disk-alarm", baseGroups, map[string]string{"alarms/disk.tf": dataResource("disk", "disk > 80%")})
	require.Contains(t, h.theComment(disk), "✅ **Allowed")

	mixedMerge := h.merge(mixed, approver)
	h.merge(disk, approver)
	// The merge event delivered again queues nothing more.
	p := h.gh.PRPayload(owner, repoName, mixed.Number)
	p.Sender = approver
	h.run("pull_request", githubtest.PullRequestClosedMergedSynthetic(t, p, approver, mixedMerge, h.clock.Now()))

	mixedJobs := h.waitApplies(mixed)
	diskJobs := h.waitApplies(disk)
	require.Equal(t, []string{"streams", "alarms"}, jobProjects(mixedJobs), "each project once")
	for _, j := range append(slices.Clone(mixedJobs), diskJobs...) {
		require.Equal(t, applyqueue.Applied, j.State, "%s: %s", j.Project, j.Reason)
	}
	require.Len(t, diskJobs, 1)
	require.Less(t, mixedJobs[0].Seq, mixedJobs[1].Seq)
	require.Less(t, mixedJobs[1].Seq, diskJobs[0].Seq, "merge order")
	require.Equal(t, mixedJobs[1].StateKey, diskJobs[0].StateKey, "one state")

	require.Equal(t, map[string]int{"billing": 6, "audit": 6}, h.simShards("create-order"))
	require.Equal(t, []string{"terraform_data.cpu", "terraform_data.disk"}, stateResources(h, "alarms"))
	audits := auditsOf(h)
	require.Len(t, audits["streams"], 1)
	require.Len(t, audits["alarms"], 2)
	for _, a := range audits["alarms"] {
		require.Equal(t, 1, a.Attempt)
		require.Equal(t, a.ReviewedFingerprint, a.AppliedFingerprint)
	}
	h.eventuallyComment(mixed, "merged and applied (2 projects); the coordinator has converged.")
}

func prRefOf(pr githubtest.PullRequest) pullreq.Ref {
	return pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: pr.Number}
}

func jobProjects(jobs []*applyqueue.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Project)
	}
	return out
}
