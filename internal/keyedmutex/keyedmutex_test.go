package keyedmutex

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The per-key locks serialise each key and keep no entry of a key no one
// holds or waits for.
func TestKeyedMutexForgetsUnusedKeys(t *testing.T) {
	var k Mutex
	for i := range 1000 {
		k.Lock(fmt.Sprintf("acme/streams#%d", i))()
	}
	require.Equal(t, 0, k.size(), "every pull request ever seen would stay otherwise")

	unlock := k.Lock("a")
	waited := make(chan struct{})
	got := make(chan func())
	go func() { got <- k.LockOrWait("a", func() { close(waited) }) }()
	<-waited // the second one is waiting: the entry is shared, not replaced
	require.Equal(t, 1, k.size())
	unlock()
	second := <-got
	require.Equal(t, 1, k.size(), "held by the second")
	second()
	require.Equal(t, 0, k.size())
}

// However many goroutines take a key, one holds it at a time.
func TestKeyedMutexExcludes(t *testing.T) {
	var k Mutex
	var wg sync.WaitGroup
	held, most := 0, 0
	var mu sync.Mutex
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := k.Lock("pr")
			mu.Lock()
			held++
			most = max(most, held)
			mu.Unlock()
			mu.Lock()
			held--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, 1, most)
	require.Equal(t, 0, k.size())
}

// TryLock takes a free key and leaves a held one alone, keeping no entry
// for a key it did not take.
func TestKeyedMutexTryLock(t *testing.T) {
	var k Mutex
	unlock, ok := k.TryLock("pr")
	require.True(t, ok)
	_, again := k.TryLock("pr")
	require.False(t, again, "held")
	require.Equal(t, 1, k.size())
	unlock()
	require.Equal(t, 0, k.size())
	unlock, ok = k.TryLock("pr")
	require.True(t, ok, "free again")
	unlock()
	require.Equal(t, 0, k.size())
}
