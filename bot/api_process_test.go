package bot

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/apitest"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

const (
	apiReadToken  = "ci-read-0123456789abcdef"
	apiWriteToken = "oncall-write-0123456789abcdef"
)

// startServeWithAPI runs `shardgate serve` with the status listener and
// api.tokens_file set; it returns the process and the API's base URL.
func startServeWithAPI(t *testing.T, h *harness) (*serveProcess, string) {
	t.Helper()
	listen, status := freePort(t), freePort(t)
	cfg := writeServeConfig(t, h, listen)
	tokens := filepath.Join(t.TempDir(), "api-tokens")
	require.NoError(t, os.WriteFile(tokens, []byte("# the API's callers\nci:"+apiReadToken+":read\noncall:"+apiWriteToken+":write\n"), 0o600))
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("status:\n  listen: " + status + "\napi:\n  tokens_file: " + tokens + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	p := &serveProcess{t: t, bin: buildShardgate(t), cfg: cfg, url: "http://" + listen}
	p.start()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			_ = p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("serve logs:\n%s", p.logs)
		}
	})
	return p, "http://" + status
}

type apiVerdict struct {
	HeadSHA  string `json:"head_sha"`
	Allowed  bool   `json:"allowed"`
	Projects []struct {
		Project    string `json:"project"`
		HeadSHA    string `json:"head_sha"`
		Conclusion string `json:"conclusion"`
		Allowed    bool   `json:"allowed"`
		Denied     []struct {
			Rule string `json:"rule"`
		} `json:"denied_by"`
		Attestations []struct {
			StreamPrefix string `json:"stream_prefix"`
			Actor        string `json:"actor"`
		} `json:"attestations"`
	} `json:"projects"`
}

type apiJobs struct {
	Items []struct {
		ID          string `json:"id"`
		Kind        string `json:"kind"`
		PullRequest int    `json:"pull_request"`
		State       string `json:"state"`
		LastError   string `json:"last_error"`
	} `json:"items"`
}

// Issue 36's automation API through `shardgate serve` with real terraform:
// no token or a wrong one gets 401 everywhere; the API's verdict for a pull
// request is its check run's, before and after an attestation; a job that
// failed for good is listed, refused a retry with a read token (403) and
// retried with a write token, and then succeeds. Every answer is checked
// against docs/api.openapi.yaml.
func TestAutomationAPIThroughServe(t *testing.T) {
	h := newProcessHarnessBase(t)
	p, base := startServeWithAPI(t, h)
	c := apitest.New(t, base)
	get := func(path, token string, want int, into any) {
		t.Helper()
		r := c.Do("GET", path, token)
		require.Equal(t, want, r.Status, "%s: %s", path, r.Body)
		if into != nil {
			require.NoError(t, json.Unmarshal(r.Body, into))
		}
	}

	for _, tok := range []string{"", "not-a-token-0123456789abcdef", apiReadToken[:len(apiReadToken)-1]} {
		get("/api/v1/jobs?state=failed", tok, http.StatusUnauthorized, nil)
		get("/api/v1/repos/acme/streams/pulls/1", tok, http.StatusUnauthorized, nil)
		require.Equal(t, http.StatusUnauthorized, c.Do("POST", "/api/v1/jobs/00000000000000000001/retry", tok).Status)
	}
	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the status page is still served beside the API")

	// The verdict before and after an attestation, as the check run says.
	h.repo.Checkout("main")
	h.repo.Branch("scale")
	h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	head := h.repo.Commit("scale create-order to 6")
	pr := h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: "scale", User: author})
	p.deliver("pull_request", githubtest.PullRequestOpened(t, h.gh.PRPayload(owner, repoName, pr.Number)))
	h.eventuallyComment(pr, "(`quiesce_attestation`)")
	verdictPath := "/api/v1/repos/acme/streams/pulls/" + strconv.Itoa(pr.Number)
	var v apiVerdict
	get(verdictPath, apiReadToken, http.StatusOK, &v)
	check := h.check(prreport.CheckPlanPrefix+"streams", head)
	require.Equal(t, head, v.HeadSHA)
	require.False(t, v.Allowed)
	require.Len(t, v.Projects, 1)
	require.Equal(t, "streams", v.Projects[0].Project)
	require.Equal(t, "failure", check.Conclusion)
	require.Equal(t, check.Conclusion, v.Projects[0].Conclusion, "the API's verdict is the check run's")
	require.Equal(t, "quiesce_attestation", v.Projects[0].Denied[0].Rule)
	require.Empty(t, v.Projects[0].Attestations)

	h.tick()
	cm := h.gh.AddComment(owner, repoName, pr.Number, approver, "/shardgate attest quiesce create-order")
	p.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: cm.ID, Body: cm.Body, User: approver}))
	h.eventuallyComment(pr, "✅ **Allowed")
	require.Eventually(t, func() bool { return h.check(prreport.CheckPlanPrefix+"streams", head).Conclusion == "success" },
		30*time.Second, 50*time.Millisecond)
	get(verdictPath, apiReadToken, http.StatusOK, &v)
	require.True(t, v.Allowed)
	require.Equal(t, "success", v.Projects[0].Conclusion, "the API's verdict is the check run's")
	require.Empty(t, v.Projects[0].Denied)
	require.Equal(t, "create-order", v.Projects[0].Attestations[0].StreamPrefix)
	require.Equal(t, approver, v.Projects[0].Attestations[0].Actor)

	// A job that fails for good: GitHub refuses its first request with 422.
	h.gh.Inject(githubtest.Fault{Status: http.StatusUnprocessableEntity, Times: 1})
	h.tick()
	help := h.gh.AddComment(owner, repoName, pr.Number, author, "/shardgate help")
	p.deliver("issue_comment", githubtest.IssueCommentOnPR(t, githubtest.CommentPayload{InstallationID: 1, Owner: owner, Repo: repoName,
		RepoID: h.gh.RepoID(owner, repoName), Number: pr.Number, Author: author, CommentID: help.ID, Body: help.Body, User: author}))
	var failed apiJobs
	require.Eventually(t, func() bool {
		get("/api/v1/jobs?state=failed", apiReadToken, http.StatusOK, &failed)
		return len(failed.Items) == 1
	}, time.Minute, 100*time.Millisecond, "the job never failed")
	job := failed.Items[0]
	require.Equal(t, "issue_comment", job.Kind)
	require.Equal(t, pr.Number, job.PullRequest)
	require.Contains(t, job.LastError, "422")

	r := c.Do("POST", "/api/v1/jobs/"+job.ID+"/retry", apiReadToken)
	require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
	get("/api/v1/jobs?state=failed", apiReadToken, http.StatusOK, &failed)
	require.Len(t, failed.Items, 1, "a read token changed nothing")
	r = c.Do("POST", "/api/v1/jobs/"+job.ID+"/retry", apiWriteToken)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Eventually(t, func() bool {
		var q, run apiJobs
		get("/api/v1/jobs?state=failed", apiReadToken, http.StatusOK, &failed)
		get("/api/v1/jobs?state=queued", apiReadToken, http.StatusOK, &q)
		get("/api/v1/jobs?state=running", apiReadToken, http.StatusOK, &run)
		return len(failed.Items)+len(q.Items)+len(run.Items) == 0
	}, time.Minute, 100*time.Millisecond, "the retried job never finished")
	require.Contains(t, p.logs.String(), `"api_token":"oncall"`, "the write token's name in the audit log")
	require.NotContains(t, p.logs.String(), apiWriteToken, "never the token")
	require.NotContains(t, p.logs.String(), apiReadToken)
	t.Logf("%d API exchanges checked against docs/api.openapi.yaml", c.Checked)
}
