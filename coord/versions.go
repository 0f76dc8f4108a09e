package coord

import (
	"context"
	"fmt"
	"sync"
)

// VersionMemory keeps the highest metadataVersion seen per group, so a version
// that goes down between reads (Redis restored to older data, coordinator.md §6.12)
// is noticed across bot restarts when the bot persists it.
type VersionMemory interface {
	// HighestMetadataVersion returns the highest version recorded, ok=false if none.
	HighestMetadataVersion(ctx context.Context, prefix, group string) (v int64, ok bool, err error)
	// RecordMetadataVersion stores v if it is higher than what is recorded.
	RecordMetadataVersion(ctx context.Context, prefix, group string, v int64) error
}

// MemoryVersions is the in-process VersionMemory.
type MemoryVersions struct {
	mu sync.Mutex
	m  map[[2]string]int64
}

var _ VersionMemory = (*MemoryVersions)(nil)

// NewMemoryVersions returns an empty in-memory VersionMemory.
func NewMemoryVersions() *MemoryVersions { return &MemoryVersions{m: map[[2]string]int64{}} }

// HighestMetadataVersion implements VersionMemory.
func (m *MemoryVersions) HighestMetadataVersion(_ context.Context, prefix, group string) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[[2]string{prefix, group}]
	return v, ok, nil
}

// RecordMetadataVersion implements VersionMemory.
func (m *MemoryVersions) RecordMetadataVersion(_ context.Context, prefix, group string, v int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{prefix, group}
	if cur, ok := m.m[k]; !ok || v > cur {
		m.m[k] = v
	}
	return nil
}

// MetadataRegressedError says a group's metadataVersion went below one seen
// before: the coordinator's Redis was restored to older data (coordinator.md
// §6.12). Waiting does not help; a person has to look.
type MetadataRegressedError struct {
	Prefix, ConsumerGroup string
	Highest, Current      int64
}

func (e *MetadataRegressedError) Error() string {
	return fmt.Sprintf("%s/%s metadataVersion went back from %d to %d (Redis restored to older data?): stop changes to the stream and check the coordinator",
		e.Prefix, e.ConsumerGroup, e.Highest, e.Current)
}

// versionWatch follows the metadataVersion of a prefix's groups over many
// reads. It starts from what the VersionMemory holds, records each rise there,
// and reports any drop. A rise of any size (a scale bumps it three times, each
// member join or expiry once more) is never a drop.
type versionWatch struct {
	c      *Client
	prefix string
	high   map[string]int64 // per group; absent = not loaded yet
	known  map[string]bool  // per group: a version was ever seen
}

func newVersionWatch(c *Client, prefix string) *versionWatch {
	return &versionWatch{c: c, prefix: prefix, high: map[string]int64{}, known: map[string]bool{}}
}

func (w *versionWatch) observe(ctx context.Context, group string, v int64) error {
	if _, loaded := w.high[group]; !loaded {
		prev, seen, err := w.c.versions.HighestMetadataVersion(ctx, w.prefix, group)
		if err != nil {
			return fmt.Errorf("read remembered metadataVersion of %s/%s: %w", w.prefix, group, err)
		}
		w.high[group], w.known[group] = prev, seen
	}
	if w.known[group] && v < w.high[group] {
		return &MetadataRegressedError{Prefix: w.prefix, ConsumerGroup: group, Highest: w.high[group], Current: v}
	}
	if w.known[group] && v == w.high[group] {
		return nil
	}
	if err := w.c.versions.RecordMetadataVersion(ctx, w.prefix, group, v); err != nil {
		return fmt.Errorf("record metadataVersion of %s/%s: %w", w.prefix, group, err)
	}
	w.high[group], w.known[group] = v, true
	return nil
}
