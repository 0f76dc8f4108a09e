package planparse

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// readChange reads the change object starting at b[at]: actions, the two sides and
// the markers. For the module only `input` matters: id, output and
// triggers_replace are stepped over. Of another resource's change (k == "") only
// the actions are read, and the after side and its markers kept raw for the
// fingerprint.
func (r *resource) readChange(k Kind, b []byte, at int) (int, error) {
	if at >= len(b) || b[at] != '{' {
		return 0, planErrorf("%s: change is not an object", r.label())
	}
	marker := func(v jsontext.Value) (mark, error) {
		if err := r.sc.markers.check(v); err != nil {
			return mark{}, err
		}
		m, err := readMark(v)
		if k == KindModule {
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
		switch {
		case k != "" && string(name) == "before":
			r.before, e, err = r.side(k, b, at)
		case k != "" && string(name) == "after":
			r.after, e, err = r.side(k, b, at)
		default:
			e, err = valueEnd(b, at)
		}
		if err == nil {
			err = r.changeMember(k, string(name), b[at:e], marker)
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

// changeMember keeps what readChange needs of member name, whose value is v.
func (r *resource) changeMember(k Kind, name string, v jsontext.Value, marker func(jsontext.Value) (mark, error)) error {
	var err error
	switch name {
	case "actions":
		r.hasActions = true
		r.actions, err = r.sc.strings.stringArray(v)
	case "after":
		r.raw.value = v
	case "importing":
		r.importing = !isNull(v)
	case "after_unknown":
		r.raw.unknown = v
		if k != "" {
			r.marks.afterUnknown, err = marker(v)
		}
	case "before_sensitive":
		if k != "" {
			r.marks.beforeSensitive, err = marker(v)
		}
	case "after_sensitive":
		r.raw.sensitive = v
		if k != "" {
			r.marks.afterSensitive, err = marker(v)
		}
	}
	return err
}

// side reads one side of a coordinator change: a provider resource's attributes,
// or the module's input.
func (r *resource) side(k Kind, b []byte, at int) (values, int, error) {
	if at < len(b) && b[at] == 'n' {
		e, err := valueEnd(b, at)
		if err == nil {
			err = checkLiteral(b[at:e], "null")
		}
		return values{}, e, err
	}
	if k != KindModule {
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
