package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLockPluginCacheSerialisesInits(t *testing.T) {
	dir := t.TempDir()
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := lockPluginCache(context.Background(), dir)
			if !assertNoError(t, err) {
				return
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, int32(1), maxInside.Load(), "two inits used the cache at once")
}

func TestLockPluginCacheHonoursContext(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockPluginCache(context.Background(), dir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = lockPluginCache(ctx, dir)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	unlock()

	again, err := lockPluginCache(context.Background(), dir)
	require.NoError(t, err, "the lock is free again after unlock")
	again()
}

func TestLockFileAcrossHandles(t *testing.T) {
	// Another process sharing the cache holds the file lock: this process
	// must wait even though its own per-directory turn is free.
	path := t.TempDir() + "/" + cacheLockName
	release, err := lockFile(context.Background(), path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = lockFile(ctx, path)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	release()
	again, err := lockFile(context.Background(), path)
	require.NoError(t, err)
	again()
}

func TestLockPluginCacheWithoutCache(t *testing.T) {
	unlock, err := lockPluginCache(context.Background(), "")
	require.NoError(t, err)
	unlock()
}

// assertNoError reports from a goroutine, where require must not be used.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}
