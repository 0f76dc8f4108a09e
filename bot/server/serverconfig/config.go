// Package serverconfig is the server's configuration: the YAML file serve
// reads (docs/operating.md documents every key), validated into an immutable
// Config, and the Secret type its credentials are held in.
package serverconfig

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// Defaults of the server configuration.
const (
	DefaultListen             = ":8080"
	DefaultGitHubAPIURL       = "https://api.github.com/"
	DefaultLockTimeout        = 5 * time.Minute
	DefaultAttestationTTL     = 2 * time.Hour
	DefaultQueueSize          = 1000
	DefaultWorkers            = 4
	DefaultMaxWebhookBytes    = 25 << 20 // webhook.MaxDeliveryBytes (a webhook test checks they agree)
	EnvWebhookSecret          = "SHARDGATE_WEBHOOK_SECRET"
	DefaultConvergenceTimeout = 30 * time.Minute
	// DefaultApplyLease is apply.lease when not set: the apply queue's own
	// default (bot.DefaultApplyLease; a bot test checks they agree).
	DefaultApplyLease = 2 * time.Minute
	// DefaultMaxProjectsPerPR is max_projects_per_pr when not set.
	DefaultMaxProjectsPerPR = 100
)

// Secret is a credential read from a file or the environment. It never prints
// its value: fmt, %v, %+v, logs and JSON all show "[redacted]".
type Secret struct{ value string }

// NewSecret wraps a credential.
func NewSecret(v string) Secret { return Secret{value: v} }

// Reveal returns the credential for the one place that must send it.
func (s Secret) Reveal() string { return s.value }

// Empty says whether no credential was given.
func (s Secret) Empty() bool { return s.value == "" }

func (s Secret) String() string                  { return "[redacted]" }
func (s Secret) GoString() string                { return "[redacted]" }
func (s Secret) MarshalJSON() ([]byte, error)    { return []byte(`"[redacted]"`), nil }
func (s Secret) MarshalText() ([]byte, error)    { return []byte("[redacted]"), nil }
func (s Secret) Format(f fmt.State, verb rune)   { io.WriteString(f, "[redacted]") }
func (s Secret) LogValue() string                { return "[redacted]" }
func (s *Secret) UnmarshalYAML(*yaml.Node) error { return errInlineSecret }

var errInlineSecret = errors.New("secrets are never written inline: use a *_file or *_env setting")

// CoordinatorCredentials are used for coordinator URLs that start with URLPrefix.
type CoordinatorCredentials struct {
	URLPrefix string
	Username  string
	Password  Secret
	// InsecureNoAuth (insecure_no_auth) lets a coordinator without
	// credentials be configured: one that accepts any call, also those that
	// go around the broker. The status page says so.
	InsecureNoAuth bool
}

// Config is the validated, immutable server configuration.
type Config struct {
	Listen string
	// ListenTLS, when set, serves the listener over HTTPS.
	ListenTLS    *TLSConfig
	GitHubAPIURL string
	AppID        int64
	PrivateKey   Secret
	// PrivateKeyFile is where PrivateKey was read from, for errors about it.
	PrivateKeyFile string
	WebhookSecret  Secret
	// GitHubPace paces each installation's requests under GitHub's
	// secondary limits (github.go); Parse sets the defaults, a zero Pace
	// paces nothing.
	GitHubPace      ghapp.Pace
	StorePath       string
	TerraformBinary string
	// TerraformBinaries are more terraform or OpenTofu binaries: a project
	// runs the newest that satisfies its version constraints.
	TerraformBinaries []string
	LockTimeout       time.Duration
	PluginCacheDir    string
	WorkDir           string
	// Sandbox is SandboxLandlock or SandboxNone (terraform.go);
	// SandboxWritable are paths every sandboxed job may also write.
	Sandbox         string
	SandboxWritable []string
	// SandboxConnectPorts, when set, are the only TCP ports sandboxed
	// terraform may connect to (besides its job's coordinator broker).
	SandboxConnectPorts []int
	// Egress are the hosts besides the coordinators that terraform's
	// processes may reach through the job's broker (terraform.egress):
	// host:port or *.suffix:port; coordbroker.DefaultEgress when unset.
	Egress []string
	// PlanEnv is the environment of pull-request plans, ApplyEnv that of
	// apply jobs (re-plan and apply of the merge commit): credentials per
	// phase, so that PR code never sees apply-time ones.
	PlanEnv           map[string]Secret
	ApplyEnv          map[string]Secret
	Coordinators      []CoordinatorCredentials
	ApproverUsers     []string
	ApproverTeams     []string // "org/team-slug"
	Policy            policy.Config
	AttestationTTL    time.Duration
	AllowRepoOverride bool
	AllowForkPRs      bool
	QueueSize         int
	Workers           int
	ConvergeTimeout   time.Duration
	// ApplyLease is how long an apply job's stream locks outlive a process
	// that stopped renewing them (crashed); then another start takes it over.
	ApplyLease time.Duration
	// ApplyMaxConcurrent bounds the applies this process runs at once
	// (apply.max_concurrent; DefaultApplyMaxConcurrent).
	ApplyMaxConcurrent int
	Admin              AdminConfig
	// DriftInterval is how often each known repository's projects are checked
	// for drift (drift.interval); 0: no scheduled checks.
	DriftInterval time.Duration
	Status        StatusConfig
	// API is the automation API on the status listener (api.go).
	API APIConfig

	// MaxProjectsPerPR is the most projects one pull request may select
	// (max_projects_per_pr); a pull request that selects more is not
	// planned. 0 is DefaultMaxProjectsPerPR (ProjectsPerPRLimit).
	MaxProjectsPerPR int
	// MaxProjectChecks is report.max_project_checks (report.go).
	MaxProjectChecks int

	// PostgresStore is set instead of StorePath for a shared store (store.go).
	PostgresStore
	StoreRetention

	// Notifications are the receivers of signed event webhooks (notifications.go).
	Notifications []NotificationReceiver
}

// CoordinatorFor returns the credentials whose URL prefix covers coordinatorURL:
// same scheme and host:port, and a path that starts with the prefix's path at a
// segment boundary. The longest prefix wins. Coordinator URLs come from the
// pull request's own plan, so a URL no prefix covers gets no credentials (and
// shardgate does not call it at all).
func (c *Config) CoordinatorFor(coordinatorURL string) (CoordinatorCredentials, bool) {
	u, err := url.Parse(coordinatorURL)
	if err != nil || u.User != nil || u.Host == "" {
		return CoordinatorCredentials{}, false
	}
	// Both sides normalized (scheme and host case, default port, trailing
	// slashes): "HTTP://Coord:80/coord/v1/" is the coordinator "http://coord/coord/v1".
	target := planparse.NormalizeURL(coordinatorURL)
	var best CoordinatorCredentials
	found := false
	for _, cc := range c.Coordinators {
		prefix := planparse.NormalizeURL(cc.URLPrefix)
		if prefix == "" || target != prefix && !strings.HasPrefix(target, prefix+"/") {
			continue
		}
		if !found || len(cc.URLPrefix) > len(best.URLPrefix) {
			best, found = cc, true
		}
	}
	return best, found
}

// ProjectsPerPRLimit is MaxProjectsPerPR, or its default when unset.
func (c *Config) ProjectsPerPRLimit() int {
	if c.MaxProjectsPerPR > 0 {
		return c.MaxProjectsPerPR
	}
	return DefaultMaxProjectsPerPR
}

// IsApproverUser says whether login is listed as an approver (case-insensitive,
// as GitHub logins are).
func (c *Config) IsApproverUser(login string) bool {
	for _, u := range c.ApproverUsers {
		if strings.EqualFold(u, login) {
			return true
		}
	}
	return false
}

type rawConfig struct {
	Version      *int             `yaml:"version"`
	Listen       string           `yaml:"listen"`
	ListenTLS    *rawTLS          `yaml:"listen_tls"`
	GitHub       rawGitHub        `yaml:"github"`
	Store        rawStore         `yaml:"store"`
	Terraform    rawTerraform     `yaml:"terraform"`
	Coordinators []rawCoordinator `yaml:"coordinators"`
	Approvers    rawApprovers     `yaml:"approvers"`
	Policy       rawPolicy        `yaml:"policy"`
	AllowForkPRs bool             `yaml:"allow_fork_prs"`
	MaxProjects  *int             `yaml:"max_projects_per_pr"`
	Queue        rawQueue         `yaml:"queue"`
	Apply        rawApply         `yaml:"apply"`
	Admin        rawAdmin         `yaml:"admin"`
	Drift        rawDrift         `yaml:"drift"`
	Status       rawStatus        `yaml:"status"`
	// Notifications: see notifications.go.
	Notifications []rawNotification `yaml:"notifications"`
	Report        rawReport         `yaml:"report"`
	API           rawAPI            `yaml:"api"`
}

type rawDrift struct {
	Interval string `yaml:"interval"`
}

type rawTerraform struct {
	Binary              string                  `yaml:"binary"`
	Binaries            []string                `yaml:"binaries"`
	LockTimeout         string                  `yaml:"lock_timeout"`
	PluginCacheDir      string                  `yaml:"plugin_cache_dir"`
	WorkDir             string                  `yaml:"work_dir"`
	Sandbox             string                  `yaml:"sandbox"`
	SandboxWritable     []string                `yaml:"sandbox_writable"`
	SandboxConnectPorts []int                   `yaml:"sandbox_connect_ports"`
	Egress              *[]string               `yaml:"egress"`
	PlanEnv             map[string]rawEnvSource `yaml:"plan_env"`
	ApplyEnv            map[string]rawEnvSource `yaml:"apply_env"`
}

type rawCoordinator struct {
	URLPrefix    string `yaml:"url_prefix"`
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
	PasswordEnv  string `yaml:"password_env"`
	Password     Secret `yaml:"password"`
	// InsecureNoAuth allows a coordinator without credentials.
	InsecureNoAuth bool `yaml:"insecure_no_auth"`
}

type rawApprovers struct {
	Users []string `yaml:"users"`
	Teams []string `yaml:"teams"`
}

type rawPolicy struct {
	MaxShardDelta      *int     `yaml:"max_shard_delta"`
	MaxScaleFactor     *float64 `yaml:"max_scale_factor"`
	AttestationTTL     string   `yaml:"attestation_ttl"`
	AllowRepoOverrides *bool    `yaml:"allow_repo_overrides"`
}

type rawQueue struct {
	Size    int `yaml:"size"`
	Workers int `yaml:"workers"`
}

type rawApply struct {
	ConvergenceTimeout string `yaml:"convergence_timeout"`
	Lease              string `yaml:"lease"`
	MaxConcurrent      int    `yaml:"max_concurrent"`
}

// DefaultApplyMaxConcurrent is apply.max_concurrent when not set: twice the
// cores, as an apply mostly waits (on terraform's providers, on convergence).
func DefaultApplyMaxConcurrent() int { return 2 * runtime.NumCPU() }

func (v *validator) config(r *rawConfig) *Config {
	c := &Config{
		Listen: r.Listen, GitHubAPIURL: r.GitHub.APIURL, AppID: r.GitHub.AppID,
		TerraformBinary: r.Terraform.Binary, PluginCacheDir: r.Terraform.PluginCacheDir, WorkDir: r.Terraform.WorkDir,
		AllowForkPRs: r.AllowForkPRs, QueueSize: r.Queue.Size, Workers: r.Queue.Workers, AllowRepoOverride: true,
	}
	switch {
	case r.Version == nil:
		v.addf("version is missing: add 'version: 1'")
	case *r.Version != 1:
		v.addf("version %d is not supported: use 'version: 1'", *r.Version)
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	} else if err := validListen(c.Listen); err != nil {
		v.addf("%v", err)
	}
	c.ListenTLS = v.listenTLS(r.ListenTLS)
	if c.GitHubAPIURL == "" {
		c.GitHubAPIURL = DefaultGitHubAPIURL
	}
	if u, err := url.Parse(c.GitHubAPIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		v.addf("github.api_url %q is not an http(s) URL", c.GitHubAPIURL)
	} else if !strings.HasSuffix(c.GitHubAPIURL, "/") {
		c.GitHubAPIURL += "/"
	}
	if c.AppID <= 0 {
		v.addf("github.app_id is missing")
	}
	if r.GitHub.PrivateKeyFile == "" {
		v.addf("github.private_key_file is missing")
	} else {
		c.PrivateKey = v.secretFile("github.private_key_file", r.GitHub.PrivateKeyFile)
		c.PrivateKeyFile = r.GitHub.PrivateKeyFile
	}
	if r.GitHub.WebhookSecretFile != "" {
		c.WebhookSecret = v.secretFile("github.webhook_secret_file", r.GitHub.WebhookSecretFile)
		v.minLength("github.webhook_secret_file", c.WebhookSecret)
	} else if s, ok := v.lookupEnv(EnvWebhookSecret); ok && strings.TrimSpace(s) != "" {
		c.WebhookSecret = NewSecret(strings.TrimSpace(s))
		v.minLength(EnvWebhookSecret, c.WebhookSecret)
	} else {
		v.addf("no webhook secret: set github.webhook_secret_file or %s (shardgate refuses unsigned webhooks)", EnvWebhookSecret)
	}
	c.GitHubPace = v.githubPace(r.GitHub)
	v.store(r.Store, c)
	c.LockTimeout = v.duration("terraform.lock_timeout", r.Terraform.LockTimeout, DefaultLockTimeout)
	c.Sandbox = v.sandbox(r.Terraform.Sandbox)
	c.SandboxWritable = v.absPaths("terraform.sandbox_writable", r.Terraform.SandboxWritable)
	c.TerraformBinaries = v.binaries(r.Terraform.Binaries)
	c.SandboxConnectPorts = v.ports("terraform.sandbox_connect_ports", r.Terraform.SandboxConnectPorts)
	if len(c.SandboxConnectPorts) > 0 && c.Sandbox == SandboxNone {
		v.addf("terraform.sandbox_connect_ports needs terraform.sandbox: landlock")
	}
	c.Egress = v.egress(r.Terraform.Egress)
	c.PlanEnv = v.phaseEnv("terraform.plan_env", r.Terraform.PlanEnv)
	c.ApplyEnv = v.phaseEnv("terraform.apply_env", r.Terraform.ApplyEnv)
	c.Coordinators = v.coordinators(r.Coordinators)
	c.ApproverUsers, c.ApproverTeams = v.approvers(r.Approvers)
	c.Policy, c.AttestationTTL, c.AllowRepoOverride = v.policy(r.Policy)
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	} else if c.QueueSize < 0 {
		v.addf("queue.size must be positive, got %d", c.QueueSize)
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	} else if c.Workers < 0 {
		v.addf("queue.workers must be positive, got %d", c.Workers)
	}
	c.MaxProjectsPerPR = DefaultMaxProjectsPerPR
	if m := r.MaxProjects; m != nil {
		if *m < 1 {
			v.addf("max_projects_per_pr must be at least 1, got %d", *m)
		}
		c.MaxProjectsPerPR = *m
	}
	v.report(r.Report, c)
	c.ConvergeTimeout = v.duration("apply.convergence_timeout", r.Apply.ConvergenceTimeout, DefaultConvergenceTimeout)
	c.ApplyLease = v.duration("apply.lease", r.Apply.Lease, DefaultApplyLease)
	if c.ApplyMaxConcurrent = r.Apply.MaxConcurrent; c.ApplyMaxConcurrent == 0 {
		c.ApplyMaxConcurrent = DefaultApplyMaxConcurrent()
	} else if c.ApplyMaxConcurrent < 0 {
		v.addf("apply.max_concurrent must be positive, got %d", c.ApplyMaxConcurrent)
	}
	c.Admin = v.admin(r.Admin, c.Listen)
	c.DriftInterval = v.driftInterval(r.Drift.Interval)
	c.Status = v.status(r.Status, c)
	c.Notifications = v.notifications(r.Notifications)
	c.API = v.api(r.API, c)
	return c
}

// MinDriftInterval is the shortest drift.interval: each check plans every
// project of a repository with terraform.
const MinDriftInterval = 5 * time.Minute
