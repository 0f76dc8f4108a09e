package policy

import (
	"math"
	"sort"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Keys of the input document (docs/policy-input.md).
const (
	inputChanges         = "changes"
	inputChangesByAction = "changes_by_action"
	inputChangesByStream = "changes_by_stream"
	inputDrift           = "drift"
	inputOtherChanges    = "other_changes"
	inputIncomplete      = "incomplete"
	inputDesired         = "desired"
	inputLive            = "live"
	inputStreams         = "streams"
	inputCoordinator     = "coordinator"
	inputAttestedStreams = "attested_streams"
	inputLabels          = "labels"
	inputConfig          = "config"
)

// buildInput turns a request and its judged changes into the input document,
// built directly as an AST value: a JSON round trip of a 10,000-instance plan
// would cost more than the evaluation. Noop changes are left out, and changes and
// desired counts are indexed by action and by stream here, so that no rule has to
// walk every change once per change or per stream.
//
// whole is false when only the built-in policies are loaded: the input then
// leaves out what no built-in rule reads (see input_trimmed.go); a user policy may
// read anything, so with one loaded the input is whole.
func buildInput(req Request, j judged, whole bool) ast.Value {
	cfg := withDefaults(req.Config)
	st := make(stringTerms)
	ct := st.changesTerm(j)
	desired, conflicting := st.desiredTerm(withPeers(req), whole)
	return ast.NewObject(
		item(inputChanges, ct.changes),
		item(inputChangesByAction, ct.byAction),
		item(inputChangesByStream, ct.byStream),
		item(inputDrift, ct.drift),
		item(inputOtherChanges, st.otherChangesTerm(req.ChangeSet.OtherChanges)),
		item(inputIncomplete, ast.BooleanTerm(req.ChangeSet.Incomplete)),
		item(inputDesired, desired),
		item(inputLive, st.liveTerm(req.Live)),
		item(inputStreams, st.streamsTerm(req, j, whole, conflicting)),
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
// would otherwise allocate the same eighteen key terms for every change. Terms are
// never mutated once built, so sharing them is safe.
var keyTerms = func() map[string]*ast.Term {
	keys := []string{
		"address", "kind", "stream_prefix", "consumer_group", "coordinator_url", "coordinator", "stream", "action",
		"shards_before", "shards_after", "prior_shards", "tainted", "moved_from", "unknown", "missing",
		"invalid_shard_count", "action_reason", "terraform_actions", "type", "actions", "name",
		"shard_count", "state", "active_migration_id", "migration_state", "live_members",
		"metadata_version", "groups", "metadata_version_regressed", "shard_counts", "max_shard_count",
		"consulted", "reachable", "error", "max_shard_delta", "max_scale_factor", "duplicate_tolerant_streams",
		inputChanges, inputChangesByAction, inputChangesByStream, inputDrift, inputOtherChanges, inputIncomplete,
		inputDesired, inputLive, inputStreams, inputCoordinator, inputAttestedStreams, inputLabels, inputConfig,
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
