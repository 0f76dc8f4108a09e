package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Terraform's provider plugin cache is not safe for concurrent `terraform
// init`: two inits installing the same provider write into the same cache
// directory and can leave a half-written plugin behind for everyone. We keep
// one shared cache (a per-job cache would download every provider for every
// job) and serialise inits that use it: a channel per directory orders the
// jobs of this process, an exclusive file lock orders other shardgate
// processes sharing the directory. Only init waits; plans and applies read
// the providers already linked into the job's data dir and run in parallel.
//
// TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE is deliberately not set:
// with it terraform would trust cached providers that the repository's
// .terraform.lock.hcl has no checksum for. A gate must not weaken that check
// to save a download.

const cacheLockName = ".shardgate-init.lock"

var cacheTurns sync.Map // cleaned dir -> chan struct{} (capacity 1)

// lockPluginCache waits for the right to run init against dir. An empty dir
// means no shared cache and nothing to wait for.
func lockPluginCache(ctx context.Context, dir string) (unlock func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make plugin cache dir: %w", err)
	}
	v, _ := cacheTurns.LoadOrStore(dir, make(chan struct{}, 1))
	turn := v.(chan struct{})
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release, err := lockFile(ctx, filepath.Join(dir, cacheLockName))
	if err != nil {
		<-turn
		return nil, err
	}
	return func() {
		release()
		<-turn
	}, nil
}
