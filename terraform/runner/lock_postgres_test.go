package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/stretchr/testify/require"
)

// EnvTestPostgres names the PostgreSQL URL the pg backend tests use.
const EnvTestPostgres = "SHARDGATE_TEST_POSTGRES_URL"

// pgModule is one state shared by two working copies. Replacing the resource
// (a new round) reruns the provisioner, so any apply can be made slow.
const pgModule = `terraform {
  backend "pg" {}
}
variable "round" {
  type    = string
  default = "0"
}
variable "sleep" {
  type    = string
  default = "0"
}
resource "terraform_data" "writer" {
  triggers_replace = var.round
  provisioner "local-exec" {
    command = "sleep ${var.sleep}"
  }
}
`

// testDatabase creates a database of its own for a test and drops it after.
// The pg backend keys its advisory locks by row id, which collide between
// schemas of one database, so schemas alone would not isolate tests.
func testDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv(EnvTestPostgres)
	if base == "" {
		t.Skip(EnvTestPostgres + " is not set")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close(ctx) })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "shardgate_runner_" + hex.EncodeToString(b)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		require.NoError(t, err)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

// syncBuffer is written by exec's copy goroutine while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// pgOperator is one working copy of the shared pg state, run by hand.
type pgOperator struct {
	dir, dataDir string
	env          []string
}

func newPGOperator(t *testing.T, connStr string) *pgOperator {
	op := &pgOperator{dir: writeModule(t, pgModule), dataDir: t.TempDir(),
		env: []string{"PG_CONN_STR=" + connStr, "PG_SCHEMA_NAME=shared"}}
	op.run(t, "init", "-input=false", "-no-color")
	return op
}

func (op *pgOperator) cmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := terraformCmd(t, op.dir, op.dataDir, args...)
	cmd.Env = append(cmd.Env, op.env...)
	return cmd
}

func (op *pgOperator) run(t *testing.T, args ...string) {
	t.Helper()
	out, err := op.cmd(t, args...).CombinedOutput()
	require.NoError(t, err, "terraform %v: %s", args, out)
}

// startSlowApply starts a replacing apply and returns once it holds the lock.
func (op *pgOperator) startSlowApply(t *testing.T, round, sleep string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	cmd := op.cmd(t, "apply", "-auto-approve", "-input=false", "-no-color", "-var", "round="+round, "-var", "sleep="+sleep)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "Provisioning with 'local-exec'") {
		if time.Now().After(deadline) {
			t.Fatalf("the first operator never reached its provisioner: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, out
}

func TestPostgresLockBetweenWorkingCopies(t *testing.T) {
	tftest.Binary(t)
	tests := []struct {
		name    string
		timeout time.Duration
		sleep   string // how long the first operator's apply holds the lock
		wantErr bool
	}{
		{name: "waits for the other operator, then plans", timeout: time.Minute, sleep: "6"},
		{name: "gives up at the bound", timeout: 2 * time.Second, sleep: "8", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			connStr := testDatabase(t)
			first := newPGOperator(t, connStr)
			first.run(t, "apply", "-auto-approve", "-input=false", "-no-color") // the state row exists

			// The second operator's working copy, driven by the runner.
			second := writeModule(t, pgModule)
			var waits []LockWait
			j := newJob(t, realRunner(t), JobConfig{
				Dir:        second,
				Env:        map[string]string{"PG_SCHEMA_NAME": "shared"},
				SecretEnv:  map[string]string{"PG_CONN_STR": connStr},
				Wait:       &WaitPolicy{Timeout: tt.timeout, InitialBackoff: time.Second, MaxBackoff: 2 * time.Second},
				OnLockWait: func(w LockWait) { waits = append(waits, w) },
			})
			require.NoError(t, j.Init(context.Background()))

			holder, holderOut := first.startSlowApply(t, "1", tt.sleep)
			_, err := j.Plan(context.Background())
			if tt.wantErr {
				var lockErr *StateLockError
				require.ErrorAs(t, err, &lockErr)
				require.False(t, lockErr.HolderKnown, "pg does not record the holder")
				require.Equal(t, "Workspace is already locked: default", lockErr.Message)
				require.Contains(t, err.Error(), "gave up waiting for the state lock after")
				require.Contains(t, err.Error(), "the backend does not say which")
				if *update {
					require.NoError(t, os.WriteFile("testdata/lock_pg_1.5.7.txt", []byte(j.Output()), 0o644))
				}
			} else {
				require.NoError(t, err)
				require.NotEmpty(t, waits)
				require.False(t, waits[0].Lock.HolderKnown)
				require.Empty(t, waits[0].Lock.Who, "the refused process is not reported as the holder")
				records := j.LockWaits()
				require.Len(t, records, 1)
				require.Greater(t, records[0].WaitedSeconds, 1.0)
			}
			// The first operator was never disturbed.
			require.NoError(t, holder.Wait(), "first operator: %s", holderOut.String())
			require.Contains(t, holderOut.String(), "Apply complete!")
			require.NotContains(t, holderOut.String(), "Error releasing the state lock")
			require.NotContains(t, j.Output(), connStr)
		})
	}
}
