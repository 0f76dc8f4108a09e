package serverconfig

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/coord/coordbroker"

	"github.com/shardgate/shardgate/terraform/runner"
)

// Values of terraform.sandbox.
const (
	// SandboxLandlock (the default) confines pull-request terraform with
	// Landlock; where the kernel has none, same-repository PRs are not planned.
	SandboxLandlock = "landlock"
	// SandboxNone runs terraform unconfined, and every comment says so.
	SandboxNone = "none"
)

// rawEnvSource is one variable of terraform.plan_env or apply_env: read from
// a file or from shardgate's own environment, never written inline.
type rawEnvSource struct {
	ValueFile string `yaml:"value_file"`
	ValueEnv  string `yaml:"value_env"`
	Value     Secret `yaml:"value"`
}

// Terraform variables through which the stream-group module gets its
// coordinator credentials. Shardgate sets them to a placeholder
// (coordbroker.PlaceholderCredential): the job's broker adds the real ones, so
// terraform never holds them. The phase environments may not set them.
const (
	TFVarCoordinatorUsername = "TF_VAR_coordinator_username"
	TFVarCoordinatorPassword = "TF_VAR_coordinator_password"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (v *validator) sandbox(s string) string {
	switch s {
	case "":
		return SandboxLandlock
	case SandboxLandlock, SandboxNone:
		return s
	}
	v.addf("terraform.sandbox %q is not landlock or none", s)
	return SandboxLandlock
}

// egress reads terraform.egress: absent is coordbroker.DefaultEgress; an
// empty list allows no host besides the coordinators.
func (v *validator) egress(raw *[]string) []string {
	if raw == nil {
		return slices.Clone(coordbroker.DefaultEgress)
	}
	for i, e := range *raw {
		if err := coordbroker.CheckEgress([]string{e}); err != nil {
			v.addf("terraform.egress[%d] %v", i, err)
		}
	}
	return append([]string{}, *raw...)
}

// ports checks that each entry is a TCP port.
func (v *validator) ports(field string, ports []int) []int {
	for i, p := range ports {
		if p < 1 || p > 65535 {
			v.addf("%s[%d] %d is not a TCP port", field, i, p)
		}
	}
	return ports
}

// absPaths checks that each path is absolute.
func (v *validator) absPaths(field string, paths []string) []string {
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			v.addf("%s[%d] %q is not an absolute path", field, i, p)
		}
	}
	return paths
}

// phaseEnv reads the variables of one phase (field "terraform.plan_env" or
// "terraform.apply_env"). Names shardgate sets itself are refused: terraform's
// own controls, the sandbox's HOME and TMPDIR, the coordinator credentials.
func (v *validator) phaseEnv(field string, raw map[string]rawEnvSource) map[string]Secret {
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]Secret{}
	for _, name := range names {
		src, where := raw[name], field+"."+name
		switch {
		case !envName.MatchString(name):
			v.addf("%s: %q is not an environment variable name", field, name)
			continue
		case runner.ReservedEnv(name) || name == TFVarCoordinatorUsername || name == TFVarCoordinatorPassword:
			v.addf("%s: shardgate sets it", where)
			continue
		}
		switch {
		case src.ValueFile != "" && src.ValueEnv != "":
			v.addf("%s: set value_file or value_env, not both", where)
		case src.ValueFile != "":
			out[name] = v.secretFile(where+".value_file", src.ValueFile)
		case src.ValueEnv != "":
			s, ok := v.lookupEnv(src.ValueEnv)
			if !ok || s == "" {
				v.addf("%s.value_env: %s is not set", where, src.ValueEnv)
			}
			out[name] = NewSecret(s)
		default:
			v.addf("%s: set value_file or value_env", where)
		}
	}
	return out
}

// RevealEnv returns the values of a phase's variables, for the runner.
func RevealEnv(env map[string]Secret) map[string]string {
	out := make(map[string]string, len(env))
	for k, s := range env {
		out[k] = s.Reveal()
	}
	return out
}

// The placeholders of a terraform.sandbox_writable entry. An entry holding
// one is a directory of each project's own: a job may write it expanded for
// its repository and project only. An entry without one is shared: every
// job, that is every pull request's code, may write (and lock) everything
// in it, other projects' local state included.
var writablePlaceholders = []string{"{owner}", "{repo}", "{project}"}

func perProject(entry string) bool {
	for _, p := range writablePlaceholders {
		if strings.Contains(entry, p) {
			return true
		}
	}
	return false
}

// SharedWritable are the terraform.sandbox_writable entries every job may
// write: those without a placeholder.
func (c *Config) SharedWritable() []string {
	var out []string
	for _, e := range c.SandboxWritable {
		if !perProject(e) {
			out = append(out, e)
		}
	}
	return out
}

// ProjectWritable are the per-project terraform.sandbox_writable entries
// expanded for one project's jobs. Each value becomes one path segment
// (url.PathEscape: "envs/prod" is "envs%2Fprod"), so no project's directory
// is another's or outside the entry.
func (c *Config) ProjectWritable(owner, repo, project string) ([]string, error) {
	var args []string
	for i, v := range []string{owner, repo, project} {
		seg := url.PathEscape(v)
		if seg == "" || seg == "." || seg == ".." {
			return nil, fmt.Errorf("terraform.sandbox_writable: %s %q cannot name a directory", strings.Trim(writablePlaceholders[i], "{}"), v)
		}
		args = append(args, writablePlaceholders[i], seg)
	}
	r := strings.NewReplacer(args...)
	var out []string
	for _, e := range c.SandboxWritable {
		if perProject(e) {
			out = append(out, filepath.Clean(r.Replace(e)))
		}
	}
	return out, nil
}

// binaries checks terraform.binaries: paths, each once. Whether each runs,
// and its version, is learnt at start (`version -json`).
func (v *validator) binaries(paths []string) []string {
	seen := map[string]bool{}
	for i, p := range paths {
		if strings.TrimSpace(p) == "" {
			v.addf("terraform.binaries[%d] is empty: give the path of a terraform or tofu binary", i)
		} else if seen[p] {
			v.addf("terraform.binaries[%d] %q is listed twice", i, p)
		}
		seen[p] = true
	}
	return paths
}
