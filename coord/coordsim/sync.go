package coordsim

// The coordinator's metadata sync (CoordinatorService.kt: startMetadataCorrection,
// acknowledgeMetadataCorrectionIfNeeded). When Redis is restored to older data
// the group's metadataVersion drops below what its consumers saw. The first
// consumer heartbeating with the higher version starts a sync: the group
// answers SYNC_METADATA, and every scale and rollback of the group gets 409
// METADATA_SYNC_IN_PROGRESS. The sync ends once every live member has
// heartbeated with the group's version and no shard is still being handed
// off, or as soon as the group's version moves on (e.g. a migration step).

// correction is the group's open sync round.
type correction struct {
	// target is the group's metadataVersion when the sync started.
	target int64
	acked  map[string]bool
}

// syncHeartbeat answers SYNC_METADATA to a consumer whose version is above the
// group's (starting the sync) or, while a sync is open, differs from it; the
// consumer adopts the group's version. It reports false for a normal heartbeat.
func (g *group) syncHeartbeat(m *member) bool {
	switch {
	case m.seen > g.metadataVersion:
		if g.correction == nil || g.correction.target != g.metadataVersion {
			g.correction = &correction{target: g.metadataVersion, acked: map[string]bool{}}
		}
	case g.correction == nil || m.seen == g.metadataVersion:
		return false
	}
	m.seen = g.metadataVersion
	return true
}

// acknowledge records a normal heartbeat that sent version sent.
func (g *group) acknowledge(id string, sent int64) {
	c := g.correction
	if c == nil {
		return
	}
	if c.target != g.metadataVersion {
		g.correction = nil
		return
	}
	if sent != c.target {
		return
	}
	c.acked[id] = true
	live := g.live()
	for _, m := range live {
		if !c.acked[m.id] {
			return
		}
	}
	if len(live) > 0 && !g.handoffPending() {
		g.correction = nil
	}
}

// handoffPending: a live member still revokes, or waits for a shard another holds.
func (g *group) handoffPending() bool {
	for _, m := range g.live() {
		if len(m.revoking) > 0 || len(g.blocked(m.id)) > 0 {
			return true
		}
	}
	return false
}

// Backup is a copy of one group's stored metadata, as a Redis backup holds it.
type Backup struct {
	key [2]string
	rec record
}

// Backup copies a group's stored metadata (not its consumers). It reports
// false when the group does not exist.
func (s *Sim) Backup(prefix, groupName string) (*Backup, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[[2]string{prefix, groupName}]
	if g == nil {
		return nil, false
	}
	return &Backup{key: [2]string{prefix, groupName}, rec: g.record.clone()}, true
}

// Restore puts a backup's metadata back, as restoring Redis from older data
// does: shard count, epochs, metadataVersion, migrations, target assignment.
// The consumers keep running with what they hold and the version they saw, so
// their next heartbeat starts a metadata sync. It reports false when the group
// no longer exists.
func (s *Sim) Restore(b *Backup) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[b.key]
	if g == nil {
		return false
	}
	g.record = b.rec.clone()
	return true
}

// RewindMetadataVersion lowers a group's metadataVersion by n and keeps
// everything else: a restore of data that differs only in its version. It
// reports false when the group does not exist.
func (s *Sim) RewindMetadataVersion(prefix, groupName string, n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[[2]string{prefix, groupName}]
	if g == nil {
		return false
	}
	g.metadataVersion -= n
	return true
}
