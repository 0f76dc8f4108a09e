// Package keyedmutex serialises work per key: one pull request's jobs at a
// time, with no entry kept for a key no one holds or waits for.
package keyedmutex

import "sync"

// Mutex serialises work per key (one pull request at a time). A key's
// entry lives while someone holds or waits for its lock, and goes when the
// last of them unlocks, so the map holds only the keys in use.
type Mutex struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	sync.Mutex
	refs int // holders and waiters; guarded by Mutex.mu
}

// acquire returns key's entry, counting the caller in.
func (k *Mutex) acquire(key string) *entry {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*entry{}
	}
	e, ok := k.m[key]
	if !ok {
		e = &entry{}
		k.m[key] = e
	}
	e.refs++
	return e
}

// unlocker unlocks e and counts the caller out, dropping the entry when no
// one else holds or waits for it.
func (k *Mutex) unlocker(key string, e *entry) func() {
	return func() {
		e.Unlock()
		k.mu.Lock()
		defer k.mu.Unlock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
	}
}

// Lock takes key's lock and returns its unlock.
func (k *Mutex) Lock(key string) func() {
	e := k.acquire(key)
	e.Lock()
	return k.unlocker(key, e)
}

// LockOrWait takes the lock at once when it is free; otherwise it calls
// waiting (once) and then waits for it.
func (k *Mutex) LockOrWait(key string, waiting func()) func() {
	e := k.acquire(key)
	if !e.TryLock() {
		waiting()
		e.Lock()
	}
	return k.unlocker(key, e)
}

// TryLock takes key's lock when it is free, returning its unlock; false
// when someone holds it.
func (k *Mutex) TryLock(key string) (func(), bool) {
	e := k.acquire(key)
	if !e.TryLock() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		return nil, false
	}
	return k.unlocker(key, e), true
}

// size is the number of keys held or waited for.
func (k *Mutex) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
