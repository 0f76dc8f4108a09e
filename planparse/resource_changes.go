package planparse

import (
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
	sc              *scratch
	index           int
	address         string
	mode            string
	typ             string
	name            string
	actionReason    string
	previousAddress string         // a `moved` block's old address
	importing       bool           // an `import` block brings the object under management
	change          jsontext.Value // kept raw when it comes before mode, type and name
	decoded         bool
	hasActions      bool
	actions         []string
	marks           changeMarks
	before          values
	after           values
	raw             rawAfter
}

// rawAfter is the after side of a change as written, markers included, for its
// fingerprint: for the module the whole object, not only its input.
type rawAfter struct {
	value, unknown, sensitive jsontext.Value
}

// scratch is what a parse reuses from one resource_changes entry to the next.
type scratch struct {
	strings stringPool
	members []member // the members of every object the entry reads
	markers checkedMarkers
	canon   canonical
	// urls and streams keep one normalized coordinator and one stream key per
	// spelling: thousands of instances repeat a few.
	urls       map[string]string
	streams    map[[2]string]string
	lastURL    [2]string // the spelling last normalized, and its normal form
	lastStream struct {
		key    [2]string
		stream string
	}
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

// resourceChange reads entry i, which jsontext has validated (Parse). Every entry
// is read: the actions of every change are checked, and the other changes listed.
func (p *parser) resourceChange(i int, v jsontext.Value) error {
	if v.Kind() != '{' {
		return planErrorf("resource_changes[%d] is not an object", i)
	}
	_, err := p.readEntry(i, v, 0, false)
	return err
}

// readEntry reads entry i, the object at b[at], and returns the index after it.
// ParseBytes calls it on every entry of unvalidated bytes, checkUTF8 set: the walk
// checks the rest of the syntax (valueEnd, checkValue). Of an entry that is no
// coordinator shape only the actions are read, and for a change its after side.
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
		case "address", "mode", "type", "name", "action_reason", "previous_address":
		case "change":
			// Terraform writes mode, type and name before change, so the change can
			// be read in the same pass; OpenTofu sorts members and it comes first.
			if seen&seenAll == seenAll || seen&seenMode != 0 && r.mode == "data" {
				return r.readChange(r.kind(), b, at)
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
		case "previous_address":
			r.previousAddress = s
		}
		return e, nil
	})
	if err == nil && checkUTF8 && !utf8.Valid(b[start:end]) {
		err = errSyntax
	}
	if err == nil {
		err = p.entry(&r)
	}
	if err != nil {
		return 0, p.entryError(&r, err)
	}
	return end, nil
}

// entry turns the entry read into changes: a coordinator shape's, or another's.
func (p *parser) entry(r *resource) error {
	k := r.kind()
	if !r.decoded {
		if r.change == nil {
			return planErrorf("%s: change is missing", r.label())
		}
		if _, err := r.readChange(k, r.change, 0); err != nil {
			return err
		}
	}
	if !r.hasActions {
		return planErrorf("%s: change.actions is missing", r.label())
	}
	o, err := r.op()
	if err != nil {
		return err
	}
	if k == "" {
		return p.other(r, o)
	}
	return p.extract(r, k, o)
}

const (
	seenMode uint8 = 1 << iota
	seenType
	seenName
	seenAddress
	seenActionReason
	seenChange
	seenPreviousAddress
	seenAll = seenMode | seenType | seenName
)
