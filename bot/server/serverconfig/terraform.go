package serverconfig

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"

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
