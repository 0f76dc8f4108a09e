package policy

import (
	"sort"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shardgate/shardgate/planparse"
)

// Keys of the input document (docs/policy-input.md).
const (
	inputChanges         = "changes"
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
	return ast.NewObject(
		item(inputChanges, changesTerm(req.ChangeSet.Changes)),
		item(inputDesired, desiredTerm(req.ChangeSet.Desired)),
		item(inputLive, liveTerm(req.Live)),
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

func item(key string, value *ast.Term) [2]*ast.Term {
	return [2]*ast.Term{ast.StringTerm(key), value}
}

func changesTerm(changes []planparse.Change) *ast.Term {
	terms := make([]*ast.Term, 0, len(changes))
	for i := range changes {
		c := &changes[i]
		if c.Action == planparse.ActionNoop {
			continue
		}
		terms = append(terms, ast.ObjectTerm(
			item("address", ast.StringTerm(c.Address)),
			item("kind", ast.StringTerm(string(c.Kind))),
			item("stream_prefix", ast.StringTerm(c.StreamPrefix)),
			item("consumer_group", ast.StringTerm(c.ConsumerGroup)),
			item("coordinator_url", ast.StringTerm(c.CoordinatorURL)),
			item("action", ast.StringTerm(string(c.Action))),
			item("shards_before", intOrNull(c.ShardsBefore)),
			item("shards_after", intOrNull(c.ShardsAfter)),
			item("unknown", stringsTerm(c.Unknown)),
			item("action_reason", ast.StringTerm(c.ActionReason)),
			item("terraform_actions", stringsTerm(c.TerraformActions)),
		))
	}
	return ast.ArrayTerm(terms...)
}

// desiredTerm groups desired counts as {prefix: {"<count>": [address, ...]}}.
func desiredTerm(desired []planparse.Desired) *ast.Term {
	byPrefix := make(map[string]map[int][]*ast.Term)
	for _, d := range desired {
		counts := byPrefix[d.StreamPrefix]
		if counts == nil {
			counts = make(map[int][]*ast.Term, 1)
			byPrefix[d.StreamPrefix] = counts
		}
		counts[d.ShardCount] = append(counts[d.ShardCount], ast.StringTerm(d.Address))
	}
	prefixes := make([][2]*ast.Term, 0, len(byPrefix))
	for prefix, counts := range byPrefix {
		entries := make([][2]*ast.Term, 0, len(counts))
		for n, addrs := range counts {
			entries = append(entries, [2]*ast.Term{ast.StringTerm(strconv.Itoa(n)), ast.ArrayTerm(addrs...)})
		}
		prefixes = append(prefixes, [2]*ast.Term{ast.StringTerm(prefix), ast.ObjectTerm(entries...)})
	}
	return ast.ObjectTerm(prefixes...)
}

func liveTerm(live map[string]LiveStream) *ast.Term {
	streams := make([][2]*ast.Term, 0, len(live))
	for prefix, s := range live {
		groups := make([]*ast.Term, 0, len(s.Groups))
		for _, g := range s.Groups {
			groups = append(groups, ast.ObjectTerm(
				item("consumer_group", ast.StringTerm(g.ConsumerGroup)),
				item("shard_count", ast.IntNumberTerm(g.ShardCount)),
				item("state", ast.StringTerm(g.State)),
				item("active_migration_id", ast.StringTerm(g.ActiveMigrationID)),
				item("migration_state", ast.StringTerm(g.MigrationState)),
				item("live_members", ast.IntNumberTerm(g.LiveMembers)),
				item("metadata_version", ast.NewTerm(ast.Number(strconv.FormatInt(g.MetadataVersion, 10)))),
			))
		}
		streams = append(streams, [2]*ast.Term{ast.StringTerm(prefix), ast.ObjectTerm(
			item("stream_prefix", ast.StringTerm(s.StreamPrefix)),
			item("groups", ast.ArrayTerm(groups...)),
			item("metadata_version_regressed", ast.BooleanTerm(s.MetadataVersionRegressed)),
		)})
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

func stringsTerm(ss []string) *ast.Term {
	terms := make([]*ast.Term, len(ss))
	for i, s := range ss {
		terms[i] = ast.StringTerm(s)
	}
	return ast.ArrayTerm(terms...)
}

func intOrNull(n *int) *ast.Term {
	if n == nil {
		return ast.NullTerm()
	}
	return ast.IntNumberTerm(*n)
}
