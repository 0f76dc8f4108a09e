package runner

import (
	"fmt"
	"os"
	"path/filepath"
)

// WithRegistryProvidersOnly gives terraform a CLI configuration the runner
// writes into each job's scratch directory (TF_CLI_CONFIG_FILE), whose
// explicit provider_installation block allows registry downloads (through
// the plugin cache) only. Without it terraform also installs providers from
// implicit local mirrors, among them terraform.d/plugins in the checkout: a
// pull request could ship an executable "provider" that plan would run. The
// process's TF_CLI_CONFIG_FILE, ~/.terraformrc and ~/.terraform.d are not
// read, and each job's TF_DATA_DIR defaults to its scratch directory.
func WithRegistryProvidersOnly() Option { return func(r *Runner) { r.registryOnly = true } }

// WithInheritEnv passes the whole process environment to terraform instead
// of the DefaultPassEnv allow-list: for a person running shardgate in their
// own shell, whose backend credentials (AWS_*, PG_CONN_STR, TF_HTTP_*, ...)
// and TF_VAR_* values terraform should see as it would without shardgate.
// Variables tfexec manages (TF_LOG, TF_INPUT, ...) are still left out.
func WithInheritEnv() Option { return func(r *Runner) { r.inheritEnv = true } }

// cliConfig is the CLI configuration of WithRegistryProvidersOnly. The
// plugin cache (TF_PLUGIN_CACHE_DIR) sits in front of every installation
// method, so "direct" alone means: the cache, else the provider's registry.
const cliConfig = `# Written by shardgate for one job: providers come from their registry,
# through the plugin cache; no local mirror, no dev_overrides.
disable_checkpoint = true

provider_installation {
  direct {}
}
`

// writeCLIConfig writes the job's CLI configuration into its scratch dir and
// points terraform at it.
func (j *Job) writeCLIConfig() (string, error) {
	path := filepath.Join(j.scratch, "terraform.rc")
	if err := os.WriteFile(path, []byte(cliConfig), 0o600); err != nil {
		return "", fmt.Errorf("write terraform CLI config: %w", err)
	}
	j.env["TF_CLI_CONFIG_FILE"] = path
	return path, nil
}
