package policy

import (
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shardgate/shardgate/planparse"
)

// Keys of the input document (docs/policy-input.md).
const (
	inputChanges         = "changes"
	inputChangesByAction = "changes_by_action"
	inputDesired         = "desired"
	inputLive            = "live"
	inputCoordinator     = "coordinator"
	inputAttestedStreams = "attested_streams"
	inputLabels          = "labels"
	inputConfig          = "config"
)

// buildInput turns a request into the input document, built directly as an AST
// value: a JSON round trip of a 10,000-instance plan would cost more than the
// evaluation. Noop changes are left out, and desired counts are grouped per prefix
// here so that a conflict is one lookup per prefix in Rego.
func buildInput(req Request) ast.Value {
	cfg := withDefaults(req.Config)
	st := make(stringTerms)
	changes, byAction := st.changesTerm(req.ChangeSet.Changes)
	return ast.NewObject(
		item(inputChanges, changes),
		item(inputChangesByAction, byAction),
		item(inputDesired, st.desiredTerm(req.ChangeSet.Desired)),
		item(inputLive, st.liveTerm(req.Live)),
		item(inputCoordinator, ast.ObjectTerm(
			item("consulted", ast.BooleanTerm(req.Coordinator.Consulted)),
			item("reachable", ast.BooleanTerm(req.Coordinator.Reachable)),
			item("error", ast.StringTerm(req.Coordinator.Error)),
		)),
		item(inputAttestedStreams, trueSet(freshAttestedStreams(req))),
		item(inputLabels, stringsTerm(countedLabels(req.Labels))),
		item(inputConfig, ast.ObjectTerm(
			item("max_shard_delta", ast.IntNumberTerm(cfg.MaxShardDelta)),
			item("max_scale_factor", ast.FloatNumberTerm(cfg.MaxScaleFactor)),
			item("duplicate_tolerant_streams", trueSet(cfg.DuplicateTolerantStreams)),
		)),
	)
}

// withDefaults fills the zero thresholds with the defaults: a zero limit would deny
// every scale, which is never what an unset setting means.
func withDefaults(c Config) Config {
	d := DefaultConfig()
	if c.MaxShardDelta <= 0 {
		c.MaxShardDelta = d.MaxShardDelta
	}
	if c.MaxScaleFactor <= 0 {
		c.MaxScaleFactor = d.MaxScaleFactor
	}
	return c
}

// keyTerms holds the input document's keys, built once: a 10,000-instance plan
// would otherwise allocate the same eleven key terms for every change. Terms are
// never mutated once built, so sharing them is safe.
var keyTerms = func() map[string]*ast.Term {
	keys := []string{
		"address", "kind", "stream_prefix", "consumer_group", "coordinator_url", "action",
		"shards_before", "shards_after", "unknown", "action_reason", "terraform_actions",
		"shard_count", "state", "active_migration_id", "migration_state", "live_members",
		"metadata_version", "groups", "metadata_version_regressed", "shard_counts", "max_shard_count",
		"consulted", "reachable", "error", "max_shard_delta", "max_scale_factor", "duplicate_tolerant_streams",
		inputChanges, inputChangesByAction, inputDesired, inputLive, inputCoordinator, inputAttestedStreams, inputLabels, inputConfig,
	}
	m := make(map[string]*ast.Term, len(keys))
	for _, k := range keys {
		m[k] = ast.StringTerm(k)
	}
	return m
}()

func item(key string, value *ast.Term) [2]*ast.Term {
	if k, ok := keyTerms[key]; ok {
		return [2]*ast.Term{k, value}
	}
	return [2]*ast.Term{ast.StringTerm(key), value}
}

// stringTerms shares one term per distinct value: kinds, actions, prefixes, groups
// and states repeat across thousands of changes, desired counts and live groups.
type stringTerms map[string]*ast.Term

func (st stringTerms) term(s string) *ast.Term {
	t, ok := st[s]
	if !ok {
		t = ast.StringTerm(s)
		st[s] = t
	}
	return t
}

// indexedActions are the keys of input.changes_by_action, present even when no
// change has the action, so that a policy can tell a missing index from none.
var indexedActions = []planparse.Action{
	planparse.ActionCreate, planparse.ActionScale, planparse.ActionDelete,
	planparse.ActionUnmanage, planparse.ActionUpdate,
}

// changesTerm returns input.changes and input.changes_by_action, the same change
// terms grouped by action: a rule about scales then steps through the scales
// only, not through every change of a 10,000-instance plan.
func (st stringTerms) changesTerm(changes []planparse.Change) (*ast.Term, *ast.Term) {
	terms := make([]*ast.Term, 0, len(changes))
	byAction := make(map[planparse.Action][]*ast.Term, len(indexedActions))
	for i := range changes {
		c := &changes[i]
		if c.Action == planparse.ActionNoop {
			continue
		}
		t := ast.ObjectTerm(
			item("address", ast.StringTerm(c.Address)),
			item("kind", st.term(string(c.Kind))),
			item("stream_prefix", st.term(c.StreamPrefix)),
			item("consumer_group", st.term(c.ConsumerGroup)),
			item("coordinator_url", st.term(redactURL(c.CoordinatorURL))),
			item("action", st.term(string(c.Action))),
			item("shards_before", intOrNull(c.ShardsBefore)),
			item("shards_after", intOrNull(c.ShardsAfter)),
			item("unknown", st.strings(c.Unknown)),
			item("action_reason", st.term(c.ActionReason)),
			item("terraform_actions", st.strings(c.TerraformActions)),
		)
		terms = append(terms, t)
		byAction[c.Action] = append(byAction[c.Action], t)
	}
	groups := make([][2]*ast.Term, 0, len(indexedActions)+1)
	for _, a := range indexedActions {
		groups = append(groups, [2]*ast.Term{st.term(string(a)), ast.ArrayTerm(byAction[a]...)})
		delete(byAction, a)
	}
	for a, ts := range byAction { // an action planparse may add later
		groups = append(groups, [2]*ast.Term{st.term(string(a)), ast.ArrayTerm(ts...)})
	}
	return ast.ArrayTerm(terms...), ast.ObjectTerm(groups...)
}

// redactURL hides a password in a coordinator URL: policy errors and messages can
// quote input values, and they end up in pull-request comments.
func redactURL(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// desiredTerm groups desired counts as {prefix: {"<count>": [address, ...]}}.
// A prefix nearly always has one count, so its counts are a short list searched
// in place rather than a map per prefix.
func (st stringTerms) desiredTerm(desired []planparse.Desired) *ast.Term {
	type count struct {
		n     int
		addrs []*ast.Term
	}
	type prefix struct {
		name   string
		counts []count
	}
	index := make(map[string]int)
	var prefixes []prefix
	i := -1
	for _, d := range desired {
		// Plans list instances in address order, which mostly keeps a prefix's
		// instances together: the map is only asked when the prefix changes.
		if i < 0 || prefixes[i].name != d.StreamPrefix {
			j, ok := index[d.StreamPrefix]
			if !ok {
				j = len(prefixes)
				index[d.StreamPrefix] = j
				prefixes = append(prefixes, prefix{name: d.StreamPrefix})
			}
			i = j
		}
		p := &prefixes[i]
		j := slices.IndexFunc(p.counts, func(c count) bool { return c.n == d.ShardCount })
		if j < 0 {
			j = len(p.counts)
			p.counts = append(p.counts, count{n: d.ShardCount})
		}
		p.counts[j].addrs = append(p.counts[j].addrs, ast.StringTerm(d.Address))
	}
	items := make([][2]*ast.Term, 0, len(prefixes))
	for _, p := range prefixes {
		entries := make([][2]*ast.Term, 0, len(p.counts))
		for _, c := range p.counts {
			entries = append(entries, [2]*ast.Term{st.term(strconv.Itoa(c.n)), ast.ArrayTerm(c.addrs...)})
		}
		items = append(items, [2]*ast.Term{st.term(p.name), ast.ObjectTerm(entries...)})
	}
	return ast.ObjectTerm(items...)
}

// liveTerm writes req.Live as its JSON, plus two derived fields per stream that
// let a rule find a scale's starting count with one lookup per change:
// shard_counts ({group: count}) and max_shard_count (absent when there are no
// groups). A lookup into a rule-built map costs several times more in Rego.
func (st stringTerms) liveTerm(live map[string]LiveStream) *ast.Term {
	streams := make([][2]*ast.Term, 0, len(live))
	for prefix, s := range live {
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
		stream := ast.NewObject(
			item("stream_prefix", st.term(s.StreamPrefix)),
			item("groups", ast.ArrayTerm(groups...)),
			item("metadata_version_regressed", ast.BooleanTerm(s.MetadataVersionRegressed)),
			item("shard_counts", ast.ObjectTerm(counts...)),
		)
		if maxCount >= 0 {
			stream.Insert(keyTerms["max_shard_count"], ast.InternedTerm(maxCount))
		}
		streams = append(streams, [2]*ast.Term{st.term(prefix), ast.NewTerm(stream)})
	}
	return ast.ObjectTerm(streams...)
}

// freshAttestedStreams are the prefixes with an attestation still valid at req.Now.
func freshAttestedStreams(req Request) []string {
	var prefixes []string
	for _, a := range req.Attestations {
		if a.ExpiresAt.After(req.Now) {
			prefixes = append(prefixes, a.StreamPrefix)
		}
	}
	return prefixes
}

func countedLabels(labels []Label) []string {
	var names []string
	for _, l := range labels {
		if l.Counted {
			names = append(names, l.Name)
		}
	}
	sort.Strings(names)
	return names
}

// trueSet is {key: true, ...}: an object rather than a set, so a policy can test
// membership with input.x[key] whether it knows Rego sets or not.
func trueSet(keys []string) *ast.Term {
	items := make([][2]*ast.Term, 0, len(keys))
	for _, k := range keys {
		items = append(items, [2]*ast.Term{ast.StringTerm(k), ast.BooleanTerm(true)})
	}
	return ast.ObjectTerm(items...)
}

func (st stringTerms) strings(ss []string) *ast.Term {
	terms := make([]*ast.Term, len(ss))
	for i, s := range ss {
		terms[i] = st.term(s)
	}
	return ast.ArrayTerm(terms...)
}

func stringsTerm(ss []string) *ast.Term {
	terms := make([]*ast.Term, len(ss))
	for i, s := range ss {
		terms[i] = ast.StringTerm(s)
	}
	return ast.ArrayTerm(terms...)
}

// int64Term is n as a number term, interned when small.
func int64Term(n int64) *ast.Term {
	if n >= math.MinInt && n <= math.MaxInt && ast.HasInternedIntNumberTerm(int(n)) {
		return ast.InternedTerm(int(n))
	}
	return ast.NewTerm(ast.Number(strconv.FormatInt(n, 10)))
}

func intOrNull(n *int) *ast.Term {
	if n == nil {
		return ast.NullTerm()
	}
	return ast.InternedTerm(*n)
}
