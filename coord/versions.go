package coord

import (
	"context"
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
