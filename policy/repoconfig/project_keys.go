package repoconfig

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	version "github.com/hashicorp/go-version"
)

// The project keys beyond name, dir, workspace, var_files and apply: what a
// project reads (when_modified), the order of applies (depends_on), its own
// init and plan arguments, environment and base branches, and its terraform
// version.

// ProjectKeys are a project's settings beyond its place and workspace.
type ProjectKeys struct {
	// WhenModified are globs (.dockerignore syntax, `!` excludes) relative
	// to Dir: a change to a matching file plans the project. Empty: the
	// project's own files, its var files and every local module it calls.
	WhenModified []string `json:"when_modified,omitempty"`
	// DependsOn names projects whose applies, in one merge, come first.
	DependsOn []string `json:"depends_on,omitempty"`
	// InitArgs and PlanArgs are added to terraform init and plan (paths in
	// them are relative to Dir).
	InitArgs []string `json:"init_args,omitempty"`
	PlanArgs []string `json:"plan_args,omitempty"`
	// BackendConfigEnv maps backend settings to variables of the server's
	// environment: init gets -backend-config=KEY=<value>, never shown.
	BackendConfigEnv map[string]string `json:"backend_config_env,omitempty"`
	// Env are plain variables for terraform; SecretEnv maps variable names to
	// variables of the server's environment, whose values stay secret.
	Env       map[string]string `json:"env,omitempty"`
	SecretEnv map[string]string `json:"secret_env,omitempty"`
	// Branches are globs of base branches whose pull requests plan the
	// project; empty: the default branch only.
	Branches []string `json:"branches,omitempty"`
	// TerraformVersion is a version constraint choosing the binary; empty:
	// the root module's required_version decides.
	TerraformVersion string `json:"terraform_version,omitempty"`
}

// refusedArgs are the arguments shardgate sets itself or that would undo the
// gate, with the reason shown when a project gives one.
var refusedArgs = []struct{ flag, why string }{
	{"-chdir", "shardgate runs terraform in the project's dir; set dir instead"},
	{"-state", "the state is the backend's: use a backend (and -backend-config)"},
	{"-state-out", "the state is the backend's: use a backend (and -backend-config)"},
	{"-backup", "the state is the backend's: use a backend (and -backend-config)"},
	{"-out", "shardgate keeps the plan file itself"},
	{"-input", "terraform never prompts under shardgate"},
	{"-json", "shardgate reads the saved plan itself"},
	{"-no-color", "shardgate sets it"},
	{"-detailed-exitcode", "shardgate sets it"},
	{"-lock-timeout", "set the server's terraform.lock_timeout"},
	{"-backend", "shardgate always initializes the backend"},
	{"-migrate-state", "a plan never migrates state"},
	{"-force-copy", "a plan never migrates state"},
	{"-destroy", "a destroy is a change to review: remove the resources in the code"},
}

// checkArgs returns the problems of init_args or plan_args (paths in them are
// relative to dir).
func checkArgs(where, dir string, args []string) []string {
	var problems []string
	for i, a := range args {
		at := fmt.Sprintf("%s[%d]", where, i)
		if !strings.HasPrefix(a, "-") {
			problems = append(problems, fmt.Sprintf("%s %q is not a flag: write each as -name=value", at, a))
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		name = "-" + strings.TrimPrefix(name, "-") // --flag is -flag to terraform
		if name == "-lock" {
			if !hasValue || value != "true" {
				problems = append(problems, fmt.Sprintf("%s %q: shardgate always holds the state lock (-lock=false is refused)", at, a))
			}
			continue
		}
		for _, r := range refusedArgs {
			if name == r.flag || (r.flag == "-state" && strings.HasPrefix(name, "-state")) {
				problems = append(problems, fmt.Sprintf("%s %q is refused: %s", at, a, r.why))
				break
			}
		}
		switch name {
		case "-var-file", "-backend-config":
			if !hasValue {
				problems = append(problems, fmt.Sprintf("%s %q: give its value after = (%s=VALUE)", at, a, name))
			} else if name == "-var-file" || !strings.Contains(value, "=") {
				if msg := checkReach(dir, value); msg != "" {
					problems = append(problems, fmt.Sprintf("%s %s", at, msg))
				}
			}
		}
	}
	return problems
}

// reservedEnvNames are set by shardgate (or its runner) for terraform: a
// project may not set them.
var reservedEnvNames = []string{
	"PATH", "HOME", "USER", "TMPDIR", "LANG", "LC_ALL", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "CHECKPOINT_DISABLE",
	"TF_VAR_COORDINATOR_USERNAME", "TF_VAR_COORDINATOR_PASSWORD",
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnvName says why a project may not set the variable name, or "".
func checkEnvName(name string) string {
	upper := strings.ToUpper(name)
	switch {
	case !envName.MatchString(name):
		return "is not a variable name"
	case slices.Contains(reservedEnvNames, upper):
		return "is set by shardgate (its proxy, credentials or the sandbox) and cannot be overridden"
	case strings.HasPrefix(upper, "TF_") && !strings.HasPrefix(name, "TF_VAR_"):
		return "is one of terraform's own TF_ variables, which shardgate sets; only TF_VAR_ names may be set"
	case strings.HasPrefix(upper, "SHARDGATE_"):
		return "is shardgate's own"
	}
	return ""
}

// checkEnvMap returns the problems of env, secret_env or backend_config_env;
// keyIsEnv says the keys are variable names, valueIsEnv that the values are.
func checkEnvMap(where string, m map[string]string, keyIsEnv, valueIsEnv bool) []string {
	var problems []string
	for _, k := range sortedKeys(m) {
		if keyIsEnv {
			if msg := checkEnvName(k); msg != "" {
				problems = append(problems, fmt.Sprintf("%s: %s %s", where, k, msg))
			}
		} else if strings.TrimSpace(k) == "" || strings.Contains(k, "=") {
			problems = append(problems, fmt.Sprintf("%s: %q is not a backend setting name", where, k))
		}
		if valueIsEnv && !envName.MatchString(m[k]) {
			problems = append(problems, fmt.Sprintf("%s.%s: %q is not the name of a variable of the server's environment", where, k, m[k]))
		}
	}
	return problems
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkReach says why a path relative to dir leaves the repository, or "".
func checkReach(dir, p string) string {
	if p == "" {
		return "is missing"
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return fmt.Sprintf("%q must be a relative, slash-separated path", p)
	}
	if j := path.Join(dir, p); j == ".." || strings.HasPrefix(j, "../") {
		return fmt.Sprintf("%q leaves the repository", p)
	}
	return ""
}

// validateKeys returns the problems of one project's keys; names are every
// project's name.
func (p *rawProject) validateKeys(where string, names map[string]bool) []string {
	var problems []string
	dir := path.Clean(p.Dir)
	for j, g := range p.WhenModified {
		if msg := checkReach(dir, strings.TrimPrefix(g, "!")); msg != "" {
			problems = append(problems, fmt.Sprintf("%s.when_modified[%d] %s", where, j, msg))
		} else if _, err := path.Match(strings.ReplaceAll(strings.TrimPrefix(g, "!"), "**", "*"), ""); err != nil {
			problems = append(problems, fmt.Sprintf("%s.when_modified[%d] %q is not a glob: %v", where, j, g, err))
		}
	}
	for j, d := range p.DependsOn {
		switch {
		case d == p.Name:
			problems = append(problems, fmt.Sprintf("%s.depends_on[%d]: a project cannot depend on itself", where, j))
		case !names[d]:
			problems = append(problems, fmt.Sprintf("%s.depends_on[%d]: no project is named %q", where, j, d))
		}
	}
	problems = append(problems, checkArgs(where+".init_args", dir, p.InitArgs)...)
	problems = append(problems, checkArgs(where+".plan_args", dir, p.PlanArgs)...)
	problems = append(problems, checkEnvMap(where+".backend_config_env", p.BackendConfigEnv, false, true)...)
	problems = append(problems, checkEnvMap(where+".env", p.Env, true, false)...)
	problems = append(problems, checkEnvMap(where+".secret_env", p.SecretEnv, true, true)...)
	for k := range p.Env {
		if _, ok := p.SecretEnv[k]; ok {
			problems = append(problems, fmt.Sprintf("%s: %s is in both env and secret_env", where, k))
		}
	}
	for j, b := range p.Branches {
		if _, err := path.Match(b, ""); err != nil || strings.TrimSpace(b) == "" {
			problems = append(problems, fmt.Sprintf("%s.branches[%d] %q is not a branch glob", where, j, b))
		}
	}
	if p.TerraformVersion != "" {
		if _, err := version.NewConstraint(p.TerraformVersion); err != nil {
			problems = append(problems, fmt.Sprintf("%s.terraform_version %q is not a version constraint (e.g. \"~> 1.5.0\", \">= 1.11\")", where, p.TerraformVersion))
		}
	}
	return problems
}

// stateIdentity is what tells two projects' states apart: two projects on
// one dir and workspace are one project unless their init arguments, backend
// settings or var files differ.
func (p *rawProject) stateIdentity() string {
	return strings.Join([]string{path.Clean(p.Dir), workspaceOr(p.Workspace), strings.Join(p.InitArgs, "\x00"),
		strings.Join(sortedKeys(p.BackendConfigEnv), "\x00"), strings.Join(p.VarFiles, "\x00")}, "|")
}

// dependencyCycle returns the names of a depends_on cycle, or nil.
func dependencyCycle(projects []rawProject) []string {
	deps := map[string][]string{}
	for _, p := range projects {
		deps[p.Name] = p.DependsOn
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		switch state[n] {
		case onPath:
			i := slices.Index(stack, n)
			return append(slices.Clone(stack[i:]), n)
		case done:
			return nil
		}
		state[n] = onPath
		stack = append(stack, n)
		for _, d := range deps[n] {
			if _, ok := deps[d]; !ok {
				continue
			}
			if c := visit(d); c != nil {
				return c
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, p := range projects {
		if c := visit(p.Name); c != nil {
			return c
		}
	}
	return nil
}

func (p *rawProject) keys() ProjectKeys {
	return ProjectKeys{
		WhenModified:     slices.Clone(p.WhenModified),
		DependsOn:        slices.Clone(p.DependsOn),
		InitArgs:         slices.Clone(p.InitArgs),
		PlanArgs:         slices.Clone(p.PlanArgs),
		BackendConfigEnv: cloneMap(p.BackendConfigEnv),
		Env:              cloneMap(p.Env),
		SecretEnv:        cloneMap(p.SecretEnv),
		Branches:         slices.Clone(p.Branches),
		TerraformVersion: p.TerraformVersion,
	}
}

func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// DependenciesOf are the projects name depends on, directly or through
// others (depends_on), each once, nearest first.
func (c *Config) DependenciesOf(name string) []string {
	var out []string
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		p, ok := c.ProjectByName(queue[0])
		queue = queue[1:]
		if !ok {
			continue
		}
		for _, d := range p.DependsOn {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				queue = append(queue, d)
			}
		}
	}
	return out
}

// ApplyOrder orders names so that every project comes after the projects it
// depends on (directly or not); otherwise the order stays as given.
func (c *Config) ApplyOrder(names []string) []string {
	out := make([]string, 0, len(names))
	placed := map[string]bool{}
	var place func(n string)
	place = func(n string) {
		if placed[n] {
			return
		}
		placed[n] = true // depends_on has no cycles (validated); this also ends one
		for _, d := range c.DependenciesOf(n) {
			if slices.Contains(names, d) {
				place(d)
			}
		}
		out = append(out, n)
	}
	for _, n := range names {
		place(n)
	}
	return out
}
