package serverconfig

import (
	"regexp"
	"sync"
)

// GitHubOAuth is the GitHub App's OAuth client (status.github_oauth): with
// it the status page asks a browser to sign in with GitHub and shows itself
// only to approvers. app-create writes the secret and prints the lines.
type GitHubOAuth struct {
	ClientID string
	// ClientSecret is read from client_secret_file; it also keys the
	// session cookies' signatures, so replicas sharing it accept each
	// other's sessions and rotating it ends every session.
	ClientSecret Secret
}

type rawGitHubOAuth struct {
	ClientID         string `yaml:"client_id"`
	ClientSecretFile string `yaml:"client_secret_file"`
}

// oauthClientID is what a GitHub App's (Iv1.…, Iv23…) or OAuth App's client
// id looks like; it goes into a URL.
var oauthClientID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`) })

func (v *validator) statusOAuth(r *rawGitHubOAuth, listen string) *GitHubOAuth {
	if r == nil {
		return nil
	}
	if listen == "" {
		v.addf("status.github_oauth is set but status.listen is not: set status.listen to serve the status page")
		return nil
	}
	o := &GitHubOAuth{ClientID: r.ClientID}
	if !oauthClientID().MatchString(r.ClientID) {
		v.addf("status.github_oauth.client_id %q is not a GitHub App's client id (its settings page shows it, e.g. Iv1.0123456789abcdef)", r.ClientID)
	}
	if r.ClientSecretFile == "" {
		v.addf("status.github_oauth.client_secret_file is required (app-create writes oauth-client-secret)")
		return o
	}
	o.ClientSecret = v.secretFile("status.github_oauth.client_secret_file", r.ClientSecretFile)
	v.minLength("status.github_oauth.client_secret_file", o.ClientSecret)
	return o
}
