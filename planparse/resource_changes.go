package planparse

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

const (
	typeModule     = "terraform_data"
	nameModule     = "stream_group"
	typeGroup      = "redisstreamcoordinator_group"
	typeShardCount = "redisstreamcoordinator_group_shard_count"
)

// resource is what one resource_changes entry says. Its raw values point into the
// decoder's buffer and are only valid until the next entry is read.
type resource struct {
	sc           *scratch
	index        int
	address      string
	mode         string
	typ          string
	name         string
	actionReason string
	change       jsontext.Value // kept raw when it comes before mode, type and name
	decoded      bool
	actions      []string
	marks        changeMarks
	before       values
	after        values
}

// scratch is what a parse reuses from one resource_changes entry to the next.
type scratch struct {
	strings stringPool
	members []member // the members of every object the entry reads
	markers checkedMarkers
}

// changeMarks are the markers of a change; for the module, taken at "input".
type changeMarks struct {
	afterUnknown    mark
	beforeSensitive mark
	afterSensitive  mark
}

// values is one side of a change: the module's input or a provider resource's attributes.
type values struct {
	present bool // the side is not null
	attrs   object
}

// kind says which coordinator shape the entry is, "" for none. A missing mode counts
// as managed: better gated than ignored.
func (r *resource) kind() Kind {
	if r.mode == "data" {
		return ""
	}
	switch {
	case r.typ == typeGroup:
		return KindGroup
	case r.typ == typeShardCount:
		return KindShardCount
	case r.typ == typeModule && r.name == nameModule:
		return KindModule
	}
	return ""
}

func (p *parser) resourceChanges() error {
	switch p.dec.PeekKind() {
	case 'n':
		_, err := p.dec.ReadToken()
		return err
	case '[', 0:
	default:
		return planErrorf("resource_changes is not an array")
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	for i := 0; p.dec.PeekKind() != ']'; i++ {
		// ReadValue validates the whole entry (syntax, UTF-8, duplicate names) in
		// one pass; the entry is then walked without decoding it again.
		v, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		p.entryStart = int(p.dec.InputOffset()) - len(v)
		if err := p.resourceChange(i, v); err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

// Entries that mention none of the coordinator types are dismissed by a byte search.
// A type spelled with \u escapes cannot be found that way, so those entries are walked.
var (
	filterModule   = []byte(`"` + typeModule + `"`)
	filterProvider = []byte(`"redisstreamcoordinator_group`)
	filterEscape   = []byte(`\u`)
)

// resourceChange reads entry i, which jsontext has validated (Parse).
func (p *parser) resourceChange(i int, v jsontext.Value) error {
	if v.Kind() != '{' {
		return planErrorf("resource_changes[%d] is not an object", i)
	}
	if !bytes.Contains(v, filterModule) && !bytes.Contains(v, filterProvider) && !bytes.Contains(v, filterEscape) {
		return nil
	}
	_, err := p.readEntry(i, v, 0, false)
	return err
}

// readEntry reads entry i, the object at b[at], and returns the index after it.
// ParseBytes calls it on every entry of unvalidated bytes, checkUTF8 set: the walk
// checks the rest of the syntax (valueEnd, checkValue), and one pass over an entry
// is cheaper than a byte search to rule it out first.
func (p *parser) readEntry(i int, b []byte, at int, checkUTF8 bool) (int, error) {
	start := at
	r := resource{sc: &p.sc, index: i}
	var seen uint8
	p.sc.members = p.sc.members[:0] // the previous entry's objects are done with
	end, err := walkObject(b, at, func(name []byte, at int) (int, error) {
		if bit := entryMember(name); bit != 0 {
			if seen&bit != 0 {
				return 0, &duplicateError{name: string(name)}
			}
			seen |= bit
		}
		switch string(name) {
		case "address", "mode", "type", "name", "action_reason":
		case "change":
			// Terraform writes mode, type and name before change, so the change can
			// be read in the same pass; OpenTofu sorts members and it comes first.
			if seen&seenAll == seenAll || seen&seenMode != 0 && r.mode == "data" {
				if k := r.kind(); k != "" {
					return r.readChange(k, b, at)
				}
			}
			e, err := valueEnd(b, at)
			if err != nil {
				return 0, err
			}
			r.change = b[at:e]
			return e, nil
		default:
			return valueEnd(b, at)
		}
		e, err := valueEnd(b, at)
		if err != nil {
			return 0, err
		}
		if err := checkValue(b[at:e]); err != nil {
			return 0, err
		}
		s, _, err := r.sc.strings.stringValue(b[at:e])
		if err != nil {
			return 0, planErrorf("resource_changes[%d].%s %v", i, name, err)
		}
		switch string(name) {
		case "address":
			r.address = s
		case "mode":
			r.mode = s
		case "type":
			r.typ = s
		case "name":
			r.name = s
		case "action_reason":
			r.actionReason = s
		}
		return e, nil
	})
	if err == nil && checkUTF8 && !utf8.Valid(b[start:end]) {
		err = errSyntax
	}
	if err != nil {
		return 0, p.entryError(&r, err)
	}
	k := r.kind()
	if k == "" {
		return end, nil
	}
	if !r.decoded {
		if r.change == nil {
			return 0, planErrorf("%s: change is missing", r.label())
		}
		if _, err := r.readChange(k, r.change, 0); err != nil {
			return 0, p.entryError(&r, err)
		}
	}
	return end, p.extract(&r, k)
}

const (
	seenMode uint8 = 1 << iota
	seenType
	seenName
	seenAddress
	seenActionReason
	seenChange
	seenAll = seenMode | seenType | seenName
)

// readChange reads the change object starting at b[at]: actions, the two sides and
// the markers. For the module only `input` matters: id, output and
// triggers_replace are stepped over.
func (r *resource) readChange(k Kind, b []byte, at int) (int, error) {
	if at >= len(b) || b[at] != '{' {
		return 0, planErrorf("%s: change is not an object", r.label())
	}
	module := k == KindModule
	side := func(at int) (values, int, error) {
		if at < len(b) && b[at] == 'n' {
			e, err := valueEnd(b, at)
			if err == nil {
				err = checkLiteral(b[at:e], "null")
			}
			return values{}, e, err
		}
		if !module {
			o, e, err := readObjectAt(b, at, &r.sc.members)
			return values{present: true, attrs: o}, e, err
		}
		if at >= len(b) || b[at] != '{' {
			return values{}, 0, errNotObject
		}
		out := values{present: true}
		inputs := 0
		e, err := walkObject(b, at, func(name []byte, at int) (int, error) {
			if string(name) != "input" {
				return valueEnd(b, at)
			}
			if inputs++; inputs > 1 {
				return 0, &duplicateError{name: "input"}
			}
			// An input that is not an object is another shape: left unset.
			if at >= len(b) || b[at] != '{' && b[at] != 'n' {
				return valueEnd(b, at)
			}
			var e int
			var err error
			out.attrs, e, err = readObjectAt(b, at, &r.sc.members)
			if de, ok := err.(*duplicateError); ok {
				de.name = "input." + de.name
			}
			return e, err
		})
		return out, e, err
	}
	marker := func(v jsontext.Value) (mark, error) {
		if err := r.sc.markers.check(v); err != nil {
			return mark{}, err
		}
		m, err := readMark(v)
		if module {
			m = m.field("input")
		}
		return m, err
	}
	var seen uint8
	end, err := walkObject(b, at, func(name []byte, at int) (int, error) {
		if bit := changeMember(name); bit != 0 {
			if seen&bit != 0 {
				return 0, &duplicateError{name: "change." + string(name)}
			}
			seen |= bit
		}
		var e int
		var err error
		switch string(name) {
		case "before":
			r.before, e, err = side(at)
		case "after":
			r.after, e, err = side(at)
		default:
			if e, err = valueEnd(b, at); err != nil {
				return 0, err
			}
			switch string(name) {
			case "actions":
				r.actions, err = r.sc.strings.stringArray(b[at:e])
			case "after_unknown":
				r.marks.afterUnknown, err = marker(b[at:e])
			case "before_sensitive":
				r.marks.beforeSensitive, err = marker(b[at:e])
			case "after_sensitive":
				r.marks.afterSensitive, err = marker(b[at:e])
			}
		}
		if de, ok := err.(*duplicateError); ok {
			de.name = "change." + string(name) + "." + de.name
			return 0, de
		}
		if err == errSyntax || err == errMalformed {
			return 0, err // malformed JSON, worded by entryError
		}
		if err != nil {
			return 0, planErrorf("%s: change.%s %v", r.label(), name, err)
		}
		return e, nil
	})
	r.decoded = err == nil
	return end, err
}

var (
	errNotObject  = errors.New("is not an object")
	errNotStrings = errors.New("is not an array of strings")
)

func (sp *stringPool) stringArray(v jsontext.Value) ([]string, error) {
	if v.Kind() != '[' {
		return nil, errNotStrings
	}
	var out []string
	err := eachElement(v, func(e jsontext.Value) error {
		if e.Kind() != '"' {
			return errNotStrings
		}
		if err := checkString(e); err != nil {
			return err
		}
		s, _, err := sp.stringValue(e)
		out = append(out, s)
		return err
	})
	return out, err
}

// wrap words an error from walking the entry as a plan error.
func (r *resource) wrap(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*planError); ok {
		return err
	}
	return planErrorf("%s: %v", r.label(), err)
}

// label names the entry in errors: its address, or its index when it has none.
func (r *resource) label() string {
	if r.address != "" {
		return r.address
	}
	return "resource_changes[" + strconv.Itoa(r.index) + "]"
}
