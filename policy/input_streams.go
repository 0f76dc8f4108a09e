package policy

import (
	"slices"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shardgate/shardgate/planparse"
)

// desiredTerm groups desired counts as {stream key: {"<count>": [address, ...]}}.
// A stream nearly always has one count, so its counts are a short list searched
// in place rather than a map per stream.
func (st stringTerms) desiredTerm(desired []planparse.Desired) *ast.Term {
	type count struct {
		n     int
		addrs []*ast.Term
	}
	type stream struct {
		key    string
		counts []count
	}
	index := make(map[string]int)
	var streams []stream
	i := -1
	for k := range desired {
		d := &desired[k]
		key := desiredStream(d)
		// Plans list instances in address order, which mostly keeps a stream's
		// instances together: the map is only asked when the stream changes.
		if i < 0 || streams[i].key != key {
			j, ok := index[key]
			if !ok {
				j = len(streams)
				index[key] = j
				streams = append(streams, stream{key: key})
			}
			i = j
		}
		s := &streams[i]
		j := slices.IndexFunc(s.counts, func(c count) bool { return c.n == d.ShardCount })
		if j < 0 {
			j = len(s.counts)
			s.counts = append(s.counts, count{n: d.ShardCount})
		}
		s.counts[j].addrs = append(s.counts[j].addrs, ast.StringTerm(d.Address))
	}
	items := make([][2]*ast.Term, 0, len(streams))
	for _, s := range streams {
		entries := make([][2]*ast.Term, 0, len(s.counts))
		for _, c := range s.counts {
			entries = append(entries, [2]*ast.Term{st.term(strconv.Itoa(c.n)), ast.ArrayTerm(c.addrs...)})
		}
		items = append(items, [2]*ast.Term{st.term(s.key), ast.ObjectTerm(entries...)})
	}
	return ast.ObjectTerm(items...)
}

// withPeers is the plan's desired counts, followed by its peers' (Request.Peers).
func withPeers(req Request) []planparse.Desired {
	if len(req.Peers) == 0 {
		return req.ChangeSet.Desired
	}
	return append(slices.Clip(req.ChangeSet.Desired), req.Peers...)
}

// liveTerm writes req.Live as its JSON, plus two derived fields per stream that
// let a rule find a count with one lookup: shard_counts ({group: count}) and
// max_shard_count (absent when there are no groups). A lookup into a rule-built
// map costs several times more in Rego.
func (st stringTerms) liveTerm(live map[string]LiveStream) *ast.Term {
	streams := make([][2]*ast.Term, 0, len(live))
	for key, s := range live {
		groups := make([]*ast.Term, 0, len(s.Groups))
		counts := make([][2]*ast.Term, 0, len(s.Groups))
		maxCount := -1
		for _, g := range s.Groups {
			group, shards := st.term(g.ConsumerGroup), ast.InternedTerm(g.ShardCount)
			groups = append(groups, ast.ObjectTerm(
				item("consumer_group", group),
				item("shard_count", shards),
				item("state", st.term(g.State)),
				item("active_migration_id", st.term(g.ActiveMigrationID)),
				item("migration_state", st.term(g.MigrationState)),
				item("live_members", ast.InternedTerm(g.LiveMembers)),
				item("metadata_version", int64Term(g.MetadataVersion)),
			))
			counts = append(counts, [2]*ast.Term{group, shards})
			maxCount = max(maxCount, g.ShardCount)
		}
		coordinator := s.Coordinator
		if coordinator == "" {
			coordinator, _ = planparse.SplitStreamKey(key)
		}
		stream := ast.NewObject(
			item("coordinator", st.term(coordinator)),
			item("stream_prefix", st.term(s.StreamPrefix)),
			item("groups", ast.ArrayTerm(groups...)),
			item("metadata_version_regressed", ast.BooleanTerm(s.MetadataVersionRegressed)),
			item("shard_counts", ast.ObjectTerm(counts...)),
		)
		if maxCount >= 0 {
			stream.Insert(keyTerms["max_shard_count"], ast.InternedTerm(maxCount))
		}
		streams = append(streams, [2]*ast.Term{st.term(key), ast.NewTerm(stream)})
	}
	return ast.ObjectTerm(streams...)
}

// streamsTerm is input.streams: {stream key: {coordinator, stream_prefix, name}}
// for every stream the plan or the live state names. name is what a message
// calls the stream: its prefix, and its coordinator too when another stream of
// the input has the same prefix, so that two findings never read alike for two
// streams.
func (st stringTerms) streamsTerm(req Request, j judged) *ast.Term {
	var keys []string
	seen := make(map[string]bool)
	last := ""
	add := func(key string) {
		// Plans keep a stream's instances mostly together: the map is only
		// asked when the stream changes.
		if key == last && len(keys) > 0 {
			return
		}
		last = key
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	for i := range j.changes {
		add(j.changes[i].Stream)
	}
	for i := range req.ChangeSet.Desired {
		add(desiredStream(&req.ChangeSet.Desired[i]))
	}
	for _, key := range sortedKeys(req.Live) {
		add(key)
	}
	perPrefix := make(map[string]int, len(keys))
	for _, key := range keys {
		_, prefix := planparse.SplitStreamKey(key)
		perPrefix[prefix]++
	}
	items := make([][2]*ast.Term, 0, len(keys))
	for _, key := range keys {
		coordinator, prefix := planparse.SplitStreamKey(key)
		items = append(items, [2]*ast.Term{st.term(key), ast.ObjectTerm(
			item("coordinator", st.term(coordinator)),
			item("stream_prefix", st.term(prefix)),
			item("name", st.term(streamName(planparse.RedactURLCredentials(coordinator), prefix, perPrefix[prefix] > 1))),
		)})
	}
	return ast.ObjectTerm(items...)
}

// streamName is how a message names a stream.
func streamName(coordinator, prefix string, shared bool) string {
	switch {
	case !shared:
		return prefix
	case coordinator == "":
		return prefix + " on the provider's coordinator"
	}
	return prefix + " on " + coordinator
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
