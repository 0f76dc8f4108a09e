package planparse

import (
	"bytes"
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

// ParseBytes does not run the resource_changes entries through jsontext: it walks
// each entry once, valueEnd checking the structure of what it steps over and one
// utf8.Valid the entry's UTF-8, and checks here the values it reads, as jsontext
// would. Parse's entries come from jsontext, where these checks always pass.

var errSyntax = errors.New("is not valid JSON")

// checkValue checks a value planparse reads or renders: scalars by hand, the rare
// object or array by jsontext.
func checkValue(v jsontext.Value) error {
	if len(v) == 0 {
		return errSyntax
	}
	switch v[0] {
	case '"':
		return checkString(v)
	case 'n':
		return checkLiteral(v, "null")
	case 't':
		return checkLiteral(v, "true")
	case 'f':
		return checkLiteral(v, "false")
	case '{', '[':
		// Duplicate names are looked for where they matter (duplicates.go).
		if !v.IsValid(jsontext.AllowDuplicateNames(true)) {
			return errSyntax
		}
		return nil
	}
	if !validNumber(v) {
		return errSyntax
	}
	return nil
}

func checkLiteral(v []byte, lit string) error {
	if string(v) != lit {
		return errSyntax
	}
	return nil
}

// checkString checks a quoted string that skipValue delimited: no raw control
// character, and escapes jsontext accepts. UTF-8 was checked for the whole entry.
func checkString(v []byte) error {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return errSyntax
	}
	body := v[1 : len(v)-1]
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c < 0x20, c == '"':
			return errSyntax
		case c != '\\':
		case i+1 < len(body) && bytes.IndexByte([]byte(`"\\/bfnrt`), body[i+1]) >= 0:
			i++
		case i+5 < len(body) && body[i+1] == 'u' && isHex4(body[i+2:i+6]) && !isSurrogate(body[i+2:i+6]):
			i += 5
		default:
			// A surrogate pair, or no valid escape: jsontext judges.
			if _, err := jsontext.AppendUnquote(nil, v); err != nil {
				return errSyntax
			}
			return nil
		}
	}
	return nil
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
}

// isSurrogate reports whether the four hex digits are in D800-DFFF.
func isSurrogate(b []byte) bool {
	return b[0]|0x20 == 'd' && (b[1] >= '8' && b[1] <= '9' || b[1]|0x20 >= 'a' && b[1]|0x20 <= 'f')
}

// validNumber reports whether v is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && v[i] >= '1' && v[i] <= '9':
		for i < len(v) && isDigit(v[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if i == len(v) || !isDigit(v[i]) {
			return false
		}
		for i < len(v) && isDigit(v[i]) {
			i++
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if i == len(v) || !isDigit(v[i]) {
			return false
		}
		for i < len(v) && isDigit(v[i]) {
			i++
		}
	}
	return i == len(v)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkedMarkers remembers markers already checked: terraform writes the same few
// (`{}`, `false`, `{"input":{},...}`) for thousands of entries.
type checkedMarkers map[string]bool

const maxCheckedMarkers, maxCheckedMarkerLen = 64, 512

func (c *checkedMarkers) check(v jsontext.Value) error {
	if (*c)[string(v)] {
		return nil
	}
	if err := checkValue(v); err != nil {
		return err
	}
	if len(v) <= maxCheckedMarkerLen && len(*c) < maxCheckedMarkers {
		if *c == nil {
			*c = make(checkedMarkers)
		}
		(*c)[string(v)] = true
	}
	return nil
}
