package serverconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func noEnv(string) (string, bool) { return "", false }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	secret := writeFile(t, dir, "hook", "s3cret-hook\n")
	pw := writeFile(t, dir, "coord", "coord-pass\n")
	cfg, err := Parse("server.yaml", []byte(fmt.Sprintf(`
version: 1
listen: 127.0.0.1:9000
github:
  api_url: http://127.0.0.1:1234/api/v3
  app_id: 42
  private_key_file: %s
  webhook_secret_file: %s
store:
  path: /var/lib/shardgate/db
terraform:
  binary: /usr/bin/terraform
  lock_timeout: 90s
coordinators:
  - url_prefix: http://coord.prod
    username: terraform
    password_file: %s
  - url_prefix: http://coord.prod/special
    username: special
    password_env: SPECIAL_PW
approvers:
  users: ["@Alice", bob]
  teams: [acme/sre]
policy:
  max_shard_delta: 6
  attestation_ttl: 30m
allow_fork_prs: true
`, key, secret, pw)), func(k string) (string, bool) {
		if k == "SPECIAL_PW" {
			return "special-pass", true
		}
		return "", false
	})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9000", cfg.Listen)
	require.Equal(t, "http://127.0.0.1:1234/api/v3/", cfg.GitHubAPIURL)
	require.EqualValues(t, 42, cfg.AppID)
	require.Equal(t, "s3cret-hook", cfg.WebhookSecret.Reveal())
	require.Equal(t, 90*time.Second, cfg.LockTimeout)
	require.Equal(t, []string{"Alice", "bob"}, cfg.ApproverUsers)
	require.True(t, cfg.IsApproverUser("alice"))
	require.Equal(t, []string{"acme/sre"}, cfg.ApproverTeams)
	require.Equal(t, 6, cfg.Policy.MaxShardDelta)
	require.Equal(t, 2.0, cfg.Policy.MaxScaleFactor)
	require.Equal(t, 30*time.Minute, cfg.AttestationTTL)
	require.True(t, cfg.AllowForkPRs)
	require.Equal(t, DefaultQueueSize, cfg.QueueSize)

	cc, ok := cfg.CoordinatorFor("http://coord.prod/special/x")
	require.True(t, ok)
	require.Equal(t, "special", cc.Username)
	require.Equal(t, "special-pass", cc.Password.Reveal())
	cc, ok = cfg.CoordinatorFor("http://coord.prod")
	require.True(t, ok)
	require.Equal(t, "coord-pass", cc.Password.Reveal())
	for _, other := range []string{"http://elsewhere", "http://coord.prod.evil.com", "http://coord.prod@evil.com",
		"https://coord.prod", "http://coord.prod:8080", "http://coord.prod/specialist", "::not a url"} {
		cc, ok = cfg.CoordinatorFor(other)
		if other == "http://coord.prod/specialist" {
			require.True(t, ok)
			require.Equal(t, "terraform", cc.Username, "a path prefix matches at segment boundaries only")
			continue
		}
		require.False(t, ok, other)
	}

	// No secret can leak through formatting, logging or JSON.
	js, err := json.Marshal(cfg)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), string(js)} {
		for _, secret := range []string{"s3cret-hook", "coord-pass", "special-pass", "BEGIN RSA"} {
			require.NotContains(t, s, secret)
		}
	}
}

func TestParseConfigWebhookSecretFromEnv(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "key")
	yaml := fmt.Sprintf("version: 1\ngithub: {app_id: 1, private_key_file: %s}\nstore: {path: x.db}\napprovers: {users: [a]}\n", key)
	_, err := Parse("c", []byte(yaml), noEnv)
	require.ErrorContains(t, err, "no webhook secret")
	cfg, err := Parse("c", []byte(yaml), func(k string) (string, bool) { return "from-env", k == EnvWebhookSecret })
	require.NoError(t, err)
	require.Equal(t, "from-env", cfg.WebhookSecret.Reveal())
	require.Equal(t, DefaultGitHubAPIURL, cfg.GitHubAPIURL)
	require.Equal(t, DefaultListen, cfg.Listen)
}

func TestParseConfigReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty", "  \n")
	_, err := Parse("server.yaml", []byte(fmt.Sprintf(`
version: 1
listen: nonsense
github:
  api_url: "ftp://x"
  private_key_file: %s
  webhook_secret_file: /nonexistent/secret
terraform:
  lock_timeout: soon
coordinators:
  - url_prefix: ""
    password_env: NOPE
approvers:
  users: ["a/b"]
  teams: [justateam]
policy:
  max_shard_delta: 0
queue:
  size: -1
`, empty)), noEnv)
	var cerr *Error
	require.ErrorAs(t, err, &cerr)
	want := []string{
		`listen "nonsense" is not host:port`,
		`github.api_url "ftp://x" is not an http(s) URL`,
		"github.app_id is missing",
		"github.private_key_file: " + empty + " is empty",
		"github.webhook_secret_file: cannot read /nonexistent/secret",
		"store.path is missing",
		`terraform.lock_timeout "soon" is not a positive duration`,
		`coordinators[0].url_prefix "" is not a URL`,
		"coordinators[0].password_env: NOPE is not set",
		`approvers.users[0] "a/b" is not a GitHub login`,
		`approvers.teams[0] "justateam" is not org/team-slug`,
		"approvers: list at least one user or team",
		"policy.max_shard_delta must be at least 1, got 0",
		"queue.size must be positive, got -1",
	}
	for _, w := range want {
		require.True(t, containsAny(cerr.Problems, w), "missing problem %q in %q", w, cerr.Problems)
	}
	require.Len(t, cerr.Problems, len(want))
}

func containsAny(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func TestParseConfigRefusesInlineSecretsAndUnknownKeys(t *testing.T) {
	_, err := Parse("c", []byte("version: 1\ncoordinators:\n  - url_prefix: http://x\n    password: hunter2\n"), noEnv)
	require.ErrorContains(t, err, "never written inline")
	require.NotContains(t, err.Error(), "hunter2")
	_, err = Parse("c", []byte("version: 1\nlisten_addr: x\n"), noEnv)
	require.ErrorContains(t, err, "c:2:1: listen_addr: unknown key")
	_, err = Parse("c", []byte(""), noEnv)
	require.ErrorContains(t, err, "file is empty")
}

// The configuration example in docs/operating.md is a valid configuration.
func TestOperatingDocExampleParses(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operating.md"))
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "```yaml\n")
	require.GreaterOrEqual(t, start, 0)
	end := strings.Index(text[start+8:], "```")
	yaml := text[start+8 : start+8+end]
	dir := t.TempDir()
	for _, f := range []string{"/etc/shardgate/app.pem", "/etc/shardgate/webhook-secret", "/etc/shardgate/coordinator-prod"} {
		local := writeFile(t, dir, filepath.Base(f), "content of "+filepath.Base(f))
		yaml = strings.ReplaceAll(yaml, f, local)
	}
	cfg, err := Parse("docs/operating.md", []byte(yaml), noEnv)
	require.NoError(t, err)
	require.EqualValues(t, 123456, cfg.AppID)
	require.Equal(t, []string{"acme/sre"}, cfg.ApproverTeams)
	require.Equal(t, 2*time.Hour, cfg.AttestationTTL)
	require.Equal(t, 2*time.Minute, cfg.ApplyLease)
}

// phaseConfig is a valid configuration with the given terraform section.
func phaseConfig(t *testing.T, terraform string) string {
	t.Helper()
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "key")
	hook := writeFile(t, dir, "hook", "hook-secret")
	return fmt.Sprintf("version: 1\ngithub: {app_id: 1, private_key_file: %q, webhook_secret_file: %q}\nstore: {path: x.db}\napprovers: {users: [a]}\n%s",
		key, hook, terraform)
}

func TestParseConfigSandboxAndPhaseEnv(t *testing.T) {
	dir := t.TempDir()
	keyID := writeFile(t, dir, "plan-key-id", "AKIAPLANPLANPLANPLAN\n")
	pg := writeFile(t, dir, "apply-pg", "postgres://apply:apply-pw-77@db/state\n")
	cfg, err := Parse("c", []byte(phaseConfig(t, fmt.Sprintf(`terraform:
  sandbox: none
  plan_env:
    AWS_ACCESS_KEY_ID: {value_file: %s}
    AWS_SECRET_ACCESS_KEY: {value_env: PLAN_AWS_SECRET}
  apply_env:
    PG_CONN_STR: {value_file: %s}
`, keyID, pg))), func(k string) (string, bool) { return "plan-secret-88", k == "PLAN_AWS_SECRET" })
	require.NoError(t, err)
	require.Equal(t, SandboxNone, cfg.Sandbox)
	require.Equal(t, map[string]string{"AWS_ACCESS_KEY_ID": "AKIAPLANPLANPLANPLAN", "AWS_SECRET_ACCESS_KEY": "plan-secret-88"}, RevealEnv(cfg.PlanEnv))
	require.Equal(t, map[string]string{"PG_CONN_STR": "postgres://apply:apply-pw-77@db/state"}, RevealEnv(cfg.ApplyEnv))
	js, err := json.Marshal(cfg)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), string(js)} {
		for _, secret := range []string{"AKIAPLAN", "plan-secret-88", "apply-pw-77"} {
			require.NotContains(t, s, secret)
		}
	}

	t.Run("the sandbox is on by default, the phases get nothing", func(t *testing.T) {
		cfg, err := Parse("c", []byte(phaseConfig(t, "")), noEnv)
		require.NoError(t, err)
		require.Equal(t, SandboxLandlock, cfg.Sandbox)
		require.Empty(t, cfg.PlanEnv)
		require.Empty(t, cfg.ApplyEnv)
	})
	t.Run("ports are limited only in the sandbox", func(t *testing.T) {
		cfg, err := Parse("c", []byte(phaseConfig(t, "terraform:\n  sandbox_connect_ports: [443, 5432]\n")), noEnv)
		require.NoError(t, err)
		require.Equal(t, []int{443, 5432}, cfg.SandboxConnectPorts)
		_, err = Parse("c", []byte(phaseConfig(t, "terraform:\n  sandbox: none\n  sandbox_connect_ports: [443]\n")), noEnv)
		require.ErrorContains(t, err, "terraform.sandbox_connect_ports needs terraform.sandbox: landlock")
	})
	t.Run("inline values are refused", func(t *testing.T) {
		_, err := Parse("c", []byte(phaseConfig(t, "terraform:\n  plan_env:\n    PGPASSWORD: {value: hunter2}\n")), noEnv)
		require.ErrorContains(t, err, "never written inline")
		require.NotContains(t, err.Error(), "hunter2")
	})
}

func TestParseConfigPhaseEnvProblems(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty", "\n")
	_, err := Parse("c", []byte(phaseConfig(t, fmt.Sprintf(`terraform:
  sandbox: bwrap
  sandbox_writable: [relative/state]
  sandbox_connect_ports: [443, 0, 70000]
  plan_env:
    1BAD: {value_env: X}
    BOTH: {value_file: %s, value_env: X}
    NEITHER: {}
    UNSET: {value_env: NOPE}
    EMPTY: {value_file: %s}
    TF_DATA_DIR: {value_env: X}
    HOME: {value_env: X}
  apply_env:
    TF_LOG: {value_env: X}
    TF_CLI_ARGS_apply: {value_env: X}
    TF_VAR_coordinator_password: {value_env: X}
    SHARDGATE_SANDBOX: {value_env: X}
`, empty, empty))), func(k string) (string, bool) { return "x", k == "X" })
	var cerr *Error
	require.ErrorAs(t, err, &cerr)
	want := []string{
		`terraform.sandbox "bwrap" is not landlock or none`,
		`terraform.sandbox_writable[0] "relative/state" is not an absolute path`,
		"terraform.sandbox_connect_ports[1] 0 is not a TCP port",
		"terraform.sandbox_connect_ports[2] 70000 is not a TCP port",
		`terraform.plan_env: "1BAD" is not an environment variable name`,
		"terraform.plan_env.BOTH: set value_file or value_env, not both",
		"terraform.plan_env.NEITHER: set value_file or value_env",
		"terraform.plan_env.UNSET.value_env: NOPE is not set",
		"terraform.plan_env.EMPTY.value_file: " + empty + " is empty",
		"terraform.plan_env.TF_DATA_DIR: shardgate sets it",
		"terraform.plan_env.HOME: shardgate sets it",
		"terraform.apply_env.TF_LOG: shardgate sets it",
		"terraform.apply_env.TF_CLI_ARGS_apply: shardgate sets it",
		"terraform.apply_env.TF_VAR_coordinator_password: shardgate sets it",
		"terraform.apply_env.SHARDGATE_SANDBOX: shardgate sets it",
	}
	for _, w := range want {
		require.True(t, containsAny(cerr.Problems, w), "missing problem %q in %q", w, cerr.Problems)
	}
	require.Len(t, cerr.Problems, len(want))
}

// The credential examples of docs/operating.md are valid terraform sections.
func TestOperatingDocPhaseExamplesParse(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operating.md"))
	require.NoError(t, err)
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	dir := t.TempDir()
	files := regexp.MustCompile(`/etc/shardgate/[a-z0-9-]+`)
	parsed := 0
	for _, b := range blocks {
		block := b[:strings.Index(b, "```")]
		if !strings.HasPrefix(block, "terraform:\n  plan_env:") {
			continue
		}
		block = files.ReplaceAllStringFunc(block, func(f string) string {
			return writeFile(t, dir, filepath.Base(f), "value of "+filepath.Base(f))
		})
		cfg, err := Parse("docs/operating.md", []byte(phaseConfig(t, block)), func(string) (string, bool) { return "from-env", true })
		require.NoError(t, err, block)
		require.NotEmpty(t, cfg.PlanEnv)
		require.NotEmpty(t, cfg.ApplyEnv)
		require.NotEqual(t, RevealEnv(cfg.PlanEnv), RevealEnv(cfg.ApplyEnv), "each phase has its own credentials")
		parsed++
	}
	require.Equal(t, 2, parsed, "the S3 and the pg example")
}

// Config problems say where they are in the file's words: line:column and
// the dotted key, never a Go type; an inline secret is one problem among
// the others.
func TestConfigProblemsNameTheKeyAndItsPlace(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "app.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
	hook := writeFile(t, dir, "hook", "hook-secret\n")
	shortHook := writeFile(t, dir, "short-hook", "hook\n")
	shortPW := writeFile(t, dir, "short-pw", "pw12\n")
	problems := func(yaml string, env func(string) (string, bool)) []string {
		t.Helper()
		_, err := Parse("config.yaml", []byte(yaml), env)
		var cerr *Error
		require.ErrorAs(t, err, &cerr)
		for _, p := range cerr.Problems {
			require.NotRegexp(t, `bot\.|raw[A-Z]|!!|int64|unmarshal`, p, "no Go or YAML-internal words")
		}
		return cerr.Problems
	}
	t.Run("every kind of problem at once", func(t *testing.T) {
		got := problems(fmt.Sprintf(`version: 1
github:
  app_id: 7
  private_key_file: %s
  webhook_secret_file: %s
store:
  pth: /var/lib/shardgate/db
queue:
  size: abc
  workers: [1]
coordinators:
  - url_prefix: http://coord
    username: terraform
    password: hunter2
approvers: {users: [alice]}
allow_fork_prs: maybe
`, key, hook), noEnv)
		// In the file's order, as an editor walks them (issue 24).
		require.Equal(t, []string{
			"config.yaml:6:1: store.path is missing (or store.postgres_url_file / store.postgres_url_env for a PostgreSQL store)",
			"config.yaml:7:3: store.pth: unknown key (did you mean store.path?)",
			`config.yaml:9:9: queue.size: want a whole number, got "abc"`,
			"config.yaml:10:12: queue.workers: want a whole number, got a list",
			"config.yaml:12:5: coordinators[0] has no credentials: set username and password_file or password_env (the broker's guarantee needs a coordinator that refuses calls without them), or insecure_no_auth: true for one that has none",
			"config.yaml:14:15: coordinators[0].password: secrets are never written inline: use a *_file or *_env setting",
			`config.yaml:16:17: allow_fork_prs: want true or false, got "maybe"`,
		}, got)
		require.NotContains(t, strings.Join(got, "\n"), "hunter2")
	})
	t.Run("a YAML syntax error has its line and column", func(t *testing.T) {
		got := problems("version: 1\nstore:\n  path: x\n  bad\nqueue: {size: 1}\n", noEnv)
		require.Len(t, got, 1)
		require.Regexp(t, `^config\.yaml:[45]:[0-9]+: YAML syntax: `, got[0])
		got = problems("version: 1\nstore:\n\tpath: x\n", noEnv)
		require.Equal(t, []string{"config.yaml:3:1: YAML syntax: line 3 is indented with a tab; YAML indents with spaces only"}, got)
	})
	t.Run("a key given twice", func(t *testing.T) {
		got := problems("version: 1\nlisten: :8080\nlisten: :9090\n", noEnv)
		require.Contains(t, got, "config.yaml:3:1: listen: given twice (first on line 2)")
	})
	t.Run("short secrets are refused", func(t *testing.T) {
		got := problems(fmt.Sprintf(`version: 1
github: {app_id: 7, private_key_file: %s, webhook_secret_file: %s}
store: {path: x.db}
coordinators:
  - {url_prefix: http://a, username: u, password_file: %s}
  - {url_prefix: http://b, username: u, password_env: SHORT_PW}
approvers: {users: [alice]}
`, key, shortHook, shortPW), func(k string) (string, bool) { return "abc1234", k == "SHORT_PW" })
		// Columns follow the temporary paths' lengths.
		require.Len(t, got, 3)
		require.Regexp(t, `^config\.yaml:2:\d+: github\.webhook_secret_file: the secret is 4 characters; use at least 8 \(for example: openssl rand -hex 32\)$`, got[0])
		require.Regexp(t, `^config\.yaml:5:\d+: coordinators\[0\]\.password_file: the secret is 4 characters; use at least 8`, got[1])
		require.Regexp(t, `^config\.yaml:6:\d+: coordinators\[1\]\.password_env: the secret is 7 characters; use at least 8`, got[2])
		got = problems(fmt.Sprintf("version: 1\ngithub: {app_id: 7, private_key_file: %s}\nstore: {path: x.db}\napprovers: {users: [alice]}\n", key),
			func(k string) (string, bool) { return "short", k == EnvWebhookSecret })
		require.Equal(t, []string{"config.yaml: SHARDGATE_WEBHOOK_SECRET: the secret is 5 characters; use at least 8 (for example: openssl rand -hex 32)"}, got)
	})
}

// apply.max_concurrent: twice the cores when not set, as given otherwise; a
// negative bound is refused with the key named.
func TestApplyMaxConcurrent(t *testing.T) {
	parse := func(yaml string) (*Config, error) { return Parse("c", []byte(phaseConfig(t, yaml)), noEnv) }
	cfg, err := parse("")
	require.NoError(t, err)
	require.Equal(t, 2*runtime.NumCPU(), cfg.ApplyMaxConcurrent, "twice the cores when absent")
	cfg, err = parse("apply: {max_concurrent: 3}\n")
	require.NoError(t, err)
	require.Equal(t, 3, cfg.ApplyMaxConcurrent)
	_, err = parse("apply: {max_concurrent: -1}\n")
	require.ErrorContains(t, err, "apply.max_concurrent must be positive, got -1")
}

// A sandbox_writable entry with placeholders is each project's own
// directory: every value one path segment, so no project reaches another's
// directory or leaves the entry; entries without are shared.
func TestProjectWritable(t *testing.T) {
	c := &Config{SandboxWritable: []string{"/var/lib/shared", "/var/lib/tfstate/{owner}/{repo}/{project}"}}
	require.Equal(t, []string{"/var/lib/shared"}, c.SharedWritable())
	for project, want := range map[string]string{
		"streams":      "/var/lib/tfstate/acme/infra/streams",
		"envs/prod":    "/var/lib/tfstate/acme/infra/envs%2Fprod",
		"../../shared": "/var/lib/tfstate/acme/infra/..%2F..%2Fshared",
		"a%2Fb":        "/var/lib/tfstate/acme/infra/a%252Fb",
	} {
		got, err := c.ProjectWritable("acme", "infra", project)
		require.NoError(t, err, project)
		require.Equal(t, []string{want}, got, project)
	}
	for _, project := range []string{"..", ".", ""} {
		_, err := c.ProjectWritable("acme", "infra", project)
		require.ErrorContains(t, err, "cannot name a directory", project)
	}
}

// max_projects_per_pr: 100 unless set, at least 1.
func TestMaxProjectsPerPR(t *testing.T) {
	cfg, err := Parse("c", []byte(phaseConfig(t, "")), noEnv)
	require.NoError(t, err)
	require.Equal(t, DefaultMaxProjectsPerPR, cfg.MaxProjectsPerPR)
	require.Equal(t, 100, (&Config{}).ProjectsPerPRLimit(), "a Config built by hand")
	cfg, err = Parse("c", []byte(phaseConfig(t, "max_projects_per_pr: 300\n")), noEnv)
	require.NoError(t, err)
	require.Equal(t, 300, cfg.ProjectsPerPRLimit())
	_, err = Parse("c", []byte(phaseConfig(t, "max_projects_per_pr: 0\n")), noEnv)
	require.ErrorContains(t, err, "max_projects_per_pr must be at least 1, got 0")
}
