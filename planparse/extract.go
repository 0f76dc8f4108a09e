package planparse

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

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
	opReplace       // ["delete","create"], ["create","delete"]: the old object is destroyed
	opForget        // ["forget"]: Terraform forgets the object, which is kept
	opForgetReplace // ["forget","create"] (OpenTofu), ["create","forget"] (terraform)
)

// knownActions are the action strings terraform and OpenTofu write
// (jsonplan.actionString in both).
var knownActions = [...]string{"no-op", "create", "read", "update", "delete", "forget"}

// op classifies the entry's actions. An action nobody writes fails the plan:
// what it does cannot be judged.
func (r *resource) op() (op, error) {
	a := r.actions
	switch len(a) {
	case 1:
		switch a[0] {
		case "no-op":
			return opNoop, nil
		case "create":
			return opCreate, nil
		case "read":
			return opRead, nil
		case "update":
			return opUpdate, nil
		case "delete":
			return opDelete, nil
		case "forget":
			return opForget, nil
		}
	case 2:
		switch {
		case a[0] == "delete" && a[1] == "create", a[0] == "create" && a[1] == "delete":
			return opReplace, nil
		case a[0] == "forget" && a[1] == "create", a[0] == "create" && a[1] == "forget":
			return opForgetReplace, nil
		}
	}
	for _, s := range a {
		if !slices.Contains(knownActions[:], s) {
			return 0, planErrorf("%s: unknown action %s", r.label(), quoteShort(s))
		}
	}
	return 0, planErrorf("%s: unsupported actions %q", r.label(), a)
}

// quoteShort quotes a string of the plan for an error, cut to a readable length.
func quoteShort(s string) string {
	const maxLen = 40
	if len(s) > maxLen {
		n := maxLen
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return strconv.Quote(s[:n]) + "..."
	}
	return strconv.Quote(s)
}

func (o op) hasBefore() bool { return o != opCreate }
func (o op) hasAfter() bool  { return o != opDelete && o != opForget }
func (o op) isReplace() bool { return o == opReplace || o == opForgetReplace }

// identFields are the coordinator fields in the order Change.Unknown lists them.
var identFields = [...]string{FieldStreamPrefix, FieldConsumerGroup, FieldShardCount, FieldCoordinatorURL}

// providerFields are the attributes read of the provider resources (doc.go).
var providerFields = identFields[:3]

// ident is what one side of a change says about the coordinator group.
type ident struct {
	prefix, group, url string
	coord              string // url normalized
	stream             string // StreamKey(coord, prefix), "" when not known
	shards             *int
	invalid            string // the count as written when it is not a whole number >= 1
	unknown, missing   []string
	sensitive          []string // identity fields the side marks sensitive
}

func (id ident) isUnknown(field string) bool { return slices.Contains(id.unknown, field) }
func (id ident) isMissing(field string) bool { return slices.Contains(id.missing, field) }

// countReadable reports whether the side's count is what it says: not unknown,
// not missing and not invalid.
func (id ident) countReadable() bool {
	return id.invalid == "" && !id.isUnknown(FieldShardCount) && !id.isMissing(FieldShardCount)
}

// sameGroup reports whether after names the group before names. An unknown name is
// taken as a different group: the gate must not assume the identity survives.
func sameGroup(before, after ident) bool {
	return !after.isUnknown(FieldStreamPrefix) && !after.isUnknown(FieldConsumerGroup) &&
		!after.isUnknown(FieldCoordinatorURL) &&
		before.prefix == after.prefix && before.group == after.group && before.coord == after.coord
}

// sameCount reports whether two known counts are equal; two absent counts are too.
func sameCount(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// readIdent reads one side. For the module, values are the input and shaped is false
// when the input is not the stream-group shape; unknown and sensitive are that
// side's markers.
func (p *parser) readIdent(r *resource, v values, unknown, sensitive mark, module bool) (id ident, shaped bool, err error) {
	if !v.present {
		return ident{}, false, nil
	}
	fields := providerFields
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
		fields = identFields[:]
	}
	for _, f := range fields {
		raw, ok := v.attrs.get(f)
		switch {
		case unknown.field(f).any:
			id.unknown = append(id.unknown, f)
			continue
		case !ok:
			id.missing = append(id.missing, f)
			continue
		}
		if f != FieldShardCount && sensitive.field(f).any {
			id.sensitive = append(id.sensitive, f)
		}
		var err error
		switch f {
		case FieldShardCount:
			id.shards, id.invalid = countValue(raw, sensitive.field(f).any)
		case FieldStreamPrefix:
			id.prefix, err = r.sc.strings.sharedValue(raw)
		case FieldConsumerGroup:
			id.group, err = r.sc.strings.sharedValue(raw)
		case FieldCoordinatorURL:
			id.url, err = r.sc.strings.sharedValue(raw)
			id.coord = p.normalizeURL(id.url)
			// The URL as written is shown (coordinator_url, messages); its
			// credentials never are. The identity, id.coord, holds none.
			id.url = RedactURLCredentials(id.url)
		}
		if err != nil {
			path := f
			if module {
				path = "input." + f
			}
			return ident{}, false, planErrorf("%s: %s %v", r.label(), path, err)
		}
	}
	id.stream = p.streamOf(module, id)
	return id, true, nil
}

// countValue reads a shard count: a whole number >= 1, else the value as written
// (cut short; "(sensitive)" when it is sensitive). null is no count.
func countValue(v jsontext.Value, sensitive bool) (*int, string) {
	if isNull(v) {
		return nil, ""
	}
	if n, err := intValue(v); err == nil && *n >= 1 {
		return n, ""
	}
	if sensitive {
		return nil, renderSensitive
	}
	const maxLen = 40
	if len(v) > maxLen {
		n := maxLen
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		return nil, string(v[:n]) + "..."
	}
	return nil, string(v)
}

// intValue returns v as a whole number that fits an int32.
func intValue(v jsontext.Value) (*int, error) {
	if v.Kind() != '0' {
		return nil, errors.New("is not a number")
	}
	if n, err := strconv.ParseInt(string(v), 10, 0); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
		i := int(n)
		return &i, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return nil, errors.New("is not a whole number")
	}
	i := int(f)
	return &i, nil
}

// normalizeURL is NormalizeURL, once per spelling: a plan repeats a few.
func (p *parser) normalizeURL(raw string) string {
	if c := &p.sc.lastURL; c[0] == raw && raw != "" {
		return c[1]
	}
	n, ok := p.sc.urls[raw]
	if !ok {
		if p.sc.urls == nil {
			p.sc.urls = make(map[string]string)
		}
		n = NormalizeURL(raw)
		p.sc.urls[raw] = n
	}
	p.sc.lastURL = [2]string{raw, n}
	return n
}

// extract turns one coordinator resource change into Changes, Desired and Resources.
func (p *parser) extract(r *resource, k Kind, o op) error {
	if o == opRead {
		return nil // only data sources are read, and they change nothing
	}
	module := k == KindModule
	var s sides
	var hasBefore, hasAfter bool
	var err error
	if o.hasBefore() {
		if s.before, hasBefore, err = p.readIdent(r, r.before, mark{}, r.marks.beforeSensitive, module); err != nil {
			return err
		}
	}
	if o.hasAfter() {
		if s.after, hasAfter, err = p.readIdent(r, r.after, r.marks.afterUnknown, r.marks.afterSensitive, module); err != nil {
			return err
		}
	}
	switch {
	case module && !hasBefore && !hasAfter:
		return p.other(r, o) // a terraform_data named stream_group that is something else
	case module && (o == opUpdate || o.isReplace()) && !hasBefore:
		o = opCreate // it becomes a stream group
	case module && (o == opUpdate || o.isReplace()) && !hasAfter:
		o = opDelete // it stops being one
	case o.hasBefore() && !hasBefore:
		return planErrorf("%s: change.before is missing", r.label())
	case o.hasAfter() && !hasAfter:
		return planErrorf("%s: change.after is missing", r.label())
	}
	first := p.collected.len()
	p.changes(r, k, o, s)
	switch {
	case r.actionReason == reasonTainted:
		p.taint(first)
	case r.actionReason == "" && o.isReplace():
		p.needPrior = true // terraform before 1.2 tells a taint only in the prior state
	}
	for i := first; i < p.collected.len() && r.previousAddress != ""; i++ {
		p.collected.at(i).MovedFrom = r.previousAddress
	}
	for i := first; i < p.collected.len() && r.importing; i++ {
		p.collected.at(i).Importing = true
	}
	if a := s.after; o.hasAfter() && a.shards != nil && a.stream != "" {
		p.desired.add(Desired{
			Address:       r.address,
			StreamPrefix:  a.prefix,
			ConsumerGroup: a.group,
			Coordinator:   a.coord,
			Stream:        a.stream,
			ShardCount:    *a.shards,
		})
	}
	if o != opNoop {
		return p.resource(r)
	}
	return nil
}

const reasonTainted = "replace_because_tainted"

// resource adds the redaction-safe summary of a non-noop change.
func (p *parser) resource(r *resource) error {
	fp, err := r.fingerprint()
	if err != nil {
		return err
	}
	p.cs.Resources = append(grow(p.cs.Resources), ResourceChange{
		Address:      r.address,
		Actions:      r.actions,
		ActionReason: r.actionReason,
		Diff: diffLines(
			side{values: r.before.attrs, exists: r.before.present, sensitive: r.marks.beforeSensitive},
			side{values: r.after.attrs, exists: r.after.present, sensitive: r.marks.afterSensitive, unknown: r.marks.afterUnknown},
		),
		Fingerprint: fp,
	})
	return nil
}

// other lists a change of a resource that is no coordinator shape.
func (p *parser) other(r *resource, o op) error {
	if r.mode == "data" || o == opNoop || o == opRead {
		return nil
	}
	fp, err := r.fingerprint()
	if err != nil {
		return err
	}
	p.cs.OtherChanges = append(grow(p.cs.OtherChanges), OtherChange{
		Address:      r.address,
		Type:         r.typ,
		Actions:      r.actions,
		ActionReason: r.actionReason,
		Fingerprint:  fp,
	})
	return nil
}
