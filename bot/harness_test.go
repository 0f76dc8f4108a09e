package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
)

const (
	owner    = "acme"
	repoName = "streams"
	author   = "octo-dev"
	approver = "alice"
	teamMate = "carol" // an approver through the acme/sre team
	outsider = "mallory"
)

// harness is the whole product on loopback: the fake GitHub, the coordinator
// simulator, a git repository with the example stream-group module, the real
// terraform, and shardgate's service behind its HTTP handler.
type harness struct {
	t      testing.TB
	gh     *githubtest.Server
	repo   *githubtest.GitRepo
	sim    *coordsim.Sim
	simURL string
	simSrv *httptest.Server
	// simCalls counts the requests the simulator received.
	simCalls *atomic.Int64
	state    string // the shared local Terraform state, as a remote backend would be
	cfg      *serverconfig.Config
	st       *store.Bolt
	srv      *Server
	web      *httptest.Server
	logs     *lockedBuffer // every log line of the service, across restarts
	started  bool
	opts     []Option // extra server options (a clock)
	clock    *fakeclock.Clock
	// tune adjusts the server before Start.
	tune func(*Server)
}

// The harness's clock is the real time plus the seconds ticked; the fake
// GitHub and the service share it. GitHub's times have whole seconds and an
// approval counts only from the second after shardgate saw the head: the
// harness's people tick before they act, as a person reading the plan takes
// a while.

// tick moves the clock one second on.
func (h *harness) tick() {
	if h.clock != nil {
		h.clock.Advance(time.Second)
	}
}

var baseGroups = map[string]int{"create-order/billing": 4, "create-order/audit": 4, "payments/ledger": 2}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarnessBase(t)
	h.start()
	return h
}

// newHarnessOn is newHarness with the binary tf, terraform or tofu
// (tftest.EachBinary) for the operator's apply and for the service.
func newHarnessOn(t *testing.T, tf string) *harness {
	t.Helper()
	h := newHarnessBaseOn(t, tf)
	h.start()
	return h
}

// newHarnessBase sets up everything but the service.
func newHarnessBase(t testing.TB) *harness {
	t.Helper()
	return newHarnessBaseOn(t, tftest.Binary(t))
}

func newHarnessBaseOn(t testing.TB, tf string) *harness {
	t.Helper()
	return newHarnessBaseClock(t, tf, fakeclock.Following())
}

// newProcessHarnessBase is newHarnessBase for a test that runs shardgate serve
// in processes of its own: they read the wall clock, so the fake GitHub's
// clock must be it, unshifted, or every approval would look years old.
func newProcessHarnessBase(t testing.TB) *harness {
	t.Helper()
	return newHarnessBaseClock(t, tftest.Binary(t), fakeclock.Wall())
}

func newHarnessBaseClock(t testing.TB, tf string, clock *fakeclock.Clock) *harness {
	t.Helper()
	h := &harness{t: t, gh: githubtest.New(t, githubtest.WithClock(clock.Now)), repo: githubtest.NewGitRepo(t), logs: &lockedBuffer{},
		clock: clock, opts: []Option{WithClock(clock.Now)}}
	h.sim = coordsim.New(coordsim.WithMembersPerGroup(2))
	simCtx, stopSim := context.WithCancel(context.Background())
	t.Cleanup(stopSim)
	go h.sim.Run(simCtx, 50*time.Millisecond) // migrations advance on their own
	h.simCalls = &atomic.Int64{}
	h.simSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.simCalls.Add(1)
		h.sim.ServeHTTP(w, r)
	}))
	t.Cleanup(h.simSrv.Close)
	h.simURL = h.simSrv.URL
	h.state = filepath.Join(t.TempDir(), "terraform.tfstate")

	module, err := filepath.Glob(filepath.Join("..", "examples", "modules", "stream-group", "*"))
	require.NoError(t, err)
	for _, f := range module {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		h.repo.WriteFile("modules/stream-group/"+filepath.Base(f), string(b))
	}
	h.writeRoot(baseGroups)
	h.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n")
	h.repo.Commit("initial streams")
	h.gh.AddRepo(owner, repoName, h.repo)
	h.gh.AddTeamMember("acme", "sre", teamMate)
	for _, u := range []string{author, approver, teamMate} {
		h.gh.SetPermission(owner, repoName, u, "write")
	}
	h.gh.SetPermission(owner, repoName, outsider, "read")
	h.applyMain(tf)

	h.cfg = &serverconfig.Config{
		Listen: "127.0.0.1:0", GitHubAPIURL: h.gh.URL(), AppID: h.gh.AppID(),
		PrivateKey: serverconfig.NewSecret(string(h.gh.AppPrivateKeyPEM())), WebhookSecret: serverconfig.NewSecret(testSecret),
		StorePath: filepath.Join(t.TempDir(), "shardgate.db"), TerraformBinary: tf, LockTimeout: time.Minute,
		Coordinators:  []serverconfig.CoordinatorCredentials{{URLPrefix: h.simURL, Username: "admin", Password: serverconfig.NewSecret("password")}},
		ApproverUsers: []string{approver}, ApproverTeams: []string{"acme/sre"},
		Policy: policy.DefaultConfig(), AttestationTTL: 2 * time.Hour, AllowRepoOverride: true,
		QueueSize: 100, Workers: 2, WorkDir: t.TempDir(), ConvergeTimeout: 2 * time.Minute, ApplyLease: 5 * time.Second,
		// The shared local state stands in for a remote backend.
		SandboxWritable: []string{filepath.Dir(h.state)},
	}
	return h
}

// writeRoot writes the root configuration with the given groups; its state is
// the shared file h.state and it talks to the simulator.
func (h *harness) writeRoot(groups map[string]int) {
	h.repo.WriteFile("streams/main.tf", streamroot.MainTF(h.state, h.simURL, groups))
}

// applyMain applies the default branch with the real terraform, as an operator
// would have before the pull request: the simulator then holds the groups.
func (h *harness) applyMain(tf string) {
	h.t.Helper()
	dir := h.t.TempDir()
	out, err := exec.Command("git", "-C", h.repo.Dir(), "archive", "--format=tar", "-o", filepath.Join(dir, "main.tar"), "main").CombinedOutput()
	require.NoError(h.t, err, string(out))
	out, err = exec.Command("tar", "-xf", filepath.Join(dir, "main.tar"), "-C", dir).CombinedOutput()
	require.NoError(h.t, err, string(out))
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=", "TF_VAR_coordinator_username=admin", "TF_VAR_coordinator_password=password")
	for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-input=false", "-auto-approve"}} {
		cmd := exec.Command(tf, args...)
		cmd.Dir, cmd.Env = filepath.Join(dir, "streams"), env
		out, err := cmd.CombinedOutput()
		require.NoError(h.t, err, string(out))
	}
}

func (h *harness) start() {
	h.t.Helper()
	var err error
	if h.st == nil {
		h.st, err = store.OpenBolt(h.cfg.StorePath)
		require.NoError(h.t, err)
	}
	log := logrus.New()
	log.SetOutput(h.logs)
	if testing.Verbose() {
		log.SetOutput(io.MultiWriter(h.logs, os.Stderr))
	}
	log.SetFormatter(&logrus.JSONFormatter{})
	h.srv, err = New(h.cfg, h.st, append([]Option{WithLogEntry(logrus.NewEntry(log))}, h.opts...)...)
	require.NoError(h.t, err)
	h.srv.applier.Poll, h.srv.applier.ProgressEvery = 200*time.Millisecond, 0
	if h.tune != nil {
		h.tune(h.srv)
	}
	h.web = httptest.NewServer(h.srv.Handler())
	require.NoError(h.t, h.srv.Start(context.Background()))
	h.started = true
	h.t.Cleanup(h.stop)
}

// stop shuts the service down as SIGTERM would, keeping the store.
func (h *harness) stop() {
	if !h.started {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.web.Close()
	h.srv.Close(ctx)
	h.started = false
}

// scrape reads /metrics as the admin listener serves it (the webhook
// listener does not).
func (h *harness) scrape() string {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.srv.AdminHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(h.t, http.StatusOK, rec.Code)
	return rec.Body.String()
}

// deliver sends a signed webhook and returns the intake's answer.
func (h *harness) deliver(event string, body []byte, opts ...githubtest.DeliveryOption) (int, webhook.Reply) {
	h.t.Helper()
	resp, err := githubtest.Deliver(h.web.URL+"/webhook", event, body, testSecret, opts...)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	var r webhook.Reply
	require.NoError(h.t, json.NewDecoder(resp.Body).Decode(&r))
	return resp.StatusCode, r
}

// run delivers a webhook and waits until its job is done.
func (h *harness) run(event string, body []byte) {
	h.t.Helper()
	code, r := h.deliver(event, body)
	require.Equal(h.t, 202, code, r.Reason)
	require.Equal(h.t, "queued", r.Status)
	h.waitJob(r.JobID)
}

func (h *harness) waitJob(id string) {
	h.t.Helper()
	var job *store.Job
	require.Eventually(h.t, func() bool {
		var err error
		job, err = h.st.GetJob(context.Background(), id)
		return err == nil && (job.State == store.JobDone || job.State == store.JobFailed)
	}, 3*time.Minute, 50*time.Millisecond)
	require.Equal(h.t, store.JobDone, job.State, "job %s failed: %s", id, job.LastError)
}

// openPR pushes a branch that sets the given groups and opens a pull request.
func (h *harness) openPR(branch string, groups map[string]int) githubtest.PullRequest {
	h.t.Helper()
	h.repo.Checkout("main")
	h.repo.Branch(branch)
	h.writeRoot(groups)
	h.repo.Commit("change streams on " + branch)
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
	h.run("pull_request", githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, repoName, pr.Number)))
	return pr
}

// push adds a commit to the PR's branch and delivers synchronize.
func (h *harness) push(pr githubtest.PullRequest, change func()) string {
	h.t.Helper()
	before := h.gh.PR(owner, repoName, pr.Number).HeadSHA
	h.repo.Checkout(pr.HeadRef)
	change()
	h.repo.Commit("another push")
	head := h.gh.SyncPR(owner, repoName, pr.Number)
	h.run("pull_request", githubtest.PullRequestSynchronize(h.t, h.gh.PRPayload(owner, repoName, pr.Number), before))
	return head
}

// comment delivers a PR comment by user.
func (h *harness) comment(pr githubtest.PullRequest, user, body string) githubtest.Comment {
	h.t.Helper()
	h.tick()
	c := h.gh.AddComment(owner, repoName, pr.Number, user, body)
	h.run("issue_comment", githubtest.IssueCommentOnPR(h.t, githubtest.CommentPayload{
		InstallationID: 1, Owner: owner, Repo: repoName, RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number,
		Author: author, CommentID: c.ID, Body: body, User: user}))
	return c
}

// label adds a label as actor and delivers the labeled event.
func (h *harness) label(pr githubtest.PullRequest, label, actor string) {
	h.t.Helper()
	h.tick()
	h.gh.AddLabel(owner, repoName, pr.Number, label, actor)
	p := h.gh.PRPayload(owner, repoName, pr.Number)
	p.Sender = actor
	h.run("pull_request", githubtest.PullRequestLabeled(h.t, p, label))
}

// shardgateComments are the comments carrying shardgate's marker.
func (h *harness) shardgateComments(pr githubtest.PullRequest) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range h.gh.Comments(owner, repoName, pr.Number) {
		if strings.HasPrefix(c.Body, prreport.CommentMarker) {
			out = append(out, c)
		}
	}
	return out
}

// theComment is shardgate's one comment on the PR.
func (h *harness) theComment(pr githubtest.PullRequest) string {
	h.t.Helper()
	cs := h.shardgateComments(pr)
	require.Len(h.t, cs, 1, "exactly one shardgate comment")
	return cs[0].Body
}

// check returns the latest check run of that name on sha.
func (h *harness) check(name, sha string) githubtest.CheckRun {
	h.t.Helper()
	var found *githubtest.CheckRun
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		if c.Name == name && c.HeadSHA == sha {
			c := c
			found = &c
		}
	}
	require.NotNil(h.t, found, "no check run %q on %s", name, sha)
	return *found
}

// merge merges the PR's branch into main in git, marks it merged in the fake
// GitHub and delivers the (synthetic) merged closed event. It returns the merge sha.
func (h *harness) merge(pr githubtest.PullRequest, mergedBy string) string {
	h.t.Helper()
	h.repo.Checkout("main")
	sha := h.repo.Merge(pr.HeadRef, "Merge pull request #"+fmt.Sprint(pr.Number))
	h.gh.MergePR(owner, repoName, pr.Number, mergedBy, sha)
	p := h.gh.PRPayload(owner, repoName, pr.Number)
	p.Sender = mergedBy
	h.run("pull_request", githubtest.PullRequestClosedMergedSynthetic(h.t, p, mergedBy, sha, h.clock.Now()))
	return sha
}

// waitApplies waits until every apply job of the PR has finished.
func (h *harness) waitApplies(pr githubtest.PullRequest) []*applyqueue.Job {
	h.t.Helper()
	var jobs []*applyqueue.Job
	require.Eventually(h.t, func() bool {
		var err error
		jobs, err = h.srv.applies.ListForPR(context.Background(), pullreq.Ref{Installation: 1, Owner: owner, Repo: repoName, Number: pr.Number})
		if err != nil || len(jobs) == 0 {
			return false
		}
		for _, j := range jobs {
			if !j.State.Finished() {
				return false
			}
		}
		return true
	}, 3*time.Minute, 100*time.Millisecond)
	return jobs
}

// simShards returns the simulator's shard count of every group of a stream.
func (h *harness) simShards(stream string) map[string]int {
	h.t.Helper()
	c, err := coord.New(h.simURL, coord.WithBasicAuth("admin", "password"))
	require.NoError(h.t, err)
	groups, err := c.Groups(context.Background())
	require.NoError(h.t, err)
	out := map[string]int{}
	for _, g := range groups {
		if g.StreamPrefix == stream {
			out[g.ConsumerGroup] = g.ShardCount
		}
	}
	return out
}

// eventuallyComment waits until shardgate's comment contains text.
func (h *harness) eventuallyComment(pr githubtest.PullRequest, text string) string {
	h.t.Helper()
	var body string
	require.Eventually(h.t, func() bool {
		cs := h.shardgateComments(pr)
		if len(cs) != 1 {
			return false
		}
		body = cs[0].Body
		return strings.Contains(body, text)
	}, time.Minute, 50*time.Millisecond, "comment never contained %q", text)
	return body
}
