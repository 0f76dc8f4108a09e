package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

func TestSignMatchesGitHubExample(t *testing.T) {
	// The example from GitHub's "Validating webhook deliveries" docs.
	require.Equal(t, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		Sign("It's a Secret to Everybody", []byte("Hello, World!")))
}

func samplePR() PRPayload {
	return PRPayload{
		InstallationID: 77, Owner: "acme", Repo: "infra", RepoID: 9001, Number: 12,
		Title: "Scale orders", Author: "alice", Sender: "bob", HeadRef: "change",
		HeadSHA: "1111111111111111111111111111111111111111", BaseRef: "main",
		BaseSHA: "2222222222222222222222222222222222222222", Labels: []string{"infra"},
	}
}

func TestPullRequestBuilders(t *testing.T) {
	p := samplePR()
	fork := p
	fork.HeadRepo = "outsider/infra"
	mergedAt := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		body   []byte
		action string
		check  func(t *testing.T, e *github.PullRequestEvent)
	}{
		{"opened", PullRequestOpened(t, p), "opened", nil},
		{"reopened", PullRequestReopened(t, p), "reopened", nil},
		{"synchronize", PullRequestSynchronize(t, p, "3333333333333333333333333333333333333333"), "synchronize", func(t *testing.T, e *github.PullRequestEvent) {
			require.Equal(t, "3333333333333333333333333333333333333333", e.GetBefore())
			require.Equal(t, p.HeadSHA, e.GetAfter())
		}},
		{"labeled", PullRequestLabeled(t, p, "policy-exception/large_scale"), "labeled", func(t *testing.T, e *github.PullRequestEvent) {
			require.Equal(t, "policy-exception/large_scale", e.GetLabel().GetName())
		}},
		{"unlabeled", PullRequestUnlabeled(t, p, "policy-exception/large_scale"), "unlabeled", func(t *testing.T, e *github.PullRequestEvent) {
			require.Equal(t, "policy-exception/large_scale", e.GetLabel().GetName())
		}},
		{"ready for review", PullRequestReadyForReview(t, p), "ready_for_review", func(t *testing.T, e *github.PullRequestEvent) {
			require.False(t, e.GetPullRequest().GetDraft())
		}},
		{"closed", PullRequestClosed(t, p), "closed", func(t *testing.T, e *github.PullRequestEvent) {
			require.False(t, e.GetPullRequest().GetMerged())
		}},
		{"closed merged synthetic", PullRequestClosedMergedSynthetic(t, p, "carol", "4444444444444444444444444444444444444444", mergedAt), "closed", func(t *testing.T, e *github.PullRequestEvent) {
			require.True(t, e.GetPullRequest().GetMerged())
			require.Equal(t, "carol", e.GetPullRequest().GetMergedBy().GetLogin())
			require.Equal(t, mergedAt, e.GetPullRequest().GetMergedAt().Time)
			require.Equal(t, "4444444444444444444444444444444444444444", e.GetPullRequest().GetMergeCommitSHA())
		}},
		{"fork", PullRequestOpened(t, fork), "opened", func(t *testing.T, e *github.PullRequestEvent) {
			require.Equal(t, "outsider/infra", e.GetPullRequest().GetHead().GetRepo().GetFullName())
			require.True(t, e.GetPullRequest().GetHead().GetRepo().GetFork())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed, err := github.ParseWebHook("pull_request", tt.body)
			require.NoError(t, err)
			e, ok := parsed.(*github.PullRequestEvent)
			require.True(t, ok)
			require.Equal(t, tt.action, e.GetAction())
			require.Equal(t, int64(77), e.GetInstallation().GetID())
			require.Equal(t, "acme/infra", e.GetRepo().GetFullName())
			require.Equal(t, "acme", e.GetRepo().GetOwner().GetLogin())
			require.Equal(t, int64(9001), e.GetRepo().GetID())
			require.Equal(t, 12, e.GetNumber())
			require.Equal(t, 12, e.GetPullRequest().GetNumber())
			require.Equal(t, "alice", e.GetPullRequest().GetUser().GetLogin())
			require.Equal(t, "bob", e.GetSender().GetLogin())
			require.Equal(t, p.HeadSHA, e.GetPullRequest().GetHead().GetSHA())
			require.Equal(t, "change", e.GetPullRequest().GetHead().GetRef())
			require.Equal(t, "main", e.GetPullRequest().GetBase().GetRef())
			require.Equal(t, p.BaseSHA, e.GetPullRequest().GetBase().GetSHA())
			require.Equal(t, "acme/infra", e.GetPullRequest().GetBase().GetRepo().GetFullName())
			require.Len(t, e.GetPullRequest().Labels, 1)
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

func TestIssueCommentOnPR(t *testing.T) {
	body := IssueCommentOnPR(t, CommentPayload{
		InstallationID: 77, Owner: "acme", Repo: "infra", Number: 12, Author: "alice",
		CommentID: 555, Body: "/shardgate plan", User: "bob",
	})
	parsed, err := github.ParseWebHook("issue_comment", body)
	require.NoError(t, err)
	e, ok := parsed.(*github.IssueCommentEvent)
	require.True(t, ok)
	require.Equal(t, "created", e.GetAction())
	require.Equal(t, int64(77), e.GetInstallation().GetID())
	require.True(t, e.GetIssue().IsPullRequest())
	require.Equal(t, 12, e.GetIssue().GetNumber())
	require.Equal(t, "alice", e.GetIssue().GetUser().GetLogin())
	require.Equal(t, int64(555), e.GetComment().GetID())
	require.Equal(t, "/shardgate plan", e.GetComment().GetBody())
	require.Equal(t, "bob", e.GetComment().GetUser().GetLogin())
	require.Equal(t, "bob", e.GetSender().GetLogin())
	require.Equal(t, "acme/infra", e.GetRepo().GetFullName())
}

func TestCheckRunRerequested(t *testing.T) {
	body := CheckRunRerequested(t, CheckRunPayload{
		InstallationID: 77, Owner: "acme", Repo: "infra", CheckRunID: 31, Name: "shardgate/plan: orders",
		HeadSHA: "1111111111111111111111111111111111111111", AppID: DefaultAppID, PRNumbers: []int{12},
	})
	parsed, err := github.ParseWebHook("check_run", body)
	require.NoError(t, err)
	e, ok := parsed.(*github.CheckRunEvent)
	require.True(t, ok)
	require.Equal(t, "rerequested", e.GetAction())
	require.Equal(t, int64(77), e.GetInstallation().GetID())
	require.Equal(t, int64(31), e.GetCheckRun().GetID())
	require.Equal(t, "shardgate/plan: orders", e.GetCheckRun().GetName())
	require.Equal(t, "1111111111111111111111111111111111111111", e.GetCheckRun().GetHeadSHA())
	require.Equal(t, DefaultAppID, e.GetCheckRun().GetApp().GetID())
	require.Len(t, e.GetCheckRun().PullRequests, 1)
	require.Equal(t, 12, e.GetCheckRun().PullRequests[0].GetNumber())
}

// TestRawCheckRunFixtureDefeatsGoGithub pins why CheckRunRerequested
// rewrites the App timestamps: the untouched fixture does not parse.
func TestRawCheckRunFixtureDefeatsGoGithub(t *testing.T) {
	_, err := github.ParseWebHook("check_run", Webhook(t, "check_run", "rerequested.payload", nil))
	require.ErrorContains(t, err, "2018-04-25 20:42:10")
}

func TestInstallationCreatedAndPing(t *testing.T) {
	parsed, err := github.ParseWebHook("installation", InstallationCreated(t, 88, "acme", []string{"acme/infra", "acme/net"}))
	require.NoError(t, err)
	inst, ok := parsed.(*github.InstallationEvent)
	require.True(t, ok)
	require.Equal(t, "created", inst.GetAction())
	require.Equal(t, int64(88), inst.GetInstallation().GetID())
	require.Equal(t, "acme", inst.GetInstallation().GetAccount().GetLogin())
	require.Len(t, inst.Repositories, 2)
	require.Equal(t, "acme/net", inst.Repositories[1].GetFullName())

	// go-github's Hook has no app_id field; read it raw.
	body := Ping(t, 4242)
	var raw struct {
		Hook struct {
			AppID int64 `json:"app_id"`
		} `json:"hook"`
	}
	require.NoError(t, json.Unmarshal(body, &raw))
	require.Equal(t, int64(4242), raw.Hook.AppID)
	parsed, err = github.ParseWebHook("ping", body)
	require.NoError(t, err)
	ping, ok := parsed.(*github.PingEvent)
	require.True(t, ok)
	require.NotEmpty(t, ping.GetZen())
}

func TestServerPRPayloadFollowsState(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	gh.AddLabel("acme", "infra", pr.Number, "infra", "alice")
	p := gh.PRPayload("acme", "infra", pr.Number)
	require.Equal(t, DefaultInstallationID, p.InstallationID)
	require.Equal(t, pr.HeadSHA, p.HeadSHA)
	require.Equal(t, []string{"infra"}, p.Labels)
	require.Equal(t, gh.RepoID("acme", "infra"), p.RepoID)
}

func TestDeliverSendsGitHubHeaders(t *testing.T) {
	type got struct {
		header http.Header
		body   []byte
	}
	seen := make(chan got, 3)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen <- got{r.Header.Clone(), b}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(hook.Close)
	body := Ping(t, 1)

	tests := []struct {
		name    string
		opts    []DeliveryOption
		wantSig string
		wantID  string
	}{
		{"signed with fresh id", nil, Sign("s3cret", body), ""},
		{"redelivery", []DeliveryOption{WithDeliveryID("72d3162e-cc78-11e3-81ab-4c9367dc0958")}, Sign("s3cret", body), "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
		{"unsigned", []DeliveryOption{WithSignature("")}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := Deliver(hook.URL, "ping", body, "s3cret", tt.opts...)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusAccepted, resp.StatusCode)
			g := <-seen
			require.Equal(t, body, g.body)
			require.Equal(t, "ping", g.header.Get("X-GitHub-Event"))
			require.Equal(t, "application/json", g.header.Get("Content-Type"))
			require.Equal(t, HookshotUserAgent, g.header.Get("User-Agent"))
			require.Equal(t, tt.wantSig, g.header.Get("X-Hub-Signature-256"))
			if tt.wantID != "" {
				require.Equal(t, tt.wantID, g.header.Get("X-GitHub-Delivery"))
			} else {
				require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, g.header.Get("X-GitHub-Delivery"))
			}
		})
	}
}

func TestWebhookMutatesOnlyWhatTheTestChanges(t *testing.T) {
	orig := Webhook(t, "pull_request", "converted_to_draft.with-installation.payload", nil)
	body := Webhook(t, "pull_request", "converted_to_draft.with-installation.payload", func(p map[string]any) {
		Set(p, "installation.id", 5)
		Set(p, "pull_request.head.sha", "abc")
	})
	var before, after map[string]any
	require.NoError(t, json.Unmarshal(orig, &before))
	require.NoError(t, json.Unmarshal(body, &after))
	require.Equal(t, float64(5), after["installation"].(map[string]any)["id"])
	require.Equal(t, "abc", after["pull_request"].(map[string]any)["head"].(map[string]any)["sha"])
	after["installation"].(map[string]any)["id"] = before["installation"].(map[string]any)["id"]
	after["pull_request"].(map[string]any)["head"].(map[string]any)["sha"] = before["pull_request"].(map[string]any)["head"].(map[string]any)["sha"]
	require.Equal(t, before, after)
}
