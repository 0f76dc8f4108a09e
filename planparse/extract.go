package planparse

import "slices"

// grow doubles a full slice. append grows a large one by a quarter at a time,
// which for the 10,000 changes of a large plan allocates five times their size.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), 4))
}

// op is what a resource_changes entry's actions do to the resource instance.
type op int

const (
	opNoop op = iota
	opCreate
	opRead
	opUpdate
	opDelete
	opReplace
	opForget
)

func classify(actions []string) (op, bool) {
	switch len(actions) {
	case 1:
		switch actions[0] {
		case "no-op":
			return opNoop, true
		case "create":
			return opCreate, true
		case "read":
			return opRead, true
		case "update":
			return opUpdate, true
		case "delete":
			return opDelete, true
		case "forget":
			return opForget, true
		}
	case 2:
		if actions[0] == "delete" && actions[1] == "create" || actions[0] == "create" && actions[1] == "delete" {
			return opReplace, true
		}
	}
	return 0, false
}

func (o op) hasBefore() bool { return o != opCreate }
func (o op) hasAfter() bool  { return o != opDelete && o != opForget }

// identFields are the coordinator fields in the order Change.Unknown lists them.
var identFields = [...]string{FieldStreamPrefix, FieldConsumerGroup, FieldShardCount, FieldCoordinatorURL}

// ident is what one side of a change says about the coordinator group.
type ident struct {
	prefix, group, url string
	shards             *int
	unknown            []string
}

func (id ident) isUnknown(field string) bool { return slices.Contains(id.unknown, field) }

// sameGroup reports whether after names the group before names. An unknown name is
// taken as a different group: the gate must not assume the identity survives.
func sameGroup(before, after ident) bool {
	return !after.isUnknown(FieldStreamPrefix) && !after.isUnknown(FieldConsumerGroup) &&
		!after.isUnknown(FieldCoordinatorURL) &&
		before.prefix == after.prefix && before.group == after.group && before.url == after.url
}

// sameCount reports whether two known counts are equal; two absent counts are too.
func sameCount(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// readIdent reads one side. For the module, values are the input and shaped is false
// when the input is not the stream-group shape; unknown is that side's after_unknown.
func readIdent(r *resource, v values, unknown mark, module bool) (id ident, shaped bool, err error) {
	if !v.present {
		return ident{}, false, nil
	}
	if module {
		if v.attrs.null || !v.attrs.set {
			if !unknown.all {
				return ident{}, false, nil
			}
			return ident{unknown: slices.Clone(identFields[:])}, true, nil
		}
		// Terraform leaves unknown values out of "after" and marks them in after_unknown.
		for _, f := range identFields {
			if _, ok := v.attrs.get(f); !ok && !unknown.field(f).any {
				return ident{}, false, nil
			}
		}
	}
	for _, f := range identFields {
		if unknown.field(f).any {
			id.unknown = append(id.unknown, f)
			continue
		}
		raw, _ := v.attrs.get(f)
		var err error
		switch f {
		case FieldShardCount:
			id.shards, err = intValue(raw)
		case FieldStreamPrefix:
			id.prefix, err = r.sc.strings.sharedValue(raw)
		case FieldConsumerGroup:
			id.group, err = r.sc.strings.sharedValue(raw)
		case FieldCoordinatorURL:
			id.url, err = r.sc.strings.sharedValue(raw)
		}
		if err != nil {
			path := f
			if module {
				path = "input." + f
			}
			return ident{}, false, planErrorf("%s: %s %v", r.label(), path, err)
		}
	}
	return id, true, nil
}

// extract turns one coordinator resource change into Changes, Desired and Resources.
func (p *parser) extract(r *resource, k Kind) error {
	o, ok := classify(r.actions)
	if !ok {
		return planErrorf("%s: unsupported actions %q", r.label(), r.actions)
	}
	if o == opRead {
		return nil
	}
	module := k == KindModule
	var before, after ident
	var hasBefore, hasAfter bool
	var err error
	if o.hasBefore() {
		if before, hasBefore, err = readIdent(r, r.before, mark{}, module); err != nil {
			return err
		}
	}
	if o.hasAfter() {
		if after, hasAfter, err = readIdent(r, r.after, r.marks.afterUnknown, module); err != nil {
			return err
		}
	}
	switch {
	case module && !hasBefore && !hasAfter:
		return nil // a terraform_data named stream_group that is something else
	case module && (o == opUpdate || o == opReplace) && !hasBefore:
		o = opCreate // it becomes a stream group
	case module && (o == opUpdate || o == opReplace) && !hasAfter:
		o = opDelete // it stops being one
	case o.hasBefore() && !hasBefore:
		return planErrorf("%s: change.before is missing", r.label())
	case o.hasAfter() && !hasAfter:
		return planErrorf("%s: change.after is missing", r.label())
	}
	p.changes(r, k, o, before, after)
	if o.hasAfter() && after.shards != nil && !after.isUnknown(FieldStreamPrefix) {
		p.cs.Desired = append(grow(p.cs.Desired), Desired{
			Address:       r.address,
			StreamPrefix:  after.prefix,
			ConsumerGroup: after.group,
			ShardCount:    *after.shards,
		})
	}
	if o != opNoop {
		p.resource(r)
	}
	return nil
}

// changes applies the mapping documented in doc.go.
func (p *parser) changes(r *resource, k Kind, o op, before, after ident) {
	emit := func(a Action, id ident, shardsBefore, shardsAfter *int, unknown []string) {
		p.cs.Changes = append(grow(p.cs.Changes), Change{
			Address:          r.address,
			Kind:             k,
			StreamPrefix:     id.prefix,
			ConsumerGroup:    id.group,
			CoordinatorURL:   id.url,
			Action:           a,
			ShardsBefore:     shardsBefore,
			ShardsAfter:      shardsAfter,
			Unknown:          unknown,
			ActionReason:     r.actionReason,
			TerraformActions: r.actions,
		})
	}
	create := func() {
		if k == KindShardCount {
			emit(ActionScale, after, nil, after.shards, after.unknown)
			return
		}
		emit(ActionCreate, after, nil, after.shards, after.unknown)
	}
	remove := func() {
		if k == KindGroup {
			emit(ActionDelete, before, before.shards, nil, nil)
			return
		}
		emit(ActionUnmanage, before, before.shards, nil, nil)
	}
	switch o {
	case opNoop:
		emit(ActionNoop, after, before.shards, after.shards, after.unknown)
	case opCreate:
		create()
	case opDelete:
		remove()
	case opForget:
		emit(ActionUnmanage, before, before.shards, nil, nil)
	case opUpdate, opReplace:
		switch {
		case k == KindGroup && (o == opReplace || !sameGroup(before, after)):
			remove()
			create()
		case !sameGroup(before, after):
			create()
			remove()
		case !after.isUnknown(FieldShardCount) && sameCount(before.shards, after.shards):
			emit(ActionUpdate, after, before.shards, after.shards, after.unknown)
		default:
			emit(ActionScale, after, before.shards, after.shards, after.unknown)
		}
	}
}

// resource adds the redaction-safe summary of a non-noop change.
func (p *parser) resource(r *resource) {
	p.cs.Resources = append(grow(p.cs.Resources), ResourceChange{
		Address:      r.address,
		Actions:      r.actions,
		ActionReason: r.actionReason,
		Diff: diffLines(
			side{values: r.before.attrs, exists: r.before.present, sensitive: r.marks.beforeSensitive},
			side{values: r.after.attrs, exists: r.after.present, sensitive: r.marks.afterSensitive, unknown: r.marks.afterUnknown},
		),
	})
}
