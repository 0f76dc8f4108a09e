package planparse

import (
	"errors"
	"fmt"
)

// duplicateError is a member name that appears twice in an object planparse
// reads. ParseBytes does not run entries through jsontext (strict.go), and a name
// read twice would be ambiguous, so it is caught while reading.
type duplicateError struct{ name string }

func (e *duplicateError) Error() string { return fmt.Sprintf("duplicate member name %q", e.name) }

// entryError words an error from walking entry r: a duplicate name or a value
// that is not JSON is malformed JSON, anything else a plan error.
func (p *parser) entryError(r *resource, err error) error {
	if err == nil {
		return nil
	}
	var de *duplicateError
	switch {
	case errors.As(err, &de):
		return skipErrorf(p.entryStart, "duplicate member name %q in resource_changes[%d]", de.name, r.index)
	case err == errSyntax || err == errMalformed:
		return skipErrorf(p.entryStart, "resource_changes[%d] is malformed", r.index)
	}
	return r.wrap(err)
}

// entryMember is the bit of an entry member planparse reads, 0 for the others.
func entryMember(name []byte) uint8 {
	switch string(name) {
	case "mode":
		return seenMode
	case "type":
		return seenType
	case "name":
		return seenName
	case "address":
		return seenAddress
	case "action_reason":
		return seenActionReason
	case "change":
		return seenChange
	case "previous_address":
		return seenPreviousAddress
	}
	return 0
}

// changeMember is the bit of a change member planparse reads, 0 for the others.
func changeMember(name []byte) uint8 {
	switch string(name) {
	case "actions":
		return 1 << 0
	case "before":
		return 1 << 1
	case "after":
		return 1 << 2
	case "after_unknown":
		return 1 << 3
	case "before_sensitive":
		return 1 << 4
	case "after_sensitive":
		return 1 << 5
	case "importing":
		return 1 << 6
	}
	return 0
}

// duplicateMember finds a name that appears twice; objects read here have a
// handful of members.
func duplicateMember(members []member) error {
	for j := range members {
		for k := range j {
			if members[k].name == members[j].name {
				return &duplicateError{name: members[j].name}
			}
		}
	}
	return nil
}
