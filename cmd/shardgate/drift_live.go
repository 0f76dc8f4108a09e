package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/endstate"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/serverconfig"
)

// cliLive reads live coordinator state for `shardgate drift`: only
// coordinators a --coordinator-url-prefix covers are called, with the
// credentials given for it (as serve's coordinators[].url_prefix).
type cliLive struct{ cfg *serverconfig.Config }

// LiveState implements drift.LiveReader.
func (l cliLive) LiveState(ctx context.Context, cs *planparse.ChangeSet) (policy.Coordinator, map[string]policy.LiveStream) {
	byURL := map[string]map[string]bool{}
	for _, c := range cs.Changes {
		u := endstate.CoordinatorOf(c)
		if c.StreamPrefix == "" || u == "" {
			continue
		}
		if byURL[u] == nil {
			byURL[u] = map[string]bool{}
		}
		byURL[u][c.StreamPrefix] = true
	}
	if len(byURL) == 0 {
		return policy.Coordinator{}, nil
	}
	live := map[string]policy.LiveStream{}
	for _, u := range keysOf(byURL) {
		creds, ok := l.cfg.CoordinatorFor(u)
		if !ok {
			return policy.Coordinator{Consulted: true, Error: fmt.Sprintf("coordinator %s is not covered by a --coordinator-url-prefix, so shardgate does not call it", u)}, nil
		}
		opts := []coord.Option{coord.WithTimeout(10 * time.Second), coord.WithRetry(3, 500*time.Millisecond)}
		if creds.Username != "" {
			opts = append(opts, coord.WithBasicAuth(creds.Username, creds.Password.Reveal()))
		}
		client, err := coord.New(u, opts...)
		if err != nil {
			return policy.Coordinator{Consulted: true, Error: err.Error()}, nil
		}
		for _, prefix := range keysOf(byURL[u]) {
			st, err := client.Stream(ctx, prefix)
			if err != nil {
				return policy.Coordinator{Consulted: true, Error: fmt.Sprintf("%s: %v", u, err)}, nil
			}
			ls := policy.LiveStream{Coordinator: u, StreamPrefix: prefix, Groups: []policy.LiveGroup{}}
			for _, g := range st.Groups {
				ls.Groups = append(ls.Groups, policy.LiveGroup{ConsumerGroup: g.ConsumerGroup, ShardCount: g.ShardCount, State: string(g.State)})
			}
			live[planparse.StreamKey(u, prefix)] = ls
		}
	}
	return policy.Coordinator{Consulted: true, Reachable: true}, live
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
