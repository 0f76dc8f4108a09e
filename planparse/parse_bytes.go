package planparse

import (
	"bytes"
	"errors"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// ParseBytes is Parse over a plan held in memory, several times faster on large
// plans. It validates what it reads as Parse does: format_version,
// terraform_version, errored, complete, the names of the top-level members, and
// in resource_changes every value it reads, renders or fingerprints (checkValue)
// and every member name it reads (duplicateError). All else, most of a plan's
// bytes, is only checked by skipValue: matching brackets, terminated strings,
// valid UTF-8, no stray byte.
// So a plan malformed only where planparse does not look, say inside prior_state
// or in an entry's provider_name, parses here while Parse rejects it; on every
// well-formed plan the two agree (FuzzParse).
func ParseBytes(b []byte) (*ChangeSet, error) {
	return ParseBytesProgress(b, nil)
}

// ParseBytesProgress is ParseBytes that calls passed(n), when passed is not nil,
// each time the parse has moved past offset n of b: after each top-level member
// and each resource_changes entry, and about every MiB inside a member it skips
// (planned_values, prior_state, configuration). It is a hint that the bytes
// before n are not needed soon, for a caller that holds b in pages it can drop,
// such as a mapped file (shardgate check): those bytes must stay readable, as a
// replace may send the parse back to prior_state's taints at the end. Offsets
// only grow.
func ParseBytesProgress(b []byte, passed func(n int)) (*ChangeSet, error) {
	start := skipSpace(b, 0)
	if start == len(b) || b[start] != '{' {
		// Empty input, or not an object: let the decoder word what it is.
		return Parse(bytes.NewBuffer(b))
	}
	if passed == nil {
		passed = func(int) {}
	}
	p := parser{cs: newChangeSet(), passed: passed}
	if err := p.planBytes(b, start); err != nil {
		return nil, err
	}
	return p.cs, nil
}

func newChangeSet() *ChangeSet {
	// Empty, not nil, slices: the change set is policy input, where null and [] differ.
	return &ChangeSet{Changes: []Change{}, Desired: []Desired{}, Resources: []ResourceChange{}, OtherChanges: []OtherChange{}}
}

// planBytes walks the plan object at b[i] member by member.
func (p *parser) planBytes(b []byte, i int) error {
	var names [][]byte // a plan has about ten members
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return p.planEnd(b, i+1)
	}
	for {
		name, e, err := memberName(b, i)
		if err != nil {
			return jsonError(err)
		}
		if slices.ContainsFunc(names, func(n []byte) bool { return bytes.Equal(n, name) }) {
			return jsonError(skipErrorf(i, "duplicate member name %q", name))
		}
		names = append(names, name)
		if i = skipSpace(b, e); i >= len(b) || b[i] != ':' {
			return jsonError(skipErrorf(i, "missing ':' after a member name"))
		}
		if i, err = p.memberAt(string(name), b, skipSpace(b, i+1)); err != nil {
			return jsonError(err)
		}
		p.passed(i)
		switch i = skipSpace(b, i); {
		case i >= len(b):
			return jsonError(skipErrorf(i, "unexpected end of input"))
		case b[i] == '}':
			return p.planEnd(b, i+1)
		case b[i] != ',':
			return jsonError(skipErrorf(i, "invalid character %q after a member", b[i]))
		}
		i = skipSpace(b, i+1)
	}
}

// memberAt reads the value of the top-level member name at b[i] and returns the
// index after it. It reads what Parse's member reads, alike.
func (p *parser) memberAt(name string, b []byte, i int) (int, error) {
	bit := topMember(name)
	if bit != topPlannedValues && bit != topResourceChanges {
		p.doc.members |= bit
	}
	var err error
	switch name {
	case "format_version":
		p.cs.FormatVersion, i, err = topStringAt(b, i, name)
	case "terraform_version":
		p.cs.TerraformVersion, i, err = topStringAt(b, i, name)
	case "resource_changes":
		if i < len(b) && b[i] != 'n' {
			p.doc.members |= topResourceChanges
		}
		i, err = p.resourceChangesAt(b, i)
	case "planned_values":
		switch {
		case i < len(b) && b[i] == 'n':
		case i >= len(b) || b[i] == '{' || bytes.IndexByte([]byte(`["-0123456789tf`), b[i]) < 0:
			p.doc.members |= topPlannedValues // or not JSON, which skipValue says
		default:
			return 0, planErrorf("planned_values is not an object")
		}
		i, err = skipValueProgress(b, i, p.passed)
	case "errored":
		p.doc.errored, i, err = topBoolAt(b, i, name)
	case "complete":
		var complete bool
		complete, i, err = topBoolAt(b, i, name)
		p.cs.Incomplete = !complete
	case "prior_state":
		// Kept to read its taints at the end, only if there are coordinator changes.
		start := i
		if i, err = skipValueProgress(b, i, p.passed); err == nil {
			p.priorState = b[start:i]
		}
	default:
		i, err = skipValueProgress(b, i, p.passed)
	}
	return i, err
}

// planEnd checks that nothing but white space follows the plan object, and that
// it is a plan.
func (p *parser) planEnd(b []byte, i int) error {
	if p.doc.isLog() {
		return errLog
	}
	if skipSpace(b, i) != len(b) {
		return errors.New("parse plan: trailing data after the plan object")
	}
	if err := p.doc.check(p.cs.FormatVersion); err != nil {
		return err
	}
	if p.split == nil { // the parallel walk finishes once its workers have read
		p.finish()
	}
	return nil
}

// topBoolAt reads a top-level boolean member at b[i]; a wrong type is a plan error.
func topBoolAt(b []byte, i int, what string) (bool, int, error) {
	if i >= len(b) || b[i] != 't' && b[i] != 'f' {
		if i < len(b) && bytes.IndexByte([]byte(`{["-0123456789n`), b[i]) >= 0 {
			return false, 0, planErrorf("%s is not a boolean", what)
		}
		return false, 0, skipErrorf(i, "invalid value of %s", what)
	}
	e, err := skipValue(b, i)
	if err != nil {
		return false, 0, err
	}
	switch string(b[i:e]) {
	case "true":
		return true, e, nil
	case "false":
		return false, e, nil
	}
	return false, 0, skipErrorf(i, "invalid literal")
}

// memberName returns the unquoted, validated name starting at b[i] and the index
// after it.
func memberName(b []byte, i int) ([]byte, int, error) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, skipErrorf(i, "missing member name")
	}
	e, ok := skipString(b, i)
	if !ok {
		return nil, 0, skipErrorf(i, "unterminated string")
	}
	name, err := jsontext.AppendUnquote(nil, b[i:e])
	if err != nil {
		return nil, 0, skipErrorf(i, "invalid member name: %v", err)
	}
	return name, e, nil
}

// topStringAt reads a top-level string member at b[i]; a wrong type is a plan error.
func topStringAt(b []byte, i int, what string) (string, int, error) {
	if i >= len(b) || b[i] != '"' {
		if i < len(b) && bytes.IndexByte([]byte("{[-0123456789tfn"), b[i]) >= 0 {
			return "", 0, planErrorf("%s is not a string", what)
		}
		return "", 0, skipErrorf(i, "invalid value of %s", what)
	}
	e, ok := skipString(b, i)
	if !ok {
		return "", 0, skipErrorf(i, "unterminated string")
	}
	s, err := jsontext.AppendUnquote(nil, b[i:e])
	if err != nil {
		return "", 0, skipErrorf(i, "invalid string: %v", err)
	}
	return string(s), e, nil
}

// resourceChangesAt reads resource_changes at b[i] and returns the index after it.
// Every entry is walked once (readEntry): what planparse reads of it is checked as
// it is read (strict.go, duplicates.go), the rest as skipValue would. Running every
// entry through jsontext first cost a third of the parse.
func (p *parser) resourceChangesAt(b []byte, i int) (int, error) {
	switch {
	case p.split != nil && i < len(b) && b[i] == '[':
		return p.split.scan(b, i)
	case i >= len(b):
		return 0, skipErrorf(i, "unexpected end of input")
	case b[i] == 'n':
		e, err := skipValue(b, i)
		if err == nil && string(b[i:e]) != "null" {
			err = skipErrorf(i, "invalid literal")
		}
		return e, err
	case b[i] != '[':
		if bytes.IndexByte([]byte(`{"-0123456789tf`), b[i]) >= 0 {
			return 0, planErrorf("resource_changes is not an array")
		}
		return 0, skipErrorf(i, "invalid character %q at the start of a value", b[i])
	}
	n := 0
	end, err := walkItems(b, i, '[', ']', func(at int) (int, error) {
		p.entryStart = at
		if at >= len(b) || b[at] != '{' {
			if _, err := skipValue(b, at); err != nil {
				return 0, err
			}
			return 0, planErrorf("resource_changes[%d] is not an object", n)
		}
		e, err := p.readEntry(n, b, at, true)
		n++
		if err == nil {
			p.passed(e)
		}
		return e, err
	})
	if err == errMalformed {
		err = skipErrorf(i, "resource_changes is malformed")
	}
	return end, err
}
