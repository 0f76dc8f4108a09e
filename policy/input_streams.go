package policy

import (
	"slices"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shardgate/shardgate/planparse"
)

// desiredTerm groups desired counts as {stream key: {"<count>": [address, ...]}}.
// A stream nearly always has one count, and a plan may hold one stream per
// instance (issue 37), so nothing here is allocated per stream or per count but
// the terms OPA keeps: the (stream, count) groups are numbered in one pass and
// their addresses placed in one array of terms by a counting sort, each group's
// list a window of it; the address terms, the groups and their object entries
// are slabs too. Unless whole, only the streams asked for more than one count
// are written: the only built-in reader, conflicting_shard_count, looks at no
// other (input_trimmed.go).
//
// It also returns the keys of the streams written when not whole.
func (st stringTerms) desiredTerm(desired []planparse.Desired, whole bool) (*ast.Term, []string) {
	type group struct {
		n, size, at int // shard count, addresses, where its window starts
		next        int // the stream's next group, -1 at the end
		stream      int
	}
	type stream struct {
		key         string
		first, last int // groups, in order of first appearance
		counts      int
	}
	// As many streams as the runs of one stream's instances: the number of
	// streams, or more where instances of one stream are apart. Sized at once,
	// the index and the list allocate nothing as they grow: on a plan of one
	// stream per instance their growth was ~1.9 MB of garbage at 10,000.
	runs, last := 0, ""
	for k := range desired {
		if key := desiredStream(&desired[k]); k == 0 || key != last {
			runs, last = runs+1, key
		}
	}
	index := make(map[string]int, runs)
	streams := make([]stream, 0, runs)
	groups := make([]group, 0, len(desired))
	groupOf := make([]int32, len(desired))
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
				streams = append(streams, stream{key: key, first: -1, last: -1})
			}
			i = j
		}
		s := &streams[i]
		g := s.first
		for g >= 0 && groups[g].n != d.ShardCount {
			g = groups[g].next
		}
		if g < 0 {
			g = len(groups)
			groups = append(groups, group{n: d.ShardCount, next: -1, stream: i})
			if s.last >= 0 {
				groups[s.last].next = g
			} else {
				s.first = g
			}
			s.last = g
			s.counts++
		}
		groups[g].size++
		groupOf[k] = int32(g)
	}
	written := func(s int) bool { return whole || streams[s].counts > 1 }
	at, kept, entryCount := 0, 0, 0
	for g := range groups {
		if written(groups[g].stream) {
			groups[g].at = at
			at += groups[g].size
			entryCount++
		}
	}
	for s := range streams {
		if written(s) {
			kept++
		}
	}
	addrs := make([]*ast.Term, at)
	terms := make([]ast.Term, at)
	filled := make([]int, len(groups))
	n := 0
	for k := range desired {
		g := groupOf[k]
		if !written(groups[g].stream) {
			continue
		}
		t := &terms[n]
		n++
		t.Value = ast.String(desired[k].Address)
		addrs[groups[g].at+filled[g]] = t
		filled[g]++
	}
	entries := make([][2]*ast.Term, entryCount)
	items := make([][2]*ast.Term, 0, kept)
	var conflicting []string
	keys := make([]ast.Term, kept) // shared through st with streamsTerm
	e := 0
	for k, s := range streams {
		if !written(k) {
			continue
		}
		key, ok := st[s.key]
		if !ok {
			keys[len(items)].Value = ast.String(s.key)
			key = &keys[len(items)]
			st[s.key] = key
		}
		if !whole {
			conflicting = append(conflicting, s.key)
		}
		own := entries[e : e+s.counts : e+s.counts]
		e += s.counts
		for g, c := s.first, 0; g >= 0; g, c = groups[g].next, c+1 {
			w := groups[g]
			own[c] = [2]*ast.Term{st.term(strconv.Itoa(w.n)), ast.ArrayTerm(addrs[w.at : w.at+w.size : w.at+w.size]...)}
		}
		items = append(items, [2]*ast.Term{key, ast.ObjectTerm(own...)})
	}
	return ast.ObjectTerm(items...), conflicting
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
// streams. Unless whole, only the streams whose name is not their prefix are
// written, and those the rest of the input names (input_trimmed.go);
// conflicting are the streams input.desired holds then.
func (st stringTerms) streamsTerm(req Request, j judged, whole bool, conflicting []string) *ast.Term {
	if !whole {
		return st.namedStreamsTerm(req, j, conflicting)
	}
	var keys []string
	seen := make(map[string]bool)
	eachStreamKey(req, j, func(key string) {
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	})
	perPrefix := make(map[string]int, len(keys))
	for _, key := range keys {
		_, prefix := planparse.SplitStreamKey(key)
		perPrefix[prefix]++
	}
	items := make([][2]*ast.Term, 0, len(keys))
	for _, key := range keys {
		coordinator, prefix := planparse.SplitStreamKey(key)
		items = append(items, [2]*ast.Term{st.term(key), st.streamEntry(coordinator, prefix, perPrefix[prefix] > 1)})
	}
	return ast.ObjectTerm(items...)
}

// streamEntry is one stream's entry of input.streams.
func (st stringTerms) streamEntry(coordinator, prefix string, shared bool) *ast.Term {
	return ast.ObjectTerm(
		item("coordinator", st.term(coordinator)),
		item("stream_prefix", st.term(prefix)),
		item("name", st.term(streamName(planparse.RedactURLCredentials(coordinator), prefix, shared))),
	)
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
