package policy

import (
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shardgate/shardgate/planparse"
)

// indexedActions are the keys of input.changes_by_action, present even when no
// change has the action, so that a policy can tell a missing index from none.
var indexedActions = []planparse.Action{
	planparse.ActionCreate, planparse.ActionScale, planparse.ActionDelete,
	planparse.ActionUnmanage, planparse.ActionUpdate, planparse.ActionMove,
}

// changeTerms are input.changes and its indexes; the indexes hold the very terms
// of input.changes.
type changeTerms struct {
	changes  *ast.Term // every judged change but the noops that can be judged
	byAction *ast.Term // {action: [change]}
	byStream *ast.Term // {stream key: [change]}
	drift    *ast.Term // [change]: noops and moves away from the live count
}

// changesTerm builds input.changes and its indexes: a rule about scales steps
// through the scales only, and a rule about a stream through that stream's
// changes only, not through every change of a 10,000-instance plan.
func (st stringTerms) changesTerm(j judged) changeTerms {
	terms := make([]*ast.Term, 0, len(j.changes))
	byAction := make(map[planparse.Action][]*ast.Term, len(indexedActions))
	byStream := make(map[string][]*ast.Term)
	var streams []string // first-seen order, so the input is deterministic
	drifting := make(map[int]*ast.Term, len(j.drift))
	for _, i := range j.drift {
		drifting[i] = nil
	}
	for i := range j.changes {
		c := &j.changes[i]
		_, drifts := drifting[i]
		if c.Action == planparse.ActionNoop && !unjudgeable(c) {
			if drifts {
				drifting[i] = st.changeTerm(c)
			}
			continue
		}
		t := st.changeTerm(c)
		if drifts {
			drifting[i] = t
		}
		terms = append(terms, t)
		byAction[c.Action] = append(byAction[c.Action], t)
		if _, seen := byStream[c.Stream]; !seen {
			streams = append(streams, c.Stream)
		}
		byStream[c.Stream] = append(byStream[c.Stream], t)
	}
	groups := make([][2]*ast.Term, 0, len(indexedActions)+1)
	for _, a := range indexedActions {
		groups = append(groups, [2]*ast.Term{st.term(string(a)), ast.ArrayTerm(byAction[a]...)})
		delete(byAction, a)
	}
	for a, ts := range byAction { // an action planparse may add later
		groups = append(groups, [2]*ast.Term{st.term(string(a)), ast.ArrayTerm(ts...)})
	}
	perStream := make([][2]*ast.Term, 0, len(streams))
	for _, s := range streams {
		perStream = append(perStream, [2]*ast.Term{st.term(s), ast.ArrayTerm(byStream[s]...)})
	}
	drift := make([]*ast.Term, 0, len(j.drift))
	for _, i := range j.drift {
		drift = append(drift, drifting[i])
	}
	return changeTerms{
		changes: ast.ArrayTerm(terms...), byAction: ast.ObjectTerm(groups...),
		byStream: ast.ObjectTerm(perStream...), drift: ast.ArrayTerm(drift...),
	}
}

// unjudgeable holds for a change whose values cannot be read: even an unchanged
// instance is then shown to the rules, which deny it, rather than passed unseen.
func unjudgeable(c *planparse.Change) bool {
	return len(c.Missing) > 0 || c.InvalidShardCount != ""
}

func (st stringTerms) changeTerm(c *planparse.Change) *ast.Term {
	return ast.ObjectTerm(
		item("address", ast.StringTerm(c.Address)),
		item("kind", st.term(string(c.Kind))),
		item("stream_prefix", st.term(c.StreamPrefix)),
		item("consumer_group", st.term(c.ConsumerGroup)),
		item("coordinator_url", st.term(planparse.RedactURLCredentials(c.CoordinatorURL))),
		item("coordinator", st.term(c.Coordinator)),
		item("stream", st.term(c.Stream)),
		item("action", st.term(string(c.Action))),
		item("shards_before", intOrNull(c.ShardsBefore)),
		item("shards_after", intOrNull(c.ShardsAfter)),
		item("prior_shards", intOrNull(c.PriorShards)),
		item("tainted", ast.InternedTerm(c.Tainted)),
		item("moved_from", st.term(c.MovedFrom)),
		item("importing", ast.InternedTerm(c.Importing)),
		item("managed_by", st.term(c.ManagedBy)),
		item("unknown", st.strings(c.Unknown)),
		item("missing", st.strings(c.Missing)),
		item("invalid_shard_count", st.term(c.InvalidShardCount)),
		item("action_reason", st.term(c.ActionReason)),
		item("terraform_actions", st.strings(c.TerraformActions)),
	)
}

// otherChangesTerm is input.other_changes: every non-coordinator change, so that
// a policy can deny what the built-in rules only warn about. The fingerprint is
// the apply guard's business and left out.
func (st stringTerms) otherChangesTerm(others []planparse.OtherChange) *ast.Term {
	terms := make([]*ast.Term, 0, len(others))
	for i := range others {
		o := &others[i]
		terms = append(terms, ast.ObjectTerm(
			item("address", ast.StringTerm(o.Address)),
			item("type", st.term(o.Type)),
			item("actions", st.strings(o.Actions)),
			item("action_reason", st.term(o.ActionReason)),
		))
	}
	return ast.ArrayTerm(terms...)
}
