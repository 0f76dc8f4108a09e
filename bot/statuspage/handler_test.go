package statuspage

import (
	"bufio"
	"context"
	"errors"
	"html/template"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

func refOf(n int) pullreq.Ref {
	return pullreq.Ref{Installation: 1, Owner: "acme", Repo: "streams", Number: n}
}

func get(t *testing.T, url, auth string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func TestBearerToken(t *testing.T) {
	const token = "status-token-0123456789"
	s := newScene(t, "bolt", Options{Token: token, Redactor: redact.New(token)})
	l := s.start(t, s.enqueue(t, 11, "orders", "http://coord:8080 orders"))
	tests := []struct {
		name, path, auth string
		want             int
	}{
		{"no token", "/", "", http.StatusUnauthorized},
		{"wrong token", "/", "Bearer not-the-token", http.StatusUnauthorized},
		{"token with a suffix", "/", "Bearer " + token + "x", http.StatusUnauthorized},
		{"not bearer", "/", token, http.StatusUnauthorized},
		{"basic, wrong password", "/", basic("x", "wrong"), http.StatusUnauthorized},
		{"log stream without a token", "/jobs/" + l.Info().ID + "/log", "", http.StatusUnauthorized},
		{"job page without a token", "/jobs/" + l.Info().ID, "", http.StatusUnauthorized},
		{"bearer", "/", "Bearer " + token, http.StatusOK},
		{"basic with the token as password (a browser's prompt)", "/", basic("anyone", token), http.StatusOK},
		{"job page", "/jobs/" + l.Info().ID, "Bearer " + token, http.StatusOK},
		{"unknown job", "/jobs/apply-9-9", "Bearer " + token, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, s.srv.URL+tt.path, tt.auth)
			require.Equal(t, tt.want, resp.StatusCode, body)
			if tt.want == http.StatusUnauthorized {
				require.Contains(t, resp.Header.Values("WWW-Authenticate"), `Bearer realm="shardgate status"`)
				require.NotContains(t, body, "orders")
				require.NotContains(t, body, token)
			}
		})
	}
}

func basic(user, pass string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

func TestNoTokenConfiguredServesEveryone(t *testing.T) {
	s := newScene(t, "bolt", Options{})
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "No apply is queued or running.")
	require.Contains(t, body, "Drift checks are off on this server.")
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'none'")
}

// hostile is a name a pull request chose, per field, so that a test can
// tell which field leaked.
func hostile(field string) string {
	return `<script>alert("` + field + `")</script>'"&` + field
}

// fakeDrift is a DriftSource of fixed rows.
type fakeDrift struct {
	rows []DriftRow
	err  error
}

func (f fakeDrift) Drift(context.Context) ([]DriftRow, error) { return f.rows, f.err }

func TestEveryPlanDerivedNameIsEscaped(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			drift := fakeDrift{rows: []DriftRow{{Repo: hostile("drift-repo"), Project: hostile("drift-project"), Status: hostile("drift-status"),
				Groups:   []DriftGroup{{Prefix: hostile("drift-prefix"), Group: hostile("drift-group"), Desired: 4, Live: intp(8)}},
				IssueURL: "javascript:alert(document.cookie)"}, {Repo: "acme/streams", Project: "p", Status: "drifted",
				IssueURL: "https://evil.example/acme/streams/issues/1"}}}
			s := newScene(t, backend, Options{Drift: drift})
			ctx := context.Background()
			evil := pullreq.Ref{Installation: 1, Owner: hostile("owner"), Repo: hostile("repo"), Number: 12}
			stream := planparse.StreamKey("http://coord:8080", hostile("stream-prefix"))
			j1 := &applyqueue.Job{Ref: evil, Project: hostile("apply-project"), Streams: []string{stream}, MergeSHA: hostile("merge-sha"), MergedBy: hostile("merged-by")}
			require.NoError(t, s.queue.Enqueue(ctx, j1))
			j2 := &applyqueue.Job{Ref: evil, Project: hostile("second-project"), Streams: []string{stream}}
			require.NoError(t, s.queue.Enqueue(ctx, j2))
			l := s.start(t, j1)
			require.NoError(t, s.queue.Update(ctx, j1.Seq, func(j *applyqueue.Job) error { j.Progress = hostile("progress"); return nil }))
			l.StateLockWait(&runner.LockWait{Lock: runner.StateLockError{ID: hostile("lock-id"), Who: hostile("lock-who"), Operation: hostile("lock-op")}, Attempt: 1})
			require.NoError(t, s.rec.PutPlan(ctx, evil, &records.Plan{Project: hostile("plan-project"), HeadSHA: hostile("head-sha"), PlannedAt: s.clock.Now(),
				ChangeSet: &planparse.ChangeSet{}, Decision: policy.Decision{Violations: []policy.Violation{{Rule: hostile("rule"),
					StreamPrefix: hostile("violation-prefix"), ConsumerGroup: hostile("violation-group"), Message: hostile("message")}}},
				LockWaits: []report.LockWait{{ID: hostile("plan-lock-id"), Who: hostile("plan-lock-who"), Operation: hostile("plan-lock-op")}}}))
			require.NoError(t, records.PutJSON(ctx, s.st, records.BucketAudit, records.AuditKey("000000000001", 1), records.Audit{Seq: "000000000001",
				Ref: evil, Project: hostile("audit-project"), Outcome: string(applyqueue.Failed), Reason: hostile("reason"), MergeSHA: hostile("audit-sha"),
				MergedBy: hostile("audit-merged-by"), AppliedBy: hostile("audit-applied-by"), RequestIDs: []string{hostile("request-id")}, RequestIDPrefix: hostile("request-prefix")}))

			resp, body := get(t, s.srv.URL+"/", "")
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			for _, field := range []string{"owner", "repo", "stream-prefix", "apply-project", "second-project", "progress", "lock-id", "lock-who",
				"lock-op", "plan-project", "head-sha", "rule", "violation-prefix", "violation-group", "message", "plan-lock-who",
				"audit-project", "reason", "audit-sha", "audit-merged-by", "audit-applied-by", "request-id", "request-prefix",
				"drift-repo", "drift-project", "drift-status", "drift-prefix", "drift-group"} {
				require.Contains(t, body, template.HTMLEscapeString(hostile(field)), "field %s is shown, escaped", field)
			}
			require.NotContains(t, body, "<script>alert")
			require.NotContains(t, body, `href="javascript:`)
			require.NotContains(t, body, `href="https://evil.example`, "an issue link off the configured GitHub is not a link")
			require.Contains(t, body, `javascript:alert(document.cookie)`, "shown as text")
			// The pull request link is built from the reference, its names path-escaped.
			require.Contains(t, body, `href="https://github.com/%3Cscript%3Ealert%28%22owner%22%29%3C%2Fscript%3E%27%22&amp;owner/`)
			require.NotContains(t, body, `href="https://github.com/<`)

			// The job page of the running apply, too.
			resp, body = get(t, s.srv.URL+"/jobs/"+l.Info().ID, "")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			for _, field := range []string{"owner", "repo", "apply-project", "lock-who"} {
				require.Contains(t, body, template.HTMLEscapeString(hostile(field)))
			}
			require.NotContains(t, body, "<script>alert")
		})
	}
}

func TestQueueOrderAndWhoWaitsBehindWhom(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newScene(t, backend, Options{})
			const stream = "http://coord:8080 orders"
			first := s.enqueue(t, 11, "first", stream)
			s.enqueue(t, 12, "second", stream)
			s.enqueue(t, 13, "other", "http://coord:8080 payments")
			s.start(t, first)
			_, body := get(t, s.srv.URL+"/", "")
			i1, i2 := strings.Index(body, "acme/streams#11"), strings.Index(body, "acme/streams#12")
			require.True(t, i1 > 0 && i2 > i1, "merge order on the stream")
			leaseEnd := pageTime(s.clock.Now().Add(10 * time.Minute))
			require.Contains(t, body, "holds the stream lock: applying, lease held by replica-a until "+leaseEnd+", fencing token 1")
			require.Contains(t, body, "waits behind apply 1 (acme/streams#11, project first) on stream orders: stream lock held by apply 1, applying on replica-a, lease until "+leaseEnd)
			require.Contains(t, body, "first in line: starts when a scheduler picks it up")
			require.Contains(t, body, `href="/jobs/apply-000000000001-1"`)
			require.Contains(t, body, `href="https://github.com/acme/streams/pull/11"`)
		})
	}
}

func TestNoSecretInPagesOrLogStreams(t *testing.T) {
	const password, sensitive = "coordinator-pass-3141", "sensitive-plan-value-2718"
	r := redact.New(password, sensitive)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newScene(t, backend, Options{Redactor: r})
			ctx := context.Background()
			j := s.enqueue(t, 11, "orders", "http://coord:8080 orders")
			l := s.start(t, j)
			require.NoError(t, s.queue.Update(ctx, j.Seq, func(j *applyqueue.Job) error {
				j.Progress = "calling http://admin:" + password + "@coord:8080"
				return nil
			}))
			_, _ = io.WriteString(l, "module.orders: value "+sensitive+"\nauth admin:"+password[:10])
			_, _ = io.WriteString(l, password[10:]+"\n")
			require.NoError(t, s.rec.PutPlan(ctx, refOf(11), &records.Plan{Project: "orders", HeadSHA: "abc1234", Error: "terraform said " + sensitive}))
			require.NoError(t, records.PutJSON(ctx, s.st, records.BucketAudit, records.AuditKey(j.Seq, 1), records.Audit{Seq: j.Seq,
				Ref: refOf(11), Project: "orders", Outcome: string(applyqueue.Failed), Reason: "coordinator refused " + password}))
			s.start(t, s.enqueue(t, 14, "payments", "http://coord:8080 payments")).StateLockWait(&runner.LockWait{
				Lock: runner.StateLockError{Who: "ops@" + password, ID: "l1"}, Attempt: 1})
			l.Close()

			var served strings.Builder
			for _, path := range []string{"/", "/jobs/" + l.Info().ID} {
				resp, body := get(t, s.srv.URL+path, "")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				served.WriteString(body)
			}
			resp, body := get(t, s.srv.URL+"/jobs/"+l.Info().ID+"/log", "")
			require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
			require.Contains(t, body, "data: module.orders: value [REDACTED]")
			served.WriteString(body)
			out := served.String()
			require.Contains(t, out, "coordinator refused")
			for _, secret := range []string{password, sensitive} {
				for i := 0; i+redact.Window <= len(secret); i++ {
					require.NotContains(t, out, secret[i:i+redact.Window])
				}
			}
		})
	}
}

// readEvents reads server-sent events until n "data" events or the end.
func readEvents(t *testing.T, body io.Reader, until func(event, data string) bool) {
	t.Helper()
	sc := bufio.NewScanner(body)
	event, data := "", []string{}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 || event != "" {
				if until(event, strings.Join(data, "\n")) {
					return
				}
			}
			event, data = "", nil
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	t.Fatalf("the stream ended early: %v", sc.Err())
}

func TestLogStreamReplaysFollowsAndEnds(t *testing.T) {
	s := newScene(t, "bolt", Options{})
	l := s.start(t, s.enqueue(t, 11, "orders", "http://coord:8080 orders"))
	_, _ = io.WriteString(l, "line one\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL+"/jobs/"+l.Info().ID+"/log", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var got []string
	readEvents(t, resp.Body, func(event, data string) bool {
		got = append(got, event+"|"+data)
		switch len(got) {
		case 1:
			// Written after the reader caught up: followed live. A carriage
			// return cannot end the data field early.
			_, _ = io.WriteString(l, "line two\revent: end\nline three\n")
		case 2:
			l.Close()
		}
		return event == "end"
	})
	require.Equal(t, []string{"|line one", "|line twoevent: end\nline three", "end|the job has ended"}, got)

	// A reconnecting EventSource resumes after the last event it saw.
	req, err = http.NewRequest(http.MethodGet, s.srv.URL+"/jobs/"+l.Info().ID+"/log", nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", "9")
	resp2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	require.Equal(t, "id: 40\ndata: line twoevent: end\ndata: line three\n\nevent: end\ndata: the job has ended\n\n", string(b))

}

func TestWebURL(t *testing.T) {
	for api, want := range map[string]string{
		"https://api.github.com/":         "https://github.com",
		"https://ghe.example.com/api/v3/": "https://ghe.example.com",
		"http://127.0.0.1:9999/":          "http://127.0.0.1:9999",
		"https://api.acme.ghe.com/":       "https://acme.ghe.com",
		"javascript:alert(1)":             "",
		"":                                "",
	} {
		require.Equal(t, want, WebURL(api), api)
	}
}

// A source that fails is named on the page, redacted; the rest still shows.
func TestAFailingSourceIsNamedAndTheRestShown(t *testing.T) {
	const password = "coordinator-pass-3141"
	s := newScene(t, "bolt", Options{Redactor: redact.New(password),
		Drift: fakeDrift{err: errors.New("drift checks: coordinator refused admin:" + password)}})
	s.enqueue(t, 11, "orders", "http://coord:8080 orders")
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "read the drift checks: drift checks: coordinator refused admin:[REDACTED]")
	require.NotContains(t, body, password)
	require.Contains(t, body, "acme/streams#11")
}

func intp(n int) *int { return &n }

// Applies that change no coordinator stream (an alarm) queue on their
// project's Terraform state: the page shows that lane in merge order, with
// who holds it and who waits behind whom.
func TestStateLanesOfAppliesWithoutStreams(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newScene(t, backend, Options{})
			const state = "acme/streams:alarms@default"
			enqueue := func(n int, project string) *applyqueue.Job {
				j := &applyqueue.Job{Ref: refOf(n), Project: project, StateKey: state, MergeSHA: "0123456789abcdef0123456789abcdef01234567"}
				require.NoError(t, s.queue.Enqueue(context.Background(), j))
				return j
			}
			first := enqueue(21, "alarms")
			enqueue(22, "alarms")
			s.start(t, first)
			_, body := get(t, s.srv.URL+"/", "")
			require.Contains(t, body, "Terraform state <code class=\"state-key\">"+state+"</code>")
			i1, i2 := strings.Index(body, "acme/streams#21"), strings.Index(body, "acme/streams#22")
			require.True(t, i1 > 0 && i2 > i1, "merge order on the state")
			require.Contains(t, body, "holds the state lock: applying, lease held by replica-a")
			require.Contains(t, body, "waits behind apply 1 (acme/streams#21, project alarms) on Terraform state "+state+": state lock held by apply 1, applying on replica-a")
		})
	}
}

func TestTheGitHubBudgetOfEachInstallation(t *testing.T) {
	now := fakeclock.Date(2026, 12, 4, 13, 30, 0) // two days after the page's clock (newScene), on any shift
	s := newScene(t, "bolt", Options{GitHub: func() []GitHubBudget {
		return []GitHubBudget{
			{InstallationID: 9, Limit: 5000, Remaining: 0, Reset: now.Add(35 * time.Minute)},
			{InstallationID: 7, Limit: 5000, Remaining: 4312, Reset: now.Add(20 * time.Minute)},
			{InstallationID: 8, SecondaryUntil: now.Add(time.Minute)},
		}
	}})
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "<td>7</td><td>4312 of 5000</td>")
	require.Contains(t, body, "waiting for GitHub&#39;s rate limit, resets at "+pageTime(now.Add(35*time.Minute)))
	require.Contains(t, body, "waiting for GitHub&#39;s secondary rate limit until "+pageTime(now.Add(time.Minute)))
	require.Less(t, strings.Index(body, "<td>7</td>"), strings.Index(body, "<td>9</td>"), "in installation order")
}

// The server's settings are listed under "This server", in order, escaped;
// one that leaves something unenforced is marked.
func TestTheServerSettings(t *testing.T) {
	s := newScene(t, "bolt", Options{Settings: []Setting{
		{Name: "processes of a job", Value: "none: <not enforced>", Warn: true},
		{Name: "apply.max_concurrent", Value: "at most 4 applies at once"},
	}})
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `<h2>This server</h2>`)
	require.Contains(t, body, `<tr><th>processes of a job</th><td class="wait">none: &lt;not enforced&gt;</td></tr>`)
	require.Contains(t, body, `<tr><th>apply.max_concurrent</th><td>at most 4 applies at once</td></tr>`)
	require.Less(t, strings.Index(body, "processes of a job"), strings.Index(body, "apply.max_concurrent"))
}

// A job that depends on another project's apply of its merge says so.
func TestQueueShowsTheOrderOfDependsOn(t *testing.T) {
	s := newScene(t, backends[0], Options{})
	j := &applyqueue.Job{Ref: refOf(21), Project: "infra", Streams: []string{"http://coord:8080 orders"}, MergeSHA: "0123456789abcdef0123456789abcdef01234567",
		After: []string{"network"}}
	require.NoError(t, s.queue.Enqueue(context.Background(), j))
	_, body := get(t, s.srv.URL+"/", "")
	require.Contains(t, body, "first in line: starts when a scheduler picks it up, and only once the merge&#39;s applies of network it depends on have succeeded (depends_on)")
}

// A recent plan names the terraform it ran when the server has several.
func TestRecentPlanNamesItsTerraform(t *testing.T) {
	s := newScene(t, backends[0], Options{})
	require.NoError(t, s.rec.PutPlan(context.Background(), refOf(31), &records.Plan{Project: "new", HeadSHA: "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
		Error: "not planned", Terraform: "terraform 1.11.4"}))
	_, body := get(t, s.srv.URL+"/", "")
	require.Contains(t, body, "with terraform 1.11.4")
}
