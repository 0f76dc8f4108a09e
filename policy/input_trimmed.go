package policy

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shardgate/shardgate/planparse"
)

// The trimmed input. With only the built-in policies loaded (Engine.wholeInput
// false), two parts of the input, which hold an object per stream, are written
// only where a built-in rule can read something the rest of the input does not
// already tell it:
//
//   - input.desired, only the streams asked for more than one count: its one
//     built-in reader, conflicting_shard_count, passes over every other;
//   - input.streams, only the streams the rest of the input names (changes,
//     drift, live state, the desired counts written) and those whose name is
//     not their prefix (a prefix on more than one coordinator): its built-in
//     readers, lib.stream_prefix and lib.stream_name, split a key they do not
//     find there as planparse.SplitStreamKey does, which is where stream_prefix
//     comes from, so for any other stream they would return what the entry
//     holds; the findings are about the streams named, which are kept because
//     a lookup costs the rules less than the split.
//
// On a plan of one stream per instance these were two OPA objects per instance
// and most of the evaluation's allocations (issue 37). The decision is the
// whole input's: TestBuiltinInputDecidesAsTheWholeInput compares the two on
// every shape. A user policy may read any of it, so with one loaded the input
// is whole.

// eachStreamKey calls f with the stream key of every judged change, desired
// count and live stream, in that order; a key repeated by the entry before is
// passed once.
func eachStreamKey(req Request, j judged, f func(key string)) {
	last, started := "", false
	add := func(key string) {
		// Plans keep a stream's instances mostly together: f is only called
		// when the stream changes.
		if started && key == last {
			return
		}
		last, started = key, true
		f(key)
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
}

// namedStreamsTerm is input.streams with only the streams the rest of the
// trimmed input names (input.changes, input.drift, input.live and the streams
// of input.desired, conflicting, given), about which the built-in rules make
// findings, and the streams whose prefix another stream of the input has; each
// entry as streamsTerm writes it, and none that streamsTerm does not write.
func (st stringTerms) namedStreamsTerm(req Request, j judged, conflicting []string) *ast.Term {
	const named, written = 1, 2
	state := make(map[string]uint8)
	for i := range j.changes {
		if c := &j.changes[i]; c.Action != planparse.ActionNoop || unjudgeable(c) {
			state[c.Stream] = named
		}
	}
	for _, i := range j.drift {
		state[j.changes[i].Stream] = named
	}
	for key := range req.Live {
		state[key] = named
	}
	for _, key := range conflicting {
		state[key] = named
	}
	var items [][2]*ast.Term
	// Sized for one stream per change or desired count, the most there can be
	// but for live ones: growing it rehashed every key several times.
	first := make(map[string]string, max(len(j.changes), len(req.ChangeSet.Desired))) // prefix: the first stream key of it
	var shared map[string][]string                                                    // prefix: its keys, for prefixes of more than one
	eachStreamKey(req, j, func(key string) {
		if state[key] == named {
			state[key] = written
			items = append(items, [2]*ast.Term{st.term(key), nil})
		}
		_, prefix := planparse.SplitStreamKey(key)
		f, seen := first[prefix]
		switch {
		case !seen:
			first[prefix] = key
			return
		case f == key:
			return
		}
		if shared == nil {
			shared = make(map[string][]string)
		}
		keys := shared[prefix]
		if keys == nil {
			keys = []string{f}
		}
		if !slices.Contains(keys, key) {
			shared[prefix] = append(keys, key)
		}
	})
	for _, prefix := range sortedKeys(shared) {
		for _, key := range shared[prefix] {
			if state[key] != written {
				state[key] = written
				items = append(items, [2]*ast.Term{st.term(key), nil})
			}
		}
	}
	for i := range items {
		key := string(items[i][0].Value.(ast.String))
		coordinator, prefix := planparse.SplitStreamKey(key)
		items[i][1] = st.streamEntry(coordinator, prefix, shared[prefix] != nil)
	}
	return ast.ObjectTerm(items...)
}
