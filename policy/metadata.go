package policy

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Keys of a rule package's METADATA `custom` block.
const (
	customWaivable       = "waivable"
	customExceptionLabel = "exception_label"
)

// ruleInfos reads every rule package's METADATA from the compiled annotations. A
// package without METADATA is a rule that cannot be waived.
func ruleInfos(c *ast.Compiler) (map[string]RuleInfo, error) {
	annotations := c.GetAnnotationSet()
	infos := make(map[string]RuleInfo)
	for _, m := range c.Modules {
		id, isRule, err := ruleID(m.Package)
		if err != nil {
			return nil, err
		}
		if !isRule {
			continue
		}
		info, seen := infos[id]
		if !seen {
			info = RuleInfo{ID: id, Title: id}
		}
		if a := annotations.GetPackageScope(m.Package); a != nil {
			if info, err = infoFromAnnotations(id, a); err != nil {
				return nil, err
			}
		}
		infos[id] = info
	}
	return infos, nil
}

func infoFromAnnotations(id string, a *ast.Annotations) (RuleInfo, error) {
	info := RuleInfo{ID: id, Title: a.Title, Description: a.Description}
	if info.Title == "" {
		info.Title = id
	}
	if raw, ok := a.Custom[customWaivable]; ok {
		waivable, isBool := raw.(bool)
		if !isBool {
			return RuleInfo{}, fmt.Errorf("rule %s: METADATA custom.%s must be true or false", id, customWaivable)
		}
		info.Waivable = waivable
	}
	want := ExceptionLabelPrefix + id
	if raw, ok := a.Custom[customExceptionLabel]; ok {
		label, isString := raw.(string)
		if !isString || label != want {
			return RuleInfo{}, fmt.Errorf("rule %s: METADATA custom.%s must be %q", id, customExceptionLabel, want)
		}
		if !info.Waivable {
			return RuleInfo{}, fmt.Errorf("rule %s: METADATA sets custom.%s on a rule that is not waivable", id, customExceptionLabel)
		}
	}
	if info.Waivable {
		info.ExceptionLabel = want
	}
	return info, nil
}
