package bot

import "sync"

// keyedMutex serialises work per key (one pull request at a time). A key's
// entry lives while someone holds or waits for its lock, and goes when the
// last of them unlocks, so the map holds only the keys in use.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	sync.Mutex
	refs int // holders and waiters; guarded by keyedMutex.mu
}

// acquire returns key's entry, counting the caller in.
func (k *keyedMutex) acquire(key string) *keyedEntry {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e, ok := k.m[key]
	if !ok {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	return e
}

// unlocker unlocks e and counts the caller out, dropping the entry when no
// one else holds or waits for it.
func (k *keyedMutex) unlocker(key string, e *keyedEntry) func() {
	return func() {
		e.Unlock()
		k.mu.Lock()
		defer k.mu.Unlock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
	}
}

func (k *keyedMutex) lock(key string) func() {
	e := k.acquire(key)
	e.Lock()
	return k.unlocker(key, e)
}

// lockOrWait takes the lock at once when it is free; otherwise it calls
// waiting (once) and then waits for it.
func (k *keyedMutex) lockOrWait(key string, waiting func()) func() {
	e := k.acquire(key)
	if !e.TryLock() {
		waiting()
		e.Lock()
	}
	return k.unlocker(key, e)
}

// size is the number of keys held or waited for.
func (k *keyedMutex) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
