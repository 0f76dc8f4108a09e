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
	buf  []byte
	slab []canonMember // the members of the objects being written, reused
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

func (c *canonical) object(v, sens, unk jsontext.Value) error {
	start := len(c.slab)
	defer func() { c.slab = c.slab[:start] }()
	err := eachMember(v, func(name []byte, value jsontext.Value) error {
		c.slab = append(c.slab, canonMember{name: name, value: value})
		return nil
	})
	if err != nil {
		return err
	}
	if len(unk) > 0 && unk[0] == '{' {
		// Terraform leaves unknown values out of after: they are members too.
		err := eachMember(unk, func(name []byte, m jsontext.Value) error {
			present := slices.ContainsFunc(c.slab[start:], func(cm canonMember) bool { return bytes.Equal(cm.name, name) })
			if !present && bytes.Contains(m, literalTrue) {
				c.slab = append(c.slab, canonMember{name: name})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	members := c.slab[start:]
	slices.SortFunc(members, func(a, b canonMember) int { return bytes.Compare(a.name, b.name) })
	c.buf = append(c.buf, '{')
	end := len(c.slab)
	for i := start; i < end; i++ {
		m := c.slab[i]
		if i > start {
			if bytes.Equal(c.slab[i-1].name, m.name) {
				return &duplicateError{name: string(m.name)}
			}
			c.buf = append(c.buf, ',')
		}
		c.buf, _ = jsontext.AppendQuote(c.buf, m.name)
		c.buf = append(c.buf, ':')
		if err := c.value(m.value, markerField(sens, m.name), markerField(unk, m.name)); err != nil {
			return err
		}
	}
	c.buf = append(c.buf, '}')
	return nil
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

// markerField is the marker of member name of an object marker, nil for none.
func markerField(m jsontext.Value, name []byte) jsontext.Value {
	if len(m) == 0 || m[0] != '{' {
		return nil
	}
	var out jsontext.Value
	_ = eachMember(m, func(n []byte, v jsontext.Value) error {
		if bytes.Equal(n, name) {
			out = v
		}
		return nil
	})
	return out
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
