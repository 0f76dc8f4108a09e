package planparse

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// member is one name/value pair of a JSON object. The value is raw and, like every
// jsontext.Value here, only valid while the resource_changes entry is processed.
type member struct {
	name  string
	value jsontext.Value
}

// object is a JSON object whose members keep plan order, or JSON null. Terraform
// writes attributes sorted, and the report shows them in that order.
type object struct {
	set     bool // the member was in the plan at all
	null    bool
	members []member
}

// readObjectAt reads the object, or null, starting at b[at] and returns the index
// after it, in one pass: cutting the value out first would scan it twice. The
// members are appended to *slab, which the parser reuses from one
// resource_changes entry to the next.
func readObjectAt(b []byte, at int, slab *[]member) (object, int, error) {
	if at < len(b) && b[at] == 'n' {
		e, err := valueEnd(b, at)
		if err == nil {
			err = checkLiteral(b[at:e], "null")
		}
		return object{set: true, null: true}, e, err
	}
	if at >= len(b) || b[at] != '{' {
		return object{}, 0, errNotObject
	}
	start := len(*slab)
	end, err := walkObject(b, at, func(name []byte, at int) (int, error) {
		e, err := valueEnd(b, at)
		if err != nil {
			return 0, err
		}
		if err := checkValue(b[at:e]); err != nil {
			return 0, err
		}
		*slab = append(*slab, member{name: intern(name), value: b[at:e]})
		return e, nil
	})
	// Capped, so that appending to the object can never write into the slab.
	o := object{set: true, members: (*slab)[start:len(*slab):len(*slab)]}
	if err == nil {
		err = duplicateMember(o.members)
	}
	return o, end, err
}

func (o object) get(name string) (jsontext.Value, bool) {
	for _, m := range o.members {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

// mark is a decoded before_sensitive / after_unknown marker: true marks the whole
// value, an object marks its members, an array (collapsed to any) its elements.
type mark struct {
	all    bool
	any    bool // all, or something inside is marked
	fields []namedMark
}

type namedMark struct {
	name string
	mark mark
}

var literalTrue = []byte("true")

// readMark reads a marker of any shape; false, null and the rest mark nothing.
func readMark(v jsontext.Value) (mark, error) {
	// Most markers mark nothing ({} or a tree of false): no need to walk them.
	if len(v) == 0 || !bytes.Contains(v, literalTrue) {
		return mark{}, nil
	}
	switch v[0] {
	case 't':
		return mark{all: true, any: true}, nil
	case '[':
		return mark{any: true}, nil
	case '{':
		var m mark
		var seen [8][]byte // markers have a few members; more spill to the heap
		names := seen[:0]
		err := eachMember(v, func(name []byte, value jsontext.Value) error {
			if slices.ContainsFunc(names, func(n []byte) bool { return bytes.Equal(n, name) }) {
				return &duplicateError{name: string(name)}
			}
			names = append(names, name)
			sub, err := readMark(value)
			if sub.any {
				m.any = true
				m.fields = append(m.fields, namedMark{name: string(name), mark: sub})
			}
			return err
		})
		return m, err
	}
	return mark{}, nil
}

// field is the marker of member name: all of it when the whole value is marked.
func (m mark) field(name string) mark {
	if m.all {
		return m
	}
	for _, f := range m.fields {
		if f.name == name {
			return f.mark
		}
	}
	return mark{}
}

// intern returns the strings every entry repeats without allocating them again.
func intern(b []byte) string {
	switch string(b) {
	case "managed":
		return "managed"
	case "data":
		return "data"
	case typeModule:
		return typeModule
	case nameModule:
		return nameModule
	case "no-op":
		return "no-op"
	case "create":
		return "create"
	case "delete":
		return "delete"
	case "update":
		return "update"
	case "replace_because_cannot_update":
		return "replace_because_cannot_update"
	case FieldStreamPrefix:
		return FieldStreamPrefix
	case FieldConsumerGroup:
		return FieldConsumerGroup
	case FieldShardCount:
		return FieldShardCount
	case FieldCoordinatorURL:
		return FieldCoordinatorURL
	}
	return string(b)
}

// isNull reports whether v is absent or JSON null.
func isNull(v jsontext.Value) bool {
	return len(v) == 0 || v.Kind() == 'n'
}

// stringPool unquotes string values into one reused buffer, and keeps one copy of
// each prefix, group and URL: they repeat on both sides of every entry and across
// thousands of entries.
type stringPool struct {
	seen    map[string]string
	scratch []byte
}

// stringValue returns v as a string, "" for null; known is false for null.
func (sp *stringPool) stringValue(v jsontext.Value) (s string, known bool, err error) {
	raw, known, err := sp.unquote(v)
	if err != nil || !known {
		return "", false, err
	}
	return intern(raw), true, nil
}

// sharedValue is stringValue for a value that many entries repeat.
func (sp *stringPool) sharedValue(v jsontext.Value) (string, error) {
	raw, known, err := sp.unquote(v)
	if err != nil || !known {
		return "", err
	}
	if s, ok := sp.seen[string(raw)]; ok {
		return s, nil
	}
	if sp.seen == nil {
		sp.seen = make(map[string]string)
	}
	s := string(raw)
	sp.seen[s] = s
	return s, nil
}

// unquote returns the bytes of the string v, valid until the next call.
func (sp *stringPool) unquote(v jsontext.Value) ([]byte, bool, error) {
	if isNull(v) {
		return nil, false, nil
	}
	if v.Kind() != '"' {
		return nil, false, errors.New("is not a string")
	}
	raw := []byte(v[1 : len(v)-1])
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true, nil
	}
	var err error
	sp.scratch, err = jsontext.AppendUnquote(sp.scratch[:0], v)
	return sp.scratch, err == nil, err
}

const (
	renderNone      = "(none)"
	renderUnknown   = "(known after apply)"
	renderSensitive = "(sensitive)"
	renderMaxLen    = 120
)

// side is one side of a change as the diff needs it.
type side struct {
	values    object
	exists    bool // false for the before of a create or the after of a delete
	sensitive mark
	unknown   mark
}

// diffLines lists "name: before -> after" for every member that differs, after's
// order first, then members only before has. Sensitive values are never rendered.
func diffLines(before, after side) []string {
	var out []string
	seen := make(map[string]bool, len(after.values.members))
	line := func(name string) {
		bv, _ := before.values.get(name)
		av, _ := after.values.get(name)
		unknown := after.exists && after.unknown.field(name).any
		if !unknown && sameValue(bv, av) {
			return
		}
		out = append(out, fmt.Sprintf("%s: %s -> %s", name,
			render(before, name, bv, false), render(after, name, av, unknown)))
	}
	for _, m := range after.values.members {
		seen[m.name] = true
		line(m.name)
	}
	for _, m := range before.values.members {
		if !seen[m.name] {
			line(m.name)
		}
	}
	return out
}

func sameValue(a, b jsontext.Value) bool {
	if isNull(a) || isNull(b) {
		return isNull(a) && isNull(b)
	}
	return bytes.Equal(a, b)
}

func render(s side, name string, v jsontext.Value, unknown bool) string {
	switch {
	case !s.exists:
		return renderNone
	case s.sensitive.field(name).any:
		return renderSensitive
	case unknown:
		return renderUnknown
	case isNull(v):
		return "null"
	}
	// Credentials in a URL are taken out before the value is cut, so that a cut
	// cannot leave half a password unrecognised.
	if bytes.Contains(v, schemeSep) {
		return cutRendered(RedactURLCredentials(string(v)))
	}
	return cutRendered(v)
}

// cutRendered is v as a string, cut to renderMaxLen.
func cutRendered[T string | jsontext.Value](v T) string {
	if len(v) > renderMaxLen {
		n := renderMaxLen
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		return string(v[:n]) + "..."
	}
	return string(v)
}

var schemeSep = []byte("://")
