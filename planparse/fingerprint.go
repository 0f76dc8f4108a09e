package planparse

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Markers that stand for a sensitive and an unknown value in a fingerprint. A
// control character never appears in canonical JSON outside a string (and is
// escaped inside one), so no value can be mistaken for a marker.
var (
	markSensitive = []byte("\x01sensitive")
	markUnknown   = []byte("\x01unknown")
	literalNull   = jsontext.Value("null")
)

// fingerprint is the hex SHA-256 of the entry's address, actions and canonical
// after value (canonical.value), with sensitive values replaced by a marker: it
// identifies the change as a reviewer could see it, and reveals nothing sensitive.
func (r *resource) fingerprint() (string, error) {
	after := r.raw.value
	if len(after) == 0 {
		after = literalNull
	}
	if err := checkValue(after); err != nil {
		return "", err
	}
	for _, m := range []jsontext.Value{r.raw.unknown, r.raw.sensitive} {
		if len(m) > 0 {
			if err := r.sc.markers.check(m); err != nil {
				return "", err
			}
		}
	}
	c := &r.sc.canon
	c.buf = append(c.buf[:0], "shardgate fingerprint 1\x00"...)
	c.buf, _ = jsontext.AppendQuote(c.buf, r.address) // valid UTF-8: it was unquoted
	c.buf = append(c.buf, '[')
	for i, a := range r.actions {
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		c.buf, _ = jsontext.AppendQuote(c.buf, a)
	}
	c.buf = append(c.buf, ']')
	if err := c.value(after, r.raw.sensitive, r.raw.unknown); err != nil {
		return "", err
	}
	sum := sha256.Sum256(c.buf)
	return hex.EncodeToString(sum[:]), nil
}

// canonical writes a JSON value so that two spellings of one value write alike:
// object members sorted by name, no white space, strings with minimal escapes
// (RFC 8785), numbers in one notation. A value marked sensitive becomes
// markSensitive, one marked unknown (present or, as terraform writes it, left
// out) markUnknown.
type canonical struct {
	buf   []byte
	slab  []canonMember // the members of the objects being written, reused
	marks []canonMember // the members of their markers
}

type canonMember struct {
	name  []byte
	value jsontext.Value // nil: left out of after, named by after_unknown
}

// value writes v, whose markers are sens and unk (nil when there are none). v
// has been checked (checkValue); the walk still never reads past it.
func (c *canonical) value(v, sens, unk jsontext.Value) error {
	switch {
	case isMarked(sens):
		c.buf = append(c.buf, markSensitive...)
		return nil
	case isMarked(unk) || len(v) == 0:
		c.buf = append(c.buf, markUnknown...)
		return nil
	}
	if !bytes.Contains(sens, literalTrue) {
		sens = nil
	}
	if !bytes.Contains(unk, literalTrue) {
		unk = nil
	}
	switch v[0] {
	case '{':
		return c.object(v, sens, unk)
	case '[':
		return c.array(v, sens, unk)
	case '"':
		if bytes.IndexByte(v, '\\') < 0 {
			c.buf = append(c.buf, v...) // already minimal
			return nil
		}
		s, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return errSyntax
		}
		c.buf, _ = jsontext.AppendQuote(c.buf, s)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		c.number(v)
	default:
		c.buf = append(c.buf, v...) // true, false, null
	}
	return nil
}

// isMarked reports a marker that marks the whole value.
func isMarked(m jsontext.Value) bool { return string(m) == "true" }

// object writes the members of v and, as terraform leaves unknown values out of
// after, the members only after_unknown names, sorted. Every lookup is a binary
// search, so a plan's object of any size costs n log n.
func (c *canonical) object(v, sens, unk jsontext.Value) error {
	start, markStart := len(c.slab), len(c.marks)
	defer func() { c.slab, c.marks = c.slab[:start], c.marks[:markStart] }()
	if err := c.collect(&c.slab, v); err != nil {
		return err
	}
	sortMembers(c.slab[start:])
	for i := start + 1; i < len(c.slab); i++ {
		if bytes.Equal(c.slab[i-1].name, c.slab[i].name) {
			return &duplicateError{name: string(c.slab[i].name)}
		}
	}
	sensMarks, unkMarks, err := c.markerMembers(sens, unk)
	if err != nil {
		return err
	}
	known := len(c.slab)
	for i := unkMarks[0]; i < unkMarks[1]; i++ {
		m := c.marks[i]
		if _, found := findMember(c.slab[start:known], m.name); !found && bytes.Contains(m.value, literalTrue) {
			c.slab = append(c.slab, canonMember{name: m.name})
		}
	}
	if len(c.slab) > known {
		sortMembers(c.slab[start:])
	}
	c.buf = append(c.buf, '{')
	end := len(c.slab)
	for i := start; i < end; i++ {
		m := c.slab[i]
		if i > start {
			c.buf = append(c.buf, ',')
		}
		c.buf, _ = jsontext.AppendQuote(c.buf, m.name)
		c.buf = append(c.buf, ':')
		s := c.markOf(sensMarks, m.name)
		u := c.markOf(unkMarks, m.name)
		if err := c.value(m.value, s, u); err != nil {
			return err
		}
	}
	c.buf = append(c.buf, '}')
	return nil
}

// collect appends the members of the object v to *to.
func (c *canonical) collect(to *[]canonMember, v jsontext.Value) error {
	return eachMember(v, func(name []byte, value jsontext.Value) error {
		*to = append(*to, canonMember{name: name, value: value})
		return nil
	})
}

// markerMembers puts the members of the object markers sens and unk into
// c.marks, each sorted, and returns their index ranges.
func (c *canonical) markerMembers(sens, unk jsontext.Value) (s, u [2]int, err error) {
	for _, m := range []struct {
		v jsontext.Value
		r *[2]int
	}{{sens, &s}, {unk, &u}} {
		m.r[0] = len(c.marks)
		if len(m.v) > 0 && m.v[0] == '{' {
			if err := c.collect(&c.marks, m.v); err != nil {
				return s, u, err
			}
		}
		m.r[1] = len(c.marks)
		sortMembers(c.marks[m.r[0]:m.r[1]])
	}
	return s, u, nil
}

// markOf is the marker of member name among the sorted marker members r.
func (c *canonical) markOf(r [2]int, name []byte) jsontext.Value {
	if i, found := findMember(c.marks[r[0]:r[1]], name); found {
		return c.marks[r[0]+i].value
	}
	return nil
}

func sortMembers(ms []canonMember) {
	slices.SortStableFunc(ms, func(a, b canonMember) int { return bytes.Compare(a.name, b.name) })
}

func findMember(sorted []canonMember, name []byte) (int, bool) {
	return slices.BinarySearchFunc(sorted, name, func(m canonMember, n []byte) int { return bytes.Compare(m.name, n) })
}

func (c *canonical) array(v, sens, unk jsontext.Value) error {
	sensElems, unkElems := markerElements(sens), markerElements(unk)
	c.buf = append(c.buf, '[')
	i := 0
	err := eachElement(v, func(e jsontext.Value) error {
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		var s, u jsontext.Value
		if i < len(sensElems) {
			s = sensElems[i]
		}
		if i < len(unkElems) {
			u = unkElems[i]
		}
		i++
		return c.value(e, s, u)
	})
	c.buf = append(c.buf, ']')
	return err
}

// number writes an integer as written (JSON allows one spelling of it but -0),
// and any other number as the shortest decimal of its 256-bit value: 4.0, 40e-1
// and 4 write alike.
func (c *canonical) number(v jsontext.Value) {
	if bytes.IndexAny(v, ".eE") < 0 {
		if string(v) == "-0" {
			v = v[1:]
		}
		c.buf = append(c.buf, v...)
		return
	}
	f, _, err := big.ParseFloat(string(v), 10, 256, big.ToNearestEven)
	switch {
	case err != nil:
		c.buf = append(c.buf, v...)
	case f.Sign() == 0:
		c.buf = append(c.buf, '0')
	case f.IsInt():
		c.buf = f.Append(c.buf, 'f', 0)
	default:
		c.buf = f.Append(c.buf, 'g', -1)
	}
}

// markerElements are the elements of an array marker, nil for none.
func markerElements(m jsontext.Value) []jsontext.Value {
	if len(m) == 0 || m[0] != '[' {
		return nil
	}
	var out []jsontext.Value
	_ = eachElement(m, func(v jsontext.Value) error {
		out = append(out, v)
		return nil
	})
	return out
}
