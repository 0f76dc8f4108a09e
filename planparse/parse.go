package planparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
	version "github.com/hashicorp/go-version"
	tfjson "github.com/hashicorp/terraform-json"
)

// FormatError reports a plan whose format_version is missing or not one that
// terraform-json supports (tfjson.PlanFormatVersionConstraints).
type FormatError struct {
	// Version is the plan's format_version, "" when missing.
	Version string
}

func (e *FormatError) Error() string {
	if e.Version == "" {
		return "parse plan: format_version is missing"
	}
	v := e.Version
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return fmt.Sprintf("parse plan: unsupported format_version %q (supported: %s)", v, tfjson.PlanFormatVersionConstraints)
}

var formatConstraints = version.MustConstraints(version.NewConstraint(tfjson.PlanFormatVersionConstraints))

// Parse reads the output of `terraform show -json <planfile>` and returns the
// coordinator changes it plans and the other changes it lists. It streams through
// the JSON, validating all of it, and holds one resource_changes entry at a time
// and, while it reads its taints, prior_state, so memory stays a fraction of a
// plan of tens of megabytes. A document that is no plan is a *NotPlanError, an
// errored plan an *ErroredPlanError. ParseBytes is several times faster when the
// plan is in memory, but checks the parts it does not read less strictly.
func Parse(r io.Reader) (*ChangeSet, error) {
	p := parser{dec: jsontext.NewDecoder(r), cs: newChangeSet()}
	// ReadValue scans a value in one pass, twice as fast as SkipValue's token by
	// token walk, but needs the whole value in memory: only use it when it already is.
	p.skip = p.dec.SkipValue
	if _, ok := r.(*bytes.Buffer); ok {
		p.skip = func() error { _, err := p.dec.ReadValue(); return err }
	}
	if err := p.plan(); err != nil {
		return nil, err
	}
	return p.cs, nil
}

type parser struct {
	dec  *jsontext.Decoder
	cs   *ChangeSet
	skip func() error
	sc   scratch
	doc  document
	// entryStart is the offset of the resource_changes entry being read.
	entryStart int
	// adds and removes index the Changes that add and that unmanage an identity,
	// paired into moves once all are read.
	adds, removes []int
	// priorState is the plan's prior_state (ParseBytes), read for taints only
	// when there are coordinator changes; tainted is what it says.
	priorState []byte
	tainted    map[string]bool
	// needPrior is set by a replace without action_reason; priorTainted once the
	// prior state's taints are applied.
	needPrior, priorTainted bool
	// passed is ParseBytesProgress's hint; never nil in ParseBytes.
	passed func(n int)
	// collected and desired collect cs.Changes and cs.Desired while the entries
	// are read; finish copies them into the change set.
	collected chunked[Change]
	desired   chunked[Desired]
	// split, in ParseBytesParallel's walk, takes the resource_changes entries
	// to be read by its workers.
	split *rcSplit
}

func (p *parser) plan() error {
	tok, err := p.dec.ReadToken()
	if err == io.EOF {
		return errors.New("parse plan: empty input")
	}
	if err != nil {
		return jsonError(err)
	}
	if tok.Kind() != '{' {
		return errors.New("parse plan: not a JSON object")
	}
	for p.dec.PeekKind() != '}' {
		name, err := p.dec.ReadToken()
		if err != nil {
			return jsonError(err)
		}
		if err := p.member(name.String()); err != nil {
			return jsonError(err)
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return jsonError(err)
	}
	if p.doc.isLog() {
		return errLog
	}
	if _, err := p.dec.ReadValue(); err != io.EOF {
		return errors.New("parse plan: trailing data after the plan object")
	}
	if err := p.doc.check(p.cs.FormatVersion); err != nil {
		return err
	}
	p.finish()
	return nil
}

// member reads the value of the top-level member name.
func (p *parser) member(name string) error {
	bit := topMember(name)
	if bit != topPlannedValues && bit != topResourceChanges {
		p.doc.members |= bit
	}
	var err error
	switch name {
	case "format_version":
		p.cs.FormatVersion, err = p.topString(name)
	case "terraform_version":
		p.cs.TerraformVersion, err = p.topString(name)
	case "resource_changes":
		if p.dec.PeekKind() != 'n' {
			p.doc.members |= topResourceChanges
		}
		err = p.resourceChanges()
	case "planned_values":
		switch p.dec.PeekKind() {
		case 'n':
		case '{', 0:
			p.doc.members |= topPlannedValues
		default:
			return planErrorf("planned_values is not an object")
		}
		err = p.skip()
	case "errored":
		p.doc.errored, err = p.topBool(name)
	case "complete":
		var complete bool
		complete, err = p.topBool(name)
		p.cs.Incomplete = !complete
	case "prior_state":
		// Read whole, for the taints it may show (taintedAddresses).
		var v jsontext.Value
		if v, err = p.dec.ReadValue(); err == nil {
			p.tainted = taintedAddresses(v)
		}
	default:
		err = p.skip()
	}
	return err
}

// topBool reads a top-level boolean member; a wrong type is a plan error.
func (p *parser) topBool(what string) (bool, error) {
	if k := p.dec.PeekKind(); k != 't' && k != 'f' && k != 0 {
		return false, planErrorf("%s is not a boolean", what)
	}
	tok, err := p.dec.ReadToken()
	if err != nil {
		return false, jsonError(err)
	}
	return tok.Bool(), nil
}

// topString reads a top-level string member; a wrong type is a plan error.
func (p *parser) topString(what string) (string, error) {
	if k := p.dec.PeekKind(); k != '"' && k != 0 {
		return "", planErrorf("%s is not a string", what)
	}
	tok, err := p.dec.ReadToken()
	if err != nil {
		return "", jsonError(err)
	}
	return tok.String(), nil
}

func checkFormat(fv string) error {
	if fv == "" {
		return &FormatError{}
	}
	v, err := version.NewVersion(fv)
	if err != nil || !formatConstraints.Check(v) {
		return &FormatError{Version: fv}
	}
	return nil
}

// planError is a plan that is valid JSON but not the shape terraform writes.
type planError struct{ msg string }

func (e *planError) Error() string { return "parse plan: " + e.msg }

func planErrorf(format string, args ...any) error {
	return &planError{msg: fmt.Sprintf(format, args...)}
}

// jsonError words a decoder error; errors already worded pass through.
func jsonError(err error) error {
	var pe *planError
	var fe *FormatError
	var se *jsontext.SyntacticError
	var ke *syntaxError
	switch {
	case errors.As(err, &pe), errors.As(err, &fe), isDocumentError(err):
		return err
	case errors.As(err, &se), errors.As(err, &ke), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, errMalformed), errors.Is(err, errSyntax):
		return fmt.Errorf("parse plan: not JSON: %w", err)
	default:
		return fmt.Errorf("parse plan: read: %w", err)
	}
}
