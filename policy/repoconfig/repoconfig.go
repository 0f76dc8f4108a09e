// Package repoconfig loads a repository's .shardgate.yaml.
//
// The file is strict YAML with a version field. It is decoded into raw structs,
// validated with every problem reported at once, and converted into an immutable
// Config with defaults filled in. A bad file is data for the caller (a failed check
// with the message), never a crash.
package repoconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shardgate/shardgate/internal/yamlstrict"

	"github.com/shardgate/shardgate/policy"
)

// FileName is the repository configuration file, read from the base branch.
const FileName = ".shardgate.yaml"

// MaxSize bounds the configuration file; anything larger is refused. Parsing
// holds the whole document as YAML nodes (about 120 bytes of heap per byte of
// the densest YAML): one repository's file must not take the memory every
// installation's jobs share. Aliases are bounded by yamlstrict.MaxValues.
const MaxSize = 256 << 10

// DefaultWorkspace is the Terraform workspace of a project that names none.
const DefaultWorkspace = "default"

// ApplyMode says when a merged project is applied.
type ApplyMode string

const (
	// ApplyOnMerge applies the project as soon as its pull request is merged
	// into the default branch (the default).
	ApplyOnMerge ApplyMode = "on_merge"
	// ApplyManual waits, after the merge, for an approver's
	// `/shardgate apply <project>` on the merged pull request.
	ApplyManual ApplyMode = "manual"
)

// Project is one Terraform root directory and workspace.
type Project struct {
	Name      string
	Dir       string // slash-separated, relative to the repository root, "." for the root
	Workspace string
	VarFiles  []string // relative to Dir, inside the repository
	// Apply is when a merge of the project is applied: ApplyOnMerge or ApplyManual.
	Apply ApplyMode
	ProjectKeys
}

// Config is a validated repository configuration.
type Config struct {
	Projects []Project
	// Policy holds thresholds and duplicate-tolerant streams.
	Policy policy.Config
	// PolicyDirs are extra Rego policy directories, relative to the repository root.
	PolicyDirs []string
	// Explicit is false when no file was found and defaults are in use.
	Explicit bool

	// The policy settings the file states itself, for merging over server defaults.
	maxShardDelta  *int
	maxScaleFactor *float64
}

// PolicyOver returns base with the policy settings this file states explicitly
// laid over it; duplicate-tolerant streams are the union of both.
func (c *Config) PolicyOver(base policy.Config) policy.Config {
	out := base
	if c.maxShardDelta != nil {
		out.MaxShardDelta = *c.maxShardDelta
	}
	if c.maxScaleFactor != nil {
		out.MaxScaleFactor = *c.maxScaleFactor
	}
	seen := map[string]bool{}
	out.DuplicateTolerantStreams = nil
	for _, s := range append(append([]string(nil), base.DuplicateTolerantStreams...), c.Policy.DuplicateTolerantStreams...) {
		if !seen[s] {
			seen[s] = true
			out.DuplicateTolerantStreams = append(out.DuplicateTolerantStreams, s)
		}
	}
	sort.Strings(out.DuplicateTolerantStreams)
	return out
}

// Default is the configuration of a repository without .shardgate.yaml: every
// changed directory holding .tf files is a project (decided by the caller).
func Default() *Config {
	return &Config{Policy: policy.DefaultConfig()}
}

// ProjectByName returns the project with that name.
func (c *Config) ProjectByName(name string) (Project, bool) {
	for _, p := range c.Projects {
		if p.Name == name {
			return p, true
		}
	}
	return Project{}, false
}

// Error lists every problem found in a configuration file.
type Error struct {
	Source   string
	Problems []string
}

// maxShownProblems bounds the problems an Error says: a file of thousands
// of mistakes gets a comment and a check run GitHub accepts.
const maxShownProblems = 50

func (e *Error) Error() string {
	shown := e.Problems
	if len(shown) > maxShownProblems {
		shown = append(shown[:maxShownProblems:maxShownProblems], fmt.Sprintf("and %d more problems", len(e.Problems)-maxShownProblems))
	}
	return fmt.Sprintf("%s: %s", e.Source, strings.Join(shown, "; "))
}

type rawConfig struct {
	Version  *int         `yaml:"version"`
	Projects []rawProject `yaml:"projects"`
	Streams  rawStreams   `yaml:"streams"`
	Policy   rawPolicy    `yaml:"policy"`
}

type rawProject struct {
	Name      string   `yaml:"name"`
	Dir       string   `yaml:"dir"`
	Workspace string   `yaml:"workspace"`
	VarFiles  []string `yaml:"var_files"`
	Apply     string   `yaml:"apply"`
	// The keys of ProjectKeys (project_keys.go).
	WhenModified     []string          `yaml:"when_modified"`
	DependsOn        []string          `yaml:"depends_on"`
	InitArgs         []string          `yaml:"init_args"`
	PlanArgs         []string          `yaml:"plan_args"`
	BackendConfigEnv map[string]string `yaml:"backend_config_env"`
	Env              map[string]string `yaml:"env"`
	SecretEnv        map[string]string `yaml:"secret_env"`
	Branches         []string          `yaml:"branches"`
	TerraformVersion string            `yaml:"terraform_version"`
}

type rawStreams struct {
	DuplicateTolerant []string `yaml:"duplicate_tolerant"`
}

type rawPolicy struct {
	MaxShardDelta  *int     `yaml:"max_shard_delta"`
	MaxScaleFactor *float64 `yaml:"max_scale_factor"`
	PolicyDirs     []string `yaml:"policy_dirs"`
}

// Parse decodes and validates a configuration file. source names it in errors.
// Every problem is reported at once in an *Error.
func Parse(source string, data []byte) (*Config, error) {
	if len(data) > MaxSize {
		return nil, &Error{Source: source, Problems: []string{fmt.Sprintf("file is larger than %d bytes", MaxSize)}}
	}
	var raw rawConfig
	res, err := yamlstrict.Decode(data, &raw)
	var syntax *yamlstrict.SyntaxError
	switch {
	case errors.Is(err, yamlstrict.ErrEmpty):
		return nil, &Error{Source: source, Problems: []string{"file is empty: it needs at least 'version: 1'"}}
	case errors.As(err, &syntax):
		return nil, &Error{Source: source, Problems: []string{syntax.Problem.String()}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first, extra yaml.Node
	if dec.Decode(&first) == nil && !errors.Is(dec.Decode(&extra), io.EOF) {
		return nil, &Error{Source: source, Problems: []string{"more than one YAML document: keep one"}}
	}
	if len(res.Problems) > 0 {
		var problems []string
		for _, p := range res.Problems {
			problems = append(problems, p.String())
		}
		return nil, &Error{Source: source, Problems: problems}
	}
	if problems := raw.validate(); len(problems) > 0 {
		return nil, &Error{Source: source, Problems: problems}
	}
	return raw.toConfig(), nil
}

func (r *rawConfig) validate() []string {
	var problems []string
	switch {
	case r.Version == nil:
		problems = append(problems, "version is missing: add 'version: 1'")
	case *r.Version != 1:
		problems = append(problems, fmt.Sprintf("version %d is not supported: use 'version: 1'", *r.Version))
	}
	names := map[string]bool{}
	for _, p := range r.Projects {
		names[p.Name] = true
	}
	dirs := map[string]bool{}
	seen := map[string]bool{}
	for i, p := range r.Projects {
		where := fmt.Sprintf("projects[%d]", i)
		if p.Name == "" {
			problems = append(problems, where+".name is missing")
		} else if seen[p.Name] {
			problems = append(problems, fmt.Sprintf("%s.name %q is used twice", where, p.Name))
		}
		seen[p.Name] = true
		if msg := checkRelPath(p.Dir); msg != "" {
			problems = append(problems, fmt.Sprintf("%s.dir %s", where, msg))
		}
		key := p.stateIdentity()
		if p.Dir != "" && dirs[key] {
			problems = append(problems, fmt.Sprintf("%s: dir %q and workspace %q are already a project with the same init_args, backend_config_env and var_files: give one of them its own", where, p.Dir, workspaceOr(p.Workspace)))
		}
		dirs[key] = true
		problems = append(problems, p.validateKeys(where, names)...)
		for j, vf := range p.VarFiles {
			if msg := checkReach(path.Clean(p.Dir), vf); msg != "" {
				problems = append(problems, fmt.Sprintf("%s.var_files[%d] %s", where, j, msg))
			}
		}
		switch ApplyMode(p.Apply) {
		case "", ApplyOnMerge, ApplyManual:
		default:
			problems = append(problems, fmt.Sprintf("%s.apply %q is not a way to apply: use %q or %q", where, p.Apply, ApplyOnMerge, ApplyManual))
		}
	}
	if c := dependencyCycle(r.Projects); c != nil {
		problems = append(problems, "projects: depends_on forms a cycle: "+strings.Join(c, " → "))
	}
	for i, s := range r.Streams.DuplicateTolerant {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "{}") {
			problems = append(problems, fmt.Sprintf("streams.duplicate_tolerant[%d] %q is not a stream prefix", i, s))
		}
	}
	if d := r.Policy.MaxShardDelta; d != nil && *d < 1 {
		problems = append(problems, fmt.Sprintf("policy.max_shard_delta must be at least 1, got %d", *d))
	}
	if f := r.Policy.MaxScaleFactor; f != nil && *f < 1 {
		problems = append(problems, fmt.Sprintf("policy.max_scale_factor must be at least 1.0, got %g", *f))
	}
	for i, d := range r.Policy.PolicyDirs {
		if msg := checkRelPath(d); msg != "" {
			problems = append(problems, fmt.Sprintf("policy.policy_dirs[%d] %s", i, msg))
		}
	}
	return problems
}

// checkRelPath accepts a slash-separated path that stays inside the repository.
func checkRelPath(p string) string {
	switch {
	case p == "":
		return "is missing"
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\"):
		return fmt.Sprintf("%q must be a relative, slash-separated path", p)
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
		return fmt.Sprintf("%q leaves the repository", p)
	}
	return ""
}

func workspaceOr(ws string) string {
	if ws == "" {
		return DefaultWorkspace
	}
	return ws
}

func applyOr(mode string) ApplyMode {
	if mode == "" {
		return ApplyOnMerge
	}
	return ApplyMode(mode)
}

// ApplyModeOf is when a merge of the named project is applied: as the file
// says, or ApplyOnMerge for a project it does not list (a repository without
// a projects list plans every changed directory, and applies it on merge).
func (c *Config) ApplyModeOf(project string) ApplyMode {
	if p, ok := c.ProjectByName(project); ok && p.Apply != "" {
		return p.Apply
	}
	return ApplyOnMerge
}

func (r *rawConfig) toConfig() *Config {
	c := &Config{Policy: policy.DefaultConfig(), Explicit: true}
	for _, p := range r.Projects {
		c.Projects = append(c.Projects, Project{
			Name:        p.Name,
			Dir:         path.Clean(p.Dir),
			Workspace:   workspaceOr(p.Workspace),
			VarFiles:    append([]string(nil), p.VarFiles...),
			Apply:       applyOr(p.Apply),
			ProjectKeys: p.keys(),
		})
	}
	if r.Policy.MaxShardDelta != nil {
		c.Policy.MaxShardDelta = *r.Policy.MaxShardDelta
		c.maxShardDelta = r.Policy.MaxShardDelta
	}
	if r.Policy.MaxScaleFactor != nil {
		c.Policy.MaxScaleFactor = *r.Policy.MaxScaleFactor
		c.maxScaleFactor = r.Policy.MaxScaleFactor
	}
	tolerant := append([]string(nil), r.Streams.DuplicateTolerant...)
	sort.Strings(tolerant)
	c.Policy.DuplicateTolerantStreams = tolerant
	for _, d := range r.Policy.PolicyDirs {
		c.PolicyDirs = append(c.PolicyDirs, path.Clean(d))
	}
	return c
}
