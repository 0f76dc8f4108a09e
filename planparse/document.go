package planparse

import (
	"errors"
	"fmt"
)

// NotPlanError is a JSON document that is not `terraform show -json` of a saved
// plan: a state, `terraform validate -json` output, provider schemas, an HCP
// Terraform redacted plan, `terraform plan -json` log lines, or an object with
// no plan in it. Judging it as an empty plan would allow anything.
type NotPlanError struct {
	// LooksLike names what the document appears to be, e.g. "`terraform show
	// -json` of a state". It is one of a fixed set: nothing of the document is
	// copied into it.
	LooksLike string
	// Hint is what to run instead.
	Hint string
}

func (e *NotPlanError) Error() string {
	return fmt.Sprintf("this is %s, not a plan: %s", e.LooksLike, e.Hint)
}

// ErroredPlanError is a plan terraform wrote although planning failed
// (`"errored": true`, terraform 1.8 and later, OpenTofu): it lacks the changes
// terraform could not plan.
type ErroredPlanError struct{}

func (*ErroredPlanError) Error() string { return "terraform reported errors; this plan is partial" }

const hintPlan = "run `terraform plan -out=tfplan` and `terraform show -json tfplan`"

// member is a bit for each top-level member the parsers look at, to tell a plan
// from the other documents terraform writes.
type topMembers uint32

const (
	topFormatVersion topMembers = 1 << iota
	topTerraformVersion
	topPlannedValues // present and not null
	topResourceChanges
	topValues
	topValid
	topDiagnostics
	topProviderSchemas
	topPlanFormatVersion
	topProviderFormatVersion
	topLevel
	topMessage
	topOther
	topErrored
	topComplete
)

// topMember is the bit of a top-level member name; members of a plan that say
// nothing about what the document is count as topOther.
func topMember(name string) topMembers {
	switch name {
	case "format_version":
		return topFormatVersion
	case "terraform_version":
		return topTerraformVersion
	case "planned_values":
		return topPlannedValues
	case "resource_changes":
		return topResourceChanges
	case "values":
		return topValues
	case "valid":
		return topValid
	case "diagnostics":
		return topDiagnostics
	case "provider_schemas":
		return topProviderSchemas
	case "plan_format_version":
		return topPlanFormatVersion
	case "provider_format_version":
		return topProviderFormatVersion
	case "@level":
		return topLevel
	case "@message":
		return topMessage
	case "errored":
		return topErrored
	case "complete":
		return topComplete
	}
	return topOther
}

// document is what the top level of the input said, checked once it has ended.
type document struct {
	members topMembers
	errored bool
}

// isLog reports a line of `terraform plan -json` (or apply, refresh) output,
// which is a stream of objects: it is refused before the trailing ones are.
func (d *document) isLog() bool { return d.members&(topLevel|topMessage) != 0 }

var errLog = &NotPlanError{LooksLike: "`terraform plan -json` output (its log)", Hint: hintPlan}

// check refuses what is not a plan, or an errored one, once the whole object is read.
func (d *document) check(formatVersion string) error {
	m := d.members
	switch {
	case d.isLog():
		return errLog
	case m&(topPlanFormatVersion|topProviderFormatVersion) != 0:
		return &NotPlanError{LooksLike: "an HCP Terraform redacted plan",
			Hint: "use the run's JSON plan (json-output, not json-output-redacted), or " + hintPlan}
	case m&(topPlannedValues|topResourceChanges) != 0:
		// A plan: terraform always writes planned_values, also when nothing changes.
	case m&topProviderSchemas != 0:
		return &NotPlanError{LooksLike: "`terraform providers schema -json` output", Hint: hintPlan}
	case m&(topValid|topDiagnostics) != 0:
		return &NotPlanError{LooksLike: "`terraform validate -json` output", Hint: hintPlan}
	case m&topValues != 0:
		return &NotPlanError{LooksLike: "`terraform show -json` of a state", Hint: hintPlan}
	case m == topFormatVersion && formatVersion == "1.0":
		// What `terraform show -json` prints when there is no state.
		return &NotPlanError{LooksLike: "`terraform show -json` of an empty state", Hint: hintPlan}
	default:
		return &NotPlanError{LooksLike: "a JSON object with neither planned_values nor resource_changes", Hint: hintPlan}
	}
	if err := checkFormat(formatVersion); err != nil {
		return err
	}
	if d.errored {
		return &ErroredPlanError{}
	}
	return nil
}

// isDocumentError reports the errors that pass through jsonError as they are.
func isDocumentError(err error) bool {
	var ne *NotPlanError
	var ee *ErroredPlanError
	return errors.As(err, &ne) || errors.As(err, &ee)
}
