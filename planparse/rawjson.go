package planparse

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/go-json-experiment/json/jsontext"
)

// The functions here walk JSON that jsontext has already validated (syntax, UTF-8,
// duplicate names), which is several times faster than decoding it again token by
// token. They still check every index, so malformed input is an error, never a panic.

var errMalformed = errors.New("malformed JSON value")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) (int, error) {
	if e, ok := skipString(b, i); ok {
		return e, nil
	}
	return 0, errMalformed
}

// skipString returns the index just past the string starting at b[i] == '"', and
// false when it does not end. It looks for quotes alone, eight bytes at a time: a
// quote is escaped when an odd run of backslashes comes right before it, the run
// counted back from the quote (it stops at the opening quote at the latest).
// Backslashes are rare in a plan and its strings short (a dozen bytes): looking
// for backslashes too cost half as much again, and bytes.IndexByte's setup more
// than the search.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		j = nextQuote(b, j)
		if j >= len(b) {
			return 0, false
		}
		if b[j-1] != '\\' { // j > i: the common case, no escape
			return j + 1, true
		}
		n := 1
		for j-1-n > i && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

// nextQuote returns the index of the first '"' in b from j on, or len(b).
func nextQuote(b []byte, j int) int {
	const lo, hi, quotes = 0x0101010101010101, 0x8080808080808080, 0x2222222222222222
	for ; j+8 <= len(b); j += 8 {
		// The high bit of the first quote is set (and maybe of later bytes):
		// the lowest set bit is always a true match.
		y := binary.LittleEndian.Uint64(b[j:]) ^ quotes
		if m := (y - lo) &^ y & hi; m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b); j++ {
		if b[j] == '"' {
			return j
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value starting at b[i]. It checks what
// skipValue checks but UTF-8: brackets that nest and match, strings that end, no
// byte outside a string that JSON never has there. ParseBytes relies on that for
// the parts of a resource_changes entry it steps over.
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errMalformed
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
	default:
		j := i
		for j < len(b) && skipClass[b[j]] == classPlain && b[j] != ',' && b[j] != ':' && !isSpace(b[j]) {
			j++
		}
		if j == i {
			return 0, errMalformed
		}
		return j, nil
	}
	var arrays uint64 // one bit per open bracket, set for '['
	depth := 0
	for j := i; j < len(b); j++ {
		c := b[j]
		for skipClass[c] == classPlain {
			if j++; j == len(b) {
				return 0, errMalformed
			}
			c = b[j]
		}
		switch c {
		case '"':
			e, ok := skipString(b, j)
			if !ok {
				return 0, errMalformed
			}
			j = e - 1
		case '{', '[':
			if depth == 64 {
				// Deeper than the bitmap holds: skipStructure has a stack for it.
				if e, err := skipStructure(b, i); err == nil {
					return e, nil
				}
				return 0, errMalformed
			}
			if c == '[' {
				arrays |= 1 << depth
			} else {
				arrays &^= 1 << depth
			}
			depth++
		case '}', ']':
			depth-- // never below 0: the scan returns when it reaches 0
			if arrays>>depth&1 == 1 != (c == ']') {
				return 0, errMalformed
			}
			if depth == 0 {
				return j + 1, nil
			}
		default:
			return 0, errMalformed
		}
	}
	return 0, errMalformed
}

// walkObject walks the object starting at b[i]. member gets each name (unquoted)
// and the index its value starts at, and returns the index just past the value,
// so that a member can be parsed and stepped over in one pass. walkObject returns
// the index just past the object.
func walkObject(b []byte, i int, member func(name []byte, i int) (int, error)) (int, error) {
	return walkItems(b, i, '{', '}', func(i int) (int, error) {
		if i >= len(b) || b[i] != '"' {
			return 0, errMalformed
		}
		e, err := stringEnd(b, i)
		if err != nil {
			return 0, err
		}
		name := b[i+1 : e-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			if name, err = jsontext.AppendUnquote(nil, b[i:e]); err != nil {
				return 0, err
			}
		}
		i = skipSpace(b, e)
		if i >= len(b) || b[i] != ':' {
			return 0, errMalformed
		}
		return member(name, skipSpace(b, i+1))
	})
}

// eachMember calls fn with the name (unquoted) and raw value of every member of
// the object v, in order, until fn returns an error.
func eachMember(v []byte, fn func(name []byte, value jsontext.Value) error) error {
	_, err := walkObject(v, skipSpace(v, 0), func(name []byte, i int) (int, error) {
		e, err := valueEnd(v, i)
		if err != nil {
			return 0, err
		}
		return e, fn(name, v[i:e])
	})
	return err
}

// eachElement calls fn with every element of the array v, in order.
func eachElement(v []byte, fn func(value jsontext.Value) error) error {
	_, err := walkItems(v, skipSpace(v, 0), '[', ']', func(i int) (int, error) {
		e, err := valueEnd(v, i)
		if err != nil {
			return 0, err
		}
		return e, fn(v[i:e])
	})
	return err
}

// walkItems walks the comma-separated items between open and close starting at
// b[i]; item reads one item starting at its index and returns the index after it.
func walkItems(b []byte, i int, open, close byte, item func(i int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != open {
		return 0, errMalformed
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return i + 1, nil
	}
	for {
		e, err := item(i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(b, e)
		switch {
		case i >= len(b):
			return 0, errMalformed
		case b[i] == close:
			return i + 1, nil
		case b[i] != ',':
			return 0, errMalformed
		}
		i = skipSpace(b, i+1)
	}
}
