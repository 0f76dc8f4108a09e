package serverconfig

// StatusConfig is the optional status page listener (status.*): the apply
// queues, locks, state-lock waits, recent plans and applies, drift, and
// running jobs' terraform output. It is off unless Listen is set. Without a
// token anyone who reaches the address can read it: names of pull
// requests, projects and streams, and redacted terraform output.
type StatusConfig struct {
	Listen string
	// Token, when set, is the bearer token every request must carry.
	Token Secret
	// OAuth, when set, lets approvers sign in with GitHub (a browser);
	// the token still serves machines.
	OAuth *GitHubOAuth
}

// Enabled says whether the status page is served.
func (s StatusConfig) Enabled() bool { return s.Listen != "" }

type rawStatus struct {
	Listen    string `yaml:"listen"`
	TokenFile string `yaml:"token_file"`
	TokenEnv  string `yaml:"token_env"`
	// GitHubOAuth: status_oauth.go
	GitHubOAuth *rawGitHubOAuth `yaml:"github_oauth"`
}

func (v *validator) status(r rawStatus, c *Config) StatusConfig {
	s := StatusConfig{Listen: r.Listen, OAuth: v.statusOAuth(r.GitHubOAuth, r.Listen)}
	if r.Listen == "" {
		if r.TokenFile != "" || r.TokenEnv != "" {
			v.addf("status.token_file or status.token_env is set but status.listen is not: set status.listen (for example 127.0.0.1:9092) to serve the status page")
		}
		return s
	}
	switch {
	case !validHostPort(r.Listen):
		v.addf("status.listen %q is not host:port with a port from 0 to 65535", r.Listen)
	case r.Listen == c.Listen:
		v.addf("status.listen %q is the same address as listen: the status page must not be served where GitHub's webhooks arrive", r.Listen)
	case r.Listen == c.Admin.Listen:
		v.addf("status.listen %q is the same address as admin.listen: give the status page its own address", r.Listen)
	}
	switch {
	case r.TokenFile != "" && r.TokenEnv != "":
		v.addf("status: set token_file or token_env, not both")
	case r.TokenFile != "":
		s.Token = v.secretFile("status.token_file", r.TokenFile)
		v.statusTokenLength("status.token_file", s.Token)
	case r.TokenEnv != "":
		t, ok := v.lookupEnv(r.TokenEnv)
		if !ok || t == "" {
			v.addf("status.token_env: %s is not set", r.TokenEnv)
		}
		s.Token = NewSecret(t)
		v.statusTokenLength("status.token_env", s.Token)
	}
	return s
}

func (v *validator) statusTokenLength(field string, s Secret) {
	if n := len(s.Reveal()); n > 0 && n < MinAdminTokenLength {
		v.addf("%s: the token is %d characters; use at least %d (for example: openssl rand -hex 32)", field, n, MinAdminTokenLength)
	}
}
