package coord_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/testing/tftest"
)

const e2eRoot = `
variable "coordinator_base_url" {
  type = string
}

variable "coordinator_password" {
  type      = string
  sensitive = true
}

variable "shard_count" {
  type = number
}

module "orders_billing" {
  source = "./modules/stream-group"

  coordinator_base_url  = var.coordinator_base_url
  coordinator_username  = "terraform"
  coordinator_password  = var.coordinator_password
  stream_prefix         = "orders"
  consumer_group        = "billing"
  shard_count           = var.shard_count
  requested_by          = "terraform:e2e"
  reason                = "e2e apply"
  request_id_prefix     = "tf-e2e"
  timeout_seconds       = 30
  poll_interval_seconds = 1
}
`

const e2ePassword = "e2e-Secret-pw"

// TestStreamGroupModuleAgainstSimulator applies examples/modules/stream-group with
// the real terraform against the simulator: create, then scale, then wait.
func TestStreamGroupModuleAgainstSimulator(t *testing.T) {
	tf := tftest.Binary(t)
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	auditFile, err := os.OpenFile(auditPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer auditFile.Close()
	sim := coordsim.New(
		coordsim.WithAuditWriter(auditFile),
		coordsim.WithUsers(coordsim.User{Name: "terraform", Password: e2ePassword, Roles: []coordsim.Role{coordsim.RoleWrite}}),
	)
	// apply.sh's requests and the simulator's answers are checked against the OpenAPI file.
	ct := &contractTransport{v: loadSpec(t), next: http.DefaultTransport}
	srv := httptest.NewServer(ct.serverSide(sim))
	defer srv.Close()
	defer func() {
		require.Empty(t, ct.problems, "contract mismatches:\n%s", strings.Join(ct.problems, "\n"))
		require.Greater(t, ct.checked, 5)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go sim.Run(ctx, 20*time.Millisecond)

	dir := t.TempDir()
	copyModule(t, filepath.Join("..", "examples", "modules", "stream-group"), filepath.Join(dir, "modules", "stream-group"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(e2eRoot), 0o600))
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, tf, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
			"TF_VAR_coordinator_base_url="+srv.URL, "TF_VAR_coordinator_password="+e2ePassword)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "terraform %v:\n%s", args, out)
		require.NotContains(t, string(out), e2ePassword)
		return string(out)
	}
	run("init", "-input=false", "-no-color")
	run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "shard_count=4")

	client, err := coord.New(srv.URL, coord.WithBasicAuth("terraform", e2ePassword), coord.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	routing, err := client.ProducerRouting(ctx, "orders", "billing")
	require.NoError(t, err)
	require.Equal(t, 4, routing.ShardCount)

	// Hold the coming migration in DRAINING so the wait below has to wait.
	sim.SetDrainingStuck("orders", true)
	run("apply", "-auto-approve", "-input=false", "-no-color", "-var", "shard_count=8")

	events := readAudit(t, auditPath)
	create := findEvent(t, events, coordsim.ActionCreateGroup, "SUCCESS")
	require.Equal(t, "terraform:e2e", create.RequestedBy)
	require.Equal(t, "e2e apply", create.Reason)
	require.Equal(t, "terraform", create.Principal)
	require.Regexp(t, regexp.MustCompile(`^tf-e2e-create-\d+-orders-billing-4$`), create.RequestID)
	require.Equal(t, map[string]string{"initialShardCount": "4"}, create.RequestSummary, "summary values are strings")
	require.Equal(t, "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}", create.Route)
	scale := findEvent(t, events, coordsim.ActionScaleStream, "SUCCESS")
	require.Equal(t, "terraform:e2e", scale.RequestedBy)
	require.Regexp(t, regexp.MustCompile(`^tf-e2e-scale-\d+-orders-billing-8$`), scale.RequestID)
	require.Equal(t, 202, scale.Status)
	require.Empty(t, scale.ConsumerGroup, "a stream-level action has no consumer group")
	require.Empty(t, scale.ReshardingID, "only rollbacks carry a reshardingId")
	ml, err := client.Migrations(ctx, "orders", "billing")
	require.NoError(t, err)
	require.NotNil(t, ml.ActiveReshardingID)
	scaleID := *ml.ActiveReshardingID
	for _, ev := range events {
		require.NotContains(t, ev.Path+ev.QueryString+ev.RequestID, e2ePassword)
	}

	done := make(chan error, 1)
	draining := make(chan struct{}, 100)
	go func() {
		done <- client.WaitConverged(ctx, "orders", 8, func(s coord.ConvergenceStatus) {
			if len(s.Groups) == 1 && s.Groups[0].MigrationState == coord.MigrationDraining {
				select {
				case draining <- struct{}{}:
				default:
				}
			}
		})
	}()
	// The wait polls on: three polls see the migration held in DRAINING and
	// it has not returned.
	for polls := 0; polls < 3; {
		select {
		case err := <-done:
			t.Fatalf("WaitConverged returned while the migration was held in DRAINING: %v", err)
		case <-draining:
			polls++
		case <-ctx.Done():
			t.Fatal("WaitConverged never polled the migration in DRAINING")
		}
	}
	sim.SetDrainingStuck("orders", false)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("WaitConverged did not return")
	}
	m, err := client.Migration(ctx, "orders", "billing", scaleID)
	require.NoError(t, err)
	require.Equal(t, coord.MigrationDeprecated, m.State)
}

func copyModule(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(to, 0o755))
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, e.Name()), b, 0o644))
	}
	_, err = os.Stat(filepath.Join(to, "apply.sh"))
	require.NoError(t, err, "the module's apply.sh")
}

func readAudit(t *testing.T, path string) []coordsim.AuditEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []coordsim.AuditEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var raw map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &raw), "one JSON object per line")
		for _, k := range []string{"timestamp", "coordinatorId", "action", "outcome", "status", "principal", "method", "path",
			"streamPrefix", "consumerGroup", "reshardingId", "route", "queryString", "requestId", "requestedBy", "reason",
			"clientAddress", "userAgent", "roles", "durationMs", "requestBodySha256", "requestSummary"} {
			require.Contains(t, raw, k, "audit field "+k)
		}
		var ev coordsim.AuditEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		out = append(out, ev)
	}
	require.NoError(t, sc.Err())
	return out
}

func findEvent(t *testing.T, events []coordsim.AuditEvent, action, outcome string) coordsim.AuditEvent {
	t.Helper()
	for _, ev := range events {
		if ev.Action == action && ev.Outcome == outcome {
			return ev
		}
	}
	t.Fatalf("no %s %s audit event in %d events", action, outcome, len(events))
	return coordsim.AuditEvent{}
}
