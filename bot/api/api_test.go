package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/api"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/testing/apitest"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

const (
	readToken  = "read-token-0123456789abcdef"
	writeToken = "write-token-0123456789abcdef"
)

type fixture struct {
	t    *testing.T
	st   *store.Bolt
	rec  records.Store
	clk  *fakeclock.Clock
	c    *apitest.Client
	logs *logtest.Hook
	// cancelled are the running jobs the canceller was asked to stop.
	cancelled []string
	canceller api.JobCanceller
}

type recordingCanceller struct{ f *fixture }

func (r recordingCanceller) CancelJob(_ context.Context, id, by string) error {
	r.f.cancelled = append(r.f.cancelled, id+" "+by)
	return nil
}

func newFixture(t *testing.T, canceller func(*fixture) api.JobCanceller) *fixture {
	clk := fakeclock.Following()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "db"), store.WithClock(clk.Now))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	log, hook := logtest.NewNullLogger()
	f := &fixture{t: t, st: st, rec: records.New(st, nil), clk: clk, logs: hook}
	var c api.JobCanceller
	if canceller != nil {
		c = canceller(f)
	}
	h := api.New(api.Options{
		Tokens: []serverconfig.APIToken{{Name: "ci", Token: serverconfig.NewSecret(readToken), Scope: "read"},
			{Name: "ops", Token: serverconfig.NewSecret(writeToken), Scope: "write"}},
		Jobs: st, Records: f.rec, Audits: st, Canceller: c, Log: logrus.NewEntry(log),
		Describe: func(j *store.Job) api.Subject {
			var p struct {
				Repo    string `json:"repo"`
				PR      int    `json:"pr"`
				Applies bool   `json:"applies"`
			}
			_ = json.Unmarshal(j.Payload, &p)
			return api.Subject{Repository: p.Repo, PullRequest: p.PR, Applies: p.Applies}
		},
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	f.c = apitest.New(t, srv.URL)
	return f
}

func (f *fixture) do(method, path, token string, wantStatus int, into any) apitest.Response {
	f.t.Helper()
	r := f.c.Do(method, path, token)
	require.Equal(f.t, wantStatus, r.Status, "%s %s: %s", method, path, r.Body)
	require.Equal(f.t, "application/json", r.Header.Get("Content-Type"))
	if into != nil {
		require.NoError(f.t, json.Unmarshal(r.Body, into))
	}
	return r
}

func (f *fixture) enqueue(payload string) *store.Job {
	j := &store.Job{Kind: "event", Event: "pull_request", Payload: []byte(payload)}
	require.NoError(f.t, f.st.Enqueue(context.Background(), j, 0))
	return j
}

type errBody struct {
	Error string `json:"error"`
}

func TestEveryEndpointRefusesWithoutAValidToken(t *testing.T) {
	f := newFixture(t, nil)
	paths := []struct{ method, path string }{
		{"GET", "/api/v1/repos/acme/streams/pulls/1"}, {"GET", "/api/v1/jobs?state=failed"},
		{"POST", "/api/v1/jobs/00000000000000000001/retry"}, {"POST", "/api/v1/jobs/00000000000000000001/cancel"},
		{"GET", "/api/v1/applies?since=2026-01-01T00:00:00Z"},
	}
	for _, p := range paths {
		for _, tok := range []string{"", "wrong-token-0123456789abcdef", readToken + "x", strings.TrimSuffix(readToken, "f")} {
			var e errBody
			r := f.do(p.method, p.path, tok, http.StatusUnauthorized, &e)
			require.Contains(t, e.Error, "a valid API token is required")
			require.Equal(t, `Bearer realm="shardgate-api"`, r.Header.Get("WWW-Authenticate"))
		}
	}
	for _, e := range f.logs.AllEntries() {
		s, _ := e.String()
		require.NotContains(t, s, readToken[:10], "no token in the log")
	}
}

func TestReadTokenCannotWrite(t *testing.T) {
	f := newFixture(t, nil)
	j := f.enqueue(`{}`)
	for _, action := range []string{"retry", "cancel"} {
		var e errBody
		f.do("POST", "/api/v1/jobs/"+j.ID+"/"+action, readToken, http.StatusForbidden, &e)
		require.Equal(t, "the token ci is read-only: this endpoint needs a write token", e.Error)
	}
	got, err := f.st.GetJob(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, store.JobQueued, got.State, "nothing changed")
	entry := f.logs.LastEntry()
	require.Equal(t, "ci", entry.Data["api_token"], "the token's name in the audit log")
	require.Equal(t, 403, entry.Data["status"])
}

type jobsPage struct {
	Items []struct {
		ID          string `json:"id"`
		Kind        string `json:"kind"`
		Repository  string `json:"repository"`
		PullRequest int    `json:"pull_request"`
		State       string `json:"state"`
		Attempts    int    `json:"attempts"`
		LastError   string `json:"last_error"`
	} `json:"items"`
	Next string `json:"next"`
}

func TestJobsListedRetriedAndCancelled(t *testing.T) {
	f := newFixture(t, func(f *fixture) api.JobCanceller { return recordingCanceller{f} })
	ctx := context.Background()
	var failed []*store.Job
	for i := range 3 {
		j := f.enqueue(`{"repo":"acme/streams","pr":` + string(rune('1'+i)) + `}`)
		_, err := f.st.Claim(ctx, "w")
		require.NoError(t, err)
		require.NoError(t, f.st.Complete(ctx, j.ID, "w", errors.New("422 Validation Failed")))
		failed = append(failed, j)
	}

	var p1, p2 jobsPage
	r := f.do("GET", "/api/v1/jobs?state=failed&limit=2", readToken, http.StatusOK, &p1)
	require.Len(t, p1.Items, 2)
	require.Equal(t, failed[0].ID, p1.Items[0].ID)
	require.Equal(t, "pull_request", p1.Items[0].Kind)
	require.Equal(t, "acme/streams", p1.Items[0].Repository)
	require.Equal(t, 1, p1.Items[0].PullRequest)
	require.Equal(t, "422 Validation Failed", p1.Items[0].LastError)
	require.Equal(t, 1, p1.Items[0].Attempts)
	require.NotEmpty(t, p1.Next)
	require.Equal(t, `</api/v1/jobs?cursor=`+p1.Next+`&limit=2&state=failed>; rel="next"`, r.Header.Get("Link"))
	r = f.do("GET", "/api/v1/jobs?state=failed&limit=2&cursor="+p1.Next, readToken, http.StatusOK, &p2)
	require.Len(t, p2.Items, 1)
	require.Equal(t, failed[2].ID, p2.Items[0].ID)
	require.Empty(t, p2.Next, "the last page")
	require.Empty(t, r.Header.Get("Link"))

	var retried struct {
		ID       string `json:"id"`
		State    string `json:"state"`
		Attempts int    `json:"attempts"`
	}
	f.do("POST", "/api/v1/jobs/"+failed[1].ID+"/retry", writeToken, http.StatusOK, &retried)
	require.Equal(t, "queued", retried.State)
	require.Zero(t, retried.Attempts)
	require.Equal(t, "ops", f.logs.LastEntry().Data["api_token"])
	var e errBody
	f.do("POST", "/api/v1/jobs/"+failed[1].ID+"/retry", writeToken, http.StatusConflict, &e)
	require.Equal(t, "job "+failed[1].ID+" is queued: only a failed job is retried", e.Error)
	var queued jobsPage
	f.do("GET", "/api/v1/jobs?state=queued", readToken, http.StatusOK, &queued)
	require.Len(t, queued.Items, 1)
	require.Equal(t, failed[1].ID, queued.Items[0].ID)

	// The retried job is queued: cancelling it ends it unrun.
	var cancelled struct {
		State     string `json:"state"`
		LastError string `json:"last_error"`
	}
	f.do("POST", "/api/v1/jobs/"+failed[1].ID+"/cancel", writeToken, http.StatusOK, &cancelled)
	require.Equal(t, "done", cancelled.State)
	require.Equal(t, "cancelled: by api token ops", cancelled.LastError)
	f.do("GET", "/api/v1/jobs?state=queued", readToken, http.StatusOK, &queued)
	require.Empty(t, queued.Items)
	f.do("POST", "/api/v1/jobs/"+failed[1].ID+"/cancel", writeToken, http.StatusConflict, &e)
	require.Contains(t, e.Error, "is done: it ended already")

	running := f.enqueue(`{}`)
	_, err := f.st.Claim(ctx, "w")
	require.NoError(t, err)
	f.do("POST", "/api/v1/jobs/"+running.ID+"/cancel", writeToken, http.StatusOK, nil)
	require.Equal(t, []string{running.ID + " api token ops"}, f.cancelled, "a running job goes to the canceller")

	apply := f.enqueue(`{"applies":true}`)
	f.do("POST", "/api/v1/jobs/"+apply.ID+"/cancel", writeToken, http.StatusConflict, &e)
	require.Contains(t, e.Error, "applies are not cancellable")

	f.do("POST", "/api/v1/jobs/00000000000000009999/retry", writeToken, http.StatusNotFound, &e)
	f.do("GET", "/api/v1/jobs?state=done", readToken, http.StatusBadRequest, &e)
	require.Equal(t, "state must be queued, running or failed", e.Error)
	f.do("GET", "/api/v1/jobs?state=failed&limit=0", readToken, http.StatusBadRequest, &e)
	f.do("GET", "/api/v1/jobs?state=failed&cursor=!!", readToken, http.StatusBadRequest, &e)
}

func TestRunningJobRefusedWithoutACanceller(t *testing.T) {
	f := newFixture(t, nil)
	j := f.enqueue(`{}`)
	_, err := f.st.Claim(context.Background(), "w")
	require.NoError(t, err)
	var e errBody
	f.do("POST", "/api/v1/jobs/"+j.ID+"/cancel", writeToken, http.StatusConflict, &e)
	require.Equal(t, "job "+j.ID+" is running: this server cannot stop a running job: wait for it to end", e.Error)
}

type verdictBody struct {
	HeadSHA  string `json:"head_sha"`
	Allowed  bool   `json:"allowed"`
	Projects []struct {
		Project    string `json:"project"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion"`
		Allowed    bool   `json:"allowed"`
		Denied     []struct {
			Rule, Message string
		} `json:"denied_by"`
		Waivers      []struct{ Rule, Label, Actor string } `json:"waivers"`
		Attestations []struct {
			StreamPrefix string `json:"stream_prefix"`
			Actor        string `json:"actor"`
		} `json:"attestations"`
	} `json:"projects"`
}

func TestPullRequestVerdict(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	ref := pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: 7}
	require.NoError(t, f.rec.PutPR(ctx, &records.PRState{Ref: ref, HeadSHA: "abc123", Projects: []string{"streams", "other", "later"}}))
	denied := &records.Plan{Project: "streams", HeadSHA: "abc123", ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{
		Violations:        []policy.Violation{{Rule: "quiesce_attestation", Message: "scale of create-order needs an attestation", StreamPrefix: "create-order"}},
		ExceptionsApplied: []policy.ExceptionApplied{{Rule: "shard_delta", Label: "policy-exception/shard_delta", Actor: "alice", Message: "waived"}}}}
	require.NoError(t, f.rec.PutPlan(ctx, ref, denied))
	require.NoError(t, f.rec.PutPlan(ctx, ref, &records.Plan{Project: "other", HeadSHA: "abc123", Error: "terraform init: exit status 1"}))

	var v verdictBody
	f.do("GET", "/api/v1/repos/acme/streams/pulls/7", readToken, http.StatusOK, &v)
	require.Equal(t, "abc123", v.HeadSHA)
	require.False(t, v.Allowed)
	require.Len(t, v.Projects, 3)
	require.Equal(t, "streams", v.Projects[0].Project)
	require.Equal(t, "failure", v.Projects[0].Conclusion)
	require.Equal(t, "quiesce_attestation", v.Projects[0].Denied[0].Rule)
	require.Equal(t, "scale of create-order needs an attestation", v.Projects[0].Denied[0].Message)
	require.Equal(t, "alice", v.Projects[0].Waivers[0].Actor)
	require.Equal(t, "failure", v.Projects[1].Conclusion, "not planned")
	require.Equal(t, "in_progress", v.Projects[2].Status, "selected, not planned yet")

	denied.Decision = policy.Decision{Allowed: true, AttestationsUsed: []policy.Attestation{{StreamPrefix: "create-order", Actor: "alice",
		CreatedAt: f.clk.Now(), ExpiresAt: f.clk.Now().Add(time.Hour)}}}
	require.NoError(t, f.rec.PutPlan(ctx, ref, denied))
	require.NoError(t, f.rec.PutPR(ctx, &records.PRState{Ref: ref, HeadSHA: "abc123", Projects: []string{"streams"}}))
	f.do("GET", "/api/v1/repos/acme/streams/pulls/7", readToken, http.StatusOK, &v)
	require.True(t, v.Allowed)
	require.Equal(t, "success", v.Projects[0].Conclusion)
	require.Equal(t, "create-order", v.Projects[0].Attestations[0].StreamPrefix)

	var e errBody
	f.do("GET", "/api/v1/repos/acme/streams/pulls/8", readToken, http.StatusNotFound, &e)
	require.Equal(t, "shardgate knows no pull request acme/streams#8", e.Error)
	f.do("GET", "/api/v1/repos/acme/streams/pulls/x", readToken, http.StatusBadRequest, &e)
}

func TestAppliesSince(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ref := pullreq.Ref{Owner: "acme", Repo: "streams", Number: 3}
	for i, a := range []records.Audit{
		{Seq: "000000000001", Attempt: 1, Outcome: "failed", FinishedAt: t0.Add(-time.Hour)},
		{Seq: "000000000001", Attempt: 2, Outcome: "applied", FinishedAt: t0, AppliedBy: "alice", MergedBy: "bob",
			CoordinatorCalls: []records.CoordinatorCall{{Method: "POST", Path: "/coord/v1/scale", Status: 200, Allowed: true, Summary: "scale"}}},
		{Seq: "000000000002", Attempt: 10, Outcome: "applied", FinishedAt: t0.Add(time.Hour), MergedBy: "bob"},
		{Seq: "000000000002", Attempt: 9, Outcome: "failed", FinishedAt: t0.Add(time.Minute), MergedBy: "bob"},
	} {
		a.Ref, a.Project, a.MergeSHA = ref, "streams", "m"+string(rune('0'+i))
		require.NoError(t, records.PutJSON(ctx, f.st, records.BucketAudit, records.AuditKey(a.Seq, a.Attempt), a))
	}
	type applies struct {
		Items []struct {
			ID               string                    `json:"id"`
			Outcome          string                    `json:"outcome"`
			AppliedBy        string                    `json:"applied_by"`
			CoordinatorCalls []records.CoordinatorCall `json:"coordinator_calls"`
		} `json:"items"`
		Next string `json:"next"`
	}
	var p, p2 applies
	f.do("GET", "/api/v1/applies?since=2026-03-01T12:00:00Z&limit=2", readToken, http.StatusOK, &p)
	require.Len(t, p.Items, 2)
	require.Equal(t, "000000000001#2", p.Items[0].ID, "from since on")
	require.Equal(t, "alice", p.Items[0].AppliedBy)
	require.Equal(t, "scale", p.Items[0].CoordinatorCalls[0].Summary)
	require.Equal(t, "000000000002#9", p.Items[1].ID, "attempt 9 before attempt 10")
	f.do("GET", "/api/v1/applies?since=2026-03-01T12:00:00Z&limit=2&cursor="+p.Next, readToken, http.StatusOK, &p2)
	require.Len(t, p2.Items, 1)
	require.Equal(t, "bob", p2.Items[0].AppliedBy, "merged, no apply command: who merged")
	require.Empty(t, p2.Next)
	var e errBody
	f.do("GET", "/api/v1/applies?since=yesterday", readToken, http.StatusBadRequest, &e)
	require.Contains(t, e.Error, "since must be an RFC 3339 time")
}
