// Package livestate reads the coordinators' live state: one client per
// configured coordinator URL (a URL the server configuration does not cover is
// never called), made on first use and kept, each remembering the highest
// metadata version it saw per group in the store; the live streams a change
// set mentions, as the policy input holds them.
package livestate

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/endstate"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
	"github.com/sirupsen/logrus"
)

// Coordinator client settings for reads made while planning.
const (
	coordTimeout  = 10 * time.Second
	coordAttempts = 3
	coordBackoff  = 500 * time.Millisecond
)

// Coordinators are the clients of the configured coordinators, one per URL,
// made on first use and kept: planning reads live state through them, an
// apply its pre-flight and convergence. Each remembers the metadata versions
// it saw in the store (records.MetadataVersions).
type Coordinators struct {
	cfg     *serverconfig.Config
	store   store.Store
	log     *logrus.Entry
	metrics *metrics.Metrics
	http    *http.Client // nil: http.DefaultClient's transport

	// NotCovered names where a coordinator URL must be configured, for the
	// error about one that is not (the server's coordinators[].url_prefix).
	NotCovered string
	// Now is the clock the clients read Retry-After dates against (nil: the
	// wall clock).
	Now func() time.Time

	mu      sync.Mutex
	clients map[string]*coord.Client
}

// New makes the coordinators of cfg; their clients remember metadata
// versions in st (nil: not remembered, as in the command line) and report to
// m (may be nil). hc nil: http.DefaultClient's transport.
func New(cfg *serverconfig.Config, st store.Store, log *logrus.Entry, m *metrics.Metrics, hc *http.Client) *Coordinators {
	return &Coordinators{cfg: cfg, store: st, log: log, metrics: m, http: hc, clients: map[string]*coord.Client{},
		NotCovered: "this server's configuration (coordinators[].url_prefix)"}
}

// Read reads every stream the change set mentions, unchanged ones included
// (a noop whose live count differs from the code is drift, and is reported),
// from its coordinator. A coordinator URL that the server configuration does not
// cover is never called (the URL comes from the pull request); like an
// unreachable coordinator, it is reported and the policy fails closed. The
// result is keyed by stream (planparse.StreamKey).
//
// A change whose coordinator URL is unknown until apply names no coordinator
// that could be read: it is not skipped but reported as the coordinator not
// read, after the others are, so the policy fails closed on it too.
func (s *Coordinators) Read(ctx context.Context, cs *planparse.ChangeSet) (policy.Coordinator, map[string]policy.LiveStream) {
	byURL := map[string]map[string]bool{}
	unknownURL := ""
	for _, c := range cs.Changes {
		if unknownURL == "" && slices.Contains(c.Unknown, planparse.FieldCoordinatorURL) {
			unknownURL = c.Address
		}
		coordinator := endstate.CoordinatorOf(c)
		if c.StreamPrefix == "" || coordinator == "" {
			continue
		}
		if byURL[coordinator] == nil {
			byURL[coordinator] = map[string]bool{}
		}
		byURL[coordinator][c.StreamPrefix] = true
	}
	unread := policy.Coordinator{}
	if unknownURL != "" {
		unread = policy.Coordinator{Consulted: true,
			Error: fmt.Sprintf("%s: %s unknown until apply, so there is no coordinator to read", unknownURL, planparse.FieldCoordinatorURL)}
	}
	if len(byURL) == 0 {
		return unread, nil
	}
	urls := make([]string, 0, len(byURL))
	for u := range byURL {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	live := map[string]policy.LiveStream{}
	for _, u := range urls {
		client, err := s.Client(u)
		if err != nil {
			return policy.Coordinator{Consulted: true, Error: err.Error()}, nil
		}
		prefixes := make([]string, 0, len(byURL[u]))
		for p := range byURL[u] {
			prefixes = append(prefixes, p)
		}
		sort.Strings(prefixes)
		for _, prefix := range prefixes {
			stream, err := client.Stream(ctx, prefix)
			if err != nil {
				return policy.Coordinator{Consulted: true, Error: fmt.Sprintf("%s: %s", u, firstLine(err.Error()))}, nil
			}
			ls := liveStream(stream)
			ls.Coordinator = u
			live[planparse.StreamKey(u, prefix)] = ls
		}
	}
	if unknownURL != "" {
		return unread, live
	}
	return policy.Coordinator{Consulted: true, Reachable: true}, live
}

func liveStream(st *coord.Stream) policy.LiveStream {
	ls := policy.LiveStream{StreamPrefix: st.Prefix, Groups: []policy.LiveGroup{}}
	for _, g := range st.Groups {
		lg := policy.LiveGroup{ConsumerGroup: g.ConsumerGroup, ShardCount: g.ShardCount, State: string(g.State),
			LiveMembers: g.LiveMembers, MetadataVersion: g.MetadataVersion}
		if m := g.ActiveMigration; m != nil {
			lg.ActiveMigrationID, lg.MigrationState = m.ReshardingID, string(m.State)
		}
		if g.MetadataRegressed() {
			ls.MetadataVersionRegressed = true
		}
		ls.Groups = append(ls.Groups, lg)
	}
	return ls
}

// Client returns the cached client of a configured coordinator URL.
func (s *Coordinators) Client(url string) (*coord.Client, error) {
	creds, ok := s.cfg.CoordinatorFor(url)
	if !ok {
		return nil, fmt.Errorf("coordinator %s is not covered by %s, so shardgate does not call it", url, s.NotCovered)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[url]; ok {
		return c, nil
	}
	opts := []coord.Option{coord.WithTimeout(coordTimeout), coord.WithRetry(coordAttempts, coordBackoff),
		coord.WithLogger(s.log), coord.WithUserAgent(ghapp.UserAgent), coord.WithClock(s.Now)}
	if s.store != nil {
		opts = append(opts, coord.WithVersionMemory(records.MetadataVersions(s.store, url)))
	}
	if creds.Username != "" {
		opts = append(opts, coord.WithBasicAuth(creds.Username, creds.Password.Reveal()))
	}
	opts = append(opts, coord.WithHTTPClient(s.metrics.CoordinatorClient(s.http)))
	c, err := coord.New(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("coordinator client for %s: %w", url, err)
	}
	s.clients[url] = c
	return c, nil
}

// firstLine is s's first line, trimmed: an error as a report line.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
