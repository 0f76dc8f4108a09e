package bot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/redact/redacttest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/terraform/runner"
)

// leakTF is a pull request's Terraform that reads the server's secret files
// with file() and puts them into stream names, as the red team did.
const leakTF = `locals {
  key_lines = split("\n", trimspace(file(%[1]q)))
}

module "leak" {
  source   = "../modules/stream-group"
  for_each = {
    webhook  = { prefix = trimspace(file(%[2]q)), group = "g" }
    pw       = { prefix = "leak", group = trimspace(file(%[3]q)) }
    key      = { prefix = local.key_lines[3], group = "g" }
  }

  coordinator_base_url  = %[4]q
  stream_prefix         = each.value.prefix
  consumer_group        = each.value.group
  shard_count           = 2
  poll_interval_seconds = 1
}
`

// A pull request whose plan reads the webhook secret, the coordinator
// password and the App private key from the server's files (real terraform)
// gets a comment and check run showing them redacted; none of them appears in
// any body the fake GitHub received, in the log, or in the store. The sandbox
// (sandbox_terraform_test.go) keeps these files out of reach; this test runs
// unsandboxed to prove the redaction behind it holds on its own.
func TestPlanReadingServerSecretsLeaksNothing(t *testing.T) {
	h := newHarnessBase(t)
	h.cfg.Sandbox = serverconfig.SandboxNone
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	key := string(h.gh.AppPrivateKeyPEM())
	password := h.cfg.Coordinators[0].Password.Reveal()
	keyFile, secretFile, passwordFile := write("app.pem", key), write("webhook-secret", testSecret+"\n"), write("coord-password", password)
	secrets := []string{testSecret, password, key}
	h.start()

	h.repo.Checkout("main")
	h.repo.Branch("leak")
	h.repo.WriteFile("streams/leak.tf", fmt.Sprintf(leakTF, keyFile, secretFile, passwordFile, h.simURL))
	h.repo.Commit("read the server's secrets")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "leak", User: author})
	h.run("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))

	body := h.theComment(pr)
	require.Contains(t, body, "`leak`", "the plan was read and reported")
	require.Contains(t, body, runner.Redacted, "the names are shown redacted")
	redacttest.RequireNoSecret(t, body, secrets...)
	check := h.check(prreport.CheckPlanPrefix+"streams", h.gh.PR(owner, repoName, pr.Number).HeadSHA)
	require.Equal(t, "completed", check.Status)
	redacttest.RequireNoSecret(t, check.Title+"\n"+check.Summary+"\n"+check.Text, secrets...)
	require.Contains(t, check.Summary+check.Text, runner.Redacted)
	for _, r := range h.gh.Requests() {
		redacttest.RequireNoSecret(t, r.Path+"?"+r.RawQuery+"\n"+string(r.Body), secrets...)
	}
	redacttest.RequireNoSecret(t, h.logs.String(), secrets...)

	h.stop()
	require.NoError(t, h.st.Close())
	raw, err := os.ReadFile(h.cfg.StorePath)
	require.NoError(t, err)
	redacttest.RequireNoSecret(t, string(raw), secrets...)
}
