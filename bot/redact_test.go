package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/internal/redact/redacttest"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/runner"
)

func TestConfigRedactorFindsEverySecretOfTheConfig(t *testing.T) {
	key := redacttest.PEM(t)
	cfg := &serverconfig.Config{PrivateKey: serverconfig.NewSecret(key), WebhookSecret: serverconfig.NewSecret("the-webhook-secret"),
		Coordinators: []serverconfig.CoordinatorCredentials{
			{URLPrefix: "https://a.example", Username: "writer", Password: serverconfig.NewSecret("coordinator-a-password")},
			{URLPrefix: "https://b.example", Username: "writer", Password: serverconfig.NewSecret("coordinator-b-password")},
		}}
	r := cfg.Redactor()
	text := fmt.Sprintf("%s %s %s %s", "the-webhook-secret", "coordinator-a-password", "coordinator-b-password", redacttest.PEMBody(key)[2])
	out := r.Redact(text)
	require.Equal(t, strings.TrimSpace(strings.Repeat(runner.Redacted+" ", 4)), out)
	require.Equal(t, "writer https://a.example", r.Redact("writer https://a.example"), "usernames and URLs are not secret")
}

// TestRedactedErrorIsStillTransient: a redacted 502 is still retried.
func TestRedactedErrorIsStillTransient(t *testing.T) {
	const secret = "webhook-secret-value"
	cause := &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusBadGateway}, Message: secret}
	err := redact.New(secret).Error(fmt.Errorf("get pull request: %w", cause))
	require.NotContains(t, err.Error(), secret)
	require.True(t, transient(err), "a redacted 502 is still retried")
	var ghErr *github.ErrorResponse
	require.True(t, errors.As(err, &ghErr))
}

func TestScrubRemovesSecretsFromStoredRecords(t *testing.T) {
	key := redacttest.PEM(t)
	line := redacttest.PEMBody(key)[4]
	const webhook, password = "the-webhook-secret", "coordinator-password"
	rec := leakyPlan(webhook, password, line)
	redact.New(webhook, password, key).Scrub(rec)
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	redacttest.RequireNoSecret(t, string(b), webhook, password, key)
	require.Equal(t, runner.Redacted, rec.ChangeSet.Changes[0].StreamPrefix)
	require.Contains(t, rec.Live, planparse.StreamKey("", runner.Redacted), "map keys too")
	require.Equal(t, 6, *rec.ChangeSet.Changes[0].ShardsAfter, "what holds no text is kept")
}

// leakyPlan is a plan record whose plan put server secrets into stream names,
// as a pull request reading them with file() does.
func leakyPlan(webhook, password, keyLine string) *records.Plan {
	four, six := 4, 6
	changes := []planparse.Change{
		{Address: `module.leak["webhook"].terraform_data.stream_group`, StreamPrefix: webhook, ConsumerGroup: "g",
			Stream: planparse.StreamKey("", webhook), Action: planparse.ActionScale, ShardsBefore: &four, ShardsAfter: &six},
		{Address: `module.leak["password"].terraform_data.stream_group`, StreamPrefix: "p", ConsumerGroup: password,
			Stream: planparse.StreamKey("", "p"), Action: planparse.ActionCreate, ShardsAfter: &six},
		{Address: `module.leak["key"].terraform_data.stream_group`, StreamPrefix: keyLine, ConsumerGroup: "g|" + keyLine,
			Stream: planparse.StreamKey("", keyLine), Action: planparse.ActionCreate, ShardsAfter: &six},
	}
	var violations []policy.Violation
	for _, c := range changes {
		violations = append(violations, policy.Violation{Rule: "max_shard_delta", StreamPrefix: c.StreamPrefix, ConsumerGroup: c.ConsumerGroup,
			Address: c.Address, Message: "stream " + c.StreamPrefix + "/" + c.ConsumerGroup + " scales too far", Stream: c.Stream})
	}
	return &records.Plan{Project: "streams", Dir: "streams", Workspace: "default", HeadSHA: strings.Repeat("a", 40),
		ChangeSet: &planparse.ChangeSet{FormatVersion: "1.2", Changes: changes,
			Resources: []planparse.ResourceChange{{Address: changes[0].Address, Actions: []string{"update"},
				Diff: []string{"input.stream_prefix: \"old\" -> \"" + webhook + "\""}}}},
		Live:     map[string]policy.LiveStream{planparse.StreamKey("", webhook): {}},
		Decision: policy.Decision{Allowed: false, Changes: changes, Violations: violations},
		Error:    "",
		Coordinator: policy.Coordinator{Consulted: true, Reachable: false,
			Error: "GET /streams/" + password + ": 503"},
		LockWaits: []report.LockWait{}}
}
