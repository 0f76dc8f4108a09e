package githubtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawCall sends one request with an installation token (or the given
// Authorization) and returns the status.
func rawCall(t *testing.T, gh *Server, auth, method, path, body string) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(gh.URL(), "/")+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

func TestOutOfSpecRequestsFailTheTest(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		want   int
	}{
		{"path not in the subset", "GET", "/repos/acme/infra/pulls", "", 404},
		{"method not in the subset", "POST", "/repos/acme/infra/pulls/1", `{}`, 404},
		{"check run without head_sha", "POST", "/repos/acme/infra/check-runs", `{"name":"x"}`, 422},
		{"completed check run without conclusion", "POST", "/repos/acme/infra/check-runs", `{"name":"x","head_sha":"abc","status":"completed"}`, 422},
		{"comment body of the wrong type", "POST", "/repos/acme/infra/issues/1/comments", `{"body":5}`, 422},
		{"comment without body", "POST", "/repos/acme/infra/issues/1/comments", `{}`, 422},
		{"reaction outside the enum", "POST", "/repos/acme/infra/issues/comments/1/reactions", `{"content":"party"}`, 422},
		{"non-numeric page", "GET", "/repos/acme/infra/issues/1/comments?per_page=abc", "", 422},
		{"body where none is specified", "DELETE", "/repos/acme/infra/issues/1/labels/bug", `{"x":1}`, 422},
		{"label name with a raw slash", "DELETE", "/repos/acme/infra/issues/1/labels/policy-exception/x", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &errorRecorder{TB: t}
			gh := New(rec)
			newRepoWithPR(t, gh)
			got := rawCall(t, gh, "token "+gh.InstallationToken(DefaultInstallationID), tt.method, tt.path, tt.body)
			require.Equal(t, tt.want, got)
			errs := rec.Errors()
			require.Len(t, errs, 1)
			require.Contains(t, errs[0], "outside the GitHub OpenAPI subset")
		})
	}
}

func TestInSpecRequestDoesNotFailTheTest(t *testing.T) {
	rec := &errorRecorder{TB: t}
	gh := New(rec)
	newRepoWithPR(t, gh)
	got := rawCall(t, gh, "token "+gh.InstallationToken(DefaultInstallationID), "POST", "/repos/acme/infra/issues/1/comments", `{"body":"ok"}`)
	require.Equal(t, 201, got)
	require.Empty(t, rec.Errors())
}

// TestEveryOperationAnswersPerSpec calls each of the subset's 32 operations.
// The fake validates its own answers and reports a mismatch as a test
// error, so an empty error list means every answer has the spec's shape.
func TestEveryOperationAnswersPerSpec(t *testing.T) {
	rec := &errorRecorder{TB: t}
	gh := New(rec)
	_, pr := newRepoWithPR(t, gh)
	gh.AddTeamMember("acme", "platform", "erin")
	gh.SetPermission("acme", "infra", "dave", "admin")
	gh.AddLabel("acme", "infra", pr.Number, "bug", "alice")
	user := gh.AddComment("acme", "infra", pr.Number, "bob", "/shardgate help")
	tok := "token " + gh.InstallationToken(DefaultInstallationID)
	key, err := appKey()
	require.NoError(t, err)
	now := time.Now().Unix()
	jwt := "Bearer " + signJWT(t, key, "RS256", map[string]any{"iss": gh.AppID(), "iat": now - 30, "exp": now + 300})

	// Ids created along the way; rows run in order.
	var botComment, checkRun, reaction int64
	ids := func(f string) func() string {
		return func() string {
			return strings.NewReplacer("{bot}", fmt.Sprint(botComment), "{user}", fmt.Sprint(user.ID),
				"{run}", fmt.Sprint(checkRun), "{reaction}", fmt.Sprint(reaction)).Replace(f)
		}
	}
	rows := []struct {
		method, path, body string
		auth               string
		want               int
		capture            *int64
	}{
		{"POST", "/app/installations/1/access_tokens", "", jwt, 201, nil},
		{"GET", "/orgs/acme/teams/platform/memberships/erin", "", tok, 200, nil},
		{"GET", "/orgs/acme/teams/platform/memberships/mallory", "", tok, 404, nil},
		{"POST", "/repos/acme/infra/check-runs", `{"name":"shardgate/plan: orders","head_sha":"` + pr.HeadSHA + `","status":"in_progress","output":{"title":"t","summary":"s"}}`, tok, 201, &checkRun},
		{"GET", "/repos/acme/infra/check-runs/{run}", "", tok, 200, nil},
		{"PATCH", "/repos/acme/infra/check-runs/{run}", `{"status":"completed","conclusion":"success","output":{"title":"t","summary":"s","text":"x"}}`, tok, 200, nil},
		{"GET", "/repos/acme/infra/collaborators/dave/permission", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/compare/main...change", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/contents/.shardgate.yaml?ref=main", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/contents/stacks?ref=change", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/contents/absent.yaml", "", tok, 404, nil},
		{"POST", "/repos/acme/infra/issues/1/comments", `{"body":"<!-- shardgate -->"}`, tok, 201, &botComment},
		{"GET", "/repos/acme/infra/issues/1/comments?per_page=1&page=2", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/issues/comments/{bot}", "", tok, 200, nil},
		{"PATCH", "/repos/acme/infra/issues/comments/{bot}", `{"body":"<!-- shardgate --> done"}`, tok, 200, nil},
		{"POST", "/repos/acme/infra/issues/comments/{user}/reactions", `{"content":"eyes"}`, tok, 201, &reaction},
		{"POST", "/repos/acme/infra/issues/comments/{user}/reactions", `{"content":"eyes"}`, tok, 200, nil},
		{"GET", "/repos/acme/infra/issues/comments/{user}/reactions", "", tok, 200, nil},
		{"DELETE", "/repos/acme/infra/issues/comments/{user}/reactions/{reaction}", "", tok, 204, nil},
		{"GET", "/repos/acme/infra/issues/1/labels", "", tok, 200, nil},
		{"POST", "/repos/acme/infra/issues/1/labels", `{"labels":["a"]}`, tok, 200, nil},
		{"POST", "/repos/acme/infra/issues/1/labels", `["b"]`, tok, 200, nil},
		{"PUT", "/repos/acme/infra/issues/1/labels", `["a","c"]`, tok, 200, nil},
		{"DELETE", "/repos/acme/infra/issues/1/labels/c", "", tok, 200, nil},
		{"DELETE", "/repos/acme/infra/issues/1/labels", "", tok, 204, nil},
		{"GET", "/repos/acme/infra/issues/1/events", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/issues/1/timeline", "", tok, 200, nil},
		{"GET", "/repos/acme/infra/pulls/1", "", tok, 200, nil},
		{"PATCH", "/repos/acme/infra/pulls/1", `{"title":"renamed"}`, tok, 200, nil},
		{"GET", "/repos/acme/infra/pulls/1/files", "", tok, 200, nil},
		{"POST", "/repos/acme/infra/statuses/" + pr.HeadSHA, `{"state":"success","context":"shardgate"}`, tok, 201, nil},
		{"GET", "/repos/acme/infra/tarball/" + pr.HeadSHA, "", tok, 302, nil},
		{"DELETE", "/repos/acme/infra/issues/comments/{bot}", "", tok, 204, nil},
	}
	for _, row := range rows {
		path := ids(row.path)()
		var rd io.Reader
		if row.body != "" {
			rd = bytes.NewReader([]byte(row.body))
		}
		req, err := http.NewRequestWithContext(context.Background(), row.method, strings.TrimSuffix(gh.URL(), "/")+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", row.auth)
		if row.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, row.want, resp.StatusCode, "%s %s: %s", row.method, path, raw)
		if row.capture != nil {
			var v struct{ ID int64 }
			require.NoError(t, jsonUnmarshal(raw, &v))
			*row.capture = v.ID
		}
	}
	require.Empty(t, rec.Errors())
	require.Equal(t, "renamed", gh.PR("acme", "infra", 1).Title)
	require.Empty(t, gh.Labels("acme", "infra", 1))

	// The operations the bot has no use for are reported, not faked.
	for _, op := range []struct{ method, path, body string }{
		{"PUT", "/orgs/acme/teams/platform/memberships/erin", `{"role":"member"}`},
		{"DELETE", "/orgs/acme/teams/platform/memberships/erin", ""},
		{"PUT", "/repos/acme/infra/contents/x.tf", `{"message":"m","content":"eA=="}`},
		{"DELETE", "/repos/acme/infra/contents/x.tf", `{"message":"m","sha":"abc"}`},
	} {
		rec := &errorRecorder{TB: t}
		gh := New(rec)
		newRepoWithPR(t, gh)
		require.Equal(t, 501, rawCall(t, gh, "token "+gh.InstallationToken(DefaultInstallationID), op.method, op.path, op.body))
		require.Len(t, rec.Errors(), 1)
		require.Contains(t, rec.Errors()[0], "does not implement")
	}
}

func TestResponseValidationCatchesBadShapes(t *testing.T) {
	sp, err := loadSpec()
	require.NoError(t, err)
	req, err := http.NewRequest("GET", "http://fake/repos/acme/infra/issues/comments/5", nil)
	require.NoError(t, err)
	route, params, err := sp.validateRequest(req, nil)
	require.NoError(t, err)
	good, err := encodeBody(merge(sp.skeleton("issue-comment"), map[string]any{"user": nil}))
	require.NoError(t, err)
	header := http.Header{"Content-Type": {"application/json"}}
	require.NoError(t, validateResponse(req, route, params, 200, header, good))
	require.Error(t, validateResponse(req, route, params, 200, header, []byte(`{"id":"five"}`)))
}
