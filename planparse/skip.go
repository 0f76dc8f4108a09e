package planparse

import (
	"fmt"
	"unicode/utf8"
)

// skipValue steps over a value of the plan that planparse does not read
// (prior_state, planned_values, configuration, ...), most of a plan's bytes. A full
// validation costs more than the rest of the parse, so the value is only checked
// for what keeps the scan in step: brackets that nest and match, strings that end,
// no byte outside a string that JSON never has there, and valid UTF-8. It never
// reads past b and never recurses, so no input makes it panic.
//
// What it lets through (a missing colon, `tru`, a bad escape, a control character
// in a string, a duplicate name) is malformed JSON in a part of the plan whose
// content cannot change the result.
func skipValue(b []byte, i int) (int, error) {
	start := i
	end, err := skipStructure(b, i)
	if err != nil {
		return 0, err
	}
	if !utf8.Valid(b[start:end]) {
		return 0, skipErrorf(start, "invalid UTF-8 in the value")
	}
	return end, nil
}

// maxSkipDepth keeps to jsontext's limit of 10,000 levels in all, one of which is
// the plan object, so that Parse and ParseBytes reject the same deep plans.
const maxSkipDepth = 10000 - 1

// skipClass sorts the bytes that may appear outside strings.
var skipClass = func() (t [256]byte) {
	for _, c := range "-+.0123456789eEtruefalsn \t\r\n,:" {
		t[c] = classPlain
	}
	for _, c := range `"{}[]` {
		t[c] = classStructural
	}
	return t
}()

const (
	classInvalid byte = iota
	classPlain
	classStructural
)

func skipStructure(b []byte, i int) (int, error) {
	return skipStructureProgress(b, i, nil)
}

// progressStep is how far skipValueProgress moves between two reports.
const progressStep = 1 << 20

// skipValueProgress is skipValue that calls passed(n) about every progressStep
// bytes, n an offset inside the value the scan has moved past, so that a caller
// holding b in pages it can drop never holds a large skipped member whole. The
// bytes are checked for UTF-8 in the same steps, before they are reported (after
// a bad one, no more are); the errors are skipValue's, a malformed structure
// first.
func skipValueProgress(b []byte, i int, passed func(int)) (int, error) {
	start, checked, valid := i, i, true
	step := func(j int) {
		// b[j] is a bracket: a step never splits a character.
		if valid = valid && utf8.Valid(b[checked:j]); valid {
			checked = j
			passed(j)
		}
	}
	end, err := skipStructureProgress(b, i, step)
	if err != nil {
		return 0, err
	}
	if !valid || !utf8.Valid(b[checked:end]) {
		return 0, skipErrorf(start, "invalid UTF-8 in the value")
	}
	return end, nil
}

// skipStructureProgress is skipStructure that calls step(j), when step is not
// nil, at an opening bracket b[j] at least progressStep past the last call (or
// the start).
func skipStructureProgress(b []byte, i int, step func(j int)) (int, error) {
	if i >= len(b) {
		return 0, skipErrorf(i, "unexpected end of input")
	}
	switch skipClass[b[i]] {
	case classStructural:
		switch b[i] {
		case '"':
			e, ok := skipString(b, i)
			if !ok {
				return 0, skipErrorf(i, "unterminated string")
			}
			return e, nil
		case '}', ']':
			return 0, skipErrorf(i, "invalid character %q at the start of a value", b[i])
		}
	case classInvalid:
		return 0, skipErrorf(i, "invalid character %q at the start of a value", b[i])
	case classPlain:
		j := i
		for j < len(b) && skipClass[b[j]] == classPlain && b[j] != ',' && b[j] != ':' && !isSpace(b[j]) {
			j++
		}
		if j == i {
			return 0, skipErrorf(i, "invalid character %q at the start of a value", b[i])
		}
		return j, nil
	}
	// One bit per open bracket, set for '[': enough to match every close.
	var arrays [maxSkipDepth/64 + 1]uint64
	depth, last := 0, i
	for j := i; j < len(b); j++ {
		c := b[j]
		for skipClass[c] == classPlain {
			if j++; j == len(b) {
				return 0, skipErrorf(j, "unexpected end of input")
			}
			c = b[j]
		}
		switch c {
		case '"':
			e, ok := skipString(b, j)
			if !ok {
				return 0, skipErrorf(j, "unterminated string")
			}
			j = e - 1
		case '{', '[':
			if depth == maxSkipDepth {
				return 0, skipErrorf(j, "nested too deeply")
			}
			if step != nil && j-last >= progressStep {
				step(j)
				last = j
			}
			word, bit := depth/64, uint64(1)<<(depth%64)
			if c == '[' {
				arrays[word] |= bit
			} else {
				arrays[word] &^= bit
			}
			depth++
		case '}', ']':
			depth-- // never below 0: the scan returns when it reaches 0
			if isArray := arrays[depth/64]&(uint64(1)<<(depth%64)) != 0; isArray != (c == ']') {
				return 0, skipErrorf(j, "mismatched %q", c)
			}
			if depth == 0 {
				return j + 1, nil
			}
		default:
			return 0, skipErrorf(j, "invalid character %q", c)
		}
	}
	return 0, skipErrorf(len(b), "unexpected end of input")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// syntaxError is malformed JSON found without jsontext; jsonError words it as
// "not JSON", like jsontext's own errors.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at offset %d", e.msg, e.offset)
}

func skipErrorf(offset int, format string, args ...any) error {
	return &syntaxError{offset: offset, msg: fmt.Sprintf(format, args...)}
}
