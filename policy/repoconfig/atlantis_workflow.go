package repoconfig

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// workflowArgs are the init and plan extra_args of the project's workflow;
// what else the workflow does becomes notes.
func (t *translator) workflowArgs(p *atlProject) (initArgs, planArgs []string, env map[string]string) {
	if p.workflow == "" {
		if _, ok := t.workflows["default"]; !ok {
			return nil, nil, nil
		}
		p.workflow = "default"
	}
	wf, ok := t.workflows[p.workflow]
	if !ok {
		p.notes = append(p.notes, fmt.Sprintf("workflow %s: defined on the server (repos.yaml), not in this file; add its init and plan arguments as init_args and plan_args", p.workflow))
		return nil, nil, nil
	}
	env = map[string]string{}
	for s := 0; s+1 < len(wf.Content); s += 2 {
		stage, body := wf.Content[s].Value, wf.Content[s+1]
		steps := lookup(body, "steps")
		if steps == nil {
			continue
		}
		switch stage {
		case "policy_check":
			p.notes = append(p.notes, fmt.Sprintf("workflow %s, stage policy_check: shardgate judges every plan by its Rego policy (policy.policy_dirs)", p.workflow))
			continue
		case "import", "state_rm":
			p.notes = append(p.notes, fmt.Sprintf("workflow %s, stage %s: shardgate runs no %s command; change state in code (import and removed blocks) and review the plan", p.workflow, stage, stage))
			continue
		}
		for _, step := range steps.Content {
			name, args, other := stepOf(step)
			where := fmt.Sprintf("workflow %s, %s step %s", p.workflow, stage, name)
			switch {
			case stage == "plan" && name == "init":
				initArgs = append(initArgs, t.carryArgs(p, where, args, "init")...)
			case stage == "plan" && name == "plan":
				planArgs = append(planArgs, t.carryArgs(p, where, args, "plan")...)
			case name == "run", name == "multienv":
				p.notes = append(p.notes, fmt.Sprintf("%s `%s`: shardgate runs only terraform init, plan and apply, in a sandbox; no custom commands", where, other))
			case name == "env":
				body := lookup(step, "env")
				k, v := lookup(body, "name"), lookup(body, "value")
				switch {
				case k == nil:
				case checkEnvName(k.Value) != "":
					p.notes = append(p.notes, fmt.Sprintf("%s %s: %s %s", where, other, k.Value, checkEnvName(k.Value)))
				case v != nil:
					env[k.Value] = v.Value
				default:
					p.notes = append(p.notes, fmt.Sprintf("%s %s: a value from a command; give the server the variable and name it in secret_env: {%s: SERVER_ENV_NAME}", where, other, k.Value))
				}
			case stage == "apply" && name == "apply" && len(args) == 0:
			case stage == "apply" && name == "apply":
				p.notes = append(p.notes, fmt.Sprintf("%s extra_args %v: shardgate applies the reviewed plan file as it is", where, args))
			case stage == "plan" && (name == "show" || name == "policy_check"):
			case stage == "apply" && (name == "init" || name == "plan"):
			default:
				p.notes = append(p.notes, fmt.Sprintf("%s: unknown Atlantis step", where))
			}
		}
	}
	return initArgs, planArgs, env
}

// carryArgs joins Atlantis's extra_args ("-var-file", "x") into shardgate's
// one-flag-per-item form and keeps those shardgate accepts.
func (t *translator) carryArgs(p *atlProject, where string, args []string, command string) []string {
	var joined []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			a += "=" + args[i+1]
			i++
		}
		joined = append(joined, a)
	}
	var out []string
	for _, a := range joined {
		if problems := checkArgs(command+"_args", p.dir, []string{a}); len(problems) > 0 {
			p.notes = append(p.notes, fmt.Sprintf("%s extra_args %q: %s", where, a, strings.TrimPrefix(problems[0], command+"_args[0] ")))
			continue
		}
		out = append(out, a)
	}
	return out
}

// stepOf reads one workflow step: its name, extra_args, and for run and env
// steps their text.
func stepOf(step *yaml.Node) (name string, args []string, other string) {
	if step.Kind == yaml.ScalarNode {
		return step.Value, nil, ""
	}
	if step.Kind != yaml.MappingNode || len(step.Content) < 2 {
		return "?", nil, ""
	}
	name, body := step.Content[0].Value, step.Content[1]
	if body.Kind == yaml.ScalarNode {
		return name, nil, body.Value
	}
	if c := lookup(body, "command"); c != nil {
		other = c.Value
	}
	if n := lookup(body, "name"); n != nil {
		other = n.Value
		if v := lookup(body, "value"); v != nil {
			other += "=" + v.Value
		} else if other2 := lookup(body, "command"); other2 != nil {
			other += " from `" + other2.Value + "`"
		}
	}
	if ea := lookup(body, "extra_args"); ea != nil {
		args = strings_(ea)
	}
	return name, args, other
}

// versionConstraint writes Atlantis's terraform_version (a version, or a
// constraint) as a constraint.
func versionConstraint(v string) string {
	if m := exactVersion.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
		return "= " + m[1]
	}
	return v
}

// branchGlob writes Atlantis's branch regular expression (/re/) as a glob
// when it is a literal: anchored, the branch itself; unanchored, any branch
// containing it.
func branchGlob(re string) (string, bool) {
	re = strings.TrimSuffix(strings.TrimPrefix(re, "/"), "/")
	start, end := strings.HasPrefix(re, "^"), strings.HasSuffix(re, "$")
	body := strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
	body = strings.ReplaceAll(body, `\.`, ".")
	if strings.HasSuffix(body, ".*") {
		body, end = strings.TrimSuffix(body, ".*")+"*", true
	}
	if !literalBranch.MatchString(strings.TrimSuffix(body, "*")) {
		return "", false
	}
	if !start {
		body = "*" + body
	}
	if !end {
		body += "*"
	}
	return body, true
}
