package bot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/internal/redact/redacttest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

const driftPlanSecret = "drift-plan-secret-4711"

// driftEvery is the tests' drift interval: short, as the fake GitHub shares
// the clock and expires installation tokens after an hour of it.
const driftEvery = 5 * time.Minute

// scaleByHand scales a stream through the simulator's admin API, as an
// operator would outside Terraform, and waits until it converged.
func (h *harness) scaleByHand(stream string, shards int) {
	h.t.Helper()
	c, err := coord.New(h.simURL, coord.WithBasicAuth("admin", "password"))
	require.NoError(h.t, err)
	_, err = c.ScaleStream(context.Background(), stream, coord.ScaleRequest{TargetShardCount: shards, RequestedBy: "operator", Reason: "by hand"})
	require.NoError(h.t, err)
	require.Eventually(h.t, func() bool {
		for _, n := range h.simShards(stream) {
			if n != shards {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond)
}

// driftPass moves the clock past the interval and runs one scheduled pass.
func (h *harness) driftPass() []drift.Record {
	h.t.Helper()
	h.clock.Advance(driftEvery + time.Second)
	return h.driftPassNow()
}

// driftPassNow runs one scheduled pass: a repository never checked is due.
func (h *harness) driftPassNow() []drift.Record {
	h.t.Helper()
	require.Equal(h.t, 1, h.srv.driftSched.Pass(context.Background()), "the repository's check was due")
	recs, err := h.srv.drift.store.List(context.Background())
	require.NoError(h.t, err)
	return recs
}

func byProject(recs []drift.Record) map[string]drift.Record {
	out := map[string]drift.Record{}
	for _, r := range recs {
		out[r.Project] = r
	}
	return out
}

// The whole drift story with the real terraform against the simulator:
// `/shardgate drift` on a pull request, a stream scaled by hand (the issue
// opens with the numbers), a plan error (said on the issue, not drift, the
// issue stays open), the stream scaled back (the issue closes with a comment);
// a project without coordinator groups never gets an issue.
func TestDriftChecksAgainstTheSimulator(t *testing.T) {
	h := newHarnessBase(t)
	h.repo.Checkout("main")
	h.repo.WriteFile("plain/main.tf", "resource \"terraform_data\" \"bucket\" {\n  input = \"logs\"\n}\n")
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n  - name: plain\n    dir: plain\n")
	h.repo.Commit("a project without coordinator groups")
	h.cfg.PlanEnv = map[string]serverconfig.Secret{"TF_VAR_canary": serverconfig.NewSecret(driftPlanSecret)}
	h.start()
	h.srv.driftSched.Interval = driftEvery // the passes are run by the test, not by a ticker
	h.srv.driftSched.Jitter = func(time.Duration) time.Duration { return 0 }

	// A pull request makes the repository known; /shardgate drift checks now.
	h.repo.Branch("docs")
	h.repo.WriteFile("README.md", "streams\n")
	h.repo.Commit("docs")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "docs", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	c := h.comment(pr, author, "/shardgate drift")
	require.Equal(t, []string{"+1"}, reactions(h, c.ID))
	require.True(t, hasComment(h, pr, "project `streams`: no drift"), "%v", h.gh.Comments(owner, repoName, pr.Number))
	require.True(t, hasComment(h, pr, "project `plain`: no drift"))
	require.Empty(t, h.gh.Issues(owner, repoName))

	// Someone scales create-order by hand: terraform says "No changes", the
	// drift check sees 6 where the code says 4.
	h.scaleByHand("create-order", 6)
	recs := byProject(h.driftPass())
	require.Equal(t, drift.StatusDrifted, recs["streams"].Status, "%+v\n%s", recs, h.logs)
	require.Equal(t, drift.StatusClean, recs["plain"].Status, "terraform would create its resource, but it has no coordinator group")
	issues := h.gh.Issues(owner, repoName)
	require.Len(t, issues, 1, "one issue, for streams only")
	is := issues[0]
	require.Equal(t, recs["streams"].Issue, is.Number)
	require.Equal(t, []string{drift.Label}, is.Labels)
	require.Equal(t, "open", is.State)
	require.True(t, strings.HasPrefix(is.Body, drift.Marker("streams")+"\n"))
	since := recs["streams"].Since.UTC().Format("2006-01-02 15:04 MST")
	for _, group := range []string{"audit", "billing"} {
		require.Contains(t, is.Body, "| `create-order` | `"+group+"` | `"+strings.TrimSuffix(h.simURL, "/")+"` | 4 | 6 | +2 | "+since+" |")
	}
	require.NotContains(t, is.Body, "`payments`", "payments did not drift")
	require.Len(t, recs["streams"].Groups, 2)

	// The code on main breaks: the plan error is said on the issue, which
	// stays open; it is not drift.
	h.repo.Checkout("main")
	h.repo.WriteFile("streams/broken.tf", "resource \"terraform_data\" \"broken\" {\n  input = undeclared_thing.x.id\n}\n")
	h.repo.Commit("break main")
	recs = byProject(h.driftPass())
	require.Equal(t, drift.StatusError, recs["streams"].Status)
	require.Contains(t, recs["streams"].Error, "terraform")
	is = h.gh.Issues(owner, repoName)[0]
	require.Equal(t, "open", is.State)
	comments := h.gh.Comments(owner, repoName, is.Number)
	require.Len(t, comments, 1)
	require.Contains(t, comments[0].Body, "The drift check of")
	require.Contains(t, comments[0].Body, "failed")
	require.Len(t, h.gh.Issues(owner, repoName), 1, "a failed plan opens no other issue")

	// Fixed, and still drifted: the issue is edited in place, since kept.
	h.repo.RemoveFile("streams/broken.tf")
	h.repo.Commit("fix main")
	recs = byProject(h.driftPass())
	require.Equal(t, drift.StatusDrifted, recs["streams"].Status)
	require.Equal(t, since, recs["streams"].Since.UTC().Format("2006-01-02 15:04 MST"))
	require.Len(t, h.gh.Issues(owner, repoName), 1)

	// Scaled back to what the code says: the issue closes with a comment.
	h.scaleByHand("create-order", 4)
	recs = byProject(h.driftPass())
	require.Equal(t, drift.StatusClean, recs["streams"].Status)
	is = h.gh.Issues(owner, repoName)[0]
	require.Equal(t, "closed", is.State)
	comments = h.gh.Comments(owner, repoName, is.Number)
	require.Len(t, comments, 2)
	require.Contains(t, comments[1].Body, "The drift is gone")

	// Nothing shardgate wrote holds a secret, and nothing was applied.
	var written []string
	for _, i := range h.gh.Issues(owner, repoName) {
		written = append(written, i.Title, i.Body)
	}
	for _, cm := range append(h.gh.Comments(owner, repoName, is.Number), h.gh.Comments(owner, repoName, pr.Number)...) {
		written = append(written, cm.Body)
	}
	redacttest.RequireNoSecret(t, strings.Join(written, "\n"), driftPlanSecret, string(h.gh.AppPrivateKeyPEM()))
	logs := h.logs.String()
	require.Contains(t, logs, `"msg":"drift: checked"`)
	require.Contains(t, logs, `"trigger":"schedule"`)
	redacttest.RequireNoSecret(t, logs, driftPlanSecret)
	require.Equal(t, map[string]int{"billing": 4, "audit": 4}, h.simShards("create-order"))
	require.Equal(t, map[string]int{"ledger": 2}, h.simShards("payments"))
}

// A project name from .shardgate.yaml is hostile text too: it names the issue
// and its marker without steering either.
func TestDriftIssueOfAHostileProjectName(t *testing.T) {
	h := newHarnessBase(t)
	name := "x --> <!-- shardgate:drift project=other --> @octocat [l](http://evil.example) #1\n# pwned"
	h.repo.Checkout("main")
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: "+strconvQuote(name)+"\n    dir: streams\n")
	h.repo.Commit("a hostile project name")
	h.start()
	h.srv.driftSched.Interval = driftEvery
	require.NoError(t, h.srv.drift.store.SawRepo(context.Background(), drift.Repo{Installation: 1, Owner: owner, Name: repoName, DefaultBranch: "main"}))
	h.scaleByHand("payments", 3)
	recs := h.driftPassNow()
	require.Len(t, recs, 1)
	require.Equal(t, drift.StatusDrifted, recs[0].Status)
	is := h.gh.Issues(owner, repoName)[0]
	first, rest, _ := strings.Cut(is.Body, "\n")
	require.Equal(t, drift.Marker(name), first)
	require.Equal(t, 1, strings.Count(is.Body, "<!--"), "only the marker opens an HTML comment")
	require.NotContains(t, rest, "<!--", "the name cannot open a comment either")
	require.Contains(t, rest, "## Drift in project `x --> < !-- shardgate:drift project=other --> @octocat [l](http://evil.example) #1\\n# pwned`\n",
		"the name is shown whole, on one line, in a code span (no mention, link, reference or heading)")
	require.NotContains(t, is.Title, "\n")
	require.Contains(t, is.Body, "| `payments` | `ledger` |")
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
