// Package tftest finds the real terraform binary for tests that run it.
//
// Tests never fake Terraform's output: a test that needs terraform fails (it does
// not skip) when no usable binary is found, so a missing `make tools` is loud.
// Under -short (`make test-short`) such a test skips, saying so: the tests
// that run terraform are the slow ones, and `make test` runs them all.
package tftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	version "github.com/hashicorp/go-version"
)

// EnvBinary names an explicit terraform binary for tests.
const EnvBinary = "SHARDGATE_TERRAFORM"

var (
	once     sync.Once
	found    string
	findErr  string
	versionR = regexp.MustCompile(`Terraform v(\d+\.\d+\.\d+)`)
	// minVersion is the oldest terraform the tests accept (runner.MinVersion).
	minVersion = version.Must(version.NewVersion("1.5.0"))
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Binary returns the path of a terraform >= 1.5: $SHARDGATE_TERRAFORM, else
// <repo>/bin/terraform (installed by `make tools`), else terraform on PATH.
// Under -short it skips the test instead.
func Binary(t testing.TB) string {
	t.Helper()
	SkipIfShort(t, "uses the real terraform")
	once.Do(func() { found, findErr = locate() })
	if findErr != "" {
		t.Fatalf("terraform for tests: %s (run 'make tools')", findErr)
	}
	return found
}

func locate() (string, string) {
	candidates := []string{}
	if p := os.Getenv(EnvBinary); p != "" {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, filepath.Join(RepoRoot(), "bin", "terraform"))
	if p, err := exec.LookPath("terraform"); err == nil {
		candidates = append(candidates, p)
	}
	reason := "no terraform binary found"
	for _, c := range candidates {
		out, err := exec.Command(c, "version").Output()
		if err != nil {
			continue
		}
		m := versionR.FindSubmatch(out)
		if m == nil {
			reason = c + ": cannot read its version"
			continue
		}
		v, err := version.NewVersion(string(m[1]))
		if err != nil {
			reason = c + ": cannot read its version"
			continue
		}
		if v.Core().GreaterThanOrEqual(minVersion) {
			return c, ""
		}
		reason = c + ": version " + v.String() + " is below " + minVersion.String()
	}
	return "", reason
}

// SkipIfShort skips a slow test under -short (`make test-short`) and says
// why; `make test` runs it. why says what makes it slow ("uses the real
// terraform", "builds and kills shardgate processes").
func SkipIfShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: skipped under -short (make test runs it)", why)
	}
}

// EnvTofu names the OpenTofu binary (`make tools` installs bin/tofu and
// `make test` sets it) that the tests run on both binaries also use.
const EnvTofu = "SHARDGATE_TOFU"

// EachBinary runs fn as a subtest on terraform ("terraform") and on OpenTofu
// ("tofu"). The tofu subtest is skipped only when SHARDGATE_TOFU is unset;
// set to a binary that does not run, it fails.
func EachBinary(t *testing.T, fn func(t *testing.T, bin string)) {
	t.Helper()
	t.Run("terraform", func(t *testing.T) { fn(t, Binary(t)) })
	t.Run("tofu", func(t *testing.T) { fn(t, Tofu(t)) })
}

// Tofu returns $SHARDGATE_TOFU, skipping the test when it is unset and
// failing it when the binary there does not run as OpenTofu.
func Tofu(t testing.TB) string {
	t.Helper()
	return namedBinary(t, EnvTofu, "OpenTofu v", "the real OpenTofu", "bin/tofu")
}

// namedBinary returns the binary $env names, skipping the test when it is
// unset and failing it when `version` there does not start with prefix.
func namedBinary(t testing.TB, env, prefix, what, makePath string) string {
	t.Helper()
	SkipIfShort(t, "uses "+what)
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("%s is unset: this test needs %s (make test sets it to %s)", env, what, makePath)
	}
	cmd := exec.Command(p, "version")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=/dev/null")
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), prefix) {
		t.Fatalf("%s=%s: not %s (%v): %s (run 'make tools')", env, p, what, err, out)
	}
	return p
}

// EnvTerraformNew names a second, newer terraform (`make tools` installs
// bin/terraform-1.11.4 and `make test` sets it) for the tests of projects
// pinned to different versions in one repository.
const EnvTerraformNew = "SHARDGATE_TERRAFORM_NEW"

// TerraformNew returns $SHARDGATE_TERRAFORM_NEW, skipping the test when it
// is unset and failing it when the binary there is not terraform 1.x.
func TerraformNew(t testing.TB) string {
	t.Helper()
	return namedBinary(t, EnvTerraformNew, "Terraform v1.", "a second real terraform", "bin/terraform-1.11.4")
}
