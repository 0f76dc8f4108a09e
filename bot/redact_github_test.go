package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/redact/redacttest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

// githubServer is a Server wired to a fake GitHub with one open pull request,
// without the terraform world of the harness.
type githubServer struct {
	gh   *githubtest.Server
	srv  *Server
	st   *store.Bolt
	cfg  *serverconfig.Config
	pr   githubtest.PullRequest
	ref  pullreq.Ref
	logs *lockedBuffer
}

func newGitHubServer(t *testing.T, coordinatorPassword string) *githubServer {
	t.Helper()
	return newGitHubServerIn(t, coordinatorPassword, t.TempDir())
}

// newGitHubServerIn is newGitHubServer with the given work dir.
func newGitHubServerIn(t *testing.T, coordinatorPassword, workDir string) *githubServer {
	t.Helper()
	g := &githubServer{gh: githubtest.New(t), logs: &lockedBuffer{}}
	repo := githubtest.NewGitRepo(t)
	repo.WriteFile("streams/main.tf", "# streams\n")
	repo.Commit("initial")
	repo.Branch("leak")
	repo.WriteFile("streams/leak.tf", "# leak\n")
	repo.Commit("leak")
	repo.Checkout("main")
	g.gh.AddRepo(owner, repoName, repo)
	g.pr = g.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "leak", User: author})
	g.ref = pullreq.Ref{Installation: githubtest.DefaultInstallationID, Owner: owner, Repo: repoName, Number: g.pr.Number}
	g.cfg = &serverconfig.Config{GitHubAPIURL: g.gh.URL(), AppID: g.gh.AppID(), PrivateKey: serverconfig.NewSecret(string(g.gh.AppPrivateKeyPEM())),
		WebhookSecret: serverconfig.NewSecret(testSecret), StorePath: filepath.Join(t.TempDir(), "shardgate.db"), TerraformBinary: tftest.Binary(t),
		Coordinators:  []serverconfig.CoordinatorCredentials{{URLPrefix: "http://127.0.0.1:1", Username: "admin", Password: serverconfig.NewSecret(coordinatorPassword)}},
		ApproverUsers: []string{approver}, Policy: policy.DefaultConfig(), QueueSize: 10, Workers: 1, WorkDir: workDir}
	var err error
	g.st, err = store.OpenBolt(g.cfg.StorePath)
	require.NoError(t, err)
	g.srv, err = New(g.cfg, g.st, WithLogEntry(logctx.NewLogger(g.logs, logrus.DebugLevel)))
	require.NoError(t, err)
	t.Cleanup(func() {
		g.srv.Close(context.Background())
		g.st.Close()
	})
	return g
}

// Secrets a pull request's plan put into stream names and groups (file() of
// the server's secret files) reach neither the comment, the check run, the
// fake GitHub's request log, the log, nor the store; the comment shows that
// something was hidden.
func TestSecretsInPlanNamesNeverLeaveTheServer(t *testing.T) {
	const password = "coordinator-write-password"
	g := newGitHubServer(t, password)
	key := string(g.gh.AppPrivateKeyPEM())
	secrets := []string{testSecret, password, key}
	ctx := logctx.WithLogger(context.Background(), g.srv.log)
	gh, err := ghapp.APIFor(g.srv.clients, g.ref.Installation)
	require.NoError(t, err)

	rec := leakyPlan(testSecret, password, redacttest.PEMBody(key)[3])
	rec.HeadSHA = g.pr.HeadSHA
	failed := &records.Plan{Project: "other", Dir: "other", HeadSHA: g.pr.HeadSHA, LockWaits: []report.LockWait{},
		Error: "Error: Invalid value for stream_prefix: \"" + redacttest.PEMBody(key)[6] + "\" (from file(\"/etc/shardgate/app.pem\"))"}
	st := &records.PRState{Ref: g.ref, HeadSHA: g.pr.HeadSHA, Status: "planning " + testSecret, Projects: []string{"streams", "other"}}
	for _, p := range []*records.Plan{rec, failed} {
		p.CheckRunID, err = g.srv.checks.Start(ctx, gh, g.ref, prreport.CheckPlanPrefix+p.Project, p.HeadSHA)
		require.NoError(t, err)
		require.NoError(t, g.srv.planner.FinishPlan(ctx, gh, st, p))
	}
	require.NoError(t, g.srv.planner.Publish(ctx, gh, st, []*records.Plan{rec, failed}))
	logctx.Logger(ctx).WithField(logctx.FieldStream, testSecret).WithError(fmt.Errorf("coordinator said no to %s", password)).Warn("planned " + redacttest.PEMBody(key)[3])
	// A job failing on an error that quotes a secret is reported on the PR.
	payload := githubtest.PullRequestOpened(t, g.gh.PRPayload(owner, repoName, g.pr.Number))
	g.srv.reportJobFailure(ctx, &store.Job{ID: "7", Event: "pull_request", Attempts: 3, Payload: payload},
		g.srv.redact.Error(fmt.Errorf("terraform show: %s", password)))

	comments := g.gh.Comments(owner, repoName, g.pr.Number)
	require.Len(t, comments, 1)
	require.Contains(t, comments[0].Body, runner.Redacted, "the comment shows what was hidden")
	redacttest.RequireNoSecret(t, comments[0].Body, secrets...)
	runs := g.gh.CheckRuns(owner, repoName)
	require.Len(t, runs, 2)
	for _, cr := range runs {
		redacttest.RequireNoSecret(t, cr.Title+"\n"+cr.Summary+"\n"+cr.Text, secrets...)
	}
	require.Contains(t, runs[0].Summary+runs[0].Text+runs[1].Summary, runner.Redacted)
	for _, r := range g.gh.Requests() {
		redacttest.RequireNoSecret(t, r.Path+"?"+r.RawQuery+"\n"+string(r.Body), secrets...)
	}
	redacttest.RequireNoSecret(t, g.logs.String(), secrets...)
	require.Contains(t, g.logs.String(), runner.Redacted)

	g.srv.Close(context.Background())
	require.NoError(t, g.st.Close())
	raw, err := os.ReadFile(g.cfg.StorePath)
	require.NoError(t, err)
	redacttest.RequireNoSecret(t, string(raw), secrets...)
}
