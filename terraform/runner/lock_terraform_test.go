package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// slowWriter's apply holds the state lock for its local-exec's sleep.
func slowWriter(seconds int) string {
	return fmt.Sprintf(`resource "terraform_data" "writer" {
  provisioner "local-exec" {
    command = "sleep %d"
  }
}`, seconds)
}

// lockInfo is the holder's .terraform.tfstate.lock.info as written by terraform.
type lockInfo struct {
	ID, Operation, Who, Version, Path string
}

func readLockInfo(dir string) (lockInfo, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ".terraform.tfstate.lock.info"))
	if err != nil {
		return lockInfo{}, false
	}
	var li lockInfo
	if err := json.Unmarshal(b, &li); err != nil {
		return lockInfo{}, false // terraform is still writing it
	}
	return li, li.ID != ""
}

// holder is a terraform apply run by "another operator" in its own process.
type holder struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

// startHolder starts the writer's apply in dir and returns once it holds the
// state lock, with the lock's info.
func startHolder(t *testing.T, dir string) (*holder, lockInfo) {
	t.Helper()
	dataDir := t.TempDir()
	runTerraform(t, dir, dataDir, "init", "-input=false", "-no-color")
	h := &holder{cmd: terraformCmd(t, dir, dataDir, "apply", "-auto-approve", "-input=false", "-no-color")}
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
	require.NoError(t, h.cmd.Start())
	t.Cleanup(func() { _ = h.cmd.Process.Kill(); _ = h.cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if li, ok := readLockInfo(dir); ok {
			return h, li
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the writer never took the state lock: %s", h.out.String())
	return nil, lockInfo{}
}

// requireFinishedCleanly checks the holder was never disturbed: it exits 0,
// having released its own lock (the lock info file is gone).
func (h *holder) requireFinishedCleanly(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, h.cmd.Wait(), "writer: %s", h.out.String())
	require.Contains(t, h.out.String(), "Apply complete! Resources: 1 added")
	require.NotContains(t, h.out.String(), "Error releasing the state lock")
	_, err := os.Stat(filepath.Join(dir, ".terraform.tfstate.lock.info"))
	require.True(t, os.IsNotExist(err), "lock info left behind")
}

func TestLocalLockWaitThenSucceed(t *testing.T) {
	dir := writeModule(t, slowWriter(6))
	var (
		mu    sync.Mutex
		waits []LockWait
	)
	j := newJob(t, realRunner(t), JobConfig{
		Dir:  dir,
		Wait: &WaitPolicy{Timeout: time.Minute, InitialBackoff: time.Second, MaxBackoff: 2 * time.Second, Jitter: 0.2},
		OnLockWait: func(w LockWait) {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, w)
			// Waiting never touches the holder's lock. Only the first wait is
			// sure to see it: terraform polls a held lock at 1s, 2s, 4s, so
			// an attempt can miss a release and end just after it.
			li, ok := readLockInfo(dir)
			require.True(t, ok || w.Attempt > 1, "lock info still there while waiting")
			if ok {
				require.Equal(t, w.Lock.ID, li.ID)
			}
		},
	})
	require.NoError(t, j.Init(context.Background()))
	h, li := startHolder(t, dir)

	start := time.Now()
	changed, err := j.Plan(context.Background())
	require.NoError(t, err)
	require.False(t, changed, "the plan ran after the writer's apply and sees its result")
	require.Greater(t, time.Since(start), 2*time.Second)

	h.requireFinishedCleanly(t, dir)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, waits)
	first := waits[0]
	require.Equal(t, 1, first.Attempt)
	require.Equal(t, li.ID, first.Lock.ID)
	require.Equal(t, li.Who, first.Lock.Who)
	require.Equal(t, "OperationTypeApply", first.Lock.Operation)
	require.Equal(t, "apply", first.Lock.OperationName())
	require.Equal(t, "plan", first.Lock.Command)
	require.True(t, first.Lock.HolderKnown)
	require.False(t, first.Orphaned)
	require.WithinDuration(t, time.Now(), first.Lock.Created, time.Minute)

	records := j.LockWaits()
	require.Len(t, records, 1)
	require.Equal(t, li.ID, records[0].ID)
	require.Equal(t, li.Who, records[0].Who)
	require.Greater(t, records[0].WaitedSeconds, 1.0)
	b, err := json.Marshal(records[0])
	require.NoError(t, err)
	require.Regexp(t, `^\{"id":"[^"]+","who":"[^"]+","operation":"OperationTypeApply","created":"[^"]+","waited_seconds":[0-9.]+\}$`, string(b))
}

func TestLocalLockGivesUpNamingTheHolder(t *testing.T) {
	// The holder outlasts the 2s bound by a wide margin on a busy machine.
	dir := writeModule(t, slowWriter(8))
	j := newJob(t, realRunner(t), JobConfig{
		Dir:  dir,
		Wait: &WaitPolicy{Timeout: 2 * time.Second, InitialBackoff: 500 * time.Millisecond, MaxBackoff: time.Second},
	})
	require.NoError(t, j.Init(context.Background()))
	h, li := startHolder(t, dir)

	_, err := j.Plan(context.Background())
	var lockErr *StateLockError
	require.True(t, errors.As(err, &lockErr), "got %v", err)
	require.Equal(t, li.ID, lockErr.ID)
	require.Equal(t, li.Who, lockErr.Who)
	var timeoutErr *LockWaitTimeoutError
	require.ErrorAs(t, err, &timeoutErr)
	require.GreaterOrEqual(t, timeoutErr.Waited, 2*time.Second)
	require.Contains(t, err.Error(), "gave up waiting for the state lock after")
	require.Contains(t, err.Error(), "is held by "+li.Who+" running apply")

	// The holder is left alone and releases its own lock.
	h.requireFinishedCleanly(t, dir)
	if *update {
		require.NoError(t, os.WriteFile("testdata/lock_local_1.5.7.txt", []byte(j.Output()), 0o644))
	}
}
